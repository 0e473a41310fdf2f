#!/usr/bin/env python3
"""Self-test of tools/report.py on a synthetic repository that it builds in a temporary folder
(no GPU, nothing of the real repository is read or written).

The fixture: one family `fam` whose steps include each other, a page with every kind of region,
and results for two GPUs with made-up times (so every ratio is known), one JSON without ladder
metadata, a bad-input matrix and a profiler excerpt. Checked: the ratios in the per-GPU ladder
tables and in the README's per-GPU columns, the files-to-copy closure, the folded bad-input
matrix, the profile figures, distinct colours and markers in the plots, byte-identical output on
a second run, and `--check` failing after a hand edit between the markers or a removed plot."""
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plots  # noqa: E402  (re-runs this test with a python that has matplotlib, or exits)
import profiles  # noqa: E402

STEPS = [dict(name="ref", step=None, header=None, summary="The vendor kernel.", kind="baseline"),
         dict(name="a", step=1, header="fam_01_a.cuh", summary="Step a | with a bar.", kind="step"),
         dict(name="b", step=2, header="fam_02_b.cuh", summary="Step b.", kind="step"),
         dict(name="b2", step=2, header="fam_02_b.cuh", summary="Step b, other tile.", kind="step")]
PAGE = """# Fam {#fam_page}

<!-- BEGIN GENERATED: files fam -->
<!-- END GENERATED -->
<!-- BEGIN GENERATED: results fam -->
<!-- END GENERATED -->
<!-- BEGIN GENERATED: best fam -->
<!-- END GENERATED -->
<!-- BEGIN GENERATED: occupancy -->
<!-- END GENERATED -->
<!-- BEGIN GENERATED: bad-inputs -->
<!-- END GENERATED -->
<!-- BEGIN GENERATED: profile gemm-stalls -->
<!-- END GENERATED -->
"""
BAD = "#### fam\n\n| case | `a` | `b` | `b2` | `c` | `d` |\n| --- | --- | --- | --- | --- | --- |\n" \
      "| n < 0 | invalid | invalid | invalid | invalid | invalid |\n| K huge | handled | invalid | handled | handled | handled |\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def bench_json(gpu, slow):
    """Time (i + 1) * slow for the i-th variant, so ratio = 1 / (i + 1); b2 is not run at 64."""
    benches = []
    for shape in ("64", "1024"):
        for i, s in enumerate(STEPS):
            if s["name"] == "b2" and shape == "64":
                continue
            name = f"fam/{s['name']}/{shape}/manual_time"
            e = dict(name=name + "_median", run_name=name, run_type="aggregate", aggregate_name="median",
                     real_time=(i + 1) * slow, time_unit="us", **{"GB/s": 100.0 / (i + 1) / slow})
            if s["kind"] == "step":
                e.update(blocks_per_sm=2.0, registers=32.0, smem_static_bytes=1024.0, threads_per_block=256.0,
                         grid_blocks=1000.0)
            benches += [e, dict(e, name=name + "_cv", aggregate_name="cv", real_time=0.01)]
    ctx = dict(gpu_name=gpu, gpu_sm_count="100", git_commit="abc", smem_family="fam", smem_reference="ref",
               smem_steps=json.dumps(STEPS))
    return json.dumps({"context": ctx, "benchmarks": benches})


def fixture(root):
    rec = os.path.join(root, "recipes", "fam")
    write(os.path.join(rec, "fam_common.cuh"), "#pragma once\n#include <cuda_runtime.h>\n")
    write(os.path.join(rec, "fam_01_a.cuh"), '#pragma once\n#include "fam_common.cuh"\n')
    write(os.path.join(rec, "fam_02_b.cuh"), '#pragma once\n#include "fam_01_a.cuh"\n#include "../elsewhere.cuh"\n')
    write(os.path.join(rec, "README.md"), PAGE)
    write(os.path.join(root, "README.md"), "<!-- BEGIN GENERATED: recipes readme -->\n<!-- END GENERATED -->\n")
    write(os.path.join(root, "docs", "mainpage.md"), "<!-- BEGIN GENERATED: recipes main -->\n<!-- END GENERATED -->\n")
    write(os.path.join(root, "results", "gpu-a", "fam.json"), bench_json("GPU A", 1.0))
    write(os.path.join(root, "results", "gpu-b", "fam.json"), bench_json("GPU B", 2.0))
    write(os.path.join(root, "results", "gpu-b", "old.json"), json.dumps({"context": {}, "benchmarks": []}))
    write(os.path.join(root, "results", "gpu-a", "bad_inputs.md"), BAD)
    write(os.path.join(root, "results", "gpu-a", profiles.PROFILES["gemm-stalls"][1]),
          "  smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio   inst   0.18\n")


def series_styles(svg):
    """(stroke colours, marker ids) of the plotted lines of a matplotlib SVG."""
    colours, markers = set(), set()
    for g in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}g"):
        if (g.get("id") or "").startswith("line2d"):
            uses = [u.get("{http://www.w3.org/1999/xlink}href") for u in g.iter("{http://www.w3.org/2000/svg}use")]
            path = next((p for p in g if p.tag.endswith("path")), None)
            if uses and path is not None:
                markers.add(uses[0])
                colours.add(re.search(r"stroke: (#\w+)", path.get("style")).group(1))
    return colours, markers


def main():
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    with tempfile.TemporaryDirectory(prefix="smem-report-") as root:
        fixture(root)
        run = [sys.executable, os.path.join(HERE, "report.py"), "--root", root]
        first = subprocess.run(run, capture_output=True, text=True)
        expect(first.returncode == 0, f"report failed: {first.stderr}")
        expect("old.json has no smem_steps" in first.stderr, "a JSON without ladder metadata is not reported")
        page = open(os.path.join(root, "recipes", "fam", "README.md")).read()
        expect("| 01 | `a` | `fam_01_a.cuh`, `fam_common.cuh` |" in page, "files to copy of step 1")
        expect("| 02 | `b`, `b2` | `fam_02_b.cuh`, `fam_01_a.cuh`, `fam_common.cuh` |" in page, "files to copy of step 2")
        for gpu, slow in (("GPU A", 1.0), ("GPU B", 2.0)):
            expect(f"### {gpu}" in page, f"no section for {gpu}")
            for i, s in enumerate(STEPS):
                num = "ref" if s["kind"] == "baseline" else f"{s['step']:02d}"
                expect(f"| {num} | `{s['name']}` | {(i + 1) * slow:.2f} | {100.0 / (i + 1) / slow:.3g} | "
                       f"{1.0 / (i + 1):.2f} |" in page, f"{gpu}: ladder row of {s['name']}")
        expect("| `b2` | - | " in page, "b2 is not run at 64: a dash expected")
        expect("| GPU A | 1024 | 100 GB/s | 01 `a` | 50 | 0.50 | 1000 | 5.00 |" in page, "best step and waves")
        expect("| n < 0 | **invalid**: all 5 |" in page, "folded bad-input row, one outcome")
        expect("| K huge | **handled**: the other 4; **invalid**: `b` |" in page, "folded bad-input row, two outcomes")
        expect(re.search(r"\| barrier \(`barrier`\) \| 0\.18 \|", page), "profile figure")
        readme = open(os.path.join(root, "README.md")).read()
        expect("| family | step | what it changes | GPU A | GPU B |" in readme, "README: one column per GPU")
        expect("| [fam](recipes/fam/README.md) | 01 `a` | Step a &#124; with a bar. | 0.50 | 0.50 |" in readme,
               "README: row of step 1")
        expect('| \\ref fam_page "fam" | 02 `b2` |' in open(os.path.join(root, "docs", "mainpage.md")).read(),
               "main page: recipe table")
        imgs = os.path.join(root, "docs", "images")
        expect(sorted(os.listdir(imgs)) == ["fam_ladder.svg", "fam_sizes_gpu-a.svg", "fam_sizes_gpu-b.svg"],
               f"plots: {sorted(os.listdir(imgs))}")
        colours, markers = series_styles(open(os.path.join(imgs, "fam_sizes_gpu-a.svg")).read())
        expect(len(colours) == len(markers) == len(STEPS), f"sizes plot: {len(colours)} colours, {len(markers)} markers")
        many = [(f"s{i}", [1.0 + i, 2.0 + i]) for i in range(15)]
        colours, markers = series_styles(plots.sizes("t", ["8", "64"], [8, 64], many, "GB/s", "n"))
        expect(len(colours) == len(markers) == 15, f"15 series: {len(colours)} colours, {len(markers)} markers")
        again = subprocess.run(run, capture_output=True, text=True)
        expect("wrote" not in again.stdout, f"a second run rewrote files: {again.stdout}")
        expect(subprocess.run(run + ["--check"], capture_output=True).returncode == 0, "--check fails after a report")
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write(readme.replace("0.50", "0.51", 1))
        expect(subprocess.run(run + ["--check"], capture_output=True).returncode == 1, "--check passes a hand edit")
        subprocess.run(run, capture_output=True)
        os.remove(os.path.join(imgs, "fam_ladder.svg"))
        expect(subprocess.run(run + ["--check"], capture_output=True).returncode == 1, "--check passes a missing plot")
    for p in problems:
        print(f"report_selftest: {p}", file=sys.stderr)
    print(f"report_selftest: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
