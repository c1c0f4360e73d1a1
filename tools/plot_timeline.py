#!/usr/bin/env python3
"""Plot throughput over time from ibnetsim reports, one line per workload that has a timeline.

    plot_timeline.py REPORT.json[=LABEL]... --out FILE.{png,svg,pdf} [--title T] [--describe]

Each REPORT is the JSON of `ibnetsim run --format json` (or --out FILE.json) of a scenario whose traffic patterns
set "timeline_us"; each workload with a timeline is one line, named "LABEL: workload" (LABEL defaults to the
report's file name without .json). x is the middle of each bin in microseconds of simulated time, y its Gb/s.
Figures are 8 x 5 inches, a PNG 800 x 500 pixels. --describe prints the lines (label, bins, bin width, mean and
peak Gb/s) and writes nothing. Bad input exits 2 with a message on stderr. Needs python3 and matplotlib (Debian:
python3-matplotlib) unless --describe.
"""

import argparse
import json
import os
import sys

PROG = "plot_timeline.py"
FIG_INCHES = (8, 5)
FIG_DPI = 100


def fail(message):
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(2)


def load_lines(specs):
    lines = []
    for spec in specs:
        path, _, label = spec.partition("=")
        if not label:
            label = os.path.basename(path)[:-5] if path.endswith(".json") else os.path.basename(path)
        try:
            with open(path, encoding="utf-8") as f:
                report = json.load(f)
        except OSError as e:
            fail(f"{path}: cannot read it ({e.strerror})")
        except json.JSONDecodeError as e:
            fail(f"{path}: not a JSON report ({e.msg} at line {e.lineno})")
        workloads = report.get("results", {}).get("workloads") if isinstance(report, dict) else None
        if not isinstance(workloads, dict):
            fail(f"{path}: not an ibnetsim run report (no results.workloads)")
        found = False
        for name, entry in workloads.items():
            timeline = entry.get("results", {}).get("timeline") if isinstance(entry, dict) else None
            if not isinstance(timeline, dict):
                continue
            bin_us, gbps = timeline.get("bin_us"), timeline.get("gbps")
            if not isinstance(bin_us, (int, float)) or bin_us <= 0 or not isinstance(gbps, list):
                fail(f"{path}: workload {name}: a timeline needs bin_us > 0 and a gbps list")
            lines.append((f"{label}: {name}", bin_us, gbps))
            found = True
        if not found:
            fail(f"{path}: no workload has a timeline (set \"timeline_us\" on a traffic pattern)")
    return lines


def main():
    parser = argparse.ArgumentParser(prog=PROG, description="Plot throughput over time from ibnetsim reports.")
    parser.add_argument("reports", nargs="+", metavar="REPORT.json[=LABEL]")
    parser.add_argument("--out", help="FILE.png, FILE.svg or FILE.pdf")
    parser.add_argument("--title", default="throughput over time")
    parser.add_argument("--describe", action="store_true", help="print the lines, write nothing")
    args = parser.parse_args()
    lines = load_lines(args.reports)
    if args.describe:
        for label, bin_us, gbps in lines:
            mean = sum(gbps) / len(gbps) if gbps else 0.0
            print(f"{label}: {len(gbps)} bins of {bin_us:g} us, mean {mean:.2f} Gb/s, peak {max(gbps, default=0):.2f} Gb/s")
        return
    if not args.out:
        fail("--out FILE.{png,svg,pdf} is required (or --describe)")
    extension = os.path.splitext(args.out)[1].lower()
    if extension not in (".png", ".svg", ".pdf"):
        fail(f"--out: expected a .png, .svg or .pdf file, got {args.out!r}")
    try:
        import matplotlib
    except ImportError:
        fail("needs the python3 module matplotlib (Debian: python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=FIG_INCHES, dpi=FIG_DPI)
    for label, bin_us, gbps in lines:
        axes.plot([(i + 0.5) * bin_us for i in range(len(gbps))], gbps, label=label)
    axes.set_xlabel("simulated time (us)")
    axes.set_ylabel("throughput (Gb/s)")
    axes.set_title(args.title)
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    try:
        figure.savefig(args.out, dpi=FIG_DPI)
    except OSError as e:
        fail(f"{args.out}: cannot write it ({e.strerror})")
    print(args.out)


if __name__ == "__main__":
    main()
