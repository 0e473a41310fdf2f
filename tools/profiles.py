"""Regions made from the files that GPU runs leave in results/<gpu>/: Nsight Compute figures, tuner
logs, the bad-input matrix, the sanitizer summary, the bank counters (and the bank model's tables).
The files stay unedited; a page shows the figures it discusses through these regions, never typed.

PROFILES: name -> (file, columns, keys): a table with one row per key (a metric's name as the file
prints it) and per GPU whose results hold the file, one column per (title, prefix, n): the last
field of the n-th line that starts with prefix + key. Or name -> (file, first, last): the lines
from the first that starts with `first` to the last that starts with `last`, verbatim."""
import json
import os
import subprocess

from results import files, gpu_of
from tables import fmt, table

SHARED = [f"l1tex__data_{k}_mem_shared_op_{op}.sum" for op in ("ld", "st")
          for k in ("pipe_lsu_wavefronts", "bank_conflicts_pipe_lsu")] + \
         [f"smsp__inst_executed_op_shared_{op}.sum" for op in ("ld", "st")]
ONE = [("value", "", 0)]
PROFILES = {
    "gemm-autotuned": ("gemm_ncu_autotuned_4096.txt", ONE, [
        "Duration", "Registers Per Thread", "Dynamic Shared Memory Per Block", "Block Limit Registers",
        "Block Limit Shared Mem", "Achieved Occupancy", "Grid Size", "Waves Per SM", "Issue Slots Busy",
        "Eligible Warps Per Scheduler", "No Eligible", "L1/TEX Cache Throughput", "DRAM Throughput", "L2 Hit Rate"]),
    "gemm-stalls": ("gemm_ncu_stalls_4096.txt", ONE, [
        f"smsp__average_warps_issue_stalled_{k}_per_issue_active.ratio" for k in (
            "not_selected", "selected", "short_scoreboard", "dispatch_stall", "barrier", "long_scoreboard",
            "wait", "mio_throttle", "no_instruction", "math_pipe_throttle")]),
    "gemm-padding": ("gemm_ncu.txt", [(v, v + " ", 0) for v in ("tiled_32", "tiled_32_padded")],
                     ["gpu__time_duration.sum", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"]
                     + SHARED),
    "gemm-conflict-free": ("gemm_ncu.txt", [(v, v + " ", 0) for v in ("vectorized", "conflict_free")], SHARED),
    "reduction-ncu": ("reduction_ncu.txt", [("single_pass", "", 0), ("CUB", "", 2)], [
        "gpu__time_duration.sum", "launch__grid_size", "launch__block_size",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed", "sm__warps_active.avg.pct_of_peak_sustained_active",
        "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct"]),
    "histogram-ncu": ("histogram_ncu.txt", [
        ("step 5, uniform", "", 0), ("CUB, uniform", "", 1), ("step 5, skewed", "", 2), ("CUB, skewed", "", 3)], [
        "gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "launch__block_size",
        "sm__warps_active.avg.pct_of_peak_sustained_active", "smsp__inst_executed.sum",
        "smsp__inst_executed_op_shared_atom.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"]),
    "scan-ncu": ("scan_ncu.txt", [("step 6", "", 0), ("CUB", "", 1)], [
        "gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "launch__grid_size",
        "launch__block_size", "sm__warps_active.avg.pct_of_peak_sustained_active", "smsp__inst_executed.sum",
        "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum"]),
    "reduction-tune": ("reduction_tune.txt", "tune_", "picked"),
    "gemm-tune": ("gemm_tune.log", "TFLOP/s", "  "),
    "gemm-split-tune": ("gemm_tune_split.log", "TFLOP/s", "  "),
    "stencil-st7-tiles": ("stencil_st7_tiles.txt", "[8:32]", "["),
    "stencil-st7-walks": ("stencil_st7_walks.txt", "[walk 1]", "["),
    "scan-tiles": ("scan_tiles.txt", "[128:10]", "["),
    "gemm-split-placement": ("gemm_split_placement.txt", "[accuracy", "["),
    "gemm-split-ceiling": ("mma_sync_ex2.txt", "[mma.sync tf32", "[fma f32"),
    "attention-ceilings": ("mma_sync_ex2.txt", "[mma.sync bf16", "[mma.sync + "),
    "attention-ncu": ("attention_ncu.txt", "Nsight", "  "),
    "attention-hopper-ncu": ("attention_hopper_ncu.txt", "Nsight", "  "),
    "attention-cluster": ("attention_cluster.txt", "[step 16", "hd"),
    "attention-softmax": ("attention_softmax.txt", "[parts", "  no softmax"),
    "attention-tune-hopper": ("attention_tune_hopper.log", "TFLOP/s", "  "),
}


def where(p):
    return f"`results/{gpu_of(p)}/{os.path.basename(p)}`"


def source(p, label):
    return f"From {where(p)} ({label(p)}):"


def value(text, key, n):
    found = [line.split()[-1] for line in text.splitlines() if line.strip().startswith(key + " ")]
    return found[n] if len(found) > n else "-"


def profile(results, name, label):
    spec = PROFILES[name]
    paths = files(results, spec[0])
    if not paths:
        return f"Not measured yet: this region shows `results/<gpu>/{spec[0]}` once a GPU run has written it."
    texts = [open(p).read() for p in paths]
    if isinstance(spec[1], str):
        out = []
        for p, lines in zip(paths, (t.splitlines() for t in texts)):
            i = next((i for i, l in enumerate(lines) if l.startswith(spec[1])), None)
            if i is None:  # a run of the probe from before these lines
                out += [f"{where(p)} ({label(p)}) predates these lines: not measured there yet.", ""]
                continue
            j = max(j for j, l in enumerate(lines) if l.startswith(spec[2]))
            out += [source(p, label), "", "\n".join("    " + l for l in lines[i:j + 1]), ""]
        return "\n".join(out)
    _, columns, keys = spec
    head = [(label(p) + ", " if len(paths) > 1 else "") + (t if len(columns) > 1 else label(p))
            for p in paths for t, _, _ in columns]
    rows = [[f"`{k}`"] + [value(t, pre + k, n) for t in texts for _, pre, n in columns] for k in keys]
    return f"From {', '.join(map(where, paths))}, unedited:\n\n" + table(["metric"] + head, rows, 1)


def bad_inputs(results, label):
    """The bad-input matrix (tests/bad_input_test writes one table per family: a row per case, a
    column per variant), folded: per case its outcomes with the variants grouped by outcome, and
    consecutive cases with the same outcomes in one row."""
    paths = files(results, "bad_inputs.md")
    if not paths:
        return "Not run yet: the matrix appears once a GPU run has written `results/<gpu>/bad_inputs.md`."
    out = []
    for p in paths:
        out += [source(p, label), ""]
        for line in open(p).read().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] == "case":
                variants = cells[1:]
                out += ["| cases | outcome |", "| --- | --- |"]
            elif line.startswith("|") and not set(cells[0]) <= set("-: "):
                ordered = sorted({c: [v for v, x in zip(variants, cells[1:]) if x == c] for c in cells[1:]}.items(),
                                 key=lambda g: -len(g[1]))
                outcome = "; ".join(f"**{c}**: " + (f"{'all' if len(ordered) == 1 else 'the other'} {len(vs)} variants"
                                                     if i == 0 and len(vs) > 3 else ", ".join(vs))
                                    for i, (c, vs) in enumerate(ordered))
                if out[-1].endswith(f" | {outcome} |") and not out[-1].startswith("| ---"):
                    out[-1] = out[-1].replace(f" | {outcome} |", f"; {cells[0]} | {outcome} |")
                else:
                    out.append(f"| {cells[0]} | {outcome} |")
            elif not line.startswith("|") and (line.strip() or out[-1]):
                out.append(line)
        out.append("")
    return "\n".join(out)


def text_files(results, name, label):
    return "\n".join(f"{source(p, label)}\n\n{open(p).read().strip()}\n" for p in files(results, name)) or (
        f"Not run yet: the summary appears once a GPU run has written `results/<gpu>/{name}`.")


def model_tables(exe, words=()):
    """What the bank_tables program prints (markdown: paragraphs, each followed by its table), as it
    is; with words, only the paragraphs that name one of them (or, for `-word`, none of those)."""
    blocks = []
    for chunk in subprocess.run([exe], check=True, capture_output=True, text=True).stdout.strip().split("\n\n"):
        blocks.append([chunk]) if not chunk.startswith("|") or not blocks else blocks[-1].append(chunk)
    keep = [w for w in words if w[0] != "-"]
    return "\n\n".join("\n\n".join(b) for b in blocks if (not keep or any(w in b[0] for w in keep))
                       and not any(w[1:] in b[0] for w in words if w[0] == "-")) + "\n"


def measured(results, families=()):
    """Per GPU: wavefronts per shared load and store instruction (SASS-level counters), the
    cp.async wavefronts, and the L1 pipeline's ratios, for every kernel that touches shared memory;
    only the given families' kernels when some are given."""
    out = []
    for path in files(results, "banks.json"):
        data = json.load(open(path))
        rows = [[f"`{k['benchmark'].split('/', 1)[-1]}`", fmt(k.get("sass_ld_wavefronts_per_instruction")),
                 fmt(k.get("sass_st_wavefronts_per_instruction")), f"{k.get('sass_ldgsts_wavefronts', 0):.0f}",
                 fmt(k.get("ld_wavefronts_per_instruction")), fmt(k.get("st_wavefronts_per_instruction"))]
                for k in data.get("kernels", []) if (k.get("ld_instructions") or k.get("st_instructions"))
                and (not families or k.get("family") in families)]
        if rows:
            out += [f"{data.get('gpu_name', '?')} ({where(path)}): "
                    "wavefronts per shared load and store instruction from the SASS-level counters and from the L1 "
                    "counters, and the total wavefronts of the `cp.async` copies.", "",
                    table(["benchmark", "loads, SASS", "stores, SASS", "`cp.async`", "loads, L1", "stores, L1"],
                          rows, 1), ""]
    return "\n".join(out) or ("Not measured yet: once `probes/banks.py` has written "
                              "`results/<gpu>/banks.json` on a GPU, this table shows Nsight Compute's "
                              "shared-memory wavefronts per instruction for every kernel.")
