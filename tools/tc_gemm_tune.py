#!/usr/bin/env python3
"""Writes step 7's tuned table (recipes/tc_gemm/tc_gemm_07_tuned.cuh) from a tuning run.

    tools/tc_gemm_tune.py TUNE_JSON [--write HEADER] [--threshold 0.03]
    tools/tc_gemm_tune.py --self-test

TUNE_JSON is a run of tc_gemm_bench with SMEM_TC_TUNE=1 (`./cookbook tune tc_gemm` makes it):
the medians of tc_gemm/tune_<BM>x<BN>x<BK>_<WM>x<WN>_<stages>/<M>x<N>x<K> and of
tc_gemm/tuned_heuristic/<shape>. The shapes are grouped into output-size classes by M N. In each
class, from the smallest, a candidate's cost is its time over the class's fastest, averaged over
the class's shapes. The candidates within the threshold of the cheapest are equal (their
difference is within the run-to-run spread): the class keeps the previous class's shape if it is
one of them, else takes the one of them with the least shared memory. The last class covers every
larger size. With --write, the GPU's entries (its key: compute capability, SMs,
shared memory and registers per SM, from the run's context) replace its old ones between the
table's markers; other GPUs' entries are kept. Prints each class's shape and its gain over
`tuned_heuristic`.
"""
import argparse
import json
import re
import sys

CANDIDATE = re.compile(r"tune_(\d+)x(\d+)x(\d+)_(\d+)x(\d+)_(\d+)$")
LAST = 9223372036854775807


def medians(path):
    data = json.load(open(path))
    times = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        _, variant, shape = b["name"].split("/")[:3]
        times.setdefault(variant, {})[tuple(int(x) for x in shape.split("x"))] = b["real_time"]
    return data["context"], times


def smem_bytes(variant):
    """Dynamic shared memory of a candidate: stages x (BM BK + BK BN) bf16."""
    bm, bn, bk, _, _, stages = map(int, CANDIDATE.match(variant).groups())
    return stages * (bm * bk + bk * bn) * 2


def choose(times, threshold):
    """[(max_mn, candidate, shapes)] from the smallest output-size class up."""
    cands = {v: t for v, t in times.items() if CANDIDATE.match(v)}
    shapes = sorted({s for t in cands.values() for s in t}, key=lambda s: (s[0] * s[1], s))
    classes = {}
    for s in shapes:
        classes.setdefault(s[0] * s[1], []).append(s)
    picks, prev = [], None
    for mn, group in sorted(classes.items()):
        best = {s: min(t[s] for t in cands.values() if s in t) for s in group}
        cost = {v: sum(t[s] / best[s] for s in group) / len(group)
                for v, t in cands.items() if all(s in t for s in group)}
        cheapest = min(cost.values())
        near = [v for v in cost if cost[v] <= cheapest * (1 + threshold)]
        pick = prev if prev in near else min(near, key=lambda v: (smem_bytes(v), cost[v]))
        if picks and picks[-1][1] == pick:
            picks[-1] = (mn, pick, picks[-1][2] + group)
        else:
            picks.append((mn, pick, group))
        prev = pick
    return [(LAST if i + 1 == len(picks) else mn, v, g) for i, (mn, v, g) in enumerate(picks)]


def key_of(ctx):
    try:
        major, minor = ctx["gpu_cc"].split(".")
        return (int(major) * 10 + int(minor), int(ctx["gpu_sm_count"]), int(ctx["gpu_smem_per_sm_bytes"]),
                int(ctx["gpu_regs_per_sm"]))
    except KeyError as e:
        raise SystemExit(f"tc_gemm_tune: the run's context has no {e}: run the benchmark again") from None


def write(header, key, picks):
    text = open(header).read()
    begin, end = "// BEGIN TUNED TABLE\n", "// END TUNED TABLE\n"
    if begin not in text or end not in text:
        raise SystemExit(f"tc_gemm_tune: {header} has no tuned-table markers")
    head, rest = text.split(begin, 1)
    body, tail = rest.split(end, 1)
    prefix = "X(" + ", ".join(str(k) for k in key) + ","
    keep = [l.rstrip(" \\").strip() for l in body.splitlines()[1:] if l.strip() and not l.strip().startswith(prefix)]
    mine = [f"{prefix} {mn}LL, " + ", ".join(CANDIDATE.match(v).groups()) + ")" for mn, v, _ in picks]
    lines = keep + mine
    width = max(len(l) for l in lines) + 2
    table = "#define SMEM_TC_TUNED_TABLE(X)" + (" " * (width + 1 - len("#define SMEM_TC_TUNED_TABLE(X)")) + "\\"
                                            if lines else "") + "\n"
    table += "".join(f"  {l}" + (" " * (width - len(l) - 1) + "\\" if i + 1 < len(lines) else "") + "\n"
                     for i, l in enumerate(lines))
    open(header, "w").write(head + begin + table + end + tail)


def self_test():
    """Checks choose() and write() on a made-up run: the threshold, the merged classes, the last
    class's bound and the other GPUs' entries."""
    import os
    import tempfile
    t = {"tune_128x64x64_64x32_4": {(1024, 1024, 1024): 1.0, (2048, 2048, 2048): 4.04, (8192, 8192, 8192): 300.0},
         "tune_128x256x64_64x64_3": {(1024, 1024, 1024): 2.0, (2048, 2048, 2048): 4.0, (8192, 8192, 8192): 200.0},
         "tune_128x256x64_64x64_4": {(1024, 1024, 1024): 2.0, (2048, 2048, 2048): 4.0, (8192, 8192, 8192): 199.0},
         "tuned_heuristic": {(1024, 1024, 1024): 1.5}}
    picks = choose(t, 0.03)
    got = [(mn, v, len(g)) for mn, v, g in picks]
    # 2048^2: 128 x 64 is within 3% of the fastest, so it stays; 8192^2: 128 x 256 wins by 50%,
    # and of its two ring depths, equal within 3%, the one with less shared memory is taken.
    want = [(2048 * 2048, "tune_128x64x64_64x32_4", 2), (LAST, "tune_128x256x64_64x64_3", 1)]
    assert got == want, got
    with tempfile.TemporaryDirectory() as d:
        header = os.path.join(d, "t.cuh")
        open(header, "w").write("a\n// BEGIN TUNED TABLE\n#define SMEM_TC_TUNED_TABLE(X) \\\n"
                                "  X(80, 108, 167936, 65536, 5LL, 1, 2, 3, 4, 5, 6) \\\n"
                                "  X(90, 132, 233472, 65536, 7LL, 1, 2, 3, 4, 5, 6)\n// END TUNED TABLE\nb\n")
        write(header, (90, 132, 233472, 65536), picks)
        lines = [l.strip().rstrip("\\").strip() for l in open(header).read().splitlines()]
    assert lines[0] == "a" and lines[-1] == "b", lines
    assert lines[3] == "X(80, 108, 167936, 65536, 5LL, 1, 2, 3, 4, 5, 6)", lines
    assert lines[4] == "X(90, 132, 233472, 65536, 4194304LL, 128, 64, 64, 64, 32, 4)", lines
    assert lines[5] == f"X(90, 132, 233472, 65536, {LAST}LL, 128, 256, 64, 64, 64, 3)", lines
    assert len(lines) == 8, lines
    print("tc_gemm_tune: self-test passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("--write", help="the header whose table gets this GPU's entries")
    ap.add_argument("--threshold", type=float, default=0.03)
    a = ap.parse_args()
    ctx, times = medians(a.json)
    picks = choose(times, a.threshold)
    if not picks:
        raise SystemExit("tc_gemm_tune: no tune_* candidates in the run (SMEM_TC_TUNE=1)")
    heuristic = times.get("tuned_heuristic", {})
    print(f"tc_gemm tuned shapes for {ctx.get('gpu_name', '?')}:")
    for mn, v, group in picks:
        gains = [heuristic[s] / times[v][s] for s in group if s in heuristic]
        gain = f", {sum(gains) / len(gains):.2f}x tuned_heuristic" if gains else ""
        bound = "any larger" if mn == LAST else f"up to {mn}"
        print(f"  M N {bound}: {v[5:]} ({', '.join('x'.join(map(str, s)) for s in group)}{gain})")
    if a.write:
        write(a.write, key_of(ctx), picks)
        print(f"wrote the entries into {a.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
