#!/usr/bin/env python3
"""Prints a compact table of a benchmark JSON: each variant's median time, its rate, and its
ratio to the family's baseline measured in the same run.

Names are <family>/<variant>/<shape...>; the baseline of a shape is the variant named in
BASELINES for the family (the first one present). The ratio is baseline time / variant time,
so 1.00 means as fast as the baseline and higher is faster."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchjson import BASELINES, RATES, load  # noqa: E402


def main(path):
    ctx, rows = load(path)
    print(f"{path}: {ctx.get('gpu_name', '?')}, driver {ctx.get('cuda_driver', '?')}, "
          f"CUDA {ctx.get('cuda_runtime', '?')}, commit {ctx.get('git_commit', '?')}")
    for (family, shape), variants in rows.items():
        base = next((variants[b] for b in BASELINES.get(family, []) if b in variants), None)
        base_name = next((b for b in BASELINES.get(family, []) if b in variants), "-")
        print(f"\n{family} {shape}  (ratio = {base_name} time / variant time)")
        for variant, b in variants.items():
            rate = next(((k, b[k]) for k in RATES if k in b), None)
            rate_s = f"{rate[1]:9.1f} {rate[0]}" if rate else ""
            ratio = base["real_time"] / b["real_time"] if base else float("nan")
            print(f"  {variant:24s} {b['real_time']:12.2f} {b['time_unit']:2s} {rate_s:>16s}  x{ratio:5.2f}")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
