#!/usr/bin/env bash
# tools/plot_sweep.py: directory mode draws every plot of tests/scenario/data/sample_sweep/sweep.json and explicit
# mode (--csv) draws one, each an 800x500 PNG (or a valid SVG or PDF); seeds are averaged (tests/scenario/data/
# seeds_sweep: mean line, min-max band), an axis neither x nor series gets panels or is refused, axes spanning two
# decades go logarithmic (checked through --describe); bad input (unknown column, missing CSV, ...) exits 2 with a
# message naming the problem and no Python traceback. Works in a temporary directory; writes nothing into the
# repository.
#   plot_sweep_test.sh REPO_ROOT
# Exit 77 (ctest: skipped) when python3 or its matplotlib module (python3-matplotlib) is missing.
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: plot_sweep_test.sh REPO_ROOT" >&2
    exit 2
fi
root=$(cd "$1" && pwd)
script=$root/tools/plot_sweep.py
sample=$root/tests/scenario/data/sample_sweep
seeds=$root/tests/scenario/data/seeds_sweep

# The python3 first on PATH may lack matplotlib (e.g. a pyenv shim) while Debian's /usr/bin/python3 has it from
# python3-matplotlib: use the first that can import it.
py=
for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import matplotlib' 2>/dev/null; then
        py=$candidate
        break
    fi
done
if [ -z "$py" ]; then
    echo "plot_sweep_test: skipped: python3 module matplotlib not installed (python3-matplotlib)"
    exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# matplotlib caches fonts under $HOME; keep it out of the way of read-only or shared homes.
export MPLCONFIGDIR=$work/mplconfig

failures=0
fail() {
    echo "plot_sweep_test: FAIL: $*"
    failures=$((failures + 1))
}

# check_png FILE: the PNG signature, then IHDR width and height (big-endian at bytes 16..23) are 800 and 500.
check_png() {
    local file=$1 got
    if [ ! -s "$file" ]; then
        fail "$file was not written"
        return
    fi
    got=$("$py" - "$file" <<'EOF'
import struct, sys
with open(sys.argv[1], "rb") as f:
    head = f.read(24)
if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
    print("not a PNG")
else:
    print("%dx%d" % struct.unpack(">II", head[16:24]))
EOF
)
    if [ "$got" != "800x500" ]; then
        fail "$file: expected an 800x500 PNG, got: $got"
    fi
}

# check_head FILE PATTERN WHAT: FILE exists and its first bytes match PATTERN (grep -E).
check_head() {
    local file=$1 pattern=$2 what=$3
    if [ ! -s "$file" ]; then
        fail "$file was not written"
    elif ! head -c 64 "$file" | head -n 1 | grep -Eq -- "$pattern"; then
        fail "$file is not $what: $(head -c 40 "$file" | head -n 1)"
    fi
}

# run_ok NAME ARGS...: plot_sweep.py ARGS exits 0; stdout in $work/NAME.out, stderr in $work/NAME.err.
run_ok() {
    local name=$1 rc=0
    shift
    "$py" "$script" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "$name: exited $rc (plot_sweep.py $*); stderr:"
        cat "$work/$name.err"
    fi
}

# expect_line NAME LINE: $work/NAME.out has LINE (whole line, fixed string).
expect_line() {
    if ! grep -qxF -- "$2" "$work/$1.out"; then
        fail "$1: no line '$2' in:"
        cat "$work/$1.out"
    fi
}

# expect_error NAME PATTERN ARGS...: plot_sweep.py ARGS exits 2, its stderr matches PATTERN (grep -E), and shows
# no traceback.
expect_error() {
    local name=$1 pattern=$2 rc=0
    shift 2
    "$py" "$script" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
    if [ "$rc" -ne 2 ]; then
        fail "$name: expected exit 2, got $rc (plot_sweep.py $*); stderr:"
        cat "$work/$name.err"
    fi
    if ! grep -Eq -- "$pattern" "$work/$name.err"; then
        fail "$name: stderr does not match /$pattern/ (plot_sweep.py $*); stderr:"
        cat "$work/$name.err"
    fi
    if grep -q "Traceback" "$work/$name.err"; then
        fail "$name: Python traceback on stderr:"
        cat "$work/$name.err"
    fi
}

# Directory mode: every plot of sweep.json, one path per line on stdout.
mkdir "$work/dir_out"
rc=0
"$py" "$script" "$sample" --out-dir "$work/dir_out" >"$work/dir.out" 2>"$work/dir.err" || rc=$?
if [ "$rc" -ne 0 ]; then
    fail "directory mode exited $rc:"
    cat "$work/dir.err"
fi
files=$("$py" -c 'import json, sys; print("\n".join(p["file"] for p in json.load(open(sys.argv[1]))["plots"]))' \
    "$sample/sweep.json")
if [ -z "$files" ]; then
    fail "$sample/sweep.json lists no plots"
fi
for f in $files; do
    check_png "$work/dir_out/$f"
    if ! grep -qxF "$work/dir_out/$f" "$work/dir.out"; then
        fail "directory mode did not print $work/dir_out/$f; stdout:"
        cat "$work/dir.out"
    fi
done
if [ "$(wc -l <"$work/dir.out")" -ne "$(echo "$files" | wc -l)" ]; then
    fail "directory mode should print one line per plot; stdout:"
    cat "$work/dir.out"
fi

# Directory mode without --out-dir writes into DIR itself (a copy, so the repository stays untouched).
cp -r "$sample" "$work/copy"
rc=0
"$py" "$script" "$work/copy" >"$work/copy.out" 2>"$work/copy.err" || rc=$?
if [ "$rc" -ne 0 ]; then
    fail "directory mode without --out-dir exited $rc:"
    cat "$work/copy.err"
fi
for f in $files; do
    check_png "$work/copy/$f"
done

# Explicit mode: numeric x with series and logy; categorical x (true/false).
rc=0
"$py" "$script" --csv "$sample/results.csv" --x size_bytes --y ib_write_lat.t_p99_us --series inline \
    --series blueflame --logx --logy --title "p99 latency" --out "$work/explicit.png" \
    >"$work/explicit.out" 2>"$work/explicit.err" || rc=$?
if [ "$rc" -ne 0 ]; then
    fail "explicit mode exited $rc:"
    cat "$work/explicit.err"
fi
check_png "$work/explicit.png"
rc=0
"$py" "$script" --csv "$sample/results.csv" --x blueflame --y ib_write_bw.msg_rate_mpps --series size_bytes \
    --out "$work/categorical.png" >"$work/categorical.out" 2>"$work/categorical.err" || rc=$?
if [ "$rc" -ne 0 ]; then
    fail "explicit mode with a categorical x exited $rc:"
    cat "$work/categorical.err"
fi
check_png "$work/categorical.png"

# An ok row with an empty metric is skipped, a failed row is not plotted even with a bogus metric.
cat >"$work/gaps.csv" <<'EOF'
point,status,size_bytes,ib_write_lat.t_typical_us
0,ok,2,0.98
1,ok,8,
2,"failed (exit 3)",64,oops
3,ok,256,1.09
EOF
rc=0
"$py" "$script" --csv "$work/gaps.csv" --x size_bytes --y ib_write_lat.t_typical_us --out "$work/gaps.png" \
    >"$work/gaps.out" 2>"$work/gaps.err" || rc=$?
if [ "$rc" -ne 0 ]; then
    fail "a CSV with an empty metric and a failed row exited $rc:"
    cat "$work/gaps.err"
fi
check_png "$work/gaps.png"

# Seeds: the sweep's /seed axis is averaged, its other axes are series, panels or filtered.
run_ok seeds_describe "$seeds" --describe
expect_line seeds_describe "  y: uniform_random.message_latency.t_99_percent_us, log (auto: 2.11849 to 340.532)"
expect_line seeds_describe "  x: offered_load, linear"
expect_line seeds_describe "  x: offered_load, linear (asked)"
expect_line seeds_describe "  facets: vls (2 panels)"
expect_line seeds_describe "  seeds: seed, 1/2 per point: mean line, min-max band"
expect_line seeds_describe "  panel vls=2"
expect_line seeds_describe "    line routing=minhop: 7 points, seeds per point 2"
expect_line seeds_describe "    line routing=updn: 7 points, seeds per point 1/2"
expect_line seeds_describe "  where: vls=1"
if [ -n "$(ls "$seeds" | grep -v -e '^results.csv$' -e '^sweep.json$')" ]; then
    fail "--describe wrote into $seeds"
fi

# The format follows each plot's file name (.svg, .pdf), or --format.
run_ok seeds_dir "$seeds" --out-dir "$work/seeds"
check_head "$work/seeds/latency_vs_load.svg" '^(<\?xml|<svg)' "an SVG"
check_head "$work/seeds/delivered_vs_load.pdf" '^%PDF-' "a PDF"
run_ok seeds_png "$seeds" --out-dir "$work/seeds_png" --format png --format pdf
check_png "$work/seeds_png/latency_vs_load.png"
check_png "$work/seeds_png/delivered_vs_load.png"
check_head "$work/seeds_png/latency_vs_load.pdf" '^%PDF-' "a PDF"
if [ "$(wc -l <"$work/seeds_png.out")" -ne 4 ]; then
    fail "--format png --format pdf should write 4 files; stdout:"
    cat "$work/seeds_png.out"
fi

# Explicit mode reads the axes from the sweep.json beside the CSV: vls, neither x nor a series, gets panels with a
# note; the seed as a series is one line per seed; an explicit --facet, --where and --liny are honoured.
lat=uniform_random.message_latency.t_99_percent_us
run_ok auto_facet --csv "$seeds/results.csv" --x offered_load --y $lat --series routing --out "$work/auto_facet.svg"
check_head "$work/auto_facet.svg" '^(<\?xml|<svg)' "an SVG"
if ! grep -q "note: plot: vls is a sweep axis but neither x, a series nor the seed: one panel per value" \
    "$work/auto_facet.err"; then
    fail "auto_facet: no note naming vls on stderr:"
    cat "$work/auto_facet.err"
fi
run_ok seed_series --csv "$seeds/results.csv" --x offered_load --y $lat --series seed --facet routing \
    --where vls=2 --liny --describe
expect_line seed_series "  y: $lat, linear (asked)"
expect_line seed_series "  facets: routing (2 panels)"
expect_line seed_series "  seeds: one per point"
expect_line seed_series "    line seed=2: 6 points, seeds per point 1"
run_ok explicit_pdf --csv "$seeds/results.csv" --x offered_load --y $lat --series routing --facet vls \
    --out "$work/explicit.pdf"
check_head "$work/explicit.pdf" '^%PDF-' "a PDF"

# Refusals: too many panels (naming the axes), and rows a CSV without its sweep.json cannot tell apart.
expect_error too_many_panels "routing \(2 values\), offered_load \(7 values\) would need 14 panels \(at most 12\)" \
    --csv "$seeds/results.csv" --x vls --y $lat --out "$work/bad.png"
cp "$seeds/results.csv" "$work/bare.csv"
expect_error unplaced_axis \
    "lines 2 and 9 are both at routing=minhop, offered_load=0.05 with seed=1; they differ in: vls" \
    --csv "$work/bare.csv" --x offered_load --y $lat --series routing --out "$work/bad.png"
expect_error bad_where "where vls=3 matches no ok row.*its values: 1, 2" \
    --csv "$seeds/results.csv" --x offered_load --y $lat --series routing --where vls=3 --out "$work/bad.png"
expect_error bad_facet "facet column 'no_such_axis' is not in" \
    --csv "$seeds/results.csv" --x offered_load --y $lat --facet no_such_axis --out "$work/bad.png"
expect_error bad_format "must name a .png, .svg or .pdf" \
    --csv "$seeds/results.csv" --x offered_load --y $lat --out "$work/bad.gif"

# Bad input: exit 2, a message naming the problem, no traceback.
expect_error unknown_column "no_such_metric.*available columns: point, status, size_bytes" \
    --csv "$sample/results.csv" --x size_bytes --y no_such_metric --out "$work/bad.png"
expect_error unknown_series "no_such_axis.*available columns" \
    --csv "$sample/results.csv" --x size_bytes --y ib_write_lat.t_typical_us --series no_such_axis \
    --out "$work/bad.png"
expect_error missing_csv "not found.*$work/missing.csv" \
    --csv "$work/missing.csv" --x size_bytes --y ib_write_lat.t_typical_us --out "$work/bad.png"
expect_error missing_dir "not found.*$work/no_such_dir" "$work/no_such_dir"

cat >"$work/not_a_number.csv" <<'EOF'
point,status,size_bytes,ib_write_lat.t_typical_us
0,ok,2,0.98
1,ok,8,fast
EOF
expect_error not_a_number "'fast'.*not a number" \
    --csv "$work/not_a_number.csv" --x size_bytes --y ib_write_lat.t_typical_us --out "$work/bad.png"

cat >"$work/no_ok.csv" <<'EOF'
point,status,size_bytes,ib_write_lat.t_typical_us
0,failed (exit 3),2,
EOF
expect_error no_ok_rows "no rows with status ok" \
    --csv "$work/no_ok.csv" --x size_bytes --y ib_write_lat.t_typical_us --out "$work/bad.png"

mkdir "$work/no_plots" "$work/no_y"
cp "$sample/results.csv" "$work/no_plots/"
cp "$sample/results.csv" "$work/no_y/"
echo '{"name": "no_plots"}' >"$work/no_plots/sweep.json"
echo '{"plots": [{"file": "a.png", "x": "size_bytes"}]}' >"$work/no_y/sweep.json"
expect_error no_plots "no plots" "$work/no_plots"
expect_error plot_without_y 'plots\[0\].*missing "y"' "$work/no_y"

expect_error usage "usage:" --csv "$sample/results.csv" --x size_bytes

# An interpreter without matplotlib (here Debian's without its site packages, as a pyenv or conda python3 first on
# PATH would be) reruns the script under /usr/bin/python3 when that one has it, instead of failing.
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    if /usr/bin/python3 -S "$script" "$seeds" --out-dir "$work/rerun" >"$work/rerun.out" 2>"$work/rerun.err"; then
        [ -s "$work/rerun/latency_vs_load.svg" ] || fail "rerun under /usr/bin/python3: no latency_vs_load.svg"
    else
        fail "an interpreter without matplotlib did not rerun under /usr/bin/python3: $(cat "$work/rerun.err")"
    fi
fi

# Nothing was written next to the sample data.
for f in $files; do
    if [ -e "$sample/$f" ]; then
        fail "$sample/$f was written into the repository"
    fi
done

if [ "$failures" -ne 0 ]; then
    echo "plot_sweep_test: $failures failure(s)"
    exit 1
fi
echo "plot_sweep_test: ok (python: $py)"
