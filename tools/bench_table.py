#!/usr/bin/env python3
"""Prints a benchmark JSON (`./cookbook bench` runs it on each file it writes) as one compact
table per shape: each variant's step, median time, rate, and ratio to the reference that the
JSON names (smem_reference), measured in the same run: reference time / variant time, so 1.00 is
as fast as the reference and higher is faster.

  tools/bench_table.py results/<gpu>/<family>.json ..."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import Run, rate  # noqa: E402


def main(path):
    r = Run(path)
    print(f"{path}: {r.provenance()}")
    for shape in r.sorted_shapes():
        vs = r.shapes[shape]
        print(f"\n{r.family} {shape}  (ratio = {r.reference or '-'} time / variant time)")
        for v in r.order(vs):
            x, u = r.ratio(v, shape), rate(vs[v])
            print(f"  {r.number(v):>3s} {v:24s} {vs[v]['real_time']:12.2f} {vs[v]['time_unit']:2s} "
                  f"{f'{u[1]:9.1f} {u[0]}' if u else '':>16s}  " + (f"x{x:5.2f}" if x else "  -"))


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
