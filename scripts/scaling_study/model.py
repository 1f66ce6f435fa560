"""Closed-form figures a study sets beside the measured ones: the process grid, the COSMA bound and
the bytes ScaLAPACK's pdgemm moves (its SUMMA formula), on the same block-cyclic layout."""
import math


def near_square_grid(p):
    """layout::near_square_grid: rows <= cols, rows * cols = p, as square as possible."""
    r = int(math.isqrt(p))
    while r > 1 and p % r:
        r -= 1
    return r, p // r


def numroc(n, nb, iproc, nprocs):
    """ScaLAPACK's NUMROC with the source process 0: rows (or columns) of an n-long dimension in
    blocks of nb that process iproc of nprocs owns."""
    nblocks = n // nb
    num = (nblocks // nprocs) * nb
    extra = nblocks % nprocs
    if iproc < extra:
        num += nb
    elif iproc == extra:
        num += n % nb
    return num


def summa_bytes_per_rank(m, n, k, nb, grid, elem):
    """Bytes each rank receives in PBLAS' pdgemm (the SUMMA "AB" variant: A panels broadcast along
    process rows, B panels along process columns; C stays put), row-major grid (rank = r * cols + c).
    Rank (r, c) receives mloc(r) * (k - kloc_col(c)) + (k - kloc_row(r)) * nloc(c) elements: the A
    columns and B rows of the whole k it does not own. Same convention as cuboid's count: a rank's
    own blocks are not counted."""
    pr, pc = grid
    out = []
    for rank in range(pr * pc):
        r, c = divmod(rank, pc)
        mloc, nloc = numroc(m, nb, r, pr), numroc(n, nb, c, pc)
        a = mloc * (k - numroc(k, nb, c, pc)) if pc > 1 else 0
        b = (k - numroc(k, nb, r, pr)) * nloc if pr > 1 else 0
        out.append(elem * (a + b))
    return out


def moved_bound_bytes(m, n, k, p, elem):
    """What a rank that starts with its share must move: 3 (mnk/p)^(2/3) - (mn + mk + nk)/p elements,
    at least 0 (COSMA's bound with S infinite, less the rank's own blocks; docs/scaling.md)."""
    m, n, k = float(m), float(n), float(k)
    return elem * max(0.0, 3.0 * (m * n * k / p) ** (2.0 / 3.0) - (m * n + m * k + n * k) / p)


def cosma_bound_bytes(m, n, k, p, elem):
    """COSMA's per-rank lower bound with unlimited memory (003 eq. 33): 3 (mnk/p)^(2/3) elements."""
    return elem * 3.0 * (float(m) * n * k / p) ** (2.0 / 3.0)
