#!/usr/bin/env python3
"""Writes the tuned tables of step 7 (recipes/tc_gemm/tc_gemm_07_tuned.cuh) and step 14
(recipes/tc_gemm/tc_gemm_14_tuned_hopper.cuh) from a tuning run.

    tools/tc_gemm_tune.py TUNE_JSON [--step 7|14] [--write HEADER] [--threshold T]
    tools/tc_gemm_tune.py --self-test

TUNE_JSON is a run of tc_gemm_bench with SMEM_TC_TUNE=1 (`./cookbook tune tc_gemm` makes it):
the medians of step 7's candidates tc_gemm/tune_<BM>x<BN>x<BK>_<WM>x<WN>_<stages>/<M>x<N>x<K>, or
of step 14's tc_gemm/tune_hopper_<BN>_<stages>_<cluster_m>_<group_rows>/<shape> (those that store
D through shared memory, as the table's shapes do), and of the variant each table is measured
against (`tuned_heuristic`, `cluster`). The shapes are grouped into output-size classes by M N. In
each class, from the smallest, a candidate's cost is its time over the class's fastest, averaged
over the class's shapes. The candidates within the threshold of the cheapest are equal (their
difference is within the run-to-run spread; 3% for step 7's candidates, which are different
kernels, 1% for step 14's, shapes of one kernel whose medians lie close together): the
class keeps the previous class's shape if it is
one of them, else takes the one of them with the least shared memory. The last class covers every
larger size. With --write, the GPU's entries (its key: compute capability, SMs,
shared memory and registers per SM, from the run's context) replace its old ones between the
table's markers; other GPUs' entries are kept. Prints each class's shape and its gain over the
variant the table is measured against.
"""
import argparse
import json
import re
import sys

LAST = 9223372036854775807


class Table:
    """One step's tuned table: its candidates' names, its markers and macro, their shared memory."""

    def __init__(self, pattern, markers, macro, smem, baseline, threshold):
        self.pattern, self.markers, self.macro, self.smem = re.compile(pattern), markers, macro, smem
        self.baseline, self.threshold = baseline, threshold

    def fields(self, variant):
        return self.pattern.match(variant).groups()


# Step 7: stages x (BM BK + BK BN) bf16. Step 14: stages x (128 x 64 + 64 BN) bf16 (the staging
# panels are the same for every shape).
TABLES = {
    7: Table(r"tune_(\d+)x(\d+)x(\d+)_(\d+)x(\d+)_(\d+)$", ("// BEGIN TUNED TABLE\n", "// END TUNED TABLE\n"),
             "SMEM_TC_TUNED_TABLE", lambda f: f[5] * (f[0] * f[2] + f[2] * f[1]) * 2, "tuned_heuristic", 0.03),
    14: Table(r"tune_hopper_(\d+)_(\d+)_(\d+)_(\d+)$",
              ("// BEGIN TUNED HOPPER TABLE\n", "// END TUNED HOPPER TABLE\n"), "SMEM_TC_HOPPER_TUNED_TABLE",
              lambda f: f[1] * (128 * 64 + 64 * f[0]) * 2, "cluster", 0.01),
}


def medians(path):
    data = json.load(open(path))
    times = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        _, variant, shape = b["name"].split("/")[:3]
        times.setdefault(variant, {})[tuple(int(x) for x in shape.split("x"))] = b["real_time"]
    return data["context"], times


def smem_bytes(table, variant):
    """Dynamic shared memory of a candidate's stages."""
    return table.smem([int(x) for x in table.fields(variant)])


def choose(table, times, threshold):
    """[(max_mn, candidate, shapes)] from the smallest output-size class up."""
    cands = {v: t for v, t in times.items() if table.pattern.match(v)}
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
        pick = prev if prev in near else min(near, key=lambda v: (smem_bytes(table, v), cost[v]))
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


def write(table, header, key, picks):
    text = open(header).read()
    begin, end = table.markers
    if begin not in text or end not in text:
        raise SystemExit(f"tc_gemm_tune: {header} has no tuned-table markers")
    head, rest = text.split(begin, 1)
    body, tail = rest.split(end, 1)
    prefix = "X(" + ", ".join(str(k) for k in key) + ","
    keep = [l.rstrip(" \\").strip() for l in body.splitlines()[1:] if l.strip() and not l.strip().startswith(prefix)]
    mine = [f"{prefix} {mn}LL, " + ", ".join(table.fields(v)) + ")" for mn, v, _ in picks]
    lines = keep + mine
    define = f"#define {table.macro}(X)"
    width = max([len(l) for l in lines] + [len(define) - 1]) + 2
    out = define + (" " * (width + 1 - len(define)) + "\\" if lines else "") + "\n"
    out += "".join(f"  {l}" + (" " * (width - len(l) - 1) + "\\" if i + 1 < len(lines) else "") + "\n"
                   for i, l in enumerate(lines))
    open(header, "w").write(head + begin + out + end + tail)


def self_test():
    """Checks choose() and write() on made-up runs: the threshold, the merged classes, the last
    class's bound and the other GPUs' entries, for both tables."""
    import os
    import tempfile
    t = {"tune_128x64x64_64x32_4": {(1024, 1024, 1024): 1.0, (2048, 2048, 2048): 4.04, (8192, 8192, 8192): 300.0},
         "tune_128x256x64_64x64_3": {(1024, 1024, 1024): 2.0, (2048, 2048, 2048): 4.0, (8192, 8192, 8192): 200.0},
         "tune_128x256x64_64x64_4": {(1024, 1024, 1024): 2.0, (2048, 2048, 2048): 4.0, (8192, 8192, 8192): 199.0},
         "tuned_heuristic": {(1024, 1024, 1024): 1.5}}
    picks = choose(TABLES[7], t, 0.03)
    got = [(mn, v, len(g)) for mn, v, g in picks]
    # 2048^2: 128 x 64 is within 3% of the fastest, so it stays; 8192^2: 128 x 256 wins by 50%,
    # and of its two ring depths, equal within 3%, the one with less shared memory is taken.
    want = [(2048 * 2048, "tune_128x64x64_64x32_4", 2), (LAST, "tune_128x256x64_64x64_3", 1)]
    assert got == want, got
    # Step 14: at 1024^2 the narrow tile wins; at 4096^2 the two wide shapes are equal within 3%
    # and the three-stage ring has less shared memory; the direct-store candidate is no table shape.
    h = {"tune_hopper_128_6_2_8": {(1024, 1024, 1024): 1.0, (4096, 4096, 4096): 300.0},
         "tune_hopper_256_4_2_8": {(1024, 1024, 1024): 1.4, (4096, 4096, 4096): 200.0},
         "tune_hopper_256_3_2_8": {(1024, 1024, 1024): 1.4, (4096, 4096, 4096): 203.0},
         "tune_hopper_256_4_2_8_direct": {(1024, 1024, 1024): 0.5, (4096, 4096, 4096): 100.0}}
    hpicks = choose(TABLES[14], h, 0.03)
    got = [(mn, v, len(g)) for mn, v, g in hpicks]
    assert got == [(1024 * 1024, "tune_hopper_128_6_2_8", 1), (LAST, "tune_hopper_256_3_2_8", 1)], got
    # With step 14's own threshold (1%), the 1.5% faster four-stage ring is no longer equal.
    got = [v for _, v, _ in choose(TABLES[14], h, TABLES[14].threshold)]
    assert got == ["tune_hopper_128_6_2_8", "tune_hopper_256_4_2_8"], got
    with tempfile.TemporaryDirectory() as d:
        header = os.path.join(d, "t.cuh")
        open(header, "w").write("a\n// BEGIN TUNED TABLE\n#define SMEM_TC_TUNED_TABLE(X) \\\n"
                                "  X(80, 108, 167936, 65536, 5LL, 1, 2, 3, 4, 5, 6) \\\n"
                                "  X(90, 132, 233472, 65536, 7LL, 1, 2, 3, 4, 5, 6)\n// END TUNED TABLE\nb\n")
        write(TABLES[7], header, (90, 132, 233472, 65536), picks)
        lines = [l.strip().rstrip("\\").strip() for l in open(header).read().splitlines()]
        assert lines[0] == "a" and lines[-1] == "b", lines
        assert lines[3] == "X(80, 108, 167936, 65536, 5LL, 1, 2, 3, 4, 5, 6)", lines
        assert lines[4] == "X(90, 132, 233472, 65536, 4194304LL, 128, 64, 64, 64, 32, 4)", lines
        assert lines[5] == f"X(90, 132, 233472, 65536, {LAST}LL, 128, 256, 64, 64, 64, 3)", lines
        assert len(lines) == 8, lines
        open(header, "w").write("// BEGIN TUNED HOPPER TABLE\n#define SMEM_TC_HOPPER_TUNED_TABLE(X) \\\n"
                                "  X(90, 132, 233472, 65536, 4194304, 256, 4, 2, 16) /* old */ \\\n"
                                "  X(100, 148, 233472, 65536, 5LL, 256, 4, 2, 8)\n// END TUNED HOPPER TABLE\n")
        write(TABLES[14], header, (90, 132, 233472, 65536), hpicks)
        lines = [l.strip().rstrip("\\").strip() for l in open(header).read().splitlines()]
        assert lines[2] == "X(100, 148, 233472, 65536, 5LL, 256, 4, 2, 8)", lines
        assert lines[3] == "X(90, 132, 233472, 65536, 1048576LL, 128, 6, 2, 8)", lines
        assert lines[4] == f"X(90, 132, 233472, 65536, {LAST}LL, 256, 3, 2, 8)", lines
        assert len(lines) == 6, lines
        write(TABLES[14], header, (100, 148, 233472, 65536), [])  # a GPU's entries go; none left
        write(TABLES[14], header, (90, 132, 233472, 65536), [])
        assert open(header).read().splitlines()[1] == "#define SMEM_TC_HOPPER_TUNED_TABLE(X)", open(header).read()
    print("tc_gemm_tune: self-test passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("--step", type=int, choices=sorted(TABLES), default=7, help="the step whose table to tune")
    ap.add_argument("--write", help="the header whose table gets this GPU's entries")
    ap.add_argument("--threshold", type=float, help="candidates this close count as equal (default: the step's)")
    a = ap.parse_args()
    table = TABLES[a.step]
    ctx, times = medians(a.json)
    picks = choose(table, times, table.threshold if a.threshold is None else a.threshold)
    if not picks:
        raise SystemExit(f"tc_gemm_tune: no step {a.step} candidates in the run (SMEM_TC_TUNE=1)")
    base = times.get(table.baseline, {})
    print(f"tc_gemm step {a.step} tuned shapes for {ctx.get('gpu_name', '?')}:")
    for mn, v, group in picks:
        gains = [base[s] / times[v][s] for s in group if s in base]
        gain = f", {sum(gains) / len(gains):.2f}x {table.baseline}" if gains else ""
        bound = "any larger" if mn == LAST else f"up to {mn}"
        print(f"  M N {bound}: {v[5:]} ({', '.join('x'.join(map(str, s)) for s in group)}{gain})")
    if a.write:
        write(table, a.write, key_of(ctx), picks)
        print(f"wrote the entries into {a.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
