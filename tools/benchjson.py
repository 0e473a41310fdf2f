"""Loading of the benchmark JSON that ./cookbook bench writes (results/<gpu>/<family>.json).

Google Benchmark JSON with aggregates; benchmark names are <family>/<variant>/<shape...>. The
baseline of a family is the first variant of BASELINES[family] present for a shape, measured in
the same process, and a ratio is baseline time / variant time (higher is faster)."""
import json
import os
from collections import OrderedDict

BASELINES = {
    "transpose": ["memcpy"],
    "reduction": ["cub"],
    "gemm": ["cublas"],
}
# Other vendor variants shown next to the baseline (they are not steps of the ladder).
VENDOR = {
    "transpose": ["memcpy", "cublas_geam"],
    "reduction": ["cub"],
    "gemm": ["cublas"],
}
RATES = ("TFLOP/s", "GB/s")


def load(path):
    """Returns (context, rows): rows maps (family, shape) -> {variant: median benchmark entry},
    in the order of the file."""
    with open(path) as f:
        data = json.load(f)
    rows = OrderedDict()
    for b in data.get("benchmarks", []):
        if b.get("aggregate_name", "median") != "median" or b.get("error_occurred"):
            continue
        if b.get("run_type") == "aggregate" and b.get("aggregate_unit", "time") != "time":
            continue
        # Drop Google Benchmark's suffixes (/iterations:100, /manual_time, ...).
        parts = [p for p in b.get("run_name", b["name"]).split("/")
                 if ":" not in p and p not in ("manual_time", "real_time", "process_time")]
        if len(parts) < 3:
            continue
        family, variant, shape = parts[0], parts[1], "/".join(parts[2:])
        rows.setdefault((family, shape), OrderedDict())[variant] = b
    return data.get("context", {}), rows


def baseline(family, variants):
    """(name, entry) of the family's baseline among variants, or (None, None)."""
    for b in BASELINES.get(family, []):
        if b in variants:
            return b, variants[b]
    return None, None


def ratio(entry, base):
    """Baseline time / variant time, or None."""
    if not entry or not base or not entry.get("real_time"):
        return None
    return base["real_time"] / entry["real_time"]


def rate(entry):
    """(unit, value) of the entry's rate counter, or None."""
    for k in RATES:
        if k in entry:
            return k, entry[k]
    return None


def result_files(results_dir):
    """[(gpu_slug, family, path)] for every results/<gpu>/<family>.json, sorted."""
    out = []
    if not os.path.isdir(results_dir):
        return out
    for gpu in sorted(os.listdir(results_dir)):
        d = os.path.join(results_dir, gpu)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith(".json"):
                out.append((gpu, f[:-5], os.path.join(d, f)))
    return out
