"""The plots: SVG drawn by matplotlib (Debian: python3-matplotlib), the same bytes on every run (fixed
hash salt, no date, text as text) so that `report.py --check` can compare them. Each series of a plot
has a colour and a marker of its own; the reference is black."""
import io

try:
    import matplotlib
except ImportError:
    raise SystemExit("tools: needs matplotlib: run them with the Python that `cmake -P cmake/SmemPython.cmake` "
                     "prints, as ./cookbook does (Debian: apt-get install python3-matplotlib)") from None
matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

plt.rcParams.update({"svg.hashsalt": "smem-cookbook", "svg.fonttype": "none", "font.size": 10,
                     "font.family": "DejaVu Sans", "axes.grid": True, "grid.alpha": 0.3,
                     "axes.spines.top": False, "axes.spines.right": False})
COLORS = ["#000000", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22", "#17becf", "#000080", "#b8860b", "#c000c0", "#7cfc00", "#800000", "#008080", "#ffb6c1"]
MARKERS = ["o", "s", "^", "v", "D", "<", ">", "p", "h", "*", "X", "P", "d", "H", "8", "1", "2", "3"]
PLAIN = FuncFormatter(lambda v, _: f"{v:g}")


def style(i):
    return dict(color=COLORS[i % len(COLORS)], marker=MARKERS[i % len(MARKERS)])


def log_axis(axis, values):
    """A log scale with plain tick labels where the values span more than a decade and a half."""
    v = [x for x in values if x]
    if v and max(v) / min(v) > 30:
        getattr(axis.axes, f"set_{axis.axis_name}scale")("log")
        axis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        axis.set_major_formatter(PLAIN)
        axis.set_minor_formatter(NullFormatter())


def finish(fig, ax, title, xlabel, ylabel):
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return buf.getvalue()


def sizes(title, shapes, sizes_, series, unit, xlabel):
    """Rate versus size, series [(label, [value or None per shape])] with the reference first. Sizes
    spread out by factors of 2 or more go on a log axis, others are evenly spaced."""
    fig, ax = plt.subplots(figsize=(10, 5.5))
    spread = all(b >= 2 * a for a, b in zip(sizes_, sizes_[1:]))
    xs = sizes_ if spread else list(range(len(shapes)))
    for i, (label, ys) in enumerate(series):
        pts = [(x, y) for x, y in zip(xs, ys) if y]
        ax.plot(*zip(*pts), label=label, linestyle="-" if i else "--", linewidth=1.2 if i else 2, **style(i))
    ax.set_xscale("log" if spread else "linear")
    ax.set_xticks(xs, shapes, rotation=30, ha="right")
    ax.xaxis.set_minor_locator(plt.NullLocator())
    log_axis(ax.yaxis, [y for _, ys in series for y in ys])
    return finish(fig, ax, title, xlabel, unit)


def ladder(title, labels, groups, xlabel):
    """Horizontal bars, a row per variant (top down), a bar per GPU (groups [(GPU, [ratio or None per
    label])]) with its value written at its end."""
    n, h = len(groups), 0.8 / max(1, len(groups))
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.22 * len(labels) * max(1.5, n)))
    for g, (gpu, vals) in enumerate(groups):
        ys = [i + (g - (n - 1) / 2) * h for i in range(len(labels))]
        ax.barh([y for y, v in zip(ys, vals) if v], [v for v in vals if v], height=h, label=gpu, color=COLORS[1 + g],
                hatch=["", "//", "..", "xx", "\\\\"][g % 5], edgecolor="white", linewidth=0)
        for y, v in zip(ys, vals):
            ax.text(v or 0, y, f" {v:.2f}" if v else " not run", va="center", fontsize=7)
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlim(0, 1.12 * max([1.0] + [v for _, vals in groups for v in vals if v]))
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    return finish(fig, ax, title, xlabel, None)


def roofline(title, roofs, series):
    """roofs [(GPU, GB/s, TFLOP/s or None)]; series [(label, [(FLOP/B, TFLOP/s, name)])] of points at
    one intensity each: a series sits a little right of the one before, its fastest point named."""
    fig, ax = plt.subplots(figsize=(10, 5.5))
    pts = [p for _, ps in series for p in ps]
    lo, hi = min(p[0] for p in pts) / 4, max(p[0] for p in pts) * 4
    for i, (gpu, bw, peak) in enumerate(roofs):
        xs = [lo, peak * 1e3 / bw, hi] if peak else [lo, hi]
        ax.plot(xs, [min(peak or 1e30, x * bw / 1e3) for x in xs], color=["black", "#555555"][i % 2],
                linestyle=["-", "--", ":", "-."][i % 4], linewidth=1.5, label=f"roof, {gpu}")
    for i, (label, ps) in enumerate(series):
        ax.plot([p[0] * 1.15 ** i for p in ps], [p[1] for p in ps], linestyle="none", label=label, **style(i + 1))
        x, y, name = max(ps, key=lambda p: p[1])
        ax.annotate(name, (x * 1.15 ** i, y), xytext=(6, -4), textcoords="offset points", fontsize=7)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(PLAIN)
    log_axis(ax.yaxis, [p[1] for p in pts] + [1e3 * p[1] for p in pts])
    return finish(fig, ax, title, "FLOP per byte of minimum traffic", "TFLOP/s")


def accuracy(title, series, xlabel, ylabel):
    """Error versus speed, series [(label, [(rate, error, name)])] of points, each point named."""
    fig, ax = plt.subplots(figsize=(10, 5.5))
    for i, (label, ps) in enumerate(series):
        ax.plot([p[0] for p in ps], [p[1] for p in ps], linestyle="none", label=label, **style(i + 1))
        for x, y, name in ps:
            ax.annotate(name, (x, y), xytext=(5, 3), textcoords="offset points", fontsize=7)
    ax.set_yscale("log")
    log_axis(ax.xaxis, [p[0] for _, ps in series for p in ps])
    return finish(fig, ax, title, xlabel, ylabel)

