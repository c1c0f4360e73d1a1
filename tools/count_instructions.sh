#!/usr/bin/env bash
# Compares two ibnetsim builds by what they execute rather than by the clock: instructions, first-level data cache
# misses and data misses in a 1 MiB, 8-way last level (a stand-in for one core's L2), under valgrind's cachegrind.
# The counts hardly move between runs, so a 1-2 % change shows on a machine whose wall times vary by 2x; what they
# miss (branch prediction, memory latency, the real cache hierarchy) is why the interleaved timings in
# docs/performance.md stay the reference. Both builds run at once, one per core; reports are compared too.
#
# usage: tools/count_instructions.sh OLD_BINARY NEW_BINARY [ibnetsim run arguments...]
#   default run: the side-by-side permutation (bench/ns3) at 100 messages per host, 25,600 messages.
#   COUNT_LL="bytes,ways,line" overrides the last level (cachegrind's --LL).
set -euo pipefail
usage="usage: count_instructions.sh OLD_BINARY NEW_BINARY [ibnetsim run arguments...]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
old=$1 new=$2
shift 2
for binary in "$old" "$new"; do
  [ -x "$binary" ] || { echo "count_instructions.sh: $binary is not an executable ibnetsim; $usage" >&2; exit 2; }
done
here=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 0 ]; then
  set -- "$here/../shared/bench/ns3/permutation_256.json" --set /workloads/0/messages=100
  [ -f "$1" ] || { echo "count_instructions.sh: no default scenario at $1; give run arguments" >&2; exit 2; }
fi
command -v valgrind >/dev/null || { echo "count_instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
ll=${COUNT_LL:-1048576,8,64}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pids=()
for side in old new; do
  binary=$old
  [ "$side" = new ] && binary=$new
  valgrind --tool=cachegrind --cache-sim=yes --LL="$ll" --cachegrind-out-file="$tmp/$side.cg" \
    "$binary" run "$@" --quiet --format json --out "$tmp/$side.json" >"$tmp/$side.log" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
if [ "$status" != 0 ]; then
  # ibnetsim's own words, without valgrind's summary; its exit code passes on (2: bad input).
  echo "count_instructions.sh: a run failed (exit $status):" >&2
  grep -hvE '^(==|--)[0-9]*(==|--)' "$tmp/old.log" "$tmp/new.log" | sort -u | head -n 10 >&2
  exit "$status"
fi
python3 - "$tmp" <<'PY'
import json, re, sys
tmp = sys.argv[1]
def totals(side):
    # cachegrind's summary line: I refs, then D1 misses and LLd misses as "N (R rd + W wr)".
    text = open(f"{tmp}/{side}.log").read()
    num = lambda label: int(re.search(label + r":\s+([\d,]+)", text).group(1).replace(",", ""))
    return {"instructions": num(r"I\s+refs"), "D1 data misses": num(r"D1\s+misses"), "LL data misses": num(r"LLd misses")}
reports = [json.load(open(f"{tmp}/{s}.json")) for s in ("old", "new")]
messages = 0  # of the pattern workloads (perftest workloads report per size, with no message count)
for w in reports[1]["results"].get("workloads", {}).values():
    results = w.get("results")
    messages += results.get("messages", 0) if isinstance(results, dict) else 0
a, b = totals("old"), totals("new")
print(f"{'':18}{'old':>16}{'new':>16}{'new/old':>10}" + ("   new per message" if messages else ""))
for key in a:
    per = f"{b[key] / messages:>18,.0f}" if messages else ""
    print(f"{key:18}{a[key]:>16,}{b[key]:>16,}{b[key] / a[key]:>10.4f}{per}")
PY
# Event and wake-up counts are what a change to the kernel's use may save; every other figure must stay.
if "$here/tools/compare_reports.py" --events "$tmp/old.json" "$tmp/new.json" 2>"$tmp/compare.txt"; then
  echo "reports: identical (performance fields and event counts aside)"
else
  echo "reports: DIFFERENT ($(sed 's/.*differ at //' "$tmp/compare.txt"))"
fi
