#!/usr/bin/env bash
# Runs the Python tour (scenarios/experiments/python_tour.py) into a temporary directory and checks what it wrote.
# Usage: run_tour.sh PYTHON TOUR.py
set -euo pipefail
out="$(mktemp -d "${TMPDIR:-/tmp}/ibnetsim-tour.XXXXXX")"
trap 'rm -rf "$out"' EXIT
"$1" "$2" "$out"
for f in latency_vs_size.csv latency_vs_size.png port_waits.png; do
  [[ -s "$out/$f" ]] || { echo "FAIL: the tour wrote no $f" >&2; exit 1; }
done
# 2 feature sets x 7 sizes x 2 seeds, one metric: a header and 28 rows.
[[ "$(wc -l <"$out/latency_vs_size.csv")" == 29 ]] || { echo "FAIL: latency_vs_size.csv is not 29 lines" >&2; exit 1; }
echo "python tour passed"
