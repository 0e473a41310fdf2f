#!/usr/bin/env python3
"""SM clock and board power while one benchmark runs, for each benchmark named.

    tools/power_under_load.py BENCH_BINARY NAME [NAME ...] [--reps N]

Each NAME is a Google Benchmark filter (one benchmark); the binary runs it N times (default 40)
while nvidia-smi samples the SM clock and the power draw every 200 ms. The samples taken while the
board draws more than half its power limit (the benchmark's kernels, not its host-side setup) are
summarized as medians in a Markdown table on standard output, with the GPU's name and the commit
recorded in .smem-commit (or git) for the results folder.
"""
import argparse
import pathlib
import statistics
import subprocess
import sys


def commit() -> str:
    marker = pathlib.Path(".smem-commit")
    if marker.exists():
        return marker.read_text().strip()[:12]
    return subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()


def sample(binary: str, name: str, reps: int) -> list[tuple[float, float, float]]:
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=clocks.sm,power.draw,power.limit", "--format=csv,noheader,nounits", "-lms", "200"],
        stdout=subprocess.PIPE, text=True)
    try:
        subprocess.run([binary, f"--benchmark_filter={name}", f"--benchmark_repetitions={reps}"],
                       stdout=subprocess.DEVNULL, check=True)
    finally:
        smi.terminate()
    rows = []
    for line in smi.communicate()[0].splitlines():
        try:
            rows.append(tuple(float(x) for x in line.split(",")))
        except ValueError:
            pass  # a partial last line
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("names", nargs="+")
    ap.add_argument("--reps", type=int, default=40)
    args = ap.parse_args()
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                         text=True, check=True).stdout.splitlines()[0].strip()
    print(f"`tools/power_under_load.py` on the {gpu} at commit {commit()}: medians of nvidia-smi's samples "
          f"(every 200 ms) taken while the board drew more than half its power limit, {args.reps} repetitions.\n")
    print("| benchmark | samples | SM clock (MHz) | power (W) | power limit (W) |")
    print("| --- | --- | --- | --- | --- |")
    for name in args.names:
        rows = sample(args.binary, name, args.reps)
        loaded = [r for r in rows if r[1] > r[2] / 2]
        if not loaded:
            print(f"| `{name}` | 0 | - | - | - |")
            continue
        clock = statistics.median(r[0] for r in loaded)
        power = statistics.median(r[1] for r in loaded)
        print(f"| `{name}` | {len(loaded)} | {clock:.0f} | {power:.0f} | {loaded[0][2]:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
