#!/usr/bin/env python3
"""Checks cuboid run records against docs/record.schema.json.

    check_record_schema.py [--schema FILE] RECORD...
    check_record_schema.py [--schema FILE] --self-test RECORD

Prints every error of every record with its JSON path and exits 1 if there is any (2 when a
file cannot be read). --self-test proves that the check can fail: it expects RECORD, a
record that passes, to pass, and copies of it broken on purpose (a required key removed, a value
of the wrong type, an unknown key, a distributed section in a single-process record) to fail.
"""
import argparse
import copy
import json
import pathlib
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("check_record_schema.py: the Python module jsonschema is missing "
             "(Debian: apt-get install python3-jsonschema)")

DEFAULT_SCHEMA = pathlib.Path(__file__).resolve().parents[2] / "docs" / "record.schema.json"


def json_path(parts):
    """$.processors[1].speed_gflops from the path jsonschema gives."""
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def errors_of(validator, record):
    found = []
    for e in validator.iter_errors(record):
        # The error's own path, and for if/then/else and oneOf the deepest sub-error.
        leaves = [e]
        while leaves[-1].context:
            leaves.append(min(leaves[-1].context, key=lambda c: -len(c.absolute_path)))
        leaf = leaves[-1]
        schema_path = "/".join(str(p) for p in leaf.absolute_schema_path)
        message = leaf.message if len(leaf.message) <= 300 else leaf.message[:297] + "..."
        found.append((json_path(leaf.absolute_path), message, schema_path))
    return sorted(found)


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"{path}: cannot read: {e}", file=sys.stderr)
        sys.exit(2)


def make_validator(schema_path):
    schema = load(schema_path)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def self_test(validator, path):
    record = load(path)
    failures = []
    if errors_of(validator, record):
        failures.append("the record itself does not pass; give one that does")
    distributed = "mpi" in record

    def broken(name, change):
        r = copy.deepcopy(record)
        change(r)
        errs = errors_of(validator, r)
        status = "rejected" if errs else "ACCEPTED"
        print(f"self-test: {name}: {status}" + (f" ({errs[0][0]}: {errs[0][1]})" if errs else ""))
        if not errs:
            failures.append(f"{name} was accepted")

    broken("top-level key gflops removed", lambda r: r.pop("gflops"))
    broken("processors[0].speed_gflops removed", lambda r: r["processors"][0].pop("speed_gflops"))
    broken("timing.median_s a string", lambda r: r["timing"].__setitem__("median_s", "0.1"))
    broken("problem.m a float", lambda r: r["problem"].__setitem__("m", 256.5))
    broken("validation.passed a number", lambda r: r["validation"].__setitem__("passed", 1))
    broken("an unknown key in partition", lambda r: r["partition"].__setitem__("ratio", 1.0))
    broken("record_version 3", lambda r: r.__setitem__("record_version", 3))
    if distributed:
        broken("rank_partition removed", lambda r: r.pop("rank_partition"))
        broken("ranks[0].bytes.recv_mpi a string",
               lambda r: r["ranks"][0]["bytes"].__setitem__("recv_mpi", "many"))
        broken("validation.sampled removed", lambda r: r["validation"].pop("sampled"))
    else:
        broken("mpi section in a single-process record",
               lambda r: r.__setitem__("mpi", {"ranks": 2, "layout": "aligned", "idle_ranks": 0,
                                               "slabs_per_box": 4}))
        broken("execution.ranks 2 without the MPI sections",
               lambda r: r["execution"].__setitem__("ranks", 2))
    for f in failures:
        print(f"self-test: FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="+", metavar="RECORD")
    ap.add_argument("--schema", default=str(DEFAULT_SCHEMA), help="default: %(default)s")
    ap.add_argument("--self-test", action="store_true",
                    help="expect broken copies of the (valid) RECORD to be rejected")
    a = ap.parse_args()
    validator = make_validator(a.schema)
    if a.self_test:
        return max(self_test(validator, p) for p in a.records)
    bad = 0
    for path in a.records:
        errs = errors_of(validator, load(path))
        for where, message, schema_path in errs:
            print(f"{path}: {where}: {message} (schema: {schema_path})")
        if errs:
            bad += 1
        else:
            print(f"{path}: valid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
