#!/usr/bin/env python3
"""A dependency-free SVG line chart of img/s against workers, for RESULTS.md and the README.

    python3 benchmarks/compare/svg_plot.py --out docs/throughput.svg \\
        --workers 1,4,8,16 --series "PyTorch DataLoader=228,851,1443,2048" --series "conveyor=1859,7684,13332,25537"
"""
import argparse

COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd"]


def line_chart(workers, series, title, width=640, height=400):
    """SVG text: one line per (name, values) in `series`, x = workers, y = img/s from 0."""
    left, right, top, bottom = 70, 70, 40, 50
    w, h = width - left - right, height - top - bottom
    ymax = max(max(v) for _, v in series)
    step = 10 ** (len(str(int(ymax))) - 1)
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
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{int(v):,}</text>')
    for wk in workers:
        out.append(f'<text x="{x(wk):.1f}" y="{top + h + 18}" text-anchor="middle">{wk}</text>')
    out.append(f'<text x="{left + w / 2}" y="{height - 10}" text-anchor="middle">worker threads / processes</text>')
    out.append(f'<text x="16" y="{top + h / 2}" text-anchor="middle" transform="rotate(-90 16 {top + h / 2})">images per second</text>')
    out.append(f'<line x1="{left}" y1="{top + h}" x2="{left + w}" y2="{top + h}" stroke="black"/>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + h}" stroke="black"/>')
    for k, (name, values) in enumerate(series):
        c = COLORS[k % len(COLORS)]
        pts = " ".join(f"{x(a):.1f},{y(b):.1f}" for a, b in zip(workers, values))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2.5"/>')
        for a, b in zip(workers, values):
            out.append(f'<circle cx="{x(a):.1f}" cy="{y(b):.1f}" r="4" fill="{c}"/>')
            out.append(f'<text x="{x(a) + 6:.1f}" y="{y(b) - 6:.1f}" fill="{c}">{int(b):,}</text>')
        out.append(f'<rect x="{left + 12}" y="{top + 8 + 20 * k}" width="14" height="4" fill="{c}"/>')
        out.append(f'<text x="{left + 32}" y="{top + 14 + 20 * k}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", required=True)
    ap.add_argument("--series", action="append", required=True, help="NAME=v1,v2,...")
    ap.add_argument("--title", default="RandomResizedCrop 224 + flip + normalize to the GPU, one H200")
    args = ap.parse_args()
    workers = [int(v) for v in args.workers.split(",")]
    series = [(s.split("=")[0], [float(v) for v in s.split("=")[1].split(",")]) for s in args.series]
    with open(args.out, "w") as f:
        f.write(line_chart(workers, series, args.title))


if __name__ == "__main__":
    main()
