"""The key table's lookups on one core: ``python -m benchmarks.key_table``.

``_native.KeyTable.ids`` gives every record's key a dense id: per segment (the cleaner's
columns, the groups' latest commits) and per partition (the key ids every emulation reads), so
it runs about three times per record. Its cost is memory latency once the table outgrows the
caches: a partition of millions of keys (a million groups committing a few partitions each).

For each table size, random 16-byte keys are looked up in random order (``--lookups`` of them,
every key present): into a new table (each key inserted on first sight, the table growing as
it goes) and into the filled table again. Prints a Markdown table of nanoseconds per lookup,
the best of ``--runs``, pinned to one CPU (``--cpu``).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from offsets_auditor import _native


def lookups_ns(distinct: int, lookups: int, runs: int, seed: int = 1) -> tuple[float, float]:
    """Best nanoseconds per lookup: into a new table, then into the filled one."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 2**63, size=(distinct, 2), dtype=np.int64).view(np.uint8)
    digests = np.ascontiguousarray(keys.reshape(distinct, 16)[rng.integers(0, distinct, lookups)])
    out = np.empty(lookups, dtype=np.int32)
    new = filled = float("inf")
    for _ in range(runs):
        table = _native.KeyTable()
        start = time.perf_counter()
        table.ids(digests, out)
        middle = time.perf_counter()
        table.ids(digests, out)
        end = time.perf_counter()
        new, filled = min(new, middle - start), min(filled, end - middle)
    return new * 1e9 / lookups, filled * 1e9 / lookups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,150000,2000000,8000000", help="distinct keys")
    parser.add_argument("--lookups", type=int, default=4_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cpu", type=int, default=0)
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.cpu})
    print("| distinct keys | ns per lookup, new table | ns per lookup, filled table |")
    print("|---:|---:|---:|")
    for distinct in (int(s) for s in args.sizes.split(",")):
        new, filled = lookups_ns(distinct, args.lookups, args.runs)
        print(f"| {distinct:,} | {new:.1f} | {filled:.1f} |")


if __name__ == "__main__":
    main()
