#!/usr/bin/env bash
# tools/compare_reports.py: two runs of one scenario are the same apart from their performance fields (exit 0, also
# with --events); a changed figure is a difference named by its JSON pointer (exit 1), and event counts differ only
# without --events; a missing or malformed report, or a wrong argument count, exits 2. Works in a temporary
# directory.
#   compare_reports_test.sh IBNETSIM REPO_ROOT
# Exit 77 (ctest: skipped) without python3.
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: compare_reports_test.sh IBNETSIM REPO_ROOT" >&2
    exit 2
fi
ibnetsim=$1
root=$(cd "$2" && pwd)
command -v python3 >/dev/null || { echo "compare_reports_test: skipped: no python3"; exit 77; }
compare=$root/tools/compare_reports.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "compare_reports_test: $*" >&2; exit 1; }

for i in 1 2; do
    "$ibnetsim" run "$root/scenarios/phold.json" --set /duration_us=2 --quiet --format json --out "$tmp/$i.json"
done
python3 "$compare" "$tmp/1.json" "$tmp/2.json" || fail "two runs of one scenario differ"
python3 "$compare" --events "$tmp/1.json" "$tmp/2.json" || fail "two runs differ with --events"

python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
r = json.load(open(f"{tmp}/1.json"))
r["results"]["kernel_events_dispatched"] += 1
json.dump(r, open(f"{tmp}/events.json", "w"))
r["config"]["seed"] = r["config"]["seed"] + 1
json.dump(r, open(f"{tmp}/seed.json", "w"))
PY
status=0
python3 "$compare" "$tmp/1.json" "$tmp/events.json" 2>"$tmp/err" || status=$?
[ "$status" = 1 ] || fail "an event count changed: exit $status, expected 1"
grep -q "differ at /results/kernel_events_dispatched" "$tmp/err" || fail "the difference is not named: $(cat "$tmp/err")"
python3 "$compare" --events "$tmp/1.json" "$tmp/events.json" || fail "--events still compares the event count"
status=0
python3 "$compare" --events "$tmp/1.json" "$tmp/seed.json" 2>"$tmp/err" || status=$?
[ "$status" = 1 ] && grep -q "differ at /config/seed" "$tmp/err" || fail "a changed seed: exit $status, $(cat "$tmp/err")"

echo '{"truncated": ' >"$tmp/bad.json"
for args in "$tmp/1.json" "$tmp/1.json $tmp/missing.json" "$tmp/1.json $tmp/bad.json"; do
    status=0
    # shellcheck disable=SC2086 # the argument lists split on purpose
    python3 "$compare" $args 2>"$tmp/err" || status=$?
    [ "$status" = 2 ] || fail "compare_reports.py $args: exit $status, expected 2"
    ! grep -q Traceback "$tmp/err" || fail "compare_reports.py $args: a traceback"
done
echo "compare_reports_test: ok"
