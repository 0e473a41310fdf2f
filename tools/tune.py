#!/usr/bin/env python3
"""The tuned tables' writer, for `./cookbook tune <family>`:

    tools/tune.py --runs FAMILY   per table of the family: its run's name, benchmark filter, repetitions
    tools/tune.py RUN [--write]   RUN: results/<gpu>/<name>.json (or .csv); --write: the csv and the table
    tools/tune.py --check         each committed table is what a run in results/ gives

./cookbook runs the benchmark with SMEM_TUNE=1 (which adds the candidates, <family>/tune_<fields>/...)
over the table's filter into <name>.json and .log; this prints the rates and the entries into the log
and puts the entries in place of the GPU's between the table's markers (its key: compute capability,
SMs, shared memory and registers per SM)."""
import argparse
import collections
import csv
import math
import os
import re

import results

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAST = 9223372036854775807
# fields: a candidate's name without `tune_` (the gemm csv of the first runs has / between the tiles);
# smem: its stages' bytes, from its fields.
# klass: the class of a shape (entries are per class; a tuple: the entry's leading fields); exact: an entry
# covers its class only (no bound).
Table = collections.namedtuple("Table", "family name header fields filter reps baseline threshold between smem klass "
                                        "exact", defaults=(lambda s: s[0] * s[1], False))
TABLES = [
    Table("gemm", "gemm_tune", "recipes/gemm/sgemm_13_autotuned.cuh",  # BM BN BK, WM WN, TM TN, stages
          r"(\d+)x(\d+)x(\d+)[_/](\d+)x(\d+)[_/](\d+)x(\d+)[_/](\d+)",
          "gemm/(cublas|heuristic|tune_[0-9][^/]*)/(1000x1000x1000|2048x2048x2048|4096x4096x4096|8192x8192x8192)/",
          5, "heuristic", 0.0, True, lambda f: f[7] * (f[0] + f[1]) * f[2] * 4),
    Table("gemm", "gemm_tune_split", "recipes/gemm/sgemm_17_split_tuned.cuh", r"split_(\d+)_(\d+)_(\d+)",  # BM stages group
          "gemm/(split_presplit|tune_split_[0-9_]+)/(1000x1000x1000|2048x2048x2048|4096x4096x4096|8192x8192x8192)/",
          5, "split_presplit", 0.01, True, lambda f: f[1] * (2 * f[0] + 128) * 32 * 4),
    Table("tc_gemm", "tc_gemm_tune", "recipes/tc_gemm/tc_gemm_07_tuned.cuh",  # BM BN BK, WM WN, stages
          r"(\d+)x(\d+)x(\d+)_(\d+)x(\d+)_(\d+)", "tc_gemm/(tuned_heuristic|tune_[0-9][^/]*)/", 3,
          "tuned_heuristic", 0.03, False, lambda f: f[5] * (f[0] + f[1]) * f[2] * 2),
    Table("tc_gemm", "tc_gemm_tune_hopper", "recipes/tc_gemm/tc_gemm_16_tuned_hopper.cuh",  # BN stages cluster group
          r"hopper_(\d+)_(\d+)_(\d+)_(\d+)", "tc_gemm/(gpc_order|tune_hopper_[0-9_]+)/", 5, "gpc_order", 0.01, False,
          lambda f: f[1] * (128 * 64 + 64 * f[0]) * 2),
    # row tiles, keys, warps, Q regs, blocks per SM (names without the last, from the first runs: 1);
    # shapes (head_dim, causal, B, Hq, Hkv, Nq, Nkv): an entry per head_dim
    Table("attention", "attention_tune", "recipes/attention/attention_08_tuned.cuh",
          r"(\d+)x(\d+)x(\d+)x(\d+)(?:x(\d+))?",
          "attention/(tuned|tune_[0-9x]+)/hd[0-9]+/(full|causal)/[0-9]+x[0-9]+x[0-9]+x(1024|2048|4096|8192|16384)x",
          3, "tuned", 0.02, False, lambda f: 16 * f[0] * f[2] + 4 * f[1], lambda s: s[0], True),
    # consumer warpgroups, stages, persistent (step 12's kernel), keys; an entry per head_dim and mask
    Table("attention", "attention_tune_hopper", "recipes/attention/attention_15_hopper_tuned.cuh",
          r"hopper_(\d+)_(\d+)_(\d+)_(\d+)",
          "attention/(hopper_tuned|tune_hopper_[0-9_]+)/hd[0-9]+/(full|causal)/[0-9]+x[0-9]+x[0-9]+x(1024|2048|4096|8192|16384)x",
          3, "hopper_tuned", 0.02, False, lambda f: 2 * f[3] * f[1] + 64 * f[0] * (1 + f[2]), lambda s: (s[0], s[1]), True),
]
MARKED = re.compile(r"(// BEGIN TUNED[A-Z ]* TABLE\n)#define (\w+)\(X\)(.*?)\n(// END TUNED)", re.S)


def fields(t, name):
    m = re.fullmatch(t.fields, name)
    return [int(x) if x is not None else 1 for x in m.groups()] if m else None


def shape_name(s):
    return str(s[0]) if s[0] == s[1] == s[2] else "x".join(map(str, s))


def load(path):
    """(context, {name: {(M, N, K): TFLOP/s}}): the benchmark's medians, or the csv (no context)."""
    if path.endswith(".csv"):
        head, *rows = csv.reader(open(path))
        shapes = [tuple(int(x) for x in c.split("x")) if "x" in c else (int(c),) * 3 for c in head[1:]]
        return {}, {r[0]: {s: float(x) for s, x in zip(shapes, r[1:]) if float(x) > 0} for r in rows}
    r = results.Run(path)
    rates = {re.sub("^tune_", "", v): {shape_key(s): vs[v]["TFLOP/s"] for s, vs in r.shapes.items()
                                       if "TFLOP/s" in vs.get(v, {})} for v in r.seen}
    return r.ctx, {v: x for v, x in rates.items() if x}


def shape_key(s):
    """A benchmark's shape as integers: 4096x4096x4096, or hd128/causal/4x16x16x4096x4096 (causal 1, full 0)."""
    return tuple(int(x) if x.isdigit() else int(x == "causal") for x in re.findall(r"\d+|causal|full", s))


def shapes_of(rates):
    return sorted({s for r in rates.values() for s in r}, key=lambda s: (s[0] * s[1], s))


def rows(t, rates):
    """The rates as rows: the shapes, then each baseline and each candidate (by its fields)."""
    return [["candidate"] + [shape_name(s) for s in shapes_of(rates)]] + [
        [v] + [rates[v].get(s) for s in shapes_of(rates)] for v in sorted(rates, key=lambda v: (fields(t, v) or [], v))]


def choose(t, rates):
    """[(max_mn, candidate, [shapes])]: the shapes in classes by M N. In each, from the smallest, a
    candidate's cost is the best rate over its own, averaged over the class; those within the table's
    threshold of the cheapest are equal (run-to-run spread): the previous class's pick stays if among
    them, else the one with the least shared memory wins. An entry covers outputs up to its class's
    M N (`between`: the geometric mean of its and the next's), the last any larger; neighbours merge."""
    cands, classes, picks = {v: r for v, r in rates.items() if fields(t, v)}, {}, []
    for s in sorted(shapes_of(cands), key=lambda s: (t.klass(s), s)):
        classes.setdefault(t.klass(s), []).append(s)
    mns = list(classes)
    for i, (mn, group) in enumerate(classes.items()):
        best = {s: max(r[s] for r in cands.values() if s in r) for s in group}
        cost = {v: sum(best[s] / r[s] for s in group) / len(group)
                for v, r in cands.items() if all(s in r for s in group)}
        near = [v for v in cost if cost[v] <= min(cost.values()) * (1 + t.threshold)]
        prev = picks[-1][1] if picks else None
        pick = prev if prev in near else min(near, key=lambda v: (t.smem(fields(t, v)), cost[v]))
        bound = mn if t.exact else LAST if i + 1 == len(mns) else math.isqrt(mn * mns[i + 1]) if t.between else mn
        merge = pick == prev and not t.exact
        picks[-1:] = [(bound, pick, picks[-1][2] + group)] if merge else picks[-1:] + [(bound, pick, group)]
    return picks


def key_of(ctx):
    cc = ctx["gpu_cc"].split(".")
    return [int(cc[0]) * 10 + int(cc[1])] + [int(ctx[k]) for k in ("gpu_sm_count", "gpu_smem_per_sm_bytes",
                                                                    "gpu_regs_per_sm")]


def with_entries(t, text, key, picks):
    """The header's text with GPU `key`'s entries replaced by `picks`, backslashes aligned."""
    m = MARKED.search(text)
    prefix = "X(" + ", ".join(map(str, key)) + ","
    lines = [e for e in (l.rstrip(" \\").strip() for l in m[3].splitlines()) if e and not e.startswith(prefix)]
    cls = lambda mn: ", ".join(map(str, mn)) if isinstance(mn, tuple) else f"{mn}LL"  # a class's fields, or a bound
    lines = [f"#define {m[2]}(X)"] + lines + [f"{prefix} {cls(mn)}, " + ", ".join(map(str, fields(t, v))) + ")"
                                              for mn, v, _ in picks]
    lines = [lines[0]] + ["  " + l for l in lines[1:]]
    col = max(len(lines[0]) - 1, *(len(l) - 2 for l in lines[1:])) + 3
    body = "\n".join(l + (" " * (col - len(l)) + "\\" if i + 1 < len(lines) else "") for i, l in enumerate(lines))
    return text[:m.start()] + m[1] + body + "\n" + m[4] + text[m.end():]


def report(t, ctx, rates, picks):
    w, base = max(map(len, rates)) + 2, rates.get(t.baseline, {})
    out = [f"TFLOP/s (median of the repetitions) on {ctx.get('gpu_name', '?')}:"] + [
        (r[0] if i else "shape").ljust(w) + "".join(f"{x:>16s}" if i == 0 else f"{x:16.2f}" if x else f"{'-':>16s}"
                                                   for x in r[1:]) for i, r in enumerate(rows(t, rates))]
    out += ["", f"entries of {t.header} (up to M N: candidate; its gain over {t.baseline} at each shape):"]
    out += [f"  {'any larger' if mn == LAST else f'class {mn}' if t.exact else f'up to {mn}'}: {v} (" +
            ", ".join(f"{shape_name(s)}: {rates[v][s] / base[s]:.3f}" for s in group if s in base) + ")"
            for mn, v, group in picks]
    return "\n".join(out)


def check():
    """A table passes if a run in results/ gives it (a csv, which has no context, under any key the
    table holds) and another GPU's entries written and removed again leave it as it is."""
    bad = 0
    for t in TABLES:
        text = open(os.path.join(ROOT, t.header)).read()
        keys = [[int(x) for x in k.split(",")] for k in set(re.findall(r"X\((\d+, \d+, \d+, \d+),", text))]
        same = [p for p in results.files(os.path.join(ROOT, "results"), t.name + ".*")
                if p.endswith((".json", ".csv")) for ctx, rates in [load(p)] for picks in [choose(t, rates)]
                if any(with_entries(t, text, k, picks) == text for k in ([key_of(ctx)] if ctx else keys))
                and with_entries(t, with_entries(t, text, [0] * 4, picks), [0] * 4, []) == text]
        print(f"tune: {t.header}: " + (f"what {os.path.relpath(same[0], ROOT)} gives" if same else "no run gives it"))
        bad += not same
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", nargs="?")
    ap.add_argument("--write", action="store_true", help="write the csv and the GPU's entries into the table")
    ap.add_argument("--runs", metavar="FAMILY")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.check:
        return check()
    if a.runs is not None:
        found = [f"{t.name} {t.filter} {t.reps}" for t in TABLES if t.family == a.runs]
        print("\n".join(found) if found else ap.error(f"no tuned table in family '{a.runs}'"))
        return 0
    t = next((t for t in TABLES if os.path.basename(a.run or "").rsplit(".", 1)[0] == t.name), None)
    ctx, rates = load(a.run) if t else ap.error("a run named after a table: " + ", ".join(t.name for t in TABLES))
    picks = choose(t, rates)
    if not picks or (a.write and not ctx):
        ap.error(f"{a.run}: " + ("no GPU key: --write needs the run's JSON" if picks else "no candidates"))
    print(report(t, ctx, rates, picks))
    if a.write:
        with open(a.run.rsplit(".", 1)[0] + ".csv", "w", newline="") as f:
            csv.writer(f).writerows([r[:1] + [x if i == 0 else f"{x or 0:.6f}" for x in r[1:]]
                                     for i, r in enumerate(rows(t, rates))])
        text = with_entries(t, open(os.path.join(ROOT, t.header)).read(), key_of(ctx), picks)
        open(os.path.join(ROOT, t.header), "w").write(text)
        print(f"wrote {len(picks)} entries into {t.header}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
