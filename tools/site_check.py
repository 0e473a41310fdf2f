#!/usr/bin/env python3
"""Checks a built Doxygen site (stdlib only).

  tools/site_check.py HTML_DIR [--root DIR] [--results DIR] [--no-render]

1. Links: every internal href/src/data in every page, and every page the sidebar tree
   (navtree *.js) names, points at a file that exists, and a #fragment at an id or name in it.
2. Render (headless Chromium, the Debian package `chromium`): the main page and every recipe
   page are rendered with scripts on and the DOM they produce is checked: the main page's recipe
   table has one row per step measured in results/ and its sidebar tree links every recipe page;
   each recipe page shows its files-to-copy table and, per GPU measured, its ladder table with
   every variant measured at the headline shape and its plots ('No results yet' otherwise).
Exits non-zero with one line per problem."""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402
from regions import anchor  # noqa: E402
from tables import image_name, ladder_steps  # noqa: E402

LINK_ATTRS = {"a": "href", "link": "href", "script": "src", "img": "src", "object": "data",
              "iframe": "src", "area": "href", "embed": "src", "source": "src"}


class Page(HTMLParser):
    """Collects a page's links, its ids/names, its tables and its plots."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.ids = [], set()
        self.tables, self._table, self._row, self._cell = [], None, None, None
        self.plots = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("id", "name"):
            if a.get(k):
                self.ids.add(a[k])
        # Doxygen's member summary rows are targets too: its navtree.js scrolls to the row of
        # class "memitem:<anchor>" when a page has no element with that id.
        for c in (a.get("class") or "").split():
            if c.startswith("memitem:"):
                self.ids.add(c[len("memitem:"):])
        if tag in LINK_ATTRS and a.get(LINK_ATTRS[tag]):
            self.links.append(a[LINK_ATTRS[tag]])
        if tag == "object" and (a.get("type") == "image/svg+xml" or a.get("data", "").endswith(".svg")):
            self.plots.append(a.get("data"))
        if tag == "img" and a.get("src", "").endswith(".svg") and "footer" not in a.get("class", ""):
            self.plots.append(a.get("src"))
        if tag == "table":
            self._table = []
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._table.append(self._row)
            self._row = None
        elif tag == "table" and self._table is not None:
            self.tables.append(self._table)
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        self.text.append(data)


def parse(text):
    p = Page()
    p.feed(text)
    return p


def has_anchor(ids, fragment):
    if fragment in ids:
        return True
    # An enumerator's anchor is its enum's anchor plus its own hash. Doxygen's file-page tree links
    # enumerators of a namespace-scope enum to the file page, which lists the values inside the
    # enum's row: the link lands on that row.
    m = re.fullmatch(r"(a[0-9a-f]{32})a[0-9a-f]{32}", fragment)
    return bool(m and m.group(1) in ids)


def check_links(html_dir):
    problems, pages = [], {}
    files = sorted(glob.glob(os.path.join(html_dir, "**", "*.html"), recursive=True))
    for f in files:
        pages[f] = parse(open(f, encoding="utf-8", errors="replace").read())

    def ids_of(path):
        if path not in pages:
            pages[path] = parse(open(path, encoding="utf-8", errors="replace").read())
        return pages[path].ids

    def check(src, link):
        u = urlsplit(link)
        if u.scheme or u.netloc or link.startswith(("mailto:", "javascript:", "data:")):
            return
        target = os.path.normpath(os.path.join(os.path.dirname(src), unquote(u.path))) if u.path else src
        if not os.path.exists(target):
            problems.append(f"{os.path.relpath(src, html_dir)}: broken link '{link}'")
        elif u.fragment and target.endswith(".html") and not has_anchor(ids_of(target), u.fragment):
            problems.append(f"{os.path.relpath(src, html_dir)}: no anchor '#{u.fragment}' in "
                            f"{os.path.relpath(target, html_dir)}")

    for f in files:
        for link in pages[f].links:
            check(f, link)
    # The sidebar tree is data in navtree*.js and the dir/file *.js: every page it names must exist.
    for js in sorted(glob.glob(os.path.join(html_dir, "*.js"))):
        for m in re.finditer(r'"([\w./-]+\.html)(?:#([\w-]+))?"', open(js, encoding="utf-8").read()):
            check(js, m.group(0).strip('"'))
    return problems, len(files)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def render(browser, path):
    with tempfile.TemporaryDirectory(prefix="smem-chromium-") as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run",
               f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom",
               "file://" + os.path.abspath(path)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or "<html" not in r.stdout:
            raise RuntimeError(f"chromium failed on {path}: rc {r.returncode}: {r.stderr[-500:]}")
        return r.stdout


def check_render(browser, html_dir, root, res):
    problems = []
    fams = results.families(results.load(res))
    pages = sorted(f for f in os.listdir(os.path.join(root, "recipes"))
                   if os.path.exists(os.path.join(root, "recipes", f, "README.md")))
    # Main page: the recipe table, one row per step of every family measured.
    dom = render(browser, os.path.join(html_dir, "index.html"))
    page = parse(dom)
    if fams:
        table = next((t for t in page.tables if [c.lower() for c in t[0][:3]] == ["family", "step", "what it changes"]), [])
        want = {f"{s['step']:02d} {s['name']}" for rs in fams.values() for s in ladder_steps(rs) if s["kind"] == "step"}
        shown = {r[1] for r in table[1:] if len(r) > 1}
        if not table or want != shown:
            problems.append(f"index.html: recipe table rows differ from the steps measured: missing "
                            f"{sorted(want - shown)}, extra {sorted(shown - want)}")
    # Each family page: in the sidebar tree, its files-to-copy table, and per GPU its ladder table
    # (every variant measured at the headline shape) and its plots.
    for fam in pages:
        page_file = f"{anchor(root, fam)}.html"
        if not re.search(r'id="nav-tree".*?href="' + re.escape(page_file), dom, re.S):
            problems.append(f"index.html: the rendered sidebar tree does not link {page_file}")
        page = parse(render(browser, os.path.join(html_dir, page_file)))
        if not any(t[0] == ["step", "variants", "files to copy"] for t in page.tables):
            problems.append(f"{page_file}: no files-to-copy table")
        runs = fams.get(fam, [])
        ladders = [t for t in page.tables if t[0][:2] == ["step", "variant"]]
        if len(ladders) != len(runs):
            problems.append(f"{page_file}: {len(ladders)} ladder tables rendered, {len(runs)} GPUs measured")
        for t, r in zip(ladders, runs):
            missing = {f"{v}" for v in r.shapes[r.headline()]} - {row[1] for row in t[1:]}
            if missing:
                problems.append(f"{page_file}: the {r.gpu} ladder table lacks {sorted(missing)}")
        for plot in [image_name(fam, "ladder")] * bool(runs) + [image_name(fam, "sizes", r.gpu) for r in runs]:
            if plot not in page.plots:
                problems.append(f"{page_file}: rendered page does not show {plot}")
            elif "<path" not in open(os.path.join(html_dir, plot)).read():
                problems.append(f"{page_file}: {plot} draws nothing")
        if not runs and "No results yet" not in "".join(page.text):
            problems.append(f"{page_file}: no results and no 'No results yet' note")
    print(f"site_check: rendered index.html and {len(pages)} recipe pages")
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
    if not a.no_render:
        browser = chromium()
        if not browser:
            problems.append("chromium not found: run ./cookbook deps docs")
        else:
            rp = check_render(browser, a.html_dir, a.root, a.results or os.path.join(a.root, "results"))
            print(f"site_check: rendered pages with {os.path.basename(browser)}: {len(rp)} problems")
            problems += rp
    for p in problems:
        print(f"site_check: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
