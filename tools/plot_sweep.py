#!/usr/bin/env python3
"""Plot the results of an `ibnetsim sweep` as PNG files.

Directory mode draws every plot listed under "plots" in DIR/sweep.json from
DIR/results.csv and prints the path of each PNG written:

    plot_sweep.py DIR [--out-dir OUT]

Explicit mode draws one plot from any sweep CSV:

    plot_sweep.py --csv FILE.csv --x COL --y COL [--series COL]... [--logx] [--logy]
                  [--title T] [--xlabel L] [--ylabel L] --out FILE.png

Only rows whose status is "ok" are plotted; rows with an empty (or nan) x or y
cell are skipped. Each distinct combination of the series columns' values is one line.
Every PNG is 800 x 500 pixels. Bad input exits 2 with a message on stderr.
Needs python3 and matplotlib (Debian: python3-matplotlib).
"""

import argparse
import csv
import importlib.util
import json
import math
import os
import sys

PROG = "plot_sweep.py"

# Fixed size so that plots of different sweeps line up and tests can check it:
# 8 x 5 inches at 100 dpi is 800 x 500 pixels.
FIG_INCHES = (8, 5)
FIG_DPI = 100

# Lines of different series often overlap (e.g. features that do not change a
# metric), so markers differ as well as colours.
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p"]

PLOT_KEYS = {"file", "x", "y", "series", "logx", "logy", "title", "xlabel", "ylabel"}


class PlotError(Exception):
    """Bad input: reported as one line on stderr, exit code 2."""


class Table:
    """A CSV read whole: the header and each data row with its file line number."""

    def __init__(self, path, header, rows):
        self.path = path
        self.header = header
        self.rows = rows  # list of (line number, {column: cell})

    def require(self, column, what):
        if column not in self.header:
            raise PlotError(
                "%s column %r is not in %s; available columns: %s"
                % (what, column, self.path, ", ".join(self.header))
            )


def read_table(path):
    try:
        # utf-8-sig: tolerate a byte order mark if the CSV went through a spreadsheet.
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f, strict=True)
            header = None
            rows = []
            for cells in reader:
                if not cells:  # blank line
                    continue
                if header is None:
                    header = cells
                    dup = sorted({c for c in header if header.count(c) > 1})
                    if dup:
                        raise PlotError("%s: duplicate column names in the header: %s" % (path, ", ".join(dup)))
                    continue
                if len(cells) != len(header):
                    raise PlotError(
                        "%s line %d: %d cells, but the header has %d columns"
                        % (path, reader.line_num, len(cells), len(header))
                    )
                rows.append((reader.line_num, dict(zip(header, cells))))
    except FileNotFoundError:
        raise PlotError("CSV file not found: %s" % path)
    except IsADirectoryError:
        raise PlotError("CSV file is a directory: %s" % path)
    except (OSError, UnicodeDecodeError) as e:
        raise PlotError("cannot read CSV file %s: %s" % (path, e))
    except csv.Error as e:
        raise PlotError("cannot parse CSV file %s: %s" % (path, e))
    if header is None:
        raise PlotError("CSV file %s is empty (no header row)" % path)
    if "status" not in header:
        raise PlotError(
            "%s has no 'status' column (is it the results.csv of an ibnetsim sweep?); available columns: %s"
            % (path, ", ".join(header))
        )
    return Table(path, header, rows)


def read_plot_specs(sweep_json):
    try:
        with open(sweep_json, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise PlotError("sweep description not found: %s" % sweep_json)
    except (OSError, UnicodeDecodeError) as e:
        raise PlotError("cannot read %s: %s" % (sweep_json, e))
    except json.JSONDecodeError as e:
        raise PlotError("%s is not valid JSON: %s" % (sweep_json, e))
    if not isinstance(doc, dict):
        raise PlotError("%s: expected a JSON object at the top level" % sweep_json)
    plots = doc.get("plots")
    if plots is None or plots == []:
        raise PlotError("%s has no plots (add a \"plots\" list, or use --csv ... --out)" % sweep_json)
    if not isinstance(plots, list):
        raise PlotError("%s: \"plots\" must be a list of objects" % sweep_json)
    specs = []
    seen_files = set()
    for i, entry in enumerate(plots):
        where = "%s: plots[%d]" % (sweep_json, i)
        spec = check_plot_entry(entry, where)
        # Two entries writing one file would silently lose a plot.
        if spec["file"] in seen_files:
            raise PlotError("%s: file %r is already used by an earlier plot" % (where, spec["file"]))
        seen_files.add(spec["file"])
        specs.append((where, spec))
    return specs


def check_plot_entry(entry, where):
    if not isinstance(entry, dict):
        raise PlotError("%s: expected an object, got %s" % (where, json.dumps(entry)))
    for key in ("file", "x", "y"):
        if key not in entry:
            raise PlotError("%s: missing \"%s\"" % (where, key))
    for key in ("file", "x", "y", "title", "xlabel", "ylabel"):
        if key in entry and not isinstance(entry[key], str):
            raise PlotError("%s: \"%s\" must be a string" % (where, key))
    for key in ("file", "x", "y"):
        if not entry[key]:
            raise PlotError("%s: \"%s\" must not be empty" % (where, key))
    for key in ("logx", "logy"):
        if key in entry and not isinstance(entry[key], bool):
            raise PlotError("%s: \"%s\" must be true or false" % (where, key))
    series = entry.get("series", [])
    if not isinstance(series, list) or not all(isinstance(s, str) and s for s in series):
        raise PlotError("%s: \"series\" must be a list of column names" % where)
    name = entry["file"]
    if not name.lower().endswith(".png"):
        raise PlotError("%s: file %r must end in .png" % (where, name))
    # Plots go into the output directory, never elsewhere.
    if os.path.isabs(name) or ".." in name.replace("\\", "/").split("/"):
        raise PlotError("%s: file %r must be a relative path inside the output directory" % (where, name))
    unknown = sorted(set(entry) - PLOT_KEYS)
    if unknown:
        # A warning, not an error: the sweep description may grow keys this script does not use.
        print("%s: warning: %s: ignoring unknown keys: %s" % (PROG, where, ", ".join(unknown)), file=sys.stderr)
    return {
        "file": name,
        "x": entry["x"],
        "y": entry["y"],
        "series": list(series),
        "logx": entry.get("logx", False),
        "logy": entry.get("logy", False),
        "title": entry.get("title"),
        "xlabel": entry.get("xlabel"),
        "ylabel": entry.get("ylabel"),
    }


def to_number(text):
    try:
        return float(text)
    except ValueError:
        return None


def collect(table, spec, where):
    """Turn the table into [(label, [(x, y), ...]), ...] for one plot, plus x's kind.

    Returns (series, categories): categories is None when x is numeric, else the
    x values in order of first appearance (each point's x is then its index).
    """
    x, y, series_cols = spec["x"], spec["y"], spec["series"]
    table.require(x, where + ": x")
    table.require(y, where + ": y")
    for col in series_cols:
        table.require(col, where + ": series")

    ok = [(line, row) for line, row in table.rows if row["status"].strip() == "ok"]
    if not ok:
        raise PlotError(
            "%s: no rows with status ok in %s (%d rows in all)" % (where, table.path, len(table.rows))
        )

    points = []  # (series key, x cell, y value)
    for line, row in ok:
        xcell, ycell = row[x].strip(), row[y].strip()
        if not ycell or not xcell:  # e.g. a metric this point did not measure
            continue
        yval = to_number(ycell)
        if yval is None:
            point = row.get("point")
            at = "line %d" % line + (" (point %s)" % point if point is not None else "")
            raise PlotError("%s: %s %s: y column %r has %r, which is not a number" % (where, table.path, at, y, ycell))
        if not math.isfinite(yval):  # nan/inf: no usable measurement, like an empty cell
            continue
        points.append((tuple(row[c].strip() for c in series_cols), xcell, yval))
    if not points:
        raise PlotError("%s: column %r has no value in any ok row of %s" % (where, y, table.path))

    xnums = [to_number(p[1]) for p in points]
    if all(v is not None for v in xnums):
        # A non-finite x (nan, inf) has no place on a numeric axis.
        points = [p for p, v in zip(points, xnums) if math.isfinite(v)]
        xnums = [v for v in xnums if math.isfinite(v)]
        if not points:
            raise PlotError("%s: column %r has no finite values in the ok rows of %s" % (where, x, table.path))
        categories = None
        xs = xnums
    else:
        # Categorical x (e.g. true/false): evenly spaced in order of first appearance.
        categories = []
        for _, xcell, _ in points:
            if xcell not in categories:
                categories.append(xcell)
        xs = [categories.index(p[1]) for p in points]
        if spec["logx"]:
            raise PlotError("%s: logx needs a numeric x, but %r has non-numeric values" % (where, x))

    if spec["logx"] and any(v <= 0 for v in xs):
        raise PlotError("%s: logx needs x > 0, but %r has values <= 0" % (where, x))
    if spec["logy"] and any(p[2] <= 0 for p in points):
        raise PlotError("%s: logy needs y > 0, but %r has values <= 0" % (where, y))

    order = []  # series keys by first appearance, so output is deterministic
    by_key = {}
    for (key, _, yval), xval in zip(points, xs):
        if key not in by_key:
            by_key[key] = []
            order.append(key)
        by_key[key].append((xval, yval))
    series = []
    for key in order:
        label = ", ".join("%s=%s" % (c, v) for c, v in zip(series_cols, key)) if series_cols else y
        # Stable sort: points with equal x keep their CSV order.
        series.append((label, sorted(by_key[key], key=lambda p: p[0])))
    return series, categories


def format_number(v):
    return "%g" % v


def render(spec, series, categories, out_path):
    import matplotlib

    matplotlib.use("Agg")  # no display; must precede the pyplot import
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, ax = plt.subplots(figsize=FIG_INCHES, dpi=FIG_DPI)
    try:
        for i, (label, pts) in enumerate(series):
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=MARKERS[i % len(MARKERS)], label=label)
        if spec["logx"]:
            ax.set_xscale("log")
            # Sweeps use few x values (sizes 2..4096): label those rather than powers of ten.
            xvals = sorted({p[0] for _, pts in series for p in pts})
            if len(xvals) <= 12:
                ax.set_xticks(xvals)
                ax.set_xticklabels([format_number(v) for v in xvals])
                ax.xaxis.set_minor_formatter(NullFormatter())
        if spec["logy"]:
            ax.set_yscale("log")
        if categories is not None:
            ax.set_xticks(range(len(categories)))
            ax.set_xticklabels(categories)
            ax.set_xlim(-0.5, len(categories) - 0.5)
        ax.set_xlabel(spec["xlabel"] if spec["xlabel"] is not None else spec["x"])
        ax.set_ylabel(spec["ylabel"] if spec["ylabel"] is not None else spec["y"])
        if spec["title"]:
            ax.set_title(spec["title"])
        ax.grid(True, which="major", alpha=0.4)
        if spec["series"] or len(series) > 1:
            ax.legend()
        fig.tight_layout()
        parent = os.path.dirname(out_path)
        try:
            if parent:
                os.makedirs(parent, exist_ok=True)
            # No bbox_inches="tight": it would change the pixel size.
            fig.savefig(out_path, dpi=FIG_DPI, format="png")
        except OSError as e:
            raise PlotError("cannot write %s: %s" % (out_path, e))
    finally:
        plt.close(fig)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="plot_sweep.py",
        description="Plot the results.csv of an `ibnetsim sweep` as 800x500 PNG files.",
        epilog="Directory mode: plot_sweep.py DIR [--out-dir OUT] draws the \"plots\" of DIR/sweep.json. "
        "Explicit mode: plot_sweep.py --csv FILE.csv --x COL --y COL [...] --out FILE.png draws one plot.",
    )
    p.add_argument("dir", nargs="?", metavar="DIR", help="sweep output directory (results.csv, sweep.json)")
    p.add_argument("--out-dir", metavar="OUT", help="directory mode: where to write the PNGs (default DIR)")
    p.add_argument("--csv", metavar="FILE.csv", help="explicit mode: the results CSV")
    p.add_argument("--x", metavar="COL", help="explicit mode: column on the x axis")
    p.add_argument("--y", metavar="COL", help="explicit mode: column on the y axis")
    p.add_argument("--series", metavar="COL", action="append", default=[],
                   help="explicit mode: one line per distinct value of this column (repeatable)")
    p.add_argument("--logx", action="store_true", help="explicit mode: logarithmic x axis")
    p.add_argument("--logy", action="store_true", help="explicit mode: logarithmic y axis")
    p.add_argument("--title", help="explicit mode: plot title")
    p.add_argument("--xlabel", help="explicit mode: x axis label (default the x column)")
    p.add_argument("--ylabel", help="explicit mode: y axis label (default the y column)")
    p.add_argument("--out", metavar="FILE.png", help="explicit mode: the PNG to write")
    args = p.parse_args(argv)

    explicit_only = [("--x", args.x), ("--y", args.y), ("--series", args.series), ("--logx", args.logx),
                     ("--logy", args.logy), ("--title", args.title), ("--xlabel", args.xlabel),
                     ("--ylabel", args.ylabel), ("--out", args.out)]
    if args.dir is not None and args.csv is not None:
        p.error("give either DIR or --csv, not both")
    if args.dir is None and args.csv is None:
        p.error("give a sweep directory DIR, or --csv FILE.csv --x COL --y COL --out FILE.png")
    if args.dir is not None:
        used = [name for name, value in explicit_only if value]
        if used:
            p.error("%s: only with --csv" % ", ".join(used))
    else:
        if args.out_dir is not None:
            p.error("--out-dir only goes with DIR; use --out with --csv")
        missing = [name for name, value in (("--x", args.x), ("--y", args.y), ("--out", args.out)) if not value]
        if missing:
            p.error("--csv needs %s" % ", ".join(missing))
        if not args.out.lower().endswith(".png"):
            p.error("--out must name a .png file")
    return args


def main(argv):
    args = parse_args(argv)
    try:
        if args.dir is not None:
            if not os.path.isdir(args.dir):
                raise PlotError("sweep directory not found: %s" % args.dir)
            specs = read_plot_specs(os.path.join(args.dir, "sweep.json"))
            table = read_table(os.path.join(args.dir, "results.csv"))
            out_dir = args.out_dir if args.out_dir is not None else args.dir
            jobs = [(spec, os.path.join(out_dir, spec["file"])) + collect(table, spec, where)
                    for where, spec in specs]
        else:
            spec = {"file": args.out, "x": args.x, "y": args.y, "series": args.series, "logx": args.logx,
                    "logy": args.logy, "title": args.title, "xlabel": args.xlabel, "ylabel": args.ylabel}
            table = read_table(args.csv)
            jobs = [(spec, args.out) + collect(table, spec, "plot")]
        # Every plot is checked before any is drawn, so bad input writes nothing.
        if importlib.util.find_spec("matplotlib") is None:
            print("%s: error: python3 module matplotlib is not installed (Debian: python3-matplotlib)" % PROG,
                  file=sys.stderr)
            return 1
        for spec, out_path, series, categories in jobs:
            render(spec, series, categories, out_path)
            print(out_path)
    except PlotError as e:
        print("%s: error: %s" % (PROG, e), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
