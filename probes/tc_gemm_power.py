#!/usr/bin/env python3
"""SM clock and board power while the tensor-core GEMMs run at 8192^3: ./cookbook probe tc_gemm_power
(probes/tc_gemm_power.py <build dir> <results/gpu/tc_gemm_power>) writes tc_gemm_power.md.

tc_gemm_bench runs each benchmark of NAMES 40 times while nvidia-smi samples the SM clock and the
power draw every 200 ms. The samples taken while the board draws more than half its power limit (the
benchmark's kernels, not its host-side setup) are summarized as medians in a Markdown table, with
the GPU's name and the commit (.smem-commit, else git).
"""
import pathlib
import statistics
import subprocess
import sys

NAMES = [f"tc_gemm/{v}/8192x8192x8192" for v in ("tuned", "ldsm_roof", "tma", "tuned_hopper", "cublas")]
REPS = 40


def commit() -> str:
    marker = pathlib.Path(".smem-commit")
    if marker.exists():
        return marker.read_text().strip()[:12]
    return subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()


def sample(binary: str, name: str) -> list[tuple[float, float, float]]:
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=clocks.sm,power.draw,power.limit", "--format=csv,noheader,nounits", "-lms", "200"],
        stdout=subprocess.PIPE, text=True)
    try:
        subprocess.run([binary, f"--benchmark_filter=^{name}/", f"--benchmark_repetitions={REPS}"],
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


def main(build: str, stem: str) -> int:
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                         text=True, check=True).stdout.splitlines()[0].strip()
    out = [f"`./cookbook probe tc_gemm_power` on the {gpu} at commit {commit()}: medians of nvidia-smi's samples "
           f"(every 200 ms) taken while the board drew more than half its power limit, {REPS} repetitions.", "",
           "| benchmark | samples | SM clock (MHz) | power (W) | power limit (W) |", "| --- | --- | --- | --- | --- |"]
    for name in NAMES:
        loaded = [r for r in sample(f"{build}/bench/tc_gemm_bench", name) if r[1] > r[2] / 2]
        out.append(f"| `{name}` | {len(loaded)} | " + (" | ".join(
            f"{statistics.median(r[i] for r in loaded):.0f}" for i in (0, 1)) + f" | {loaded[0][2]:.0f} |"
            if loaded else "- | - | - |"))
    pathlib.Path(stem + ".md").write_text("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
