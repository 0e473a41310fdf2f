#!/usr/bin/env python3
"""Turns results/<gpu>/<family>.json into the generated parts of the pages: tables in the
regions between `<!-- BEGIN GENERATED: <key> -->` and `<!-- END GENERATED -->`, and SVG plots
in docs/images/. Never hand-edit what is between the markers: run `./cookbook report`.

  tools/report.py [--root DIR] [--bank-tables EXE]          rewrite regions and images
  tools/report.py --check [--root DIR] [--bank-tables EXE]  exit 1 if anything committed is stale

Regions: `results <family>` in recipes/<family>/README.md; `readme results` in README.md;
`recipe table` in docs/mainpage.md; `results roofline|coalescing|occupancy|carveout` in the
concept pages under docs/; `bank tables` in docs/banks.md (from the output of the bank_tables
program, only when --bank-tables is given)."""
import argparse
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchjson import VENDOR, baseline, load, rate, ratio, result_files  # noqa: E402
import svgplot  # noqa: E402

# The shape each family's ladder is shown at (the first one present; else the largest).
HEADLINE = {
    "transpose": ["float/8192x8192"],
    "reduction": ["float/268435456"],
    "gemm": ["4096x4096x4096"],
}
# What a plot's x axis is, per family.
SIZE_TITLE = {"transpose": "rows x cols", "reduction": "n (elements)", "gemm": "M x N x K"}
# Counters that the occupancy page shows when a benchmark records them.
# Each column: its title and the counter names it is read from (the first present; shared
# memory is the sum of static and dynamic where both are recorded).
OCC_COUNTERS = [("blocks/SM", ["blocks_per_sm"]),
                ("registers/thread", ["registers", "regs_per_thread"]),
                ("shared bytes/block", ["smem_static_bytes+smem_dynamic_bytes", "smem_per_block",
                                        "static_smem+dynamic_smem"]),
                ("threads/block", ["threads_per_block"])]  # not "threads": Google Benchmark's own field


def occupancy(e):
    """[value or None per OCC_COUNTERS column] of a benchmark entry."""
    out = []
    for _, keys in OCC_COUNTERS:
        v = None
        for k in keys:
            parts = k.split("+")
            if any(p in e for p in parts):
                v = sum(e.get(p, 0) for p in parts)
                break
        out.append(v)
    return out
IMAGES = "docs/images"
BEGIN = "<!-- BEGIN GENERATED: {} -->"
END = "<!-- END GENERATED -->"


# ---------------------------------------------------------------------------------------------
# What the sources say: the steps of each family, their \brief, and the variant names.

def parse_brief(text):
    """The \\brief paragraph of a header's leading /// comment, on one line."""
    out, on = [], False
    for line in text.splitlines():
        if not line.startswith("///"):
            if on:
                break
            continue
        body = line[3:].strip()
        if body.startswith("\\brief"):
            on, body = True, body[len("\\brief"):].strip()
        elif on and (not body or body.startswith("\\")):
            break
        if on:
            out.append(body)
    return " ".join(out)


class Family:
    def __init__(self, root, name):
        self.name = name
        d = os.path.join(root, "recipes", name)
        self.readme = os.path.join(d, "README.md")
        self.anchor = None
        if os.path.exists(self.readme):
            m = re.search(r"\{#(\w+)\}", open(self.readme).read().split("\n", 1)[0])
            self.anchor = m.group(1) if m else None
        # Steps: one header per step, <prefix>_NN_<name>.cuh; a header may hold several
        # variants (e.g. two tile sizes of one kernel): self.steps has one entry per variant.
        headers = []
        for h in sorted(glob.glob(os.path.join(d, "*_[0-9][0-9]_*.cuh"))):
            text = open(h).read()
            num = re.search(r"_(\d\d)_", os.path.basename(h)).group(1)
            brief = re.sub(r"^Step \d+,\s*", "", parse_brief(text))
            brief = brief[:1].upper() + brief[1:]
            funcs = set(re.findall(r"cudaError_t\s+(\w+)\s*\(", text))
            headers.append(dict(num=num, header=os.path.basename(h), brief=brief, funcs=funcs))
        # Variant names from the family header: name() gives enum -> name, run() enum -> launcher.
        fh = os.path.join(d, name + ".cuh")
        self.steps = []  # dicts: num, header, brief, variant; in the order of the Variant enum
        if os.path.exists(fh):
            text = open(fh).read()
            names = re.findall(r'case Variant::(\w+):\s*return\s*"([^"]+)"', text)
            calls = dict(re.findall(r"case Variant::(\w+):\s*return\s+(?:[\w:]+::)?(\w+)\s*[(<]", text))
            for enum, vname in names:
                h = next((h for h in headers if calls.get(enum) in h["funcs"]), None)
                if h:
                    self.steps.append(dict(num=h["num"], header=h["header"], brief=h["brief"], variant=vname))

    def step_of(self, variant):
        return next((s for s in self.steps if s["variant"] == variant), None)


def families(root):
    out = []
    for d in sorted(glob.glob(os.path.join(root, "recipes", "*", "README.md"))):
        f = Family(root, os.path.basename(os.path.dirname(d)))
        if f.steps:
            out.append(f)
    return out


# ---------------------------------------------------------------------------------------------
# What the results say.

def shape_size(shape):
    n = 1
    for x in re.findall(r"\d+", shape):
        n *= int(x)
    return n


def shape_kind(shape):
    """The non-numeric part of a shape (the element type), e.g. 'float' for 'float/4096'."""
    return "/".join(p for p in shape.split("/") if not re.match(r"^[\dx]+$", p))


class Run:
    """One results/<gpu>/<family>.json."""

    def __init__(self, root, gpu, family, path):
        self.gpu, self.family = gpu, family
        self.path = os.path.relpath(path, root)
        self.ctx, rows = load(path)
        self.shapes = {shape: v for (fam, shape), v in rows.items() if fam == family}
        self.gpu_name = self.ctx.get("gpu_name", gpu)

    def headline(self):
        for s in HEADLINE.get(self.family, []):
            if s in self.shapes:
                return s
        with_base = [s for s, v in self.shapes.items() if baseline(self.family, v)[0]] or list(self.shapes)
        return max(with_base, key=shape_size) if with_base else None

    def provenance(self):
        c = self.ctx
        commit = c.get("git_commit", "?")
        return (f"{self.gpu_name}, driver {c.get('cuda_driver', '?')}, CUDA {c.get('cuda_runtime', '?')}, "
                f"commit `{commit}` (`{self.path}`)")

    def ratio(self, variant, shape=None):
        shape = shape or self.headline()
        vs = self.shapes.get(shape, {})
        return ratio(vs.get(variant), baseline(self.family, vs)[1])

    def unit(self):
        for vs in self.shapes.values():
            for e in vs.values():
                r = rate(e)
                if r:
                    return r[0]
        return "GB/s"


def load_runs(root):
    runs = {}
    for gpu, fam, path in result_files(os.path.join(root, "results")):
        r = Run(root, gpu, fam, path)
        if r.shapes:
            runs.setdefault(fam, []).append(r)
    return runs


def gpu_label(run, all_runs):
    """The GPU's name, or its results folder where two folders share a name."""
    names = [r.gpu_name for rs in all_runs.values() for r in rs if r.gpu != run.gpu]
    return run.gpu_name if run.gpu_name not in names else f"{run.gpu_name} ({run.gpu})"


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def fmt_rate(x):
    return "-" if x is None else (f"{x:.0f}" if x >= 100 else f"{x:.3g}")


def cell(text):
    return text.replace("|", "\\|")


def ladder_order(fam, variants):
    vendor = [v for v in VENDOR.get(fam.name, []) if v in variants]
    steps = [s["variant"] for s in fam.steps if s["variant"] in variants]
    rest = [v for v in variants if v not in vendor and v not in steps]
    return vendor + steps + rest


# ---------------------------------------------------------------------------------------------
# Images.

def image_name(family, kind, gpu=None):
    return f"{family}_{kind}" + (f"_{gpu}" if gpu else "") + ".svg"


def family_images(fam, runs, all_runs):
    """{file name: svg text} for one family."""
    out = {}
    if not runs:
        return out
    base_name = (VENDOR.get(fam.name) or ["baseline"])[0]
    # Ladder: every variant at the headline shape, one bar per GPU.
    order = []
    for r in runs:
        for v in ladder_order(fam, list(r.shapes.get(r.headline(), {}))):
            if v not in order:
                order.append(v)
    series, notes = [], []
    for r in runs:
        vs = r.shapes.get(r.headline(), {})
        series.append((f"{gpu_label(r, all_runs)}, {r.headline()}",
                       [rate(vs[v])[1] if v in vs and rate(vs[v]) else None for v in order]))
        notes.append([f"x{r.ratio(v):.2f}" if r.ratio(v) is not None else "" for v in order])
    labels = [f"{fam.step_of(v)['num']} {v}" if fam.step_of(v) else v for v in order]
    highlight = {v for v in VENDOR.get(fam.name, [])}
    out[image_name(fam.name, "ladder")] = svgplot.bar_chart(
        f"{fam.name}: every step at its headline shape ({runs[0].unit()}, x = ratio to {base_name})",
        labels, series, runs[0].unit(), notes,
        highlight={l for l, v in zip(labels, order) if v in highlight})
    # Rate versus size, per GPU and element type, when there are two sizes or more.
    for r in runs:
        kinds = []
        for s in r.shapes:
            if shape_kind(s) not in kinds:
                kinds.append(shape_kind(s))
        for k in kinds:
            shapes = sorted([s for s in r.shapes if shape_kind(s) == k], key=lambda s: (shape_size(s), s))
            if len(shapes) < 2:
                continue
            variants = []
            for s in shapes:
                for v in ladder_order(fam, list(r.shapes[s])):
                    if v not in variants:
                        variants.append(v)
            series = [(v, [rate(r.shapes[s][v])[1] if v in r.shapes[s] and rate(r.shapes[s][v]) else None
                           for s in shapes]) for v in variants]
            xl = [s[len(k) + 1:] if k and s.startswith(k + "/") else s for s in shapes]
            tag = r.gpu + (f"_{k.replace('/', '_')}" if k else "")
            out[image_name(fam.name, "sizes", tag)] = svgplot.line_chart(
                f"{fam.name}{' ' + k if k else ''}: {r.unit()} versus size on {gpu_label(r, all_runs)}",
                xl, series, r.unit(), SIZE_TITLE.get(fam.name, "size"), highlight={base_name})
    return out


# ---------------------------------------------------------------------------------------------
# Regions.

def family_region(fam, runs, all_runs, images):
    base_name = (VENDOR.get(fam.name) or ["baseline"])[0]
    if not runs:
        return (f"No results yet. On a machine with a GPU, `./cookbook bench {fam.name}` writes "
                f"`results/<gpu>/{fam.name}.json` and `./cookbook report` fills this section with the "
                f"ladder's table and plots for every GPU measured.")
    lines = [f"Generated by `tools/report.py` from `results/`: the median of the benchmark's "
             f"repetitions; ratio = {base_name} time / variant time, measured in the same process "
             f"(higher is faster).", ""]
    lines.append(f"\\image html {image_name(fam.name, 'ladder')} \"{fam.name}: the ladder on every GPU measured\"")
    for r in runs:
        unit = r.unit()
        h = r.headline()
        vs = r.shapes.get(h, {})
        lines += ["", f"### {gpu_label(r, all_runs)}", "",
                  f"Measured on {r.provenance()}.", "",
                  f"At {h}:", "",
                  f"| step | variant | time ({next(iter(vs.values()))['time_unit']}) | {unit} | vs {base_name} |",
                  "| --- | --- | ---: | ---: | ---: |"]
        for v in ladder_order(fam, list(vs)):
            e = vs[v]
            st = fam.step_of(v)
            step = st["num"] if st else "vendor"
            rr = rate(e)
            lines.append(f"| {step} | `{v}` | {e['real_time']:.2f} | {fmt_rate(rr[1] if rr else None)} | "
                         f"{fmt(r.ratio(v, h))} |")
        kinds = []
        for s in r.shapes:
            if shape_kind(s) not in kinds:
                kinds.append(shape_kind(s))
        shapes = sorted(r.shapes, key=lambda s: (kinds.index(shape_kind(s)), shape_size(s), s))
        if len(shapes) > 1:
            lines += ["", f"Every shape ({unit}, and in parentheses the ratio to {base_name}):", "",
                      "| variant | " + " | ".join(shapes) + " |",
                      "| --- |" + " ---: |" * len(shapes)]
            allv = []
            for s in shapes:
                for v in ladder_order(fam, list(r.shapes[s])):
                    if v not in allv:
                        allv.append(v)
            for v in allv:
                cells = []
                for s in shapes:
                    e = r.shapes[s].get(v)
                    rr = rate(e) if e else None
                    cells.append(f"{fmt_rate(rr[1])} ({fmt(r.ratio(v, s))})" if rr else "-")
                lines.append(f"| `{v}` | " + " | ".join(cells) + " |")
        for name in sorted(images):
            if name.startswith(f"{fam.name}_sizes_{r.gpu}"):
                lines += ["", f"\\image html {name} \"{fam.name}: {unit} versus size on {gpu_label(r, all_runs)}\""]
    return "\n".join(lines)


def recipe_table(fams, all_runs, doxygen):
    """family | step | what it changes | ratio on each GPU."""
    gpus = []
    for rs in all_runs.values():
        for r in rs:
            if (r.gpu, gpu_label(r, all_runs)) not in gpus:
                gpus.append((r.gpu, gpu_label(r, all_runs)))
    gpus.sort()
    head = "| family | step | what it changes |" + "".join(f" vs baseline, {g[1]} |" for g in gpus)
    lines = [head, "| --- | --- | --- |" + " ---: |" * len(gpus)]
    for fam in fams:
        runs = {r.gpu: r for r in all_runs.get(fam.name, [])}
        if doxygen and fam.anchor:
            link = f"\\ref {fam.anchor} \"{fam.name}\""
        else:
            link = f"[{fam.name}](recipes/{fam.name}/README.md)"
        for s in fam.steps:
            cells = []
            for g, _ in gpus:
                r = runs.get(g)
                x = r.ratio(s["variant"]) if r else None
                cells.append(fmt(x) if x is not None else "-")
            lines.append(f"| {link} | {s['num']} `{s['variant']}` | {cell(s['brief'])} |"
                         + "".join(f" {c} |" for c in cells))
    notes = ["", "Ratios: baseline time / step time at each family's headline shape "
             "(" + ", ".join(f"{f.name}: {', '.join(HEADLINE.get(f.name, ['largest']))}" for f in fams) +
             "), measured in the same process; baselines: " +
             ", ".join(f"{f.name} `{(VENDOR.get(f.name) or ['-'])[0]}`" for f in fams) +
             ". A dash: not measured yet."]
    prov = sorted({r.provenance() for f in fams for r in all_runs.get(f.name, [])})
    if prov:
        notes += ["", "Measured on:", ""] + [f"- {p}" for p in prov]
    return "\n".join(lines + notes)


def readme_region(fams, all_runs, images):
    lines = ["Generated by `tools/report.py` from `results/` (`./cookbook report`).", "",
             recipe_table(fams, all_runs, doxygen=False)]
    for fam in fams:
        name = image_name(fam.name, "ladder")
        if name in images:
            lines += ["", f"![{fam.name} ladder]({IMAGES}/{name})"]
    return "\n".join(lines)


def per_gpu(all_runs):
    """{gpu: {family: run}}"""
    out = {}
    for fam, rs in all_runs.items():
        for r in rs:
            out.setdefault(r.gpu, {})[fam] = r
    return dict(sorted(out.items()))


def best(run, variants, kind_prefix=""):
    """Highest rate among the given variants over the run's shapes: (rate, variant, shape)."""
    top = None
    for s, vs in run.shapes.items():
        if kind_prefix and not s.startswith(kind_prefix):
            continue
        for v in variants:
            if v in vs and rate(vs[v]) and (top is None or rate(vs[v])[1] > top[0]):
                top = (rate(vs[v])[1], v, s)
    return top


def intensity(family, shape, entry):
    """FLOP per byte of minimum traffic, or None."""
    nums = [int(x) for x in re.findall(r"\d+", shape)]
    if family == "gemm" and len(nums) >= 3:
        m, n, k = nums[:3]
        return 2.0 * m * n * k / (4.0 * (m * k + k * n + m * n))
    if family == "reduction" and nums:
        return 1.0 / (8 if ("double" in shape or "long" in shape) else 4)
    if family == "transpose":
        return 0.0
    return None


def roofline_data(all_runs):
    """[(name, bw, peak)], [(label, ai, tflops, roof index, family)] for the roofline plot."""
    roofs, points = [], []
    for gpu, fr in per_gpu(all_runs).items():
        bw = best(fr["transpose"], ["memcpy"]) if "transpose" in fr else None
        if not bw:
            continue
        pk = best(fr["gemm"], ["cublas"]) if "gemm" in fr else None
        ri = len(roofs)
        roofs.append((next(iter(fr.values())).gpu_name, bw[0], pk[0] if pk else None))
        for fam in ("reduction", "gemm"):
            r = fr.get(fam)
            if not r:
                continue
            h = r.headline()
            for v, e in r.shapes.get(h, {}).items():
                rr, ai = rate(e), intensity(fam, h, e)
                if not rr or not ai:
                    continue
                tf = rr[1] if rr[0] == "TFLOP/s" else rr[1] * ai / 1e3
                points.append((v, ai, tf, ri, f"{fam} {h}"))
    return roofs, points


ROOFLINE_IMAGE = "roofline.svg"


def roofline_region(all_runs):
    g = per_gpu(all_runs)
    if not g:
        return ("Not measured yet. Once `results/` holds a GPU's runs, this table gives its measured "
                "memory roof (`cudaMemcpy` device to device, read + write counted), its measured "
                "fp32 compute roof (cuBLAS SGEMM), the ridge point between them, and where each "
                "family's steps sit under the roof.")
    roofs, points = roofline_data(all_runs)
    lines = []
    if roofs and points:
        lines += [f"\\image html {ROOFLINE_IMAGE} \"The measured roofs and every reduction and GEMM kernel "
                  f"at its headline shape\"", ""]
    lines += ["| GPU | memory roof: memcpy GB/s (shape) | fp32 roof: cuBLAS TFLOP/s (shape) | ridge (FLOP/B) |",
             "| --- | ---: | ---: | ---: |"]
    roofs = {}
    for gpu, fr in g.items():
        bw = best(fr["transpose"], ["memcpy"]) if "transpose" in fr else None
        pk = best(fr["gemm"], ["cublas"]) if "gemm" in fr else None
        roofs[gpu] = (bw, pk)
        ridge = pk[0] * 1e3 / bw[0] if bw and pk else None
        name = next(iter(fr.values())).gpu_name
        lines.append(f"| {name} | {fmt_rate(bw[0]) + f' ({bw[2]})' if bw else 'not measured'} | "
                     f"{f'{pk[0]:.1f} ({pk[2]})' if pk else 'not measured'} | {fmt(ridge, 1)} |")
    lines += ["", "Each family at its headline shape: arithmetic intensity counted on the minimum "
              "traffic, the measured rate, and the fraction of the roof min(peak, intensity x "
              "bandwidth) it reaches (for a transpose, the fraction of the memory roof).", "",
              "| GPU | family | kernel | FLOP/B | measured | fraction of roof |",
              "| --- | --- | --- | ---: | ---: | ---: |"]
    for gpu, fr in g.items():
        bw, pk = roofs[gpu]
        for fam, r in sorted(fr.items()):
            h = r.headline()
            vs = r.shapes.get(h, {})
            for v in ladder_order(_stub(fam), list(vs)):
                e = vs[v]
                rr = rate(e)
                ai = intensity(fam, h, e)
                if not rr or ai is None:
                    continue
                frac = None
                if rr[0] == "GB/s" and bw:
                    frac = rr[1] / bw[0]
                elif rr[0] == "TFLOP/s" and bw:
                    roof = ai * bw[0] / 1e3
                    if pk:
                        roof = min(roof, pk[0])
                    frac = rr[1] / roof
                lines.append(f"| {r.gpu_name} | {fam} | `{v}` ({h}) | {fmt(ai)} | {fmt_rate(rr[1])} {rr[0]} | "
                             f"{fmt(frac)} |")
    return "\n".join(lines)


def _stub(name):
    """A Family with no steps known (for ordering variants by vendor first)."""
    f = Family.__new__(Family)
    f.name, f.steps = name, []
    return f


COALESCING = {"transpose": ["memcpy", "copy", "naive", "smem_tile_32x32"],
              "gemm": ["cublas", "naive", "coalesced"]}
BANKS = {"transpose": ["smem_copy", "smem_tile_32x32", "padded_32x33", "swizzled_32x32"]}


def compare_region(all_runs, which, missing):
    """The given variants of each family at its headline shape, on every GPU."""
    rows = []
    for fam, vars_ in which.items():
        for r in all_runs.get(fam, []):
            h = r.headline()
            vs = r.shapes.get(h, {})
            base_name = baseline(fam, vs)[0] or "baseline"
            for v in vars_:
                if v in vs and rate(vs[v]):
                    rr = rate(vs[v])
                    rows.append(f"| {r.gpu_name} | {fam} {h} | `{v}` | {fmt_rate(rr[1])} {rr[0]} | "
                                f"{fmt(r.ratio(v, h))} ({base_name}) |")
    if not rows:
        return missing
    prov = sorted({r.provenance() for fam in which for r in all_runs.get(fam, [])})
    return "\n".join(["| GPU | benchmark | kernel | measured | vs baseline |",
                      "| --- | --- | --- | ---: | ---: |"] + rows + ["", "Measured on:", ""] +
                     [f"- {p}" for p in prov])


def ncu_banks_region(root):
    """Nsight Compute's shared-memory counters from results/<gpu>/banks.json (tools/bank_evidence.py)."""
    import json
    lines = []
    for path in sorted(glob.glob(os.path.join(root, "results", "*", "banks.json"))):
        data = json.load(open(path))
        kernels = data.get("kernels", [])
        if not kernels:
            continue
        lines += ["" if lines else None, f"{data.get('gpu_name', '?')} (`{os.path.relpath(path, root)}`):", "",
                  "| benchmark | loads: wavefronts/instruction | stores: wavefronts/instruction | "
                  "`cp.async` wavefronts | loads, L1 counters | stores, L1 counters |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for k in kernels:
            if not k.get("ld_instructions") and not k.get("st_instructions"):
                continue  # no shared-memory access (the copy and naive kernels)
            lines.append(f"| `{k.get('benchmark', '?')}` | {fmt(k.get('sass_ld_wavefronts_per_instruction'))} | "
                         f"{fmt(k.get('sass_st_wavefronts_per_instruction'))} | "
                         f"{k.get('sass_ldgsts_wavefronts', 0):.0f} | {fmt(k.get('ld_wavefronts_per_instruction'))} | "
                         f"{fmt(k.get('st_wavefronts_per_instruction'))} |")
    lines = [l for l in lines if l is not None]
    if not lines:
        return ("Not measured yet: once `tools/bank_evidence.py` has written `results/<gpu>/banks.json` "
                "on a GPU, this table shows Nsight Compute's shared-memory wavefronts per instruction "
                "and bank conflicts for every kernel, to compare with the model's table above.")
    return "\n".join(lines)


def results_text_region(root, name, title, missing):
    """The text files results/<gpu>/<name> (written on a GPU by the robustness runs), one section
    per GPU, in order."""
    parts = []
    for path in sorted(glob.glob(os.path.join(root, "results", "*", name))):
        body = open(path).read().strip("\n")
        parts.append(f"{title} `{os.path.relpath(path, root)}`:\n\n{body}\n")
    return "\n".join(parts) if parts else missing


def occupancy_rows(all_runs, only=None):
    rows = []
    for fam, rs in sorted(all_runs.items()):
        for r in rs:
            h = r.headline()
            for v, e in r.shapes.get(h, {}).items():
                occ = occupancy(e)
                if occ[0] is None:
                    continue
                if only and not only(occ):
                    continue
                rr = rate(e)
                warps = occ[0] * occ[3] / 32 if occ[0] is not None and occ[3] else None
                rows.append(f"| {r.gpu_name} | {fam} {h} | `{v}` | " +
                            " | ".join("-" if x is None else f"{x:.0f}" for x in occ + [warps]) +
                            f" | {fmt_rate(rr[1]) + ' ' + rr[0] if rr else '-'} |")
    return rows


def occupancy_region(all_runs):
    rows = occupancy_rows(all_runs)
    if not rows:
        return ("Not measured yet: no benchmark in `results/` records occupancy counters so far. "
                "When a benchmark records the counter `blocks_per_sm` (and `registers`, `smem_static_bytes`, "
                "`smem_dynamic_bytes`, `threads_per_block`: blocks per SM from `cudaOccupancyMaxActiveBlocksPerMultiprocessor`, the kernel's "
                "registers and shared memory from `cudaFuncGetAttributes`), this table lists them "
                "for every kernel next to its measured rate.")
    return "\n".join(["| GPU | benchmark | kernel | " + " | ".join(t for t, _ in OCC_COUNTERS) + " | resident warps/SM | measured |",
                      "| --- | --- | --- |" + " ---: |" * (len(OCC_COUNTERS) + 2)] + rows)


def carveout_region(all_runs):
    g = per_gpu(all_runs)
    if not g:
        return ("Not measured yet: this table will show each GPU's shared memory per SM as the "
                "benchmark recorded it, and the kernels that use more than 48 KB of dynamic shared "
                "memory per block with their blocks per SM.")
    lines = ["| GPU | SMs | shared memory per SM (bytes, `cudaDeviceProp`) |", "| --- | ---: | ---: |"]
    for gpu, fr in g.items():
        c = next(iter(fr.values())).ctx
        lines.append(f"| {c.get('gpu_name', gpu)} | {c.get('gpu_sm_count', '-')} | "
                     f"{c.get('gpu_smem_per_sm_bytes', '-')} |")
    rows = occupancy_rows(all_runs, only=lambda occ: (occ[2] or 0) > 48 * 1024)
    lines += [""]
    if rows:
        lines += ["Kernels above the 48 KB static limit (opted in with "
                  "`cudaFuncAttributeMaxDynamicSharedMemorySize`):", "",
                  "| GPU | benchmark | kernel | " + " | ".join(t for t, _ in OCC_COUNTERS) +
                  " | resident warps/SM | measured |",
                  "| --- | --- | --- |" + " ---: |" * (len(OCC_COUNTERS) + 2)] + rows
    else:
        lines += ["No kernel in `results/` records more than 48 KB of shared memory per block yet."]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------

def replace_region(text, key, content):
    """text with the region `key` replaced by content; None when the markers are missing."""
    b = BEGIN.format(key)
    i = text.find(b)
    if i < 0:
        return None
    j = text.find(END, i + len(b))
    if j < 0:
        raise SystemExit(f"report: '{b}' without '{END}'")
    return text[:i + len(b)] + "\n" + content.rstrip("\n") + "\n" + text[j:]


def plan(root, bank_tables):
    """{path: new text} for every generated file, and the notes about missing markers."""
    fams = families(root)
    all_runs = load_runs(root)
    images = {}
    for fam in fams:
        images.update(family_images(fam, all_runs.get(fam.name, []), all_runs))
    roofs, points = roofline_data(all_runs)
    if roofs and points:
        images[ROOFLINE_IMAGE] = svgplot.roofline_chart("Roofline: measured roofs and kernels", roofs, points)
    regions = {}  # path -> [(key, content)]

    def add(rel, key, content):
        regions.setdefault(os.path.join(root, rel), []).append((key, content))

    for fam in fams:
        add(f"recipes/{fam.name}/README.md", f"results {fam.name}",
            family_region(fam, all_runs.get(fam.name, []), all_runs, images))
    add("README.md", "readme results", readme_region(fams, all_runs, images))
    add("docs/mainpage.md", "recipe table", recipe_table(fams, all_runs, doxygen=True))
    add("docs/recipes.md", "recipe pages",
        "\n".join(f"- \\subpage {f.anchor}" for f in fams if f.anchor) or "No recipe page yet.")
    add("docs/roofline.md", "results roofline", roofline_region(all_runs))
    add("docs/coalescing.md", "results coalescing", compare_region(all_runs, COALESCING, (
        "Not measured yet: this table will show, for each GPU in `results/`, the copy roof against "
        "the naive transpose (coalesced reads, strided writes) and the shared-memory tile (coalesced "
        "both ways), and the naive and coalesced GEMM steps.")))
    add("docs/banks.md", "results banks", compare_region(all_runs, BANKS, (
        "Not measured yet: this table will show, for each GPU in `results/`, the shared-memory copy "
        "against the unpadded, padded and swizzled transpose tiles.")))
    add("docs/occupancy.md", "results occupancy", occupancy_region(all_runs))
    add("docs/dynamic_smem.md", "results carveout", carveout_region(all_runs))
    add("docs/banks.md", "results ncu banks", ncu_banks_region(root))
    add("docs/robustness.md", "bad inputs", results_text_region(
        root, "bad_inputs.md", "Written by `tests/bad_input_test` on the GPU machine,",
        "Not run yet: the matrix appears once a GPU run has written `results/<gpu>/bad_inputs.md`."))
    add("docs/robustness.md", "sanitize", results_text_region(
        root, "sanitize.txt", "`./cookbook sanitize` on the GPU machine,",
        "Not run yet: the summary appears once a GPU run has written `results/<gpu>/sanitize.txt`."))
    if bank_tables:
        out = subprocess.run([bank_tables], check=True, capture_output=True, text=True).stdout
        add("docs/banks.md", "bank tables", out)

    files, notes = {}, []
    for path, items in regions.items():
        if not os.path.exists(path):
            notes.append(f"{os.path.relpath(path, root)}: missing, skipped")
            continue
        text = open(path).read()
        for key, content in items:
            new = replace_region(text, key, content)
            if new is None:
                notes.append(f"{os.path.relpath(path, root)}: no '{BEGIN.format(key)}' region, skipped")
            else:
                text = new
        files[path] = text
    for name, svg in images.items():
        files[os.path.join(root, IMAGES, name)] = svg
    return files, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    ap.add_argument("--bank-tables", help="the bank_tables program, whose output fills docs/banks.md")
    a = ap.parse_args()
    files, notes = plan(a.root, a.bank_tables)
    for n in notes:
        print(f"report: note: {n}", file=sys.stderr)
    if not a.check:
        # The pages are generated from the working tree: say so when it holds uncommitted recipes
        # or results, whose rows would then be committed without them.
        try:
            dirty = subprocess.run(["git", "status", "--porcelain", "--", "recipes", "results"], cwd=a.root,
                                   capture_output=True, text=True, timeout=30).stdout.split("\n")
        except (OSError, subprocess.SubprocessError):
            dirty = []
        dirty = [d[3:] for d in dirty if d.strip() and (d[3:].endswith((".cuh", ".json")) or
                                                        d[3:].endswith("README.md") or d[3:].endswith("/"))]
        if dirty:
            print("report: warning: generated from uncommitted files (commit them together with the "
                  "pages): " + ", ".join(dirty), file=sys.stderr)
    img_dir = os.path.join(a.root, IMAGES)
    orphans = [os.path.join(img_dir, f) for f in sorted(os.listdir(img_dir))
               if f.endswith(".svg") and os.path.join(img_dir, f) not in files] if os.path.isdir(img_dir) else []
    stale = [p for p, t in files.items() if not os.path.exists(p) or open(p).read() != t]
    if a.check:
        for p in stale:
            print(f"report: stale: {os.path.relpath(p, a.root)}", file=sys.stderr)
        for p in orphans:
            print(f"report: stale: {os.path.relpath(p, a.root)} (no longer generated)", file=sys.stderr)
        if stale or orphans:
            print("report: generated pages are out of date: run ./cookbook report and commit", file=sys.stderr)
            return 1
        print(f"report: {len(files)} generated files up to date")
        return 0
    os.makedirs(img_dir, exist_ok=True)
    for p in stale:
        with open(p, "w") as f:
            f.write(files[p])
        print(f"report: wrote {os.path.relpath(p, a.root)}")
    for p in orphans:
        os.remove(p)
        print(f"report: removed {os.path.relpath(p, a.root)}")
    if not stale and not orphans:
        print("report: everything up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
