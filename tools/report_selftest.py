#!/usr/bin/env python3
"""Self-test of tools/report.py on a scratch copy of the pages (stdlib only, no GPU).

Writes a made-up benchmark JSON for every family into a temporary results/ (never into the
repository: its numbers mean nothing), runs the report there, and checks what it generated: each
family page gets a ladder table with one row per step and per vendor variant and the ratios
computed from the times, the main page's recipe table gets a ratio column for the GPU, the plots
are well-formed SVG with one bar per variant, and `--check` passes afterwards and fails after an
edit between the markers."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import report  # noqa: E402
from benchjson import VENDOR  # noqa: E402

SHAPES = {"transpose": ["float/1024x1024", "float/8192x8192"], "reduction": ["float/65536", "float/268435456"],
          "gemm": ["1024x1024x1024", "4096x4096x4096"]}


def fake_results(fam, path):
    """Times 1, 2, 3, ... us for the variants in ladder order, so every ratio is known."""
    benches = []
    variants = VENDOR.get(fam.name, [])[:1] + [s["variant"] for s in fam.steps]
    for shape in SHAPES.get(fam.name, ["1"]):
        for i, v in enumerate(variants):
            name = f"{fam.name}/{v}/{shape}/iterations:10/manual_time"
            e = {"name": name + "_median", "run_name": name, "run_type": "aggregate",
                 "aggregate_name": "median", "real_time": float(i + 1), "cpu_time": 1.0,
                 "time_unit": "us", "GB/s": 100.0 / (i + 1)}
            benches += [e, dict(e, name=name + "_cv", aggregate_name="cv", real_time=0.01)]
    ctx = {"gpu_name": "Selftest GPU", "cuda_driver": "0.0", "cuda_runtime": "0.0", "git_commit": "selftest"}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"context": ctx, "benchmarks": benches}, f)
    return variants


def main():
    problems = []
    fams = report.families(ROOT)
    if not fams:
        print("report_selftest: no family with step headers", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="smem-report-") as tmp:
        for d in ("recipes", "docs", "tools"):
            shutil.copytree(os.path.join(ROOT, d), os.path.join(tmp, d),
                            ignore=shutil.ignore_patterns("images", "__pycache__"))
        shutil.copy(os.path.join(ROOT, "README.md"), tmp) if os.path.exists(os.path.join(ROOT, "README.md")) else None
        expected = {}
        for fam in fams:
            readme = os.path.join(tmp, "recipes", fam.name, "README.md")
            text = open(readme).read()
            if report.BEGIN.format(f"results {fam.name}") not in text:
                with open(readme, "a") as f:
                    f.write(f"\n{report.BEGIN.format('results ' + fam.name)}\n{report.END}\n")
            expected[fam.name] = fake_results(fam, os.path.join(tmp, "results", "selftest-gpu", f"{fam.name}.json"))
        run = [sys.executable, os.path.join(tmp, "tools", "report.py"), "--root", tmp]
        subprocess.run(run, check=True, capture_output=True)
        for fam in fams:
            page = open(os.path.join(tmp, "recipes", fam.name, "README.md")).read()
            variants = expected[fam.name]
            for i, v in enumerate(variants):
                # Time i + 1 against the baseline's 1: ratio 1 / (i + 1).
                step = fam.step_of(v)
                row = f"| {step['num'] if step else 'vendor'} | `{v}` | {i + 1:.2f} | {100.0 / (i + 1):.3g} | {1.0 / (i + 1):.2f} |"
                row = row.replace(f"| {100.0 / (i + 1):.3g} |", f"| {report.fmt_rate(100.0 / (i + 1))} |")
                if row not in page:
                    problems.append(f"{fam.name}: ladder row missing: {row}")
            svg = os.path.join(tmp, "docs", "images", report.image_name(fam.name, "ladder"))
            if not os.path.exists(svg):
                problems.append(f"{fam.name}: no ladder plot")
            else:
                tree = ET.parse(svg)
                bars = [r for r in tree.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "bar"]
                if len(bars) != len(variants):
                    problems.append(f"{fam.name}: ladder plot has {len(bars)} bars, {len(variants)} expected")
            if f"\\image html {report.image_name(fam.name, 'ladder')}" not in page:
                problems.append(f"{fam.name}: page does not show its ladder plot")
        main_page = open(os.path.join(tmp, "docs", "mainpage.md")).read()
        if "vs baseline, Selftest GPU |" not in main_page:
            problems.append("mainpage: recipe table has no column for the GPU")
        steps = sum(len(f.steps) for f in fams)
        rows = [l for l in main_page.splitlines() if l.startswith("| \\ref ")]
        if len(rows) != steps:
            problems.append(f"mainpage: {len(rows)} recipe rows, {steps} steps")
        if subprocess.run(run + ["--check"], capture_output=True).returncode != 0:
            problems.append("--check fails right after a report")
        # An edit between the markers must make --check fail.
        p = os.path.join(tmp, "docs", "mainpage.md")
        with open(p, "w") as f:
            f.write(main_page.replace("| \\ref ", "| \\ref  ", 1))
        if subprocess.run(run + ["--check"], capture_output=True).returncode == 0:
            problems.append("--check passes after a hand edit of a generated region")
    for p in problems:
        print(f"report_selftest: {p}", file=sys.stderr)
    print(f"report_selftest: {len(fams)} families, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
