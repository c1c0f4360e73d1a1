#!/usr/bin/env bash
# tools/plot_timeline.py: the hot-spot experiment's reports (CC off and on, few messages) plot as one 800x500 PNG
# with a line per workload, --describe lists those lines, and bad input (a missing file, a report without a
# timeline, a bad extension) exits 2 with a message and no Python traceback. Works in a temporary directory.
#   plot_timeline_test.sh IBNETSIM REPO_ROOT
# Exit 77 (ctest: skipped) when no python3 has matplotlib (python3-matplotlib).
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: plot_timeline_test.sh IBNETSIM REPO_ROOT" >&2
    exit 2
fi
ibnetsim=$1
root=$(cd "$2" && pwd)
script=$root/tools/plot_timeline.py
scenario=$root/scenarios/experiments/hot_spot_cc.json
py=
for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import matplotlib' 2>/dev/null; then
        py=$candidate
        break
    fi
done
if [ -z "$py" ]; then
    echo "plot_timeline_test: skipped: python3 module matplotlib not installed (python3-matplotlib)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MPLCONFIGDIR=$work/mplconfig
failures=0
fail() {
    echo "plot_timeline_test: FAIL: $*"
    failures=$((failures + 1))
}

few=(--set /workloads/0/messages=300 --set /workloads/1/messages=300)
"$ibnetsim" run "$scenario" -q --format json --out "$work/on.json" "${few[@]}"
"$ibnetsim" run "$scenario" -q --format json --out "$work/off.json" "${few[@]}" \
    --set /subnet_manager/congestion_control=false
"$ibnetsim" run "$root/scenarios/experiments/uniform_random.json" -q --format json --out "$work/plain.json" \
    --set /workloads/0/messages=5 --set '/host_model="fabric"'

described=$("$py" "$script" "$work/off.json=CC off" "$work/on.json=CC on" --describe)
[ "$(printf '%s\n' "$described" | wc -l)" -eq 4 ] || fail "--describe: expected 4 lines, got: $described"
printf '%s\n' "$described" | grep -q '^CC on: victim: [0-9]* bins of 250 us, mean ' || fail "--describe: $described"

"$py" "$script" "$work/off.json=CC off" "$work/on.json" --out "$work/t.png" >/dev/null || fail "plot exited $?"
size=$("$py" - "$work/t.png" <<'PY'
import struct, sys
head = open(sys.argv[1], "rb").read(24)
print("%dx%d" % struct.unpack(">II", head[16:24]) if head[:8] == b"\x89PNG\r\n\x1a\n" else "not a PNG")
PY
)
[ "$size" = "800x500" ] || fail "t.png: expected 800x500, got $size"

expect_error() { # expect_error MESSAGE ARGS...: exit 2, MESSAGE on stderr, no traceback
    local message=$1 status=0
    shift
    "$py" "$script" "$@" >"$work/out" 2>"$work/err" || status=$?
    [ "$status" -eq 2 ] || fail "$*: expected exit 2, got $status"
    grep -qF -- "$message" "$work/err" || fail "$*: expected '$message' on stderr, got: $(cat "$work/err")"
    ! grep -q Traceback "$work/err" || fail "$*: a Python traceback"
}
expect_error "cannot read it" "$work/missing.json" --describe
expect_error "no workload has a timeline" "$work/plain.json" --describe
expect_error "expected a .png, .svg or .pdf file" "$work/on.json" --out "$work/t.gif"
expect_error "is required" "$work/on.json"

if [ "$failures" -ne 0 ]; then
    exit 1
fi
echo "plot_timeline_test: all checks passed"
