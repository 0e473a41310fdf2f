"""Hand-written SVG charts (no third-party package): a grouped horizontal bar chart for a
ladder and a line chart for rate versus size. Output is deterministic (fixed number formats,
no timestamps) so that `report.py --check` can compare it byte for byte."""
import math
from xml.sax.saxutils import escape

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939"]
FONT = 'font-family="DejaVu Sans, Arial, Helvetica, sans-serif"'


def _num(x):
    return f"{x:.1f}".rstrip("0").rstrip(".") if abs(x - round(x)) > 1e-9 else str(int(round(x)))


def _text(x, y, s, size=12, anchor="start", weight="normal", fill="#222"):
    return (f'<text x="{_num(x)}" y="{_num(y)}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}" {FONT}>{escape(s)}</text>')


def nice_max(v):
    """A round axis maximum >= v."""
    if v <= 0:
        return 1.0
    e = 10 ** math.floor(math.log10(v))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * e >= v:
            return m * e
    return 10 * e


def _svg(width, height, body, title):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">\n'
            f'<title>{escape(title)}</title>\n'
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>\n'
            + "\n".join(body) + "\n</svg>\n")


def bar_chart(title, categories, series, unit, notes=None, highlight=()):
    """Horizontal grouped bars. categories: labels top to bottom; series: [(name, [value or
    None per category])]; notes: same shape as series values, a short text after each bar (e.g. a
    ratio); highlight: category labels drawn in bold (the baselines)."""
    left, right, top, bar_h, gap = 190, 150, 56, 14, 10
    n_s = max(1, len(series))
    group_h = n_s * bar_h + gap
    plot_w = 520
    width = left + plot_w + right
    height = top + len(categories) * group_h + 40 + 18 * ((n_s + 1) // 2)
    vmax = nice_max(max([v for _, vals in series for v in vals if v is not None] or [1]))
    body = [_text(width / 2, 22, title, 15, "middle", "bold")]
    # Grid and axis labels.
    for i in range(6):
        x = left + plot_w * i / 5
        body.append(f'<line x1="{_num(x)}" y1="{top - 6}" x2="{_num(x)}" '
                    f'y2="{top + len(categories) * group_h}" stroke="#ddd"/>')
        body.append(_text(x, top - 10, _num(vmax * i / 5), 11, "middle", fill="#555"))
    body.append(_text(left - 8, top - 10, unit, 11, "end", fill="#555"))
    for ci, cat in enumerate(categories):
        y0 = top + ci * group_h
        body.append(_text(left - 8, y0 + n_s * bar_h / 2 + 4, cat, 12, "end",
                          "bold" if cat in highlight else "normal"))
        for si, (name, vals) in enumerate(series):
            v = vals[ci]
            y = y0 + si * bar_h
            if v is None:
                body.append(_text(left + 4, y + bar_h - 3, "not measured", 10, fill="#999"))
                continue
            w = plot_w * v / vmax
            body.append(f'<rect class="bar" x="{left}" y="{_num(y)}" width="{_num(w)}" height="{bar_h - 2}" '
                        f'fill="{PALETTE[si % len(PALETTE)]}"/>')
            label = f"{v:.0f}" if v >= 100 else f"{v:.3g}"
            if notes and notes[si][ci]:
                label += f"  {notes[si][ci]}"
            body.append(_text(left + w + 4, y + bar_h - 3, label, 10, fill="#333"))
    ly = top + len(categories) * group_h + 18
    for si, (name, _) in enumerate(series):
        x = left + (si % 2) * 300
        y = ly + (si // 2) * 18
        body.append(f'<rect x="{x}" y="{y - 10}" width="12" height="12" '
                    f'fill="{PALETTE[si % len(PALETTE)]}"/>')
        body.append(_text(x + 18, y, name, 12))
    return _svg(width, height, body, title)


def line_chart(title, xlabels, series, unit, xtitle, highlight=()):
    """Lines over categorical x positions (sizes in increasing order). series: [(name, [value
    or None per x])]; names in highlight are drawn thick and dark (the baselines)."""
    left, right, top, bottom = 70, 210, 40, 60
    plot_w, plot_h = 520, 300
    width, height = left + plot_w + right, top + plot_h + bottom
    vmax = nice_max(max([v for _, vals in series for v in vals if v is not None] or [1]))
    nx = len(xlabels)

    def px(i):
        return left + (plot_w * (i + 0.5) / nx)

    def py(v):
        return top + plot_h * (1 - v / vmax)

    body = [_text(left + plot_w / 2, 22, title, 15, "middle", "bold")]
    for i in range(6):
        y = top + plot_h * i / 5
        body.append(f'<line x1="{left}" y1="{_num(y)}" x2="{left + plot_w}" y2="{_num(y)}" stroke="#ddd"/>')
        body.append(_text(left - 6, y + 4, _num(vmax * (5 - i) / 5), 11, "end", fill="#555"))
    body.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>')
    for i, lab in enumerate(xlabels):
        body.append(_text(px(i), top + plot_h + 16, lab, 11, "middle", fill="#333"))
    body.append(_text(left + plot_w / 2, top + plot_h + 40, xtitle, 12, "middle", fill="#555"))
    body.append(_text(16, top + plot_h / 2, unit, 12, "middle", fill="#555").replace(
        "<text ", f'<text transform="rotate(-90 16 {_num(top + plot_h / 2)})" ', 1))
    for si, (name, vals) in enumerate(series):
        strong = name in highlight
        color = "#000000" if strong else PALETTE[si % len(PALETTE)]
        pts = [(px(i), py(v)) for i, v in enumerate(vals) if v is not None]
        if len(pts) > 1:
            d = " ".join(f"{_num(x)},{_num(y)}" for x, y in pts)
            dash = ' stroke-dasharray="6 3"' if strong else ""
            body.append(f'<polyline points="{d}" fill="none" stroke="{color}" '
                        f'stroke-width="{3 if strong else 1.8}"{dash}/>')
        for x, y in pts:
            body.append(f'<circle cx="{_num(x)}" cy="{_num(y)}" r="3" fill="{color}"/>')
        ly = top + 4 + si * 18
        body.append(f'<line x1="{left + plot_w + 14}" y1="{ly}" x2="{left + plot_w + 34}" y2="{ly}" '
                    f'stroke="{color}" stroke-width="{3 if strong else 2}"/>')
        body.append(_text(left + plot_w + 40, ly + 4, name, 11, weight="bold" if strong else "normal"))
    return _svg(width, height, body, title)


def roofline_chart(title, roofs, points, xrange=(0.01, 10000.0), yrange=(0.01, 100.0)):
    """Log-log roofline. roofs: [(name, bandwidth GB/s, peak TFLOP/s or None)], one per GPU;
    points: [(label, intensity FLOP/B, TFLOP/s, roof index, group name)]. Each GPU's roof is
    min(peak, intensity x bandwidth) in its colour; each point is drawn in its GPU's colour
    with a marker per group (family) and its label next to it."""
    left, right, top, bottom = 70, 220, 40, 60
    plot_w, plot_h = 560, 360
    width, height = left + plot_w + right, top + plot_h + bottom
    lx0, lx1 = math.log10(xrange[0]), math.log10(xrange[1])
    ly0, ly1 = math.log10(yrange[0]), math.log10(yrange[1])

    def px(x):
        return left + plot_w * (math.log10(x) - lx0) / (lx1 - lx0)

    def py(y):
        return top + plot_h * (1 - (math.log10(y) - ly0) / (ly1 - ly0))

    body = [_text(left + plot_w / 2, 22, title, 15, "middle", "bold")]
    for e in range(int(lx0), int(lx1) + 1):
        x = px(10.0 ** e)
        body.append(f'<line x1="{_num(x)}" y1="{top}" x2="{_num(x)}" y2="{top + plot_h}" stroke="#ddd"/>')
        body.append(_text(x, top + plot_h + 16, f"{10.0 ** e:g}", 11, "middle", fill="#333"))
    for e in range(int(ly0), int(ly1) + 1):
        y = py(10.0 ** e)
        body.append(f'<line x1="{left}" y1="{_num(y)}" x2="{left + plot_w}" y2="{_num(y)}" stroke="#ddd"/>')
        body.append(_text(left - 6, y + 4, f"{10.0 ** e:g}", 11, "end", fill="#555"))
    body.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>')
    body.append(_text(left + plot_w / 2, top + plot_h + 40, "arithmetic intensity (FLOP/B, minimum traffic)",
                      12, "middle", fill="#555"))
    body.append(_text(16, top + plot_h / 2, "TFLOP/s", 12, "middle", fill="#555").replace(
        "<text ", f'<text transform="rotate(-90 16 {_num(top + plot_h / 2)})" ', 1))
    legend_y = top + 4
    for ri, (name, bw, peak) in enumerate(roofs):
        color = PALETTE[ri % len(PALETTE)]
        # Bandwidth roof up to the ridge (or the plot's edge), then the compute roof.
        x_end = peak * 1e3 / bw if peak else xrange[1]
        x_start = max(xrange[0], yrange[0] * 1e3 / bw)
        x_end = min(x_end, xrange[1])
        pts = [(px(x_start), py(x_start * bw / 1e3)), (px(x_end), py(x_end * bw / 1e3))]
        if peak:
            pts.append((px(xrange[1]), py(peak)))
        d = " ".join(f"{_num(x)},{_num(y)}" for x, y in pts)
        body.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2.5"/>')
        body.append(f'<line x1="{left + plot_w + 14}" y1="{legend_y}" x2="{left + plot_w + 34}" '
                    f'y2="{legend_y}" stroke="{color}" stroke-width="2.5"/>')
        body.append(_text(left + plot_w + 40, legend_y + 4, name, 11))
        legend_y += 18
    groups = []
    for p in points:
        if p[4] not in groups:
            groups.append(p[4])
    for gi, g in enumerate(groups):
        shape = _marker(left + plot_w + 24, legend_y, gi, "#555")
        body.append(shape)
        body.append(_text(left + plot_w + 40, legend_y + 4, g, 11))
        legend_y += 18
    labels = {}  # (group, label) -> (x, y) of its first point: one label per kernel, not per GPU
    for label, ai, tf, ri, group in points:
        if ai <= 0 or tf <= 0:
            continue
        x, y = px(min(max(ai, xrange[0]), xrange[1])), py(min(max(tf, yrange[0]), yrange[1]))
        body.append(_marker(x, y, groups.index(group), PALETTE[ri % len(PALETTE)]))
        labels.setdefault((group, label), (x, y))
    # Labels of one group share a column: stack them downwards, 11 px apart, from their points.
    for g in groups:
        col = sorted(((y, x, lab) for (gg, lab), (x, y) in labels.items() if gg == g))
        last = None
        for y, x, lab in col:
            ly = y + 3 if last is None else max(y + 3, last + 11)
            last = ly
            body.append(f'<line x1="{_num(x + 5)}" y1="{_num(y)}" x2="{_num(x + 14)}" y2="{_num(ly - 3)}" '
                        f'stroke="#bbb"/>')
            body.append(_text(x + 16, ly, lab, 9, fill="#333"))
    return _svg(width, height, body, title)


def _marker(x, y, kind, color):
    if kind % 3 == 0:
        return f'<circle cx="{_num(x)}" cy="{_num(y)}" r="4" fill="{color}"/>'
    if kind % 3 == 1:
        return f'<rect x="{_num(x - 4)}" y="{_num(y - 4)}" width="8" height="8" fill="{color}"/>'
    return (f'<polygon points="{_num(x)},{_num(y - 5)} {_num(x + 5)},{_num(y + 4)} '
            f'{_num(x - 5)},{_num(y + 4)}" fill="{color}"/>')
