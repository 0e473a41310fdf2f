"""Bank-conflict regions: the bank model's tables (the output of docs/bank_tables.cu) and the
shared-memory counters that tools/bank_evidence.py measured (results/<gpu>/banks.json)."""
import glob
import json
import os
import subprocess

from tables import fmt, table


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
    for path in sorted(glob.glob(os.path.join(results, "*", "banks.json"))):
        data = json.load(open(path))
        rows = [[f"`{k['benchmark'].split('/', 1)[-1]}`", fmt(k.get("sass_ld_wavefronts_per_instruction")),
                 fmt(k.get("sass_st_wavefronts_per_instruction")), f"{k.get('sass_ldgsts_wavefronts', 0):.0f}",
                 fmt(k.get("ld_wavefronts_per_instruction")), fmt(k.get("st_wavefronts_per_instruction"))]
                for k in data.get("kernels", []) if (k.get("ld_instructions") or k.get("st_instructions"))
                and (not families or k.get("family") in families)]
        if rows:
            out += [f"{data.get('gpu_name', '?')} (`results/{os.path.basename(os.path.dirname(path))}/banks.json`): "
                    "wavefronts per shared load and store instruction from the SASS-level counters and from the L1 "
                    "counters, and the total wavefronts of the `cp.async` copies.", "",
                    table(["benchmark", "loads, SASS", "stores, SASS", "`cp.async`", "loads, L1", "stores, L1"], rows, 1),
                    ""]
    return "\n".join(out) or ("Not measured yet: once `tools/bank_evidence.py` has written "
                              "`results/<gpu>/banks.json` on a GPU, this table shows Nsight Compute's "
                              "shared-memory wavefronts per instruction for every kernel.")
