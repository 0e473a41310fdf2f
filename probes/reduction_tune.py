#!/usr/bin/env python3
"""The sweep that configured reduction steps 7 to 9: ./cookbook probe reduction_tune
(probes/reduction_tune.py <build dir> <results/gpu/reduction_tune>) writes reduction_tune.txt, which the
reduction page shows (profile reduction-tune).

reduction_bench with SMEM_REDUCTION_TUNE=1 registers the single-pass kernel in other configurations,
tune_t<threads>_u<vectors per thread>_<ldg|cs loads>_w<waves>; each runs beside CUB at 2^20, 2^24 and
2^28 floats (medians of 5 repetitions). One line per configuration: its ratio to CUB (CUB's time / its
time) at each size; then the one picked, the highest mean ratio.
"""
import json
import os
import subprocess
import sys
import tempfile

SIZES = [1 << 20, 1 << 24, 1 << 28]


def main(build, stem):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "tune.json")
        subprocess.run([f"{build}/bench/reduction_bench", "--benchmark_filter=^reduction/(cub|tune_[^/]*)/float/",
                        "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true",
                        f"--benchmark_out={out}", "--benchmark_out_format=json"],
                       env=dict(os.environ, SMEM_REDUCTION_TUNE="1"), stdout=subprocess.DEVNULL, check=True)
        data = json.load(open(out))
    times = {}  # (variant, n) -> median time
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            parts = b["run_name"].split("/")
            times[parts[1], int(parts[3])] = b["real_time"]
    ratios = {v: [times["cub", n] / times[v, n] for n in SIZES] for v, _ in times if v.startswith("tune_")}
    lines = [f"reduction_bench with SMEM_REDUCTION_TUNE=1 on the {data['context'].get('gpu_name', '?')}, commit "
             f"{os.environ.get('commit', '?')}: ratio to CUB at " + ", ".join(f"2^{n.bit_length() - 1}" for n in SIZES)]
    lines += [f"{v:24s} " + " ".join(f"{r:.3f}" for r in rs) for v, rs in sorted(ratios.items())]
    lines.append("picked " + max(ratios, key=lambda v: sum(ratios[v])))
    open(stem + ".txt", "w").write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
