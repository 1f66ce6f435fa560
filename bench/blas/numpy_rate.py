"""numpy's `a @ b` on SIZE^2 double matrices: one warm-up product, then REPS timed ones; prints
the median seconds and GFLOP/s as JSON. The last product is checked: C x against A (B x) for a
random x (the error relative to |A| |B| |x|), so a preloaded drop-in is validated as it runs.
    python3 numpy_rate.py [SIZE [REPS]]"""
import json
import sys
import time

import numpy as np

size = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
rng = np.random.default_rng(11)
a = rng.standard_normal((size, size))
b = rng.standard_normal((size, size))
c = a @ b
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    c = a @ b
    times.append(time.perf_counter() - t0)
x = rng.standard_normal(size)
err = np.max(np.abs(c @ x - a @ (b @ x))) / (np.max(np.abs(a)) * np.max(np.abs(b)) * np.sum(np.abs(x)))
seconds = float(np.median(times))
print(json.dumps({"size": size, "seconds": seconds, "gflops": 2 * size**3 / seconds / 1e9,
                  "relative_error": float(err), "checked": bool(err < 1e-12)}))
sys.exit(0 if err < 1e-12 else 1)
