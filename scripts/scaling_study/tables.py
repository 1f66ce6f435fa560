"""CSV and Markdown output shared by `collect` and `simulate`."""
import csv


def write_csv(path, rows, first=()):
    """All keys of all rows as columns, `first` leading, the rest in order of appearance."""
    keys = list(first)
    for r in rows:
        for k in r:
            if k not in keys and not k.startswith("_"):
                keys.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in keys})


def human_bytes(b):
    """Decimal units, as the plots' axes: 8388608 -> "8.39 MB"."""
    if b is None:
        return "n/a"
    if b == 0:
        return "0"
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b:.0f} B"


def fmt(v, spec=".3g", none="n/a"):
    return none if v is None else format(v, spec)


def markdown_table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)
