#!/usr/bin/env python3
"""Measures shared-memory bank behaviour with Nsight Compute and writes results/<gpu>/banks.json.

  ./cookbook probe banks [--only family,...] [family=shape-regex ...]
  (probes/banks.py <build dir> <results/gpu/banks> ...)

With --only, measures those families alone and keeps the other families' kernels of an existing
banks.json as they are.

For every benchmark of the chosen shape of each family (its baselines excluded), profiles the
first recipe kernel it launches (the warm-up) and records the shared-memory load and store
instructions, wavefronts and bank conflicts twice: from the L1 pipeline's counters (l1tex__...),
which also count the wavefronts that concurrent global traffic adds, and from the SASS-level
counters (smsp__sass_...), which count each executed instruction's own wavefronts (instructions
with an active lane only): what the bank model (support/bank_model.hpp) predicts per request."""
import csv
import io
import json
import re
import subprocess
import sys

METRICS = {
    "ld_instructions": "smsp__inst_executed_op_shared_ld.sum",
    "st_instructions": "smsp__inst_executed_op_shared_st.sum",
    "ld_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "st_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "ld_bank_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "st_bank_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "sass_ld_instructions": "smsp__sass_inst_executed_op_shared_ld.sum",
    "sass_st_instructions": "smsp__sass_inst_executed_op_shared_st.sum",
    "sass_ld_wavefronts": "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "sass_st_wavefronts": "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "sass_ldgsts_wavefronts": "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
    "sass_ldsm_instructions": "smsp__sass_inst_executed_op_ldsm.sum",
    "sass_ldsm_wavefronts": "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
}
BASELINES = {"memcpy", "cublas_geam", "cub", "cublas", "mma_roof"}
FAMILY_BASELINES = {"stencil": {"copy"},  # a name that is a step elsewhere (transpose/copy)
                    "attention": {"copy", "unfused", "gemm_roof"}}
DEFAULT_SHAPES = {
    "transpose": r"/(float|double)/8192x8192$",
    "reduction": r"/float/16777216$",
    "gemm": r"/1024x1024x1024$",
    "tc_gemm": r"/1024x1024x1024$",
    "scan": r"/inclusive/float/16777216$",
    "histogram": r"/uint8/256/uniform/16777216$",
    "stencil": r"/(conv2d_5x5/float/2048x2048|7point/float/256x256x256)$",
    "attention": r"/hd128/full/(16x16x16x1024x1024|16x32x8x1x32768)$",
}


def profile(binary, bench):
    # Only the recipes' kernels (namespace smem::<family>): not a benchmark's input fill.
    cmd = ["ncu", "--clock-control", "none", "--csv", "--launch-count", "1",
           "--kernel-name-base", "demangled", "--kernel-name", "regex:smem::",
           "--metrics", ",".join(METRICS.values()), binary,
           f"--benchmark_filter=^{re.escape(bench)}$", "--benchmark_repetitions=1"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
    lines = [l for l in out.splitlines() if l.startswith('"')]
    values, kernel = {}, None
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        kernel = row.get("Kernel Name", kernel)
        for key, metric in METRICS.items():
            if row.get("Metric Name") == metric:
                values[key] = float(row["Metric Value"].replace(",", ""))
    return kernel, values


def main(build, stem, *args):
    out_path, args = stem + ".json", list(args)
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = set(args[i + 1].split(","))
        del args[i:i + 2]
    shapes = dict(DEFAULT_SHAPES)
    shapes.update(dict(a.split("=", 1) for a in args))
    kept = []
    if only is not None:
        shapes = {f: s for f, s in shapes.items() if f in only}
        try:
            with open(out_path) as f:
                kept = [k for k in json.load(f)["kernels"] if k["family"] not in only]
        except FileNotFoundError:
            pass
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip().splitlines()[0]
    entries = []
    for family, shape in shapes.items():
        binary = f"{build}/bench/{family}_bench"
        try:
            listed = subprocess.run([binary, "--benchmark_list_tests"], capture_output=True,
                                    text=True, check=True).stdout.split()
        except (OSError, subprocess.CalledProcessError):
            continue
        for name in listed:
            bench = name.split("/iterations")[0].split("/manual_time")[0]
            variant = bench.split("/")[1]
            if variant in BASELINES | FAMILY_BASELINES.get(family, set()) or not re.search(shape, bench):
                continue
            kernel, values = profile(binary, name)
            if len(values) != len(METRICS):
                print(f"no metrics for {bench}", file=sys.stderr)
                continue
            entry = {"benchmark": bench, "family": family, "variant": variant, "kernel": kernel}
            entry.update(values)
            for op in ("ld", "st", "sass_ld", "sass_st", "sass_ldsm"):
                n = values[f"{op}_instructions"]
                entry[f"{op}_wavefronts_per_instruction"] = values[f"{op}_wavefronts"] / n if n else 0.0
            entries.append(entry)
            print(f"{bench:48s} ld {entry['sass_ld_wavefronts_per_instruction']:6.3f} "
                  f"st {entry['sass_st_wavefronts_per_instruction']:6.3f} wavefronts/instr (SASS)")
    with open(out_path, "w") as f:
        json.dump({"gpu_name": gpu, "metrics": METRICS, "kernels": kept + entries}, f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:])
