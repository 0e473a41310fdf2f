"""Generated regions of the pages: the text between `<!-- BEGIN GENERATED: <key> -->` and
`<!-- END GENERATED -->`, which only tools/report.py writes. A key is a kind and its arguments,
e.g. `results gemm`, `profile gemm-stalls`, `compare transpose:memcpy,naive`."""
import glob
import os
import re

REGION = re.compile(r"(<!-- BEGIN GENERATED: (.+?) -->)(.*?)(<!-- END GENERATED -->)", re.S)


def pages(root):
    """Every page, which may hold regions: README.md, docs/*.md and recipes/*/*.md."""
    return [p for pattern in ("README.md", "docs/*.md", "recipes/*/*.md")
            for p in sorted(glob.glob(os.path.join(root, pattern)))]


def anchor(root, family):
    """The page name of a family's page, from the `{#name}` of its first line."""
    m = re.search(r"\{#(\w+)\}", open(os.path.join(root, "recipes", family, "README.md")).readline())
    return m.group(1) if m else None


def families(root):
    """The families that have a page, recipes/<family>/README.md."""
    return sorted(f for f in os.listdir(os.path.join(root, "recipes"))
                  if os.path.exists(os.path.join(root, "recipes", f, "README.md")))


def fill(root, generate):
    """{path: new text} for every page with regions; generate(key, path) gives a region's content,
    or None to leave it as it is."""
    out = {}
    for path in pages(root):
        text = open(path).read()
        if text.count("<!-- BEGIN GENERATED:") != len(REGION.findall(text)):
            raise SystemExit(f"report: {path}: a region without its '<!-- END GENERATED -->'")
        out[path] = REGION.sub(lambda m: m[0] if (c := generate(m[2], path)) is None
                               else f"{m[1]}\n{c.rstrip(chr(10))}\n{m[4]}", text)
    return out
