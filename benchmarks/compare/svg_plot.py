#!/usr/bin/env python3
"""Dependency-free SVG line charts for RESULTS.md and the README: img/s against workers, or a
training loss curve from a CSV (step,loss) averaged over windows of steps.

    python3 benchmarks/compare/svg_plot.py --out docs/throughput.svg \\
        --workers 1,4,8,16 --series "PyTorch DataLoader=228,851,1443,2048" --series "conveyor=1859,7684,13332,25537"
    python3 benchmarks/compare/svg_plot.py --out docs/libtorch_loss.svg --csv loss.csv --every 10 --title "..."
"""
import argparse

COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"]


def line_chart(workers, series, title, x_label="worker threads / processes", y_label="images per second",
               ticks=None, labels=True, width=640, height=400):
    """SVG text: one line per (name, values) in `series` over x = `workers`, y from 0; x ticks at
    `ticks` (default: every x), each point labelled with its value when `labels`."""
    left, right, top, bottom = 70, 70, 40, 50
    w, h = width - left - right, height - top - bottom
    ymax = max(max(v) for _, v in series)
    step = 10 ** (len(str(int(ymax))) - 1) if ymax >= 1 else 0.1
    ymax = (int(ymax / step) + 1) * step
    xmax = max(workers)
    x = lambda v: left + w * v / xmax
    y = lambda v: top + h * (1 - v / ymax)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15">{title}</text>']
    for i in range(6):
        v = ymax * i / 5
        out.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + w}" y2="{y(v):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:,.{0 if ymax >= 10 else 1}f}</text>')
    for wk in ticks or workers:
        out.append(f'<text x="{x(wk):.1f}" y="{top + h + 18}" text-anchor="middle">{wk}</text>')
    out.append(f'<text x="{left + w / 2}" y="{height - 10}" text-anchor="middle">{x_label}</text>')
    out.append(f'<text x="16" y="{top + h / 2}" text-anchor="middle" transform="rotate(-90 16 {top + h / 2})">{y_label}</text>')
    out.append(f'<line x1="{left}" y1="{top + h}" x2="{left + w}" y2="{top + h}" stroke="black"/>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + h}" stroke="black"/>')
    for k, (name, values) in enumerate(series):
        c = COLORS[k % len(COLORS)]
        pts = " ".join(f"{x(a):.1f},{y(b):.1f}" for a, b in zip(workers, values))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2.5"/>')
        for a, b in zip(workers, values) if labels else []:
            out.append(f'<circle cx="{x(a):.1f}" cy="{y(b):.1f}" r="4" fill="{c}"/>')
            out.append(f'<text x="{x(a) + 6:.1f}" y="{y(b) - 6:.1f}" fill="{c}">{int(b):,}</text>')
        out.append(f'<rect x="{left + 12}" y="{top + 8 + 20 * k}" width="14" height="4" fill="{c}"/>')
        out.append(f'<text x="{left + 32}" y="{top + 14 + 20 * k}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def loss_chart(path, every, title):
    """The CSV's loss (second column) averaged over windows of `every` steps."""
    with open(path) as f:
        rows = [line.split(",") for line in f.read().split("\n")[1:] if line]
    losses = [float(r[1]) for r in rows]
    xs = list(range(every, len(losses) + 1, every))
    means = [sum(losses[x - every:x]) / every for x in xs]
    ticks = [t for t in range(0, len(losses) + 1, max(50, every)) if t > 0]
    return line_chart(xs, [(f"mean loss over {every} steps", means)], title, "step", "cross-entropy loss",
                      ticks=ticks, labels=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", help="x values: 1,4,8,16")
    ap.add_argument("--series", action="append", help="NAME=v1,v2,...")
    ap.add_argument("--csv", help="a loss curve: step,loss per line after a header")
    ap.add_argument("--every", type=int, default=10, help="steps averaged per point of a loss curve")
    ap.add_argument("--title", default="RandomResizedCrop 224 + flip + normalize to the GPU, one H200")
    args = ap.parse_args()
    if args.csv:
        svg = loss_chart(args.csv, args.every, args.title)
    else:
        workers = [int(v) for v in args.workers.split(",")]
        series = [(s.split("=")[0], [float(v) for v in s.split("=")[1].split(",")]) for s in args.series]
        svg = line_chart(workers, series, args.title)
    with open(args.out, "w") as f:
        f.write(svg)


if __name__ == "__main__":
    main()
