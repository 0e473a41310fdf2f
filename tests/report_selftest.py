#!/usr/bin/env python3
"""Self-test of tools/report.py on a synthetic repository in a temporary folder (no GPU; nothing of
the real repository is read or written): a family `fam` with copy sets, a page with regions of most
kinds, two GPUs' results with made-up times (so every ratio is known), a JSON without ladder
metadata, a bad-input matrix and a profiler output; an `attention` family (its reference a roof
at shapes of its own, a second roof at others) measured on one GPU only; and a `gemm` run with error
counters (the accuracy table and plot). Checked: the ladder tables
and the README's ratio columns, the roofs' ratios, a results table limited to a pattern, the decode
roofline, the files-to-copy table, the folded bad-input matrix, a profile figure, a colour and a
marker of its own for every series of a plot, the same bytes on a second run, `--check` failing
after a hand edit between the markers or a removed plot; the ladder order of an extra step and of
two ladders sharing step numbers; reasons over a target shared in one line."""
import json
import os
import re
import subprocess
import sys
import tempfile
import types
import xml.etree.ElementTree as ET

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
sys.path.insert(0, HERE)
import plots  # noqa: E402  (exits without matplotlib)
import profiles  # noqa: E402
import report  # noqa: E402
from results import Run  # noqa: E402

STEPS = [dict(name="ref", step=None, header=None, summary="The vendor kernel.", kind="baseline"),
         dict(name="a", step=1, header="fam_01_a.cuh", summary="Step a | with a bar.", kind="step"),
         dict(name="b", step=2, header="fam_02_b.cuh", summary="Step b.", kind="step"),
         dict(name="b2", step=2, header="fam_02_b.cuh", summary="Step b, other tile.", kind="step")]
REGION = "<!-- BEGIN GENERATED: {} -->\n<!-- END GENERATED -->\n"
FILES = {
    "copy_sets.json": json.dumps({"fam": [
        dict(step=1, names=["a"], files=[["fam_01_a.cuh", 2], ["fam_common.cuh", 2]], total=4, limit=600,
             earlier_own=0),
        dict(step=2, names=["b", "b2"], files=[["fam_02_b.cuh", 700], ["fam_01_a.cuh", 2], ["fam_common.cuh", 2]],
             total=704, limit=602, earlier_own=2)]}),
    "recipes/fam/README.md": "# Fam {#fam_page}\n\n" + "".join(REGION.format(k) for k in (
        "files fam", "results fam", "best fam", "occupancy", "bad-inputs", "profile gemm-stalls")),
    "recipes/attention/README.md": "# Attention {#attention_page}\n\n" + "".join(REGION.format(k) for k in (
        "results attention hd128/full/*", "decode-roofline attention", "decode-roofline attention s1 s2")),
    "recipes/gemm/README.md": "# Gemm {#gemm_page}\n\n" + REGION.format("accuracy gemm"),
    "README.md": REGION.format("recipes readme"),
    "docs/mainpage.md": REGION.format("recipes main"),
    "results/gpu-b/old.json": json.dumps({"context": {}, "benchmarks": []}),
    "results/gpu-a/bad_inputs.md": "#### fam\n\n| case | `a` | `b` | `b2` | `c` | `d` |\n"
                                   "| --- | --- | --- | --- | --- | --- |\n"
                                   "| n < 0 | invalid | invalid | invalid | invalid | invalid |\n"
                                   "| null | invalid | invalid | invalid | invalid | invalid |\n"
                                   "| K huge | handled | invalid | handled | handled | handled |\n",
    "results/gpu-a/" + profiles.PROFILES["gemm-stalls"][0]:
        "  smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio   inst   0.18\n",
}


def bench_json(gpu, slow):
    """Time (i + 1) * slow for the i-th variant, so its ratio is 1 / (i + 1); b2 is not run at 64."""
    benches = []
    for shape in ("64", "1024"):
        for i, s in enumerate(STEPS):
            name = f"fam/{s['name']}/{shape}/manual_time"
            e = dict(name=name + "_median", run_name=name, run_type="aggregate", aggregate_name="median",
                     real_time=(i + 1) * slow, time_unit="us", **{"GB/s": 100.0 / (i + 1) / slow})
            if s["kind"] == "step":
                e.update(blocks_per_sm=2.0, registers=32.0, smem_static_bytes=1024.0, threads_per_block=256.0,
                         grid_blocks=1000.0)
            if s["name"] != "b2" or shape != "64":
                benches += [e, dict(e, name=name + "_cv", aggregate_name="cv", real_time=0.01)]
    ctx = dict(gpu_name=gpu, gpu_sm_count="100", git_commit="abc", smem_family="fam", smem_reference="ref",
               smem_steps=json.dumps(STEPS))
    return json.dumps({"context": ctx, "benchmarks": benches})


def roof_json():
    """A family whose reference, `roof`, runs at shapes of its own (best 200 TFLOP/s) and whose second roof,
    `copy`, runs at the decode shape (1000 GB/s): s1 and s2 at 0.25 and 0.50 of the first, 0.50 and 0.90 of
    the second."""
    steps = [dict(name="roof", step=None, header=None, summary="The roof.", kind="baseline"),
             dict(name="copy", step=None, header=None, summary="The copy.", kind="baseline"),
             dict(name="s1", step=1, header="attention_01_s1.cuh", summary="Step s1.", kind="step"),
             dict(name="s2", step=2, header="attention_02_s2.cuh", summary="Step s2.", kind="step")]
    full = [(v, f"hd128/{m}/4x16x16x4096x4096", {"TFLOP/s": x}) for m in ("full", "causal")
            for v, x in (("s1", 50.0), ("s2", 100.0))]
    decode = [(v, "hd128/full/16x32x8x1x32768", r) for v, r in (
        ("copy", {"GB/s": 1000.0}), ("s1", {"GB/s": 500.0, "TFLOP/s": 1.0}), ("s2", {"GB/s": 900.0, "TFLOP/s": 2.0}))]
    roofs = [("roof", "4096x4096x4096", {"TFLOP/s": 150.0}), ("roof", "8192x8192x8192", {"TFLOP/s": 200.0})]
    benches = [dict(name=f"attention/{v}/{s}/manual_time_median", run_name=f"attention/{v}/{s}/manual_time",
                    run_type="aggregate", aggregate_name="median", real_time=1.0, time_unit="ms", **r)
               for v, s, r in roofs + full + decode]
    ctx = dict(gpu_name="GPU A", git_commit="abc", smem_family="attention", smem_reference="roof",
               smem_steps=json.dumps(steps))
    return json.dumps({"context": ctx, "benchmarks": benches})


def gemm_json():
    """cublas at 10 TFLOP/s and step s at 20 at 4096^3; at 2048^3 their error counters (s's without K = 16384)."""
    steps = [dict(name="cublas", step=None, header=None, summary="The vendor kernel.", kind="baseline"),
             dict(name="s", step=14, header="sgemm_14_s.cuh", summary="Step s.", kind="step")]
    errs = {"cublas": dict(err_uniform=1e-7, err_normal=2e-7, err_exp20=3e-7, err_k16384=4e-7),
            "s": dict(err_uniform=2.5e-7, err_normal=2e-7, err_exp20=3e-7)}
    benches = [dict(name=f"gemm/{v}/{s}/manual_time_median", run_name=f"gemm/{v}/{s}/manual_time",
                    run_type="aggregate", aggregate_name="median", real_time=t, time_unit="ms", **r)
               for v, t in (("cublas", 2.0), ("s", 1.0))
               for s, r in (("4096x4096x4096", {"TFLOP/s": 20.0 / t}), ("2048x2048x2048", dict(errs[v], **{
                   "TFLOP/s": 5.0})))]
    ctx = dict(gpu_name="GPU A", git_commit="abc", smem_family="gemm", smem_reference="cublas",
               smem_steps=json.dumps(steps))
    return json.dumps({"context": ctx, "benchmarks": benches})


def series_styles(svg):
    """(stroke colours, marker ids) of the plotted lines (a path and markers) of a matplotlib SVG."""
    colours, markers, ns = set(), set(), "{http://www.w3.org/2000/svg}"
    for g in ET.fromstring(svg).iter(ns + "g"):
        uses = [u.get("{http://www.w3.org/1999/xlink}href") for u in g.iter(ns + "use")]
        path = g.find(ns + "path")
        if (g.get("id") or "").startswith("line2d") and uses and path is not None:
            markers.add(uses[0])
            colours.add(re.search(r"stroke: (#\w+)", path.get("style")).group(1))
    return colours, markers


def main():
    problems = []
    expect = lambda ok, what: problems.extend([] if ok else [what])  # noqa: E731

    with tempfile.TemporaryDirectory(prefix="smem-report-") as root:
        files = dict(FILES, **{"results/gpu-a/fam.json": bench_json("GPU A", 1.0),
                               "results/gpu-b/fam.json": bench_json("GPU B", 2.0),
                               "results/gpu-a/attention.json": roof_json(),
                               "results/gpu-a/gemm.json": gemm_json()})
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            open(os.path.join(root, rel), "w").write(text)
        run = [sys.executable, os.path.join(HERE, "report.py"), "--root", root,
               "--copy-sets", os.path.join(root, "copy_sets.json")]
        first = subprocess.run(run, capture_output=True, text=True)
        expect(first.returncode == 0 and "old.json has no smem_steps" in first.stderr, f"first run: {first.stderr}")
        want = {"recipes/fam/README.md": [
            "| 01 | `a` | `fam_01_a.cuh` (2), `fam_common.cuh` (2) | 4 | 600 |",
            "| 02 | `b`, `b2` | `fam_02_b.cuh` (700), `fam_01_a.cuh` (2), `fam_common.cuh` (2) | **704** | 600 + 2 |",
            "| GPU A | 1024 | 100 | 01 `a` | 50 | 0.50 | 1000 | 5.00 |",
            "| n < 0; null | **invalid**: all 5 variants |",
            "| K huge | **handled**: the other 4 variants; **invalid**: `b` |",
            "| `smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio` | 0.18 |",
            "| step | 1024 (headline) | 64 |", "### GPU A", "### GPU B",
            # Ratio 1 / (i + 1) at both shapes; b2 did not run at 64.
            "| `ref` | 100 (1.00) | 100 (1.00) |", "| 01 `a` | 50 (0.50) | 50 (0.50) |",
            "| 02 `b` | 33.3 (0.33) | 33.3 (0.33) |", "| 02 `b2` | 25 (0.25) | - |",
            "| `ref` | 50 (1.00) | 50 (1.00) |", "| 01 `a` | 25 (0.50) | 25 (0.50) |",
            "| 02 `b` | 16.7 (0.33) | 16.7 (0.33) |", "| 02 `b2` | 12.5 (0.25) | - |"],
            "recipes/attention/README.md": [
                "| step | hd128/full/4x16x16x4096x4096 (headline) |", "| 01 `s1` | 50 (0.25) |",
                "| 02 `s2` | 100 (0.50) |", "the roof: `roof` at 8192³, 200 TFLOP/s",
                "| GPU A | hd128/full/16x32x8x1x32768 | 1000 | 02 `s2` | 900 | 0.90 | - | - |",
                # Named variants: a row each, in the order named.
                "`s1`, `s2`'s and their ratio", "| GPU A | hd128/full/16x32x8x1x32768 | 1000 | 01 `s1` | 500 | 0.50 | - | - |\n"
                "| GPU A | hd128/full/16x32x8x1x32768 | 1000 | 02 `s2` | 900 | 0.90 | - | - |"],
            "README.md": ["| family | step | what it changes | GPU A | GPU B |",
                          "| [attention](recipes/attention/README.md) | 02 `s2` | Step s2. | 0.50 | - |",
                          "| [fam](recipes/fam/README.md) | 01 `a` | Step a &#124; with a bar. | 0.50 | 0.50 |"],
            "docs/mainpage.md": ['| \\ref fam_page "fam" | 02 `b2` | Step b, other tile. | 0.25 | 0.25 |'],
            "recipes/gemm/README.md": ["| `cublas` | 10 | 1.00 | 1.0e-07 | 2.0e-07 | 3.0e-07 | 4.0e-07 |",
                                       "| 14 `s` | 20 | 2.00 | 2.5e-07 | 2.0e-07 | 3.0e-07 | - |",
                                       "\\image html gemm_accuracy.svg"]}
        page = open(os.path.join(root, "recipes", "fam", "README.md")).read()
        expect("| --- | --- | --- | --- |" not in page.split("bad-inputs")[1], "bad inputs: a table left unfolded")
        for rel, needles in want.items():
            text = open(os.path.join(root, rel)).read()
            problems += [f"{rel}: no '{n}'" for n in needles if n not in text]
        imgs = os.path.join(root, "docs", "images")
        results = open(os.path.join(root, "recipes", "attention", "README.md")).read().split("decode-roofline")[0]
        expect("causal" not in results and "| `copy`" not in results, "attention: a shape or a variant left unfiltered")
        expect(sorted(os.listdir(imgs)) == ["attention_ladder.svg", "fam_ladder.svg", "fam_sizes_gpu-a.svg",
                                            "fam_sizes_gpu-b.svg", "gemm_accuracy.svg", "gemm_ladder.svg",
                                            "gemm_sizes_gpu-a.svg", "roofline.svg"],
               f"plots: {sorted(os.listdir(imgs))}")
        many = [(f"s{i}", [1.0 + i, 2.0 + i]) for i in range(15)]
        for name, svg, n in [("sizes plot", open(os.path.join(imgs, "fam_sizes_gpu-a.svg")).read(), len(STEPS)),
                             ("15 series", plots.sizes("t", ["8", "64"], [8, 64], many, "GB/s", "n"), 15)]:
            colours, markers = series_styles(svg)
            expect(len(colours) == len(markers) == n, f"{name}: {len(colours)} colours, {len(markers)} markers")
        again = subprocess.run(run, capture_output=True, text=True)
        expect("wrote" not in again.stdout, f"a second run rewrote files: {again.stdout}")
        stale = lambda: subprocess.run(run + ["--check"], capture_output=True).returncode  # noqa: E731
        expect(stale() == 0, "--check fails after a report")
        readme = open(os.path.join(root, "README.md")).read()
        open(os.path.join(root, "README.md"), "w").write(readme.replace("0.50", "0.51", 1))
        expect(stale() == 1, "--check passes a hand edit")
        subprocess.run(run, capture_output=True)
        os.remove(os.path.join(imgs, "fam_ladder.svg"))
        expect(stale() == 1, "--check passes a missing plot")
    # Ladder order: a benchmark's own step listed before the step list goes after it; two ladders that
    # reuse step numbers keep their order.
    ladder = lambda steps: Run.order(  # noqa: E731
        types.SimpleNamespace(steps=[dict(name=n, step=s) for n, s in steps], seen=[]), [n for n, _ in steps])
    got = ladder([("ref", None), ("x", 14), ("a", 1), ("b", 2), ("c", 13)])
    expect(got == ["ref", "a", "b", "c", "x"], f"order, an extra step: {got}")
    got = ladder([("ref", -1), ("a", 1), ("b", 2), ("p", 1), ("q", 2)])
    expect(got == ["ref", "a", "b", "p", "q"], f"order, two ladders: {got}")
    # Steps over their targets for the same reason share one line.
    row = lambda s, why: dict(step=s, names=[f"s{s}"], files=[["f.cuh", 700]], total=700, limit=600,  # noqa: E731
                              earlier_own=0, over_because=why)
    text = report.copy_table({"f": [row(1, "one"), row(2, "two"), row(3, "two"), row(4, "two")]}, "f")
    expect("- Step 01 is over its target: one." in text and
           "- Steps 02, 03 and 04 are over their targets: two." in text, f"copy table reasons: {text}")
    for p in problems:
        print(f"report_selftest: {p}", file=sys.stderr)
    print(f"report_selftest: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
