"""Loads results/<gpu>/<family>.json: Google Benchmark JSON (names <family>/<variant>/<shape>, median
aggregates, real_time the event-timed kernel time) whose context names the GPU, the family
(smem_family), the variant ratios divide by (smem_reference) and the ladder (smem_steps: a JSON array
of {name, step, header, summary, kind: "step" | "baseline"}). Ratio: reference time / variant time.
WRITES: what each ./cookbook command writes into results/<gpu>/; unexplained(): any other file there."""
import fnmatch
import glob
import json
import math
import os
import re
import sys

import regions

RATES = ("TFLOP/s", "GB/s")
# The shape each ladder is shown at; others: the largest of the first element type with the most variants.
# A family with two problems (stencil) names one shape per problem: each variant is shown at the
# first of them at which it ran.
HEADLINE = {"gemm": "4096x4096x4096", "reduction": "float/268435456", "transpose": "float/8192x8192",
            "scan": "inclusive/float/268435456", "histogram": "uint8/256/uniform/1073741824",
            "stencil": ("conv2d_5x5/float/8192x8192", "7point/float/512x512x512"),
            "attention": ("hd128/full/4x16x16x4096x4096", "hd128/full/16x32x8x1x32768")}
# Families whose reference is a roof measured at shapes of its own (attention's `gemm_roof`, cuBLAS's GEMM):
# a variant's ratio is its rate over the reference's best rate in the same run, or at a shape where the
# family's second roof (here) ran, its rate in that roof's unit over the roof's.
ROOFS = {"attention": "copy"}


# What each ./cookbook command writes into results/<gpu>/, the same names on every GPU: {family} is each
# bench/<family>_bench.cu, {probe} each probes/<probe>.sh or .py (which writes <probe>.<its extension>).
WRITES = {
    "bench": ["{family}.json"],
    "test": ["bad_inputs.md"],
    "sanitize": ["sanitize.txt"],
    # per table of tools/tune.py: json, log, csv
    "tune": ["gemm_tune.*", "gemm_tune_split.*", "tc_gemm_tune.*", "tc_gemm_tune_hopper.*", "attention_tune.*",
             "attention_tune_hopper.*"],
    "probe": ["{probe}.*"],
}


def unexplained(root):
    """The files under results/<gpu>/ that no command writes (WRITES) and no generated region of a page
    names as results/<gpu>/<file>."""
    stem = lambda p: os.path.basename(p).split(".")[0]  # noqa: E731
    names = {w.format(family=stem(f)[:-len("_bench")], probe=stem(p)) for ws in WRITES.values() for w in ws
             for f in glob.glob(os.path.join(root, "bench", "*_bench.cu"))
             for p in glob.glob(os.path.join(root, "probes", "*.sh")) + glob.glob(os.path.join(root, "probes", "*.py"))}
    cited = "".join(m[2] for page in regions.pages(root) for m in regions.REGION.findall(open(page).read()))
    return [f for f in (os.path.relpath(p, root) for p in files(os.path.join(root, "results"), "*"))
            if not any(fnmatch.fnmatch(os.path.basename(f), n) for n in names) and f not in cited]


def files(results_dir, name):
    """results/<gpu>/<name> (a glob pattern) of every GPU, sorted."""
    return sorted(glob.glob(os.path.join(results_dir, "*", name)))


def gpu_of(path):
    """The folder of the GPU of a results/<gpu>/ file."""
    return os.path.basename(os.path.dirname(os.path.abspath(path)))


def shape_size(shape):
    return math.prod(int(x) for x in re.findall(r"\d+", shape))


def shape_kind(shape):
    """The element type of a shape ('float' in 'float/4096'), or ''."""
    return "/".join(p for p in shape.split("/") if not re.fullmatch(r"[\dx]+", p))


def rate(entry):
    """(unit, value) of an entry's rate counter, or None."""
    return next(((k, entry[k]) for k in RATES if entry and k in entry), None)


class Run:
    """One results/<gpu>/<family>.json."""

    def __init__(self, path):
        data = json.load(open(path))
        data = data if isinstance(data, dict) else {}
        self.gpu = gpu_of(path)
        self.ctx = c = data.get("context", {})
        self.family, self.reference = c.get("smem_family") or os.path.basename(path)[:-5], c.get("smem_reference")
        # A full 40-digit hash (a run's .smem-commit) is shown short, as git shows it.
        self.commit = re.sub(r"^([0-9a-f]{12})[0-9a-f]{28}", r"\1", c.get("git_commit", "?"))
        self.steps = json.loads(c["smem_steps"]) if c.get("smem_steps") else []
        self.name = self.label = c.get("gpu_name", self.gpu)
        self.shapes, self.seen = {}, []  # shape -> {variant: median entry}; the variants in file order
        for b in data.get("benchmarks", []):
            parts = [p for p in b.get("run_name", b["name"]).split("/")
                     if ":" not in p and p not in ("manual_time", "real_time")]
            if b.get("aggregate_name", "median") == "median" and not b.get("error_occurred") \
                    and len(parts) >= 3 and parts[0] == self.family:
                self.shapes.setdefault("/".join(parts[2:]), {})[parts[1]] = b
                self.seen += [parts[1]] * (parts[1] not in self.seen)

    def step(self, variant):
        return next((s for s in self.steps if s["name"] == variant), {})

    def order(self, variants):
        """variants in ladder order (the metadata's, except that a step listed before steps of lower numbers
        only, as a benchmark's own extra step is, goes after them), then the others in the order of the file."""
        num = [s.get("step") if s.get("step") is not None else -1 for s in self.steps]
        late = [i for i, n in enumerate(num) if n >= 0 and num[i + 1:] and n > max(num[i + 1:])]
        ladder = [s for i, s in enumerate(self.steps) if i not in late] + [self.steps[i] for i in late]
        names = [s["name"] for s in ladder] + self.seen
        return sorted(variants, key=lambda v: (names.index(v) if v in names else len(names), v))

    def title(self, variant, code=""):
        """'04 tiled_32' for a step, the name alone for a baseline (the name between `code`)."""
        n = self.step(variant).get("step")
        return ("" if n is None or variant == self.reference else f"{n:02d} ") + f"{code}{variant}{code}"

    def ratio(self, variant, shape):
        if self.family in ROOFS:
            v, s = self.roof(shape)
            x, y = self.value(variant, shape), self.value(v, s)
            return x / y if x and y and self.unit(s) == self.unit(shape) else None
        e, ref = self.shapes.get(shape, {}).get(variant), self.shapes.get(shape, {}).get(self.reference)
        return ref["real_time"] / e["real_time"] if e and ref and e.get("real_time") else None

    def roof(self, shape=None):
        """A ROOFS family's (variant, shape) that a rate at `shape` is divided by."""
        if ROOFS[self.family] in self.shapes.get(shape, {}):
            return ROOFS[self.family], shape
        return self.reference, max((s for s in self.shapes if self.value(self.reference, s)),
                                   key=lambda s: self.value(self.reference, s), default=None)

    def value(self, variant, shape):
        """The variant's rate at the shape (in the shape's unit), or None."""
        return self.shapes.get(shape, {}).get(variant, {}).get(self.unit(shape))

    def unit(self, shape=None):
        """The run's unit (its first rate), or at a shape where a ROOFS family's second roof ran, the roof's."""
        e = rate(self.shapes.get(shape, {}).get(ROOFS.get(self.family)))
        return e[0] if e else next((rate(e)[0] for vs in self.shapes.values() for e in vs.values() if rate(e)), "GB/s")

    def against(self):
        """(what the ratios are to, the rule) in words."""
        if self.family not in ROOFS:
            return f"`{self.reference}`", f"`{self.reference}` time / variant time"
        v, s = ROOFS[self.family], next((s for s in self.shapes if ROOFS[self.family] in self.shapes[s]), None)
        return "its roof", (f"variant {self.unit()} / the best {self.unit()} of `{self.reference}` in the same run" +
                            (f"; where `{v}` ran, variant {self.unit(s)} / `{v}`'s" if s else ""))

    def sorted_shapes(self):
        kinds = list(dict.fromkeys(map(shape_kind, self.shapes)))
        return sorted(self.shapes, key=lambda s: (kinds.index(shape_kind(s)), shape_size(s), s))

    def headlines(self):
        """The shapes the family is shown at: HEADLINE's that were measured, else the one HEADLINE's comment says."""
        h = HEADLINE.get(self.family, ())
        first = [s for s in self.shapes if shape_kind(s) == shape_kind(next(iter(self.shapes)))]
        return [x for x in ((h,) if isinstance(h, str) else h) if x in self.shapes] or [
            max(first, key=lambda s: (len(self.shapes[s]), shape_size(s)))]

    def headline(self, variant=None):
        """The shape the family is shown at, or with `variant` the first of them at which that variant ran."""
        return next((h for h in self.headlines() if variant is None or variant in self.shapes[h]), self.headlines()[0])

    def provenance(self):
        c = self.ctx
        return (f"{self.name}, {c.get('gpu_sm_count', '?')} SMs at {c.get('gpu_sm_clock_mhz', '?')} MHz, "
                f"driver {c.get('cuda_driver', '?')}, CUDA {c.get('cuda_runtime', '?')}, "
                f"commit `{self.commit}`")


def load(results_dir):
    """Every results/<gpu>/<family>.json with ladder metadata, sorted by family and GPU. A GPU's
    label is its name, with its folder added where two folders share a name."""
    runs = []
    for path in files(results_dir, "*.json"):
        r = Run(path) if not path.endswith("banks.json") else None
        if r and not r.steps:
            print(f"results: {r.gpu}/{os.path.basename(path)} has no smem_steps in its context (written before "
                  "the ladder metadata): skipped; run ./cookbook bench again", file=sys.stderr)
        # Only <family>.json: other JSON beside it (a tuning run's candidates) is not the ladder.
        runs += [r] if r and r.steps and r.shapes and os.path.basename(path) == f"{r.family}.json" else []
    for r in runs:
        r.label = f"{r.name} ({r.gpu})" if any(o.name == r.name and o.gpu != r.gpu for o in runs) else r.name
    return sorted(runs, key=lambda r: (r.family, r.gpu))


def gpus(runs):
    """[(folder, label)] of every GPU measured, sorted by folder."""
    return sorted({(r.gpu, r.label) for r in runs})


def families(runs):
    """{family: [runs, one per GPU]}."""
    return {f: [r for r in runs if r.family == f] for f in dict.fromkeys(r.family for r in runs)}
