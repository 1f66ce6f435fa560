"""numpy's matrix product as a numpy user writes it, to run with libcuboid_blas.so preloaded.

Each product is checked against numpy's long-double product (computed without the BLAS); the
exit status says whether all were right."""
import sys

import numpy as np

rng = np.random.default_rng(7)
failures = 0


def check(what, got, a, b, tol):
    global failures
    want = a.astype(np.clongdouble if np.iscomplexobj(a) else np.longdouble) @ b.astype(
        np.clongdouble if np.iscomplexobj(b) else np.longdouble)
    err = float(np.max(np.abs(got - want)))
    ok = err <= tol * a.shape[-1]
    failures += not ok
    print(f"{what} {a.shape} @ {b.shape}: max error {err:.3g} {'correct' if ok else 'WRONG'}")


a = rng.standard_normal((300, 260))
b = rng.standard_normal((260, 280))
check("float64", a @ b, a, b, 1e-13)
check("float64 transposed", a.T.copy().T @ b.T.copy().T, a, b, 1e-13)  # Fortran-ordered operands
at = rng.standard_normal((250, 270))
check("float64 a.T", at.T @ b[:250, :], at.T, b[:250, :], 1e-13)
z = rng.standard_normal((200, 160)) + 1j * rng.standard_normal((200, 160))
w = rng.standard_normal((160, 180)) + 1j * rng.standard_normal((160, 180))
check("complex128", z @ w, z, w, 1e-13)
check("complex128 conj", z.conj().T.conj().T @ w, z, w, 1e-13)
f = rng.standard_normal((256, 256)).astype(np.float32)
g = rng.standard_normal((256, 256)).astype(np.float32)
check("float32", f @ g, f, g, 1e-5)
small = rng.standard_normal((16, 16))
check("float64 small", small @ small, small, small, 1e-13)
print("FAILED" if failures else "all products correct")
sys.exit(1 if failures else 0)
