"""Generated regions of the pages: the text between `<!-- BEGIN GENERATED: <key> -->` and
`<!-- END GENERATED -->`, which only tools/report.py writes. A key is a kind and its arguments,
e.g. `results gemm`, `profile gemm-stalls`, `compare transpose:memcpy,naive`."""
import glob
import os
import re

BEGIN = "<!-- BEGIN GENERATED: {} -->"
END = "<!-- END GENERATED -->"


def pages(root):
    """Every page that may hold regions."""
    return [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))) + \
        sorted(glob.glob(os.path.join(root, "recipes", "*", "*.md")))


def anchor(root, family):
    """The page name of a family's page, from the `{#name}` of its first line."""
    m = re.search(r"\{#(\w+)\}", open(os.path.join(root, "recipes", family, "README.md")).readline())
    return m.group(1) if m else None


def families(root):
    """The families that have a page, recipes/<family>/README.md."""
    return sorted(f for f in os.listdir(os.path.join(root, "recipes"))
                  if os.path.exists(os.path.join(root, "recipes", f, "README.md")))


def keys(text):
    return re.findall(r"<!-- BEGIN GENERATED: (.+?) -->", text)


def replace(text, key, content):
    b = BEGIN.format(key)
    i = text.index(b) + len(b)
    j = text.find(END, i)
    if j < 0:
        raise SystemExit(f"report: '{b}' without '{END}'")
    return text[:i] + "\n" + content.rstrip("\n") + "\n" + text[j:]


def fill(root, generate):
    """{path: new text} for every page with regions; generate(key, path) gives a region's content,
    or None to leave it as it is."""
    out = {}
    for path in pages(root):
        if not os.path.exists(path):
            continue
        text = new = open(path).read()
        for key in keys(text):
            content = generate(key, path)
            if content is not None:
                new = replace(new, key, content)
        out[path] = new
    return out
