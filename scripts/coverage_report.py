#!/usr/bin/env python3
"""Line coverage of chosen source files from a --coverage build's .gcda files, with gcov alone.

  coverage_report.py BUILD_DIR SOURCE_ROOT FILE[:FIRST-LAST] ... [--min PERCENT]
  coverage_report.py BUILD_DIR SOURCE_ROOT --tree DIR [--lines OUT.json]

Every translation unit that includes a file adds its counts: a line counts as executed when any
unit executed it (templates and inline functions are compiled in many units). A range keeps the
lines FIRST to LAST of a file only (a part of a header). Prints a table; with --min, exits 1 when
the lines of all files together fall below PERCENT. With --tree, every source file under DIR
(relative to SOURCE_ROOT) that some unit compiled, totals only; --lines writes the executed
lines, {file: [line, ...]}, for comparing two runs.
"""
import gzip, json, os, subprocess, sys, tempfile


def gcov_json(gcda, workdir):
    out = subprocess.run(["gcov", "--json-format", "--stdout", "-o", os.path.dirname(gcda), gcda],
                         cwd=workdir, capture_output=True, text=True)
    if out.returncode != 0:
        return []
    docs = []
    for line in out.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            docs.append(json.loads(line))
    return docs


def gcdas_under(build):
    gcdas = [os.path.join(d, f) for d, _, fs in os.walk(build) for f in fs if f.endswith(".gcda")]
    if not gcdas:
        sys.exit(f"coverage_report: no .gcda under {build}: run the tests of a --coverage build first")
    return gcdas


def tree_report(build, root, tree, lines_out):
    """Lines and executed lines of every file under `tree` that a unit compiled."""
    lines, executed = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for gcda in gcdas_under(build):
            for doc in gcov_json(gcda, tmp):
                cwd = doc.get("current_working_directory", "")
                for f in doc.get("files", []):
                    path = os.path.realpath(os.path.join(cwd, f["file"]))
                    if not path.startswith(tree + os.sep):
                        continue
                    name = os.path.relpath(path, root)
                    for ln in f["lines"]:
                        lines.setdefault(name, set()).add(ln["line_number"])
                        if ln["count"] > 0:
                            executed.setdefault(name, set()).add(ln["line_number"])
    total = sum(len(v) for v in lines.values())
    hit = sum(len(v) for v in executed.values())
    print(f"{os.path.relpath(tree, root)}: {len(lines)} files, {total} lines, {hit} run "
          f"({100.0 * hit / total if total else 0:.1f}%)")
    if lines_out:
        with open(lines_out, "w") as out:
            json.dump({k: sorted(v) for k, v in executed.items()}, out)
    return 0


def main(argv):
    minimum = None
    if "--min" in argv:
        i = argv.index("--min")
        minimum = float(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    tree = lines_out = None
    if "--tree" in argv:
        i = argv.index("--tree")
        tree = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if "--lines" in argv:
        i = argv.index("--lines")
        lines_out = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    build, root, wanted = os.path.realpath(argv[0]), os.path.realpath(argv[1]), argv[2:]
    if tree:
        return tree_report(build, root, os.path.join(root, tree), lines_out)
    ranges = {}  # path -> [(name, first, last)]
    for w in wanted:
        path, _, span = w.partition(":")
        first, last = (int(x) for x in span.split("-")) if span else (1, 10**9)
        ranges.setdefault(os.path.join(root, path), []).append((w, first, last))
    executed, lines = {}, {}
    gcdas = [os.path.join(d, f) for d, _, fs in os.walk(build) for f in fs if f.endswith(".gcda")]
    if not gcdas:
        sys.exit(f"coverage_report: no .gcda under {build}: run the tests of a --coverage build first")
    with tempfile.TemporaryDirectory() as tmp:
        for gcda in gcdas:
            for doc in gcov_json(gcda, tmp):
                cwd = doc.get("current_working_directory", "")
                for f in doc.get("files", []):
                    path = os.path.realpath(os.path.join(cwd, f["file"]))
                    if path not in ranges:
                        continue
                    for name, first, last in ranges[path]:
                        for ln in f["lines"]:
                            n = ln["line_number"]
                            if first <= n <= last:
                                lines.setdefault(name, set()).add(n)
                                if ln["count"] > 0:
                                    executed.setdefault(name, set()).add(n)
    total = hit = 0
    print(f"{'file':60} {'lines':>6} {'run':>6} {'%':>6}")
    for name in wanted:
        n, h = len(lines.get(name, ())), len(executed.get(name, ()))
        total, hit = total + n, hit + h
        print(f"{name:60} {n:6} {h:6} {100.0 * h / n if n else 0:6.1f}")
        missed = sorted(lines.get(name, set()) - executed.get(name, set()))
        if missed:
            print(f"  not run: {', '.join(map(str, missed))}")
    pct = 100.0 * hit / total if total else 0.0
    print(f"{'all':60} {total:6} {hit:6} {pct:6.1f}")
    if minimum is not None and pct < minimum:
        print(f"coverage_report: {pct:.1f}% is below {minimum}%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
