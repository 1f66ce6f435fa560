"""Scaling plots with matplotlib (Debian python3-matplotlib): time, rate, parallel efficiency and
bytes per rank against the number of ranks, measured and modelled, one colour per series. Used by
`collect` (measured records) and `simulate` (the model alone)."""
import math
import textwrap

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import (EngFormatter, FixedLocator, FuncFormatter, LogLocator, NullFormatter,  # noqa: E402
                               NullLocator, ScalarFormatter)

COLORS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#e6ab02", "#666666"]
STYLES = {
    "measured": dict(linestyle="-", marker="o", markersize=5, linewidth=1.8),
    "model": dict(linestyle="--", marker="x", markersize=7, linewidth=1.2),
    "mpi": dict(linestyle="-.", marker="^", markersize=5, linewidth=1.2),
    "ideal": dict(linestyle=":", marker=None, linewidth=1.2, alpha=0.8),
}


def _values(points, key, zeros=False):
    """(P, value) where the value is there and positive (or zero, on a linear axis)."""
    return [(p["P"], p[key]) for p in points if p.get(key) is not None and math.isfinite(p[key])
            and (p[key] > 0 or (zeros and p[key] == 0))]


def _wide(values):
    vals = [v for v in values if v and v > 0]
    return bool(vals) and max(vals) / min(vals) > 10


def _log_axis(ax, formatter=None):
    """Log y axis labelled at 1, 2 and 5 times powers of ten, plain numbers (or `formatter`)."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(formatter or FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _log_if_wide(ax, values):
    """Log scale where the positive values span more than a decade, linear from 0 otherwise."""
    if _wide(values):
        _log_axis(ax)
    else:
        ax.set_ylim(bottom=0, top=max([v for v in values if v] + [1e-300]) * 1.1)


def _ranks_axis(ax, ranks):
    """Ranks on a base-2 log axis, labelled with the ranks that were run."""
    ax.set_xscale("log", base=2)
    ranks = sorted(set(ranks))
    ax.xaxis.set_major_locator(FixedLocator(ranks))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_locator(NullLocator())
    if len(ranks) == 1:
        ax.set_xlim(ranks[0] / 1.5, ranks[0] * 1.5)
    else:
        ax.set_xlim(ranks[0] / 1.25, ranks[-1] * 1.25)
    ax.set_xlabel("ranks P")
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6)


def _plot(ax, pts, color, style, **kw):
    if pts:
        ax.plot([p for p, _ in pts], [v for _, v in pts], color=color, **STYLES[style], **kw)


def _shrink_png(path):
    """A palette of 256 colours: a third of the bytes for flat-coloured plots (PIL comes with
    matplotlib; without it the file stays as saved)."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as im:
        q = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    q.save(path, optimize=True)


def scaling_figure(series, references, title, path_base, formats=("png",), kind="strong", notes=()):
    """One figure of four panels. `series`: {label: [point, ...]}, a point being a dict with P and
    any of time_s, time_min_s, time_max_s, model_time_s, gflops, model_gflops, efficiency,
    model_efficiency, bytes_max, model_bytes_max, mpi_bytes_max. `references`: points with P,
    bound_bytes and summa_bytes (they depend on the problem only). `kind`: strong (ideal time falls
    as 1/P), weak (ideal time stays) or None (no ideal line). Returns the files written."""
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.2))
    (ax_t, ax_g), (ax_e, ax_b) = axes
    ranks = [p["P"] for pts in series.values() for p in pts] + [p["P"] for p in references]
    all_t, all_g = [], []
    all_b = [p.get(k) for pts in series.values() for p in pts for k in ("bytes_max", "model_bytes_max",
                                                                         "mpi_bytes_max")]
    all_b += [p.get(k) for p in references for k in ("bound_bytes", "summa_bytes")]
    bytes_log = _wide(all_b)
    used = set()
    for i, (label, pts) in enumerate(series.items()):
        color = COLORS[i % len(COLORS)]
        pts = sorted(pts, key=lambda p: p["P"])
        measured_t = _values(pts, "time_s")
        if measured_t:
            used.add("measured")
            lo = [p["time_s"] - (p.get("time_min_s") or p["time_s"]) for p in pts if p.get("time_s")]
            hi = [(p.get("time_max_s") or p["time_s"]) - p["time_s"] for p in pts if p.get("time_s")]
            all_t += [p.get("time_max_s") or 0 for p in pts]
            ax_t.errorbar([p for p, _ in measured_t], [v for _, v in measured_t], yerr=[lo, hi], color=color,
                          capsize=3, **STYLES["measured"])
        for key, ax, store in (("time_s", None, all_t), ("model_time_s", ax_t, all_t), ("gflops", ax_g, all_g),
                               ("model_gflops", ax_g, all_g)):
            vals = _values(pts, key)
            store += [v for _, v in vals]
            if ax is not None:
                style = "model" if key.startswith("model") else "measured"
                if vals:
                    used.add(style)
                _plot(ax, vals, color, style)
        _plot(ax_e, _values(pts, "efficiency"), color, "measured")
        _plot(ax_e, _values(pts, "model_efficiency"), color, "model")
        for key, style in (("bytes_max", "measured"), ("model_bytes_max", "model"), ("mpi_bytes_max", "mpi")):
            vals = _values(pts, key, zeros=not bytes_log)
            if vals:
                used.add(style)
            _plot(ax_b, vals, color, style)
        # Ideal scaling from the series' smallest P, measured where there is a measurement.
        key_t = "time_s" if measured_t else "model_time_s"
        base = next((p for p in pts if p.get(key_t)), None)
        if kind in ("strong", "weak") and base and len(pts) > 1:
            used.add("ideal")
            Ps = [p["P"] for p in pts]
            t0, p0 = base[key_t], base["P"]
            ideal_t = [t0 * p0 / P if kind == "strong" else t0 for P in Ps]
            _plot(ax_t, list(zip(Ps, ideal_t)), color, "ideal")
            g0 = base.get("gflops" if measured_t else "model_gflops")
            if g0:
                _plot(ax_g, [(P, g0 * P / p0) for P in Ps], color, "ideal")
    refs = sorted(references, key=lambda p: p["P"])
    bound = _values(refs, "bound_bytes")
    summa = _values(refs, "summa_bytes", zeros=not bytes_log)
    ax_b.plot([p for p, _ in bound], [v for _, v in bound], color="black", linestyle=":", linewidth=1.6)
    ax_b.plot([p for p, _ in summa], [v for _, v in summa], color="#888888", linestyle="-.", marker="s",
              markersize=4, linewidth=1.4)

    ax_e.axhline(1.0, color="#999999", linewidth=0.8)
    for ax, label in ((ax_t, "time per product [s]"), (ax_g, "rate [GFLOP/s]"), (ax_e, "parallel efficiency"),
                      (ax_b, "bytes per rank, max over ranks")):
        _ranks_axis(ax, ranks)
        ax.set_ylabel(label)
    _log_if_wide(ax_t, all_t)
    _log_if_wide(ax_g, all_g)
    if bytes_log:
        _log_axis(ax_b, EngFormatter(unit="B"))
    else:
        _log_if_wide(ax_b, all_b)
        ax_b.yaxis.set_major_formatter(EngFormatter(unit="B"))
    effs = [p.get(k) or 0 for pts in series.values() for p in pts for k in ("efficiency", "model_efficiency")]
    ax_e.set_ylim(0, max([1.15] + effs) * 1.05)
    if bytes_log and any(p["P"] == 1 for pts in series.values() for p in pts):
        ax_b.text(0.02, 0.02, "P = 1 moves nothing (0 B is off the log axis)", transform=ax_b.transAxes,
                  fontsize=8, color="#555555")
    ax_t.set_title("time per product")
    ax_g.set_title("rate")
    ax_e.set_title("efficiency: rate per rank / that at the smallest P")
    ax_b.set_title("communication: bytes received per rank")

    handles = [Line2D([], [], color=COLORS[i % len(COLORS)], linewidth=3, label=label)
               for i, label in enumerate(series)]
    names = {"measured": "measured (median; bars: min-max)", "model": "model", "mpi": "MPI bytes (measured)",
             "ideal": "ideal scaling"}
    handles += [Line2D([], [], color="#444444", label=names[s], **STYLES[s]) for s in STYLES if s in used]
    handles += [Line2D([], [], color="black", linestyle=":", linewidth=1.6, label="lower bound on bytes moved, own share excluded: 3(mnk/P)^(2/3) - (mn+mk+nk)/P"),
                Line2D([], [], color="#888888", linestyle="-.", marker="s", markersize=4,
                       label="pdgemm (SUMMA) bytes, same grid")]
    ncol = 3
    n_rows = math.ceil(len(handles) / ncol)
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=9, frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    fig.suptitle("\n".join(textwrap.wrap(title, 110)), fontsize=11)
    legend_h = 0.03 * n_rows + 0.01
    if notes:
        fig.text(0.5, legend_h + 0.005, "\n".join(notes), ha="center", va="bottom", fontsize=8, color="#444444")
    fig.tight_layout(rect=(0, legend_h + 0.022 * len(notes) + 0.01, 1, 0.965 if len(title) <= 110 else 0.94))
    written = []
    for fmt in formats:
        path = f"{path_base}.{fmt}"
        # No dates or versions in the files: the same records give the same plots.
        meta = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None} if fmt == "svg" else None
        fig.savefig(path, dpi=110 if fmt == "png" else None, metadata=meta)
        if fmt == "png":
            _shrink_png(path)
        written.append(path)
    plt.close(fig)
    return written
