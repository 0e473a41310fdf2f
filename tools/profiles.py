"""Regions made from the text files that GPU runs leave in results/<gpu>/: Nsight Compute
figures, tuner logs, the bad-input matrix and the sanitizer summary. The files stay unedited;
a page shows the figures it discusses through these regions, never typed by hand.

PROFILES: name -> ("metrics", file, anchor, [(label, key)]): one row per label, one column per GPU
whose results hold the file; the value is the last field of the first line (after the anchor
text, and after `@n` earlier matches) that starts with key, or group 1 of a key `re:<regex>`.
Or name -> ("lines", file, first, last): the lines from the first that starts with `first` to
the last that starts with `last`, verbatim."""
import glob
import os
import re

S = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{}.sum"
WAVES = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{}.sum"
PROFILES = {
    "gemm-autotuned": ("metrics", "gemm_ncu_autotuned_4096.txt", "", [
        ("kernel duration (ms)", "Duration"), ("registers per thread", "Registers Per Thread"),
        ("dynamic shared memory per block (KB)", "Dynamic Shared Memory Per Block"),
        ("blocks per SM, register limit", "Block Limit Registers"),
        ("blocks per SM, shared-memory limit", "Block Limit Shared Mem"),
        ("achieved occupancy (%)", "Achieved Occupancy"), ("grid (blocks)", "Grid Size"),
        ("waves per SM", "Waves Per SM"), ("issue slots busy (%)", "Issue Slots Busy"),
        ("FMA pipe, of its peak (%)", r"re:FMA is the highest-utilized pipeline \(([\d.]+)%\)"),
        ("eligible warps per scheduler", "Eligible Warps Per Scheduler"),
        ("cycles with no eligible warp (%)", "No Eligible"), ("L1/TEX throughput (%)", "L1/TEX Cache Throughput"),
        ("DRAM throughput (%)", "DRAM Throughput"), ("L2 hit rate (%)", "L2 Hit Rate")]),
    "gemm-stalls": ("metrics", "gemm_ncu_stalls_4096.txt", "", [
        (f"{label} (`{k}`)", S.format(k)) for label, k in [
            ("eligible, not selected", "not_selected"), ("selected (issuing)", "selected"),
            ("shared-memory load pending", "short_scoreboard"), ("dispatch stall", "dispatch_stall"),
            ("barrier", "barrier"), ("global-memory load pending", "long_scoreboard"), ("fixed latency", "wait"),
            ("memory pipe throttle", "mio_throttle"), ("no instruction", "no_instruction"),
            ("math pipe throttle", "math_pipe_throttle")]]),
    "gemm-padding": ("metrics", "gemm_ncu.txt", "", [
        (f"`{v}`: {label}", f"{v} {key}") for v in ("tiled_32", "tiled_32_padded") for label, key in [
            ("kernel time (ns)", "gpu__time_duration.sum"),
            ("shared load instructions", "smsp__inst_executed_op_shared_ld.sum"),
            ("shared load wavefronts", WAVES.format("ld")),
            ("shared load bank conflicts", CONFLICTS.format("ld")),
            ("FMA pipe active (% of peak)", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active")]]),
    "gemm-conflict-free": ("metrics", "gemm_ncu_steps10_13.txt", "## 1.", [
        (f"`{v}`: {label}", key + ("@1" if v == "conflict_free" else "")) for v in ("vectorized", "conflict_free")
        for label, key in [("shared store bank conflicts", CONFLICTS.format("st")),
                           ("shared store wavefronts", WAVES.format("st")),
                           ("shared load wavefronts", WAVES.format("ld"))]]),
    "reduction-ncu": ("metrics", "reduction_ncu.txt", "", [
        (f"{who}: {label}", f"{key}@{n}") for who, n in (("single pass", 0), ("CUB", 2)) for label, key in [
            ("kernel time (us)", "gpu__time_duration.sum"), ("grid (blocks)", "launch__grid_size"),
            ("threads per block", "launch__block_size"),
            ("DRAM throughput (% of peak)", "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
            ("warp slots occupied (%)", "sm__warps_active.avg.pct_of_peak_sustained_active"),
            ("warps stalled on a load (%)", "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct")]]),
    "reduction-tune": ("lines", "reduction_tune.txt", "tune_", "picked"),
    "gemm-tune": ("lines", "gemm_tune.log", "TFLOP/s", "  n =  8192"),
}


def files(results, name):
    return sorted(glob.glob(os.path.join(results, "*", name)))


def value(text, key):
    key, n = (key.rsplit("@", 1)[0], int(key.rsplit("@", 1)[1])) if "@" in key else (key, 0)
    if key.startswith("re:"):
        found = re.findall(key[3:], text)
    else:
        found = [line.split()[-1] for line in text.splitlines() if line.strip().startswith(key + " ")]
    return found[n] if len(found) > n else "-"


def profile(results, name, label):
    kind, fname, a, b = PROFILES[name]
    paths = files(results, fname)
    if not paths:
        return f"Not measured yet: this region shows `results/<gpu>/{fname}` once a GPU run has written it."
    texts = [open(p).read() for p in paths]
    where = ", ".join(f"`results/{os.path.basename(os.path.dirname(p))}/{fname}`" for p in paths)
    if kind == "lines":
        blocks = []
        for p, t in zip(paths, texts):
            lines = t.splitlines()
            i = next(i for i, l in enumerate(lines) if l.startswith(a))
            j = max(j for j, l in enumerate(lines) if l.startswith(b))
            blocks += [f"From `results/{os.path.basename(os.path.dirname(p))}/{fname}` ({label(p)}):", "",
                       "\n".join("    " + l for l in lines[i:j + 1]), ""]
        return "\n".join(blocks)
    texts = [t[t.find(a):] for t in texts]
    rows = [f"| {lab} | " + " | ".join(value(t, k) for t in texts) + " |" for lab, k in b]
    return "\n".join([f"From {where}, unedited:", "", "| metric | " + " | ".join(label(p) for p in paths) + " |",
                      "| --- |" + " ---: |" * len(paths)] + rows)


def bad_inputs(results, label):
    """The bad-input matrix (tests/bad_input_test writes one table per family: a row per case, a
    column per variant), folded to one row per case with the variants grouped by outcome."""
    paths = files(results, "bad_inputs.md")
    if not paths:
        return "Not run yet: the matrix appears once a GPU run has written `results/<gpu>/bad_inputs.md`."
    out = []
    for p in paths:
        out += [f"From `results/{os.path.basename(os.path.dirname(p))}/bad_inputs.md` ({label(p)}):"]
        for line in open(p).read().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("#"):
                out += ["", line, ""]
            elif cells[0] == "case":
                variants = cells[1:]
                out += ["| case | outcome |", "| --- | --- |"]
            elif line.startswith("|") and not set(cells[0]) <= set("-: "):
                groups = {}
                for v, c in zip(variants, cells[1:]):
                    groups.setdefault(c, []).append(v)
                ordered = sorted(groups.items(), key=lambda g: -len(g[1]))
                parts = [f"**{c}**: " + (("all " if len(ordered) == 1 else "the other ") + f"{len(vs)}"
                                         if i == 0 and len(vs) > 3 else ", ".join(vs))
                         for i, (c, vs) in enumerate(ordered)]
                out.append(f"| {cells[0]} | {'; '.join(parts)} |")
            elif not line.startswith("|"):
                out.append(line)
        out.append("")
    return "\n".join(out)


def text_files(results, name, label):
    paths = files(results, name)
    return "\n".join(f"From `results/{os.path.basename(os.path.dirname(p))}/{name}` ({label(p)}):\n\n"
                     f"{open(p).read().strip()}\n" for p in paths) or (
        f"Not run yet: the summary appears once a GPU run has written `results/<gpu>/{name}`.")
