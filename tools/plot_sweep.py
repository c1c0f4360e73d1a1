#!/usr/bin/env python3
"""Plot the results of an `ibnetsim sweep` as PNG, SVG or PDF files.

Directory mode draws every plot listed under "plots" in DIR/sweep.json from
DIR/results.csv and prints the path of each file written:

    plot_sweep.py DIR [--out-dir OUT] [--format png|svg|pdf]... [--describe]

Explicit mode draws one plot from any sweep CSV:

    plot_sweep.py --csv FILE.csv --x COL --y COL [--series COL]... [--facet COL]...
                  [--where COL=VALUE]... [--seed-column COL] [--logx|--linx] [--logy|--liny]
                  [--title T] [--xlabel L] [--ylabel L] --out FILE.{png,svg,pdf} [--describe]

What is drawn, so that no line ever zigzags between the values of a hidden axis:

- Only rows whose status is "ok" and that match every --where (a "where"
  object in sweep.json) are plotted; rows with an empty or non-finite x or y
  cell are skipped.
- Each distinct combination of the series columns' values is one line.
- The seed column (the sweep axis on /seed; in explicit mode without a
  sweep.json next to the CSV, a column named "seed", or --seed-column) holds
  replicates: rows that differ only in the seed are averaged. The line is the
  mean over seeds and a shaded band spans their minimum to maximum; the legend
  says how many seeds. Name the seed as a series to draw one line per seed.
- Every other sweep axis (from sweep.json's "axes", which explicit mode reads
  from the sweep.json next to the CSV when there is one) that still varies
  once x, the series and the seed are fixed gets one panel per value: the
  --facet columns first, then such axes, with a note on stderr. More than 12
  panels is refused (exit 2, naming the axes): make one a series, or filter it
  with --where. Two rows that still share a line and an x (a CSV without its
  sweep.json, say) are refused likewise, naming the columns that tell them apart.
- An axis is logarithmic when asked (--logx, "logx": true), or when it was not
  forced linear (--linx, "logx": false) and its values are all positive and
  span at least two decades (largest / smallest >= 100).

The format follows the file's extension (.png, .svg, .pdf); --format in
directory mode writes each plot in the given formats instead. Every figure is
8 x 5 inches, a PNG 800 x 500 pixels. --describe prints what would be drawn
(panels, lines, points, seeds per point, axis scales) and writes nothing.
Bad input exits 2 with a message on stderr. Needs python3 and matplotlib
(Debian: python3-matplotlib).
"""

import argparse
import csv
import importlib.util
import json
import math
import os
import statistics
import sys

PROG = "plot_sweep.py"

# Fixed size so that plots of different sweeps line up and tests can check it:
# 8 x 5 inches at 100 dpi is 800 x 500 pixels.
FIG_INCHES = (8, 5)
FIG_DPI = 100

FORMATS = ("png", "svg", "pdf")

# More panels than this no longer read on an 8 x 5 figure.
MAX_PANELS = 12

# Values spanning this ratio (two decades) get a logarithmic axis unless forced linear.
AUTO_LOG_RATIO = 100.0

# Lines of different series often overlap (e.g. features that do not change a
# metric), so markers differ as well as colours.
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p"]

PLOT_KEYS = {"file", "x", "y", "series", "facet", "where", "logx", "logy", "title", "xlabel", "ylabel"}

# Columns every sweep CSV has besides the axes and metrics.
BOOKKEEPING = {"point", "status", "error"}


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


class SweepAxes:
    """What the sweep description says about the CSV's columns."""

    def __init__(self, columns=(), seed=None):
        self.columns = list(columns)  # every axis column, in the sweep's order
        self.seed = seed  # the column of the axis on /seed, or None


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
                rows.append((reader.line_num, {c: v.strip() for c, v in zip(header, cells)}))
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


def read_sweep_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise PlotError("sweep description not found: %s" % path)
    except (OSError, UnicodeDecodeError) as e:
        raise PlotError("cannot read %s: %s" % (path, e))
    except json.JSONDecodeError as e:
        raise PlotError("%s is not valid JSON: %s" % (path, e))
    if not isinstance(doc, dict):
        raise PlotError("%s: expected a JSON object at the top level" % path)
    return doc


def read_axes(doc, path):
    """The axis columns of a sweep description, named as `ibnetsim sweep` names them."""
    axes = doc.get("axes", [])
    if not isinstance(axes, list):
        raise PlotError("%s: \"axes\" must be a list" % path)
    params = []  # (name or None, pointer) per parameter; variants are (name, None)
    for axis in axes:
        if not isinstance(axis, dict):
            continue
        for p in axis["zip"] if isinstance(axis.get("zip"), list) else [axis]:
            if isinstance(p, dict):
                params.append((p.get("name"), p.get("pointer")))
    # An unnamed parameter is its pointer's last token, or the whole pointer where that token is ambiguous.

    def last(pointer):
        return str(pointer).rsplit("/", 1)[-1]

    unnamed = [last(ptr) for name, ptr in params if name is None and ptr is not None]
    columns, seed = [], None
    for name, pointer in params:
        if name is None and pointer is None:
            continue
        column = name if name is not None else (pointer if unnamed.count(last(pointer)) > 1 else last(pointer))
        columns.append(str(column))
        if pointer == "/seed":
            seed = str(column)
    return SweepAxes(columns, seed)


def read_plot_specs(sweep_json, doc):
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


def file_format(name):
    ext = os.path.splitext(name)[1].lower().lstrip(".")
    return ext if ext in FORMATS else None


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
    for key in ("series", "facet"):
        columns = entry.get(key, [])
        if not isinstance(columns, list) or not all(isinstance(s, str) and s for s in columns):
            raise PlotError("%s: \"%s\" must be a list of column names" % (where, key))
    where_filter = entry.get("where", {})
    if not isinstance(where_filter, dict) or not all(
        isinstance(v, (str, int, float, bool)) for v in where_filter.values()
    ):
        raise PlotError("%s: \"where\" must be an object of column -> value (a string, number or boolean)" % where)
    name = entry["file"]
    if file_format(name) is None:
        raise PlotError("%s: file %r must end in .png, .svg or .pdf" % (where, name))
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
        "series": list(entry.get("series", [])),
        "facet": list(entry.get("facet", [])),
        # JSON true/false print as the CSV writes them.
        "where": [(c, json.dumps(v) if isinstance(v, bool) else str(v)) for c, v in where_filter.items()],
        "logx": entry.get("logx"),  # None: automatic
        "logy": entry.get("logy"),
        "title": entry.get("title"),
        "xlabel": entry.get("xlabel"),
        "ylabel": entry.get("ylabel"),
    }


def to_number(text):
    try:
        return float(text)
    except ValueError:
        return None


def cell_matches(cell, wanted):
    """Whether a CSV cell is the value a filter asks for: numerically if both are numbers (8 == 8.0)."""
    a, b = to_number(cell), to_number(wanted)
    if a is not None and b is not None:
        return a == b
    return cell == wanted


def key_label(columns, key):
    return ", ".join("%s=%s" % (c, v) for c, v in zip(columns, key))


def spans_decades(values):
    return bool(values) and min(values) > 0 and max(values) / min(values) >= AUTO_LOG_RATIO


class Measured:
    """One plottable row: its CSV line, its cells, its x position and its y value."""

    __slots__ = ("line", "row", "x", "y")

    def __init__(self, line, row, x, y):
        self.line, self.row, self.x, self.y = line, row, x, y


class Plan:
    """What one plot draws: panels of lines of points, each point a mean over its seeds."""

    def __init__(self, spec):
        self.spec = spec
        self.facets = []  # facet columns: the spec's, then axes placed automatically
        self.auto_facets = []
        self.seed = None  # the column averaged over, or None
        self.categories = None  # x values in order when x is not numeric
        self.panels = []  # [(facet key, [(series key, [(x, mean, lo, hi, n)])])]
        self.series_keys = []  # every series key, in order of first appearance, for shared colours
        self.logx = self.logy = False
        self.log_reason = {}

    def seed_counts(self):
        return sorted({p[4] for _, lines in self.panels for _, pts in lines for p in pts})


def plan(table, spec, axes, where):
    """Check one plot against the table and work out what it draws (a Plan), or raise PlotError."""
    x, y, series_cols = spec["x"], spec["y"], spec["series"]
    table.require(x, where + ": x")
    table.require(y, where + ": y")
    for key, columns in (("series", series_cols), ("facet", spec["facet"]), ("where", [c for c, _ in spec["where"]])):
        for col in columns:
            table.require(col, "%s: %s" % (where, key))
    placed = [x] + series_cols + spec["facet"]
    for col in set(placed):
        if placed.count(col) > 1:
            raise PlotError("%s: column %r is used twice among x, series and facet" % (where, col))

    points, categories = measure(table, selected_rows(table, spec, where), spec, where)
    result = Plan(spec)
    result.categories = categories
    seed_in_csv = axes.seed in table.header
    result.seed = axes.seed if seed_in_csv and axes.seed not in placed + [y] else None
    result.auto_facets = unplaced_axes(points, axes, spec, result.seed, table)
    result.facets = spec["facet"] + result.auto_facets

    panels = {}  # facet key -> series key -> x -> [Measured]
    for p in points:
        fkey = tuple(p.row[c] for c in result.facets)
        skey = tuple(p.row[c] for c in series_cols)
        if skey not in result.series_keys:
            result.series_keys.append(skey)
        panels.setdefault(fkey, {}).setdefault(skey, {}).setdefault(p.x, []).append(p)
    if len(panels) > MAX_PANELS:
        named = ", ".join("%s (%d values)" % (c, len({p.row[c] for p in points})) for c in result.facets)
        raise PlotError(
            "%s: %s would need %d panels (at most %d): make an axis a series, or filter it with where "
            "(--where COL=VALUE)" % (where, named, len(panels), MAX_PANELS)
        )
    for fkey, lines in panels.items():
        drawn = []
        for skey, by_x in lines.items():
            pts = []
            for xval in sorted(by_x):
                reps = by_x[xval]
                check_replicates(reps, table, result, (fkey, skey), where, seed_in_csv)
                ys = [p.y for p in reps]
                pts.append((xval, statistics.fmean(ys), min(ys), max(ys), len(ys)))
            drawn.append((skey, pts))
        result.panels.append((fkey, drawn))

    choose_scales(result, spec, [p.x for p in points], [p.y for p in points], where)
    return result


def selected_rows(table, spec, where):
    """The rows with status ok that pass every where filter."""
    rows = [(line, row) for line, row in table.rows if row["status"] == "ok"]
    if not rows:
        raise PlotError("%s: no rows with status ok in %s (%d rows in all)" % (where, table.path, len(table.rows)))
    for col, wanted in spec["where"]:
        kept = [(line, row) for line, row in rows if cell_matches(row[col], wanted)]
        if not kept:
            values = sorted({row[col] for _, row in rows})
            raise PlotError("%s: where %s=%s matches no ok row of %s; its values: %s"
                            % (where, col, wanted, table.path, ", ".join(values)))
        rows = kept
    return rows


def measure(table, rows, spec, where):
    """[Measured] for the rows with an x and a finite y, and the x categories (None when x is numeric)."""
    x, y = spec["x"], spec["y"]
    points = []
    for line, row in rows:
        if not row[y] or not row[x]:  # e.g. a metric this point did not measure
            continue
        yval = to_number(row[y])
        if yval is None:
            at = "line %d" % line + (" (point %s)" % row["point"] if "point" in row else "")
            raise PlotError("%s: %s %s: y column %r has %r, which is not a number" % (where, table.path, at, y, row[y]))
        if math.isfinite(yval):  # nan/inf: no usable measurement, like an empty cell
            points.append(Measured(line, row, to_number(row[x]), yval))
    if not points:
        raise PlotError("%s: column %r has no value in any ok row of %s" % (where, y, table.path))
    if all(p.x is not None for p in points):
        # A non-finite x (nan, inf) has no place on a numeric axis.
        points = [p for p in points if math.isfinite(p.x)]
        if not points:
            raise PlotError("%s: column %r has no finite values in the ok rows of %s" % (where, x, table.path))
        return points, None
    # Categorical x (e.g. true/false): evenly spaced in order of first appearance.
    categories = list(dict.fromkeys(p.row[x] for p in points))
    for p in points:
        p.x = categories.index(p.row[x])
    return points, categories


def unplaced_axes(points, axes, spec, seed, table):
    """Sweep axes that still vary once x, the series and the facets are fixed: a line through them would zigzag.

    A zipped partner of x or of a series varies with it and is not listed; zipped partners that both vary are both
    listed, and their panels are the combinations that occur.
    """
    fixed = spec["series"] + spec["facet"]
    skip = {spec["x"], spec["y"], seed} | set(fixed) | {c for c, _ in spec["where"]}

    def varies(col):
        seen = {}
        for p in points:
            key = (p.x,) + tuple(p.row[c] for c in fixed)
            if seen.setdefault(key, p.row[col]) != p.row[col]:
                return True
        return False

    return [col for col in axes.columns if col in table.header and col not in skip and varies(col)]


def check_replicates(reps, table, result, keys, where, seed_in_csv):
    """Rows sharing a panel, a line and an x must be distinct seeds of one point; anything else is refused."""
    spec = result.spec
    if result.seed is None:
        pair = reps[:2] if len(reps) > 1 else None
    else:
        by_seed, pair = {}, None
        for p in reps:
            if p.row[result.seed] in by_seed:
                pair = (by_seed[p.row[result.seed]], p)
                break
            by_seed[p.row[result.seed]] = p
    if pair is None:
        return
    a, b = pair
    differ = [c for c in table.header if c not in {spec["y"], "point", "error"} and a.row[c] != b.row[c]]
    # Axes change in few values, metrics in many: name the likeliest axes first.
    differ.sort(key=lambda c: len({r[c] for _, r in table.rows}))
    fkey, skey = keys
    at = [key_label(result.facets, fkey), key_label(spec["series"], skey), "%s=%s" % (spec["x"], b.row[spec["x"]])]
    raise PlotError(
        "%s: %s lines %d and %d are both at %s%s; they differ in: %s. Make the column that tells them apart a "
        "series or a facet, or filter it with where (--where COL=VALUE)%s"
        % (where, table.path, a.line, b.line, ", ".join(filter(None, at)),
           " with %s=%s" % (result.seed, b.row[result.seed]) if result.seed else "",
           ", ".join(differ[:6]) or "nothing",
           "" if seed_in_csv else ", or name the seed column (--seed-column COL) to average over it")
    )


def choose_scales(result, spec, xs, ys, where):
    """Log or linear for each axis, as asked or by the two-decade rule; logs need positive values."""
    x, y, categories = spec["x"], spec["y"], result.categories
    if spec["logx"] and categories is not None:
        raise PlotError("%s: logx needs a numeric x, but %r has non-numeric values" % (where, x))
    if spec["logx"] and any(v <= 0 for v in xs):
        raise PlotError("%s: logx needs x > 0, but %r has values <= 0" % (where, x))
    if spec["logy"] and any(v <= 0 for v in ys):
        raise PlotError("%s: logy needs y > 0, but %r has values <= 0" % (where, y))
    for axis, forced, values in (("x", spec["logx"], xs if categories is None else []), ("y", spec["logy"], ys)):
        if forced is not None:
            log, reason = forced, "log (asked)" if forced else "linear (asked)"
        elif spans_decades(values):
            log, reason = True, "log (auto: %g to %g)" % (min(values), max(values))
        else:
            log, reason = False, "linear"
        setattr(result, "log" + axis, log)
        result.log_reason[axis] = reason


def seeds_note(result):
    """The legend's title when points average seeds, e.g. "mean of 2 seeds (seed)"; None otherwise."""
    counts = result.seed_counts()
    if result.seed is None or counts[-1] < 2:
        return None
    n = "%d" % counts[0] if len(counts) == 1 else "%d-%d" % (counts[0], counts[-1])
    return "mean of %s seeds (%s)" % (n, result.seed)


def describe(result, out_path):
    spec = result.spec
    lines = ["plot %s" % out_path,
             "  x: %s, %s" % (spec["x"], result.log_reason["x"] + (", categorical" if result.categories else "")),
             "  y: %s, %s" % (spec["y"], result.log_reason["y"])]
    if spec["where"]:
        lines.append("  where: %s" % ", ".join("%s=%s" % w for w in spec["where"]))
    lines.append("  series: %s" % (", ".join(spec["series"]) or "none"))
    lines.append("  facets: %s (%d panel%s)%s" % (
        ", ".join(result.facets) or "none", len(result.panels), "s"[:len(result.panels) > 1],
        "; placed automatically: " + ", ".join(result.auto_facets) if result.auto_facets else ""))
    counts = result.seed_counts()
    lines.append("  seeds: %s" % ("%s, %s per point: mean line, min-max band"
                                   % (result.seed, "/".join(map(str, counts))) if result.seed and counts[-1] > 1
                                   else "one per point"))
    for fkey, drawn in result.panels:
        lines.append("  panel %s" % (key_label(result.facets, fkey) or "(all)"))
        for skey, pts in drawn:
            lines.append("    line %s: %d points, seeds per point %s"
                         % (key_label(spec["series"], skey) or spec["y"], len(pts),
                            "/".join(map(str, sorted({p[4] for p in pts})))))
    return "\n".join(lines)


def format_number(v):
    return "%g" % v


def grid_shape(n):
    cols = 1 if n == 1 else 2 if n in (2, 4) else 3
    return (n + cols - 1) // cols, cols


def render(result, out_path, fmt):
    import matplotlib

    matplotlib.use("Agg")  # no display; must precede the pyplot import
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, NullFormatter

    spec = result.spec
    nrows, ncols = grid_shape(len(result.panels))
    fig, axs = plt.subplots(nrows, ncols, figsize=FIG_INCHES, dpi=FIG_DPI, sharex=True, sharey=True, squeeze=False)
    try:
        cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        style = {k: (cycle[i % len(cycle)], MARKERS[i % len(MARKERS)]) for i, k in enumerate(result.series_keys)}
        small = len(result.panels) > 1
        for ax, (fkey, drawn) in zip(axs.flat, result.panels):
            for skey, pts in drawn:
                colour, marker = style[skey]
                xs = [p[0] for p in pts]
                ax.plot(xs, [p[1] for p in pts], color=colour, marker=marker, markersize=4 if small else 6)
                if any(p[4] > 1 for p in pts):
                    ax.fill_between(xs, [p[2] for p in pts], [p[3] for p in pts], color=colour, alpha=0.2,
                                    linewidth=0)
            if result.facets:
                ax.set_title(key_label(result.facets, fkey), fontsize="small")
            ax.grid(True, which="major", alpha=0.4)
        for ax in list(axs.flat)[len(result.panels):]:
            ax.set_visible(False)
        ax = axs.flat[0]  # shared axes: scales and ticks set once apply to all
        if result.logx:
            ax.set_xscale("log")
            # Sweeps use few x values (sizes 2..4096): label those rather than powers of ten.
            xvals = sorted({p[0] for _, drawn in result.panels for _, pts in drawn for p in pts})
            if len(xvals) <= 12:
                ax.set_xticks(xvals)
                ax.set_xticklabels([format_number(v) for v in xvals])
                ax.xaxis.set_minor_formatter(NullFormatter())
        if result.logy:
            ax.set_yscale("log")
            # Plain numbers (4, 6, 10) rather than 6x10^0; within about a decade the minor ticks need labels too.
            plain = FuncFormatter(lambda v, _: format_number(v))
            ax.yaxis.set_major_formatter(plain)
            ys = [y for _, drawn in result.panels for _, pts in drawn for p in pts for y in p[2:4]]
            ax.yaxis.set_minor_formatter(plain if max(ys) / min(ys) < 30 else NullFormatter())
        if result.categories is not None:
            ax.set_xticks(range(len(result.categories)))
            ax.set_xticklabels(result.categories)
            ax.set_xlim(-0.5, len(result.categories) - 0.5)
        xlabel = spec["xlabel"] if spec["xlabel"] is not None else spec["x"]
        ylabel = spec["ylabel"] if spec["ylabel"] is not None else spec["y"]
        if small:
            fig.supxlabel(xlabel, fontsize="medium")
            fig.supylabel(ylabel, fontsize="medium")
            if spec["title"]:
                fig.suptitle(spec["title"])
        else:
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            if spec["title"]:
                ax.set_title(spec["title"])

        note = seeds_note(result)
        handles = []
        if spec["series"] or len(result.series_keys) > 1:
            handles = [Line2D([], [], color=c, marker=m, label=key_label(spec["series"], k) or spec["y"])
                       for k, (c, m) in style.items()]
        if note:
            if not handles:
                handles.append(Line2D([], [], color=style[result.series_keys[0]][0], label="mean over seeds"))
            handles.append(Patch(color="grey", alpha=0.3, label="min to max over seeds"))
        if handles:
            axs.flat[0].legend(handles=handles, title=note,
                               fontsize="x-small" if small else "small",
                               title_fontsize="x-small" if small else "small")
        fig.tight_layout()
        parent = os.path.dirname(out_path)
        try:
            if parent:
                os.makedirs(parent, exist_ok=True)
            # No bbox_inches="tight": it would change the figure's size.
            fig.savefig(out_path, dpi=FIG_DPI, format=fmt)
        except OSError as e:
            raise PlotError("cannot write %s: %s" % (out_path, e))
    finally:
        plt.close(fig)


def parse_where(texts, error):
    pairs = []
    for text in texts:
        col, eq, value = text.partition("=")
        if not eq or not col:
            error("--where %s: expected COL=VALUE" % text)
        if col in (c for c, _ in pairs):
            error("--where %s: %s is filtered twice" % (text, col))
        pairs.append((col, value))
    return pairs


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Plot the results.csv of an `ibnetsim sweep` as 8x5-inch PNG (800x500), SVG or PDF files: "
        "the mean over seeds with a min-max band, one panel per other varying sweep axis, log axes where values "
        "span two decades.",
        epilog="Directory mode: plot_sweep.py DIR [--out-dir OUT] draws the \"plots\" of DIR/sweep.json. "
        "Explicit mode: plot_sweep.py --csv FILE.csv --x COL --y COL [...] --out FILE.png draws one plot.",
    )
    p.add_argument("dir", nargs="?", metavar="DIR", help="sweep output directory (results.csv, sweep.json)")
    p.add_argument("--out-dir", metavar="OUT", help="directory mode: where to write the plots (default DIR)")
    p.add_argument("--format", action="append", choices=FORMATS, default=[],
                   help="directory mode: write each plot in this format, whatever its file's extension "
                   "(repeatable)")
    p.add_argument("--describe", action="store_true",
                   help="print what each plot would draw (panels, lines, points, seeds, scales); write nothing")
    p.add_argument("--csv", metavar="FILE.csv", help="explicit mode: the results CSV")
    p.add_argument("--x", metavar="COL", help="explicit mode: column on the x axis")
    p.add_argument("--y", metavar="COL", help="explicit mode: column on the y axis")
    p.add_argument("--series", metavar="COL", action="append", default=[],
                   help="explicit mode: one line per distinct value of this column (repeatable)")
    p.add_argument("--facet", metavar="COL", action="append", default=[],
                   help="explicit mode: one panel per distinct value of this column (repeatable)")
    p.add_argument("--where", metavar="COL=VALUE", action="append", default=[],
                   help="explicit mode: only rows whose COL is VALUE (repeatable, one value per column)")
    p.add_argument("--seed-column", metavar="COL",
                   help="explicit mode: the column whose rows are averaged (default: the sweep's /seed axis, "
                   "or a column named seed)")
    for axis in ("x", "y"):
        g = p.add_mutually_exclusive_group()
        g.add_argument("--log" + axis, action="store_const", const=True, dest="log" + axis,
                       help="explicit mode: logarithmic %s axis" % axis)
        g.add_argument("--lin" + axis, action="store_const", const=False, dest="log" + axis,
                       help="explicit mode: linear %s axis even if its values span decades" % axis)
    p.add_argument("--title", help="explicit mode: plot title")
    p.add_argument("--xlabel", help="explicit mode: x axis label (default the x column)")
    p.add_argument("--ylabel", help="explicit mode: y axis label (default the y column)")
    p.add_argument("--out", metavar="FILE", help="explicit mode: the .png, .svg or .pdf file to write")
    args = p.parse_args(argv)

    explicit_only = [("--x", args.x), ("--y", args.y), ("--series", args.series), ("--facet", args.facet),
                     ("--where", args.where), ("--seed-column", args.seed_column),
                     ("--logx/--linx", args.logx is not None), ("--logy/--liny", args.logy is not None),
                     ("--title", args.title), ("--xlabel", args.xlabel), ("--ylabel", args.ylabel),
                     ("--out", args.out)]
    if args.dir is not None and args.csv is not None:
        p.error("give either DIR or --csv, not both")
    if args.dir is None and args.csv is None:
        p.error("give a sweep directory DIR, or --csv FILE.csv --x COL --y COL --out FILE.png")
    if args.dir is not None:
        used = [name for name, value in explicit_only if value]
        if used:
            p.error("%s: only with --csv" % ", ".join(used))
    else:
        if args.out_dir is not None or args.format:
            p.error("--out-dir and --format only go with DIR; use --out FILE.png/.svg/.pdf with --csv")
        needed = (("--x", args.x), ("--y", args.y), ("--out", args.out or args.describe))
        missing = [name for name, value in needed if not value]
        if missing:
            p.error("--csv needs %s" % ", ".join(missing))
        if args.out is not None and file_format(args.out) is None:
            p.error("--out must name a .png, .svg or .pdf file")
    args.where = parse_where(args.where, p.error)
    return args


def explicit_axes(args):
    """Explicit mode: the axes of the sweep.json beside the CSV, if any, and the seed column."""
    beside = os.path.join(os.path.dirname(os.path.abspath(args.csv)), "sweep.json")
    axes = read_axes(read_sweep_json(beside), beside) if os.path.isfile(beside) else SweepAxes()
    if args.seed_column is not None:
        axes.seed = args.seed_column
    elif axes.seed is None:
        axes.seed = "seed"
    return axes


def main(argv):
    args = parse_args(argv)
    try:
        jobs = []  # (plan, output path, format)
        if args.dir is not None:
            if not os.path.isdir(args.dir):
                raise PlotError("sweep directory not found: %s" % args.dir)
            sweep_json = os.path.join(args.dir, "sweep.json")
            doc = read_sweep_json(sweep_json)
            specs = read_plot_specs(sweep_json, doc)
            axes = read_axes(doc, sweep_json)
            table = read_table(os.path.join(args.dir, "results.csv"))
            out_dir = args.out_dir if args.out_dir is not None else args.dir
            for where, spec in specs:
                result = plan(table, spec, axes, where)
                path = os.path.join(out_dir, spec["file"])
                if not args.format:
                    jobs.append((where, result, path, file_format(path)))
                for fmt in args.format:
                    jobs.append((where, result, os.path.splitext(path)[0] + "." + fmt, fmt))
        else:
            spec = {"file": args.out, "x": args.x, "y": args.y, "series": args.series, "facet": args.facet,
                    "where": args.where, "logx": args.logx, "logy": args.logy, "title": args.title,
                    "xlabel": args.xlabel, "ylabel": args.ylabel}
            table = read_table(args.csv)
            if args.seed_column is not None:
                table.require(args.seed_column, "plot: --seed-column")
            out = args.out or "(--out not given)"
            jobs.append(("plot", plan(table, spec, explicit_axes(args), "plot"), out, file_format(out)))
        for where, result, _, _ in jobs:
            if result.auto_facets and not args.describe:
                print("%s: note: %s: %s %s a sweep axis but neither x, a series nor the seed: one panel per value "
                      "(say so with facet, or filter with where)"
                      % (PROG, where, ", ".join(result.auto_facets), "is" if len(result.auto_facets) == 1 else "are"),
                      file=sys.stderr)
        if args.describe:
            for _, result, out_path, _ in jobs:
                print(describe(result, out_path))
            return 0
        # Every plot is checked before any is drawn, so bad input writes nothing.
        if importlib.util.find_spec("matplotlib") is None:
            rerun_with_debian_python(argv)
            print("%s: error: python3 module matplotlib is not installed for %s (Debian: python3-matplotlib, for "
                  "/usr/bin/python3)" % (PROG, sys.executable), file=sys.stderr)
            return 1
        for _, result, out_path, fmt in jobs:
            render(result, out_path, fmt)
            print(out_path)
    except PlotError as e:
        print("%s: error: %s" % (PROG, e), file=sys.stderr)
        return 2
    return 0


DEBIAN_PYTHON = "/usr/bin/python3"


def rerun_with_debian_python(argv):
    """Runs this script again under Debian's python3 when the interpreter running it (a pyenv or conda python3 first
    on PATH) lacks matplotlib and Debian's has it (python3-matplotlib); returns only if it cannot."""
    if os.environ.get("IBNETSIM_PLOT_RERUN") or not os.access(DEBIAN_PYTHON, os.X_OK):
        return
    import subprocess
    if subprocess.run([DEBIAN_PYTHON, "-c", "import matplotlib"], capture_output=True).returncode != 0:
        return
    os.environ["IBNETSIM_PLOT_RERUN"] = "1"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, os.path.abspath(__file__), *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
