#!/usr/bin/env python3
"""Checks a built Doxygen site (stdlib only): tools/site_check.py HTML_DIR [--root DIR] [--results DIR]
[--no-render]. Exits non-zero with one line per problem.

1. Links: every internal href/src/data of every page, and every page the sidebar tree (the *.js)
   names, points at a file that exists, and a #fragment at an id or name in it.
2. Render (headless Chromium): the DOM that the main page and each recipe page produce with
   scripts on. The main page's recipe table has one row per step measured in results/, and the
   Recipes page (the sidebar's Recipes node) links every recipe page; each recipe page shows its
   files-to-copy table and, per GPU measured, its results table (every variant measured at the
   headline shape) and its plots.
3. Length: no page (README.md, docs/*.md, recipes/*/*.md) has more than MAX_WORDS words, counted in its
   markdown as `wc -w` counts them (whitespace-separated, generated regions included).
4. Results: every file under results/ is one that a ./cookbook command writes or that a generated region
   cites (results.unexplained)."""
import argparse
import functools
import glob
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
from urllib.parse import unquote, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402
from regions import anchor, families, pages  # noqa: E402
from tables import image_name, ladder_steps  # noqa: E402


def read(path):
    return open(path, encoding="utf-8", errors="replace").read()


@functools.lru_cache(maxsize=None)
def ids(path):
    """A page's ids and names, and the `memitem:<anchor>` rows that Doxygen's navtree.js scrolls to."""
    text = read(path)
    return set(re.findall(r'\s(?:id|name)="([^"]+)"', text)) | set(re.findall(r'class="memitem:(\w+)', text))


def tables(text):
    """Every table as rows of cell texts (tags removed, spaces collapsed)."""
    cell = lambda c: " ".join(html.unescape(re.sub(r"<[^>]+>", "", c)).split())  # noqa: E731
    return [[[cell(c) for c in re.findall(r"<t[dh]\b[^>]*>(.*?)</t[dh]>", row, re.S)]
             for row in re.findall(r"<tr\b.*?</tr>", t, re.S)]
            for t in re.findall(r"<table\b.*?</table>", text, re.S)]


MAX_WORDS = 3500


def check_links(html_dir):
    files, problems = sorted(glob.glob(os.path.join(html_dir, "**", "*.html"), recursive=True)), []
    links = [(f, link) for f in files for link in re.findall(
        r'<(?:a|link|script|img|object|iframe|area|embed|source)\b[^>]*?\s(?:href|src|data)="([^"]*)"', read(f))] + \
        [(js, link) for js in sorted(glob.glob(os.path.join(html_dir, "*.js")))
         for link in re.findall(r'"([\w./-]+\.html(?:#[\w-]+)?)"', read(js))]  # the sidebar tree
    for src, link in links:
        u = urlsplit(html.unescape(link))
        if u.scheme or u.netloc or link.startswith(("mailto:", "javascript:", "data:")):
            continue
        target = os.path.normpath(os.path.join(os.path.dirname(src), unquote(u.path))) if u.path else src
        if not os.path.exists(target):
            problems.append(f"{os.path.relpath(src, html_dir)}: broken link '{link}'")
        # An enumerator's anchor is its enum's anchor plus its own hash: the tree links the enum's row.
        elif u.fragment and target.endswith(".html") and not {u.fragment, u.fragment[:33]} & ids(target):
            problems.append(f"{os.path.relpath(src, html_dir)}: no anchor '#{u.fragment}' in "
                            f"{os.path.relpath(target, html_dir)}")
    return problems, len(files)


def render(browser, path):
    with tempfile.TemporaryDirectory(prefix="smem-chromium-") as profile:
        r = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-sync",
                            "--disable-background-networking", "--disable-component-update", "--no-first-run",
                            f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom",
                            "file://" + os.path.abspath(path)], capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or "<html" not in r.stdout:
        raise RuntimeError(f"chromium failed on {path}: rc {r.returncode}: {r.stderr[-500:]}")
    return r.stdout


def check_render(browser, html_dir, root, res):
    problems, fams = [], results.families(results.load(res))
    names = families(root)
    dom = render(browser, os.path.join(html_dir, "index.html"))
    recipes_dom = render(browser, os.path.join(html_dir, "recipes_page.html"))
    table = next((t for t in tables(dom) if t and t[0][:3] == ["family", "step", "what it changes"]), [])
    want = {f"{s['step']:02d} {s['name']}" for rs in fams.values() for s in ladder_steps(rs) if s["kind"] == "step"}
    shown = {r[1] for r in table[1:] if len(r) > 1}
    if fams and want != shown:
        problems.append(f"index.html: recipe table: steps missing {sorted(want - shown)}, extra {sorted(shown - want)}")
    for fam in names:
        page_file, runs = f"{anchor(root, fam)}.html", fams.get(fam, [])
        if f'href="{page_file}"' not in recipes_dom:
            problems.append(f"recipes_page.html: the rendered page does not link {page_file}")
        page = render(browser, os.path.join(html_dir, page_file))
        ts = tables(page)
        if not any(t and t[0][:3] == ["step", "variants", "files to copy"] for t in ts):
            problems.append(f"{page_file}: no files-to-copy table")
        ladders = [t for t in ts if t and len(t[0]) > 1 and t[0][0] == "step" and t[0][1].endswith("(headline)")]
        if len(ladders) != len(runs):
            problems.append(f"{page_file}: {len(ladders)} results tables rendered, {len(runs)} GPUs measured")
        for t, r in zip(ladders, runs):
            missing = sorted(set(r.shapes[r.headline()]) - {row[0].split()[-1] for row in t[1:]})
            problems += [f"{page_file}: the {r.gpu} results table lacks {missing}"] if missing else []
        for plot in [image_name(fam, "ladder")] * bool(runs) + [image_name(fam, "sizes", r.gpu) for r in runs]:
            svg = os.path.join(html_dir, plot)
            if f'"{plot}"' not in page or not os.path.exists(svg) or "<path" not in read(svg):
                problems.append(f"{page_file}: the rendered page does not show {plot}, or it draws nothing")
        if not runs and "No results yet" not in page:
            problems.append(f"{page_file}: no results and no 'No results yet' note")
    print(f"site_check: rendered index.html and {len(names)} recipe pages")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("html_dir")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--results", help="the results folder (default: ROOT/results)")
    ap.add_argument("--no-render", action="store_true", help="skip the Chromium check")
    a = ap.parse_args()
    problems, n = check_links(a.html_dir)
    print(f"site_check: {n} pages, {len(problems)} broken internal links")
    problems += [f"{os.path.relpath(p, a.root)}: {n} words, over {MAX_WORDS}: move investigations to a deep-dive "
                 "page" for p in pages(a.root) if (n := len(read(p).split())) > MAX_WORDS]
    problems += [f"{f}: no ./cookbook command writes it (tools/results.py) and no generated region cites it"
                 for f in results.unexplained(a.root)]
    browser = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    if not a.no_render and not browser:
        problems.append("chromium not found: run ./cookbook deps docs")
    elif not a.no_render:
        problems += check_render(browser, a.html_dir, a.root, a.results or os.path.join(a.root, "results"))
    for p in problems:
        print(f"site_check: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
