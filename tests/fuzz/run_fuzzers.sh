#!/usr/bin/env bash
# Runs every libFuzzer harness of the input loaders (docs/testing.md, "Fuzzing") for SECONDS each, one after the
# other, each in one process, on a seed corpus made from the shipped files (tests/fuzz/make_corpus.py) in
# build/fuzz/corpus/<harness>/, which keeps what the fuzzer adds for the next run. Fails (exit 1) if any harness
# finds a crash, a sanitizer report, an unexpected exception, a broken round trip, a timeout or runs out of memory;
# the input that did it is saved under build/fuzz/artifacts/<harness>/ and the log is in build/fuzz/logs/.
# Build first: cmake --preset fuzz && cmake --build build/fuzz
# Usage: tests/fuzz/run_fuzzers.sh [SECONDS_PER_HARNESS (default 20)] [EXTRA LIBFUZZER ARGS ...]
#   FUZZERS="scenario sweep" tests/fuzz/run_fuzzers.sh 60     only some harnesses
#   tests/fuzz/run_fuzzers.sh 0 -runs=10000000                 a number of executions instead of a time
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-20}"
shift || true
build="${FUZZ_BUILD_DIR:-build/fuzz}"
harnesses="${FUZZERS:-scenario sweep topology profile ibnetdiscover opensm_dump guid2lid}"

for harness in $harnesses; do
  if [ ! -x "$build/fuzzers/fuzz_$harness" ]; then
    echo "run_fuzzers: no $build/fuzzers/fuzz_$harness; build first: cmake --preset fuzz && cmake --build $build" >&2
    exit 2
  fi
done
python3 tests/fuzz/make_corpus.py . "$build/corpus"
mkdir -p "$build/logs"

# Sanitizer reports end the run (the harnesses are built with -fno-sanitize-recover=undefined).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

failed=()
for harness in $harnesses; do
  case "$harness" in
    ibnetdiscover | opensm_dump) dict="tests/fuzz/$harness.dict" ;;
    guid2lid) dict="tests/fuzz/opensm_dump.dict" ;;
    *) dict="$build/corpus/json.dict" ;;
  esac
  artifacts="$build/artifacts/$harness"
  log="$build/logs/$harness.log"
  mkdir -p "$artifacts"
  time_args=()
  [ "$seconds" -gt 0 ] && time_args=(-max_total_time="$seconds")
  # -timeout: one input may take at most this long (the largest fabric a fuzz build generates, 1,000 nodes, is
  # routed and validated in under 5 s on a busy machine); -max_len: the shipped seeds are at most 48 KiB.
  status=0
  "$build/fuzzers/fuzz_$harness" "$build/corpus/$harness" -dict="$dict" "${time_args[@]}" -max_len=65536 -timeout=20 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$artifacts/" "$@" >"$log" 2>&1 || status=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")"
  corpus="$(find "$build/corpus/$harness" -type f | wc -l)"
  if [ "$status" -eq 0 ]; then
    printf 'run_fuzzers: %-13s ok: %s executions, %s/s, corpus %s\n' "$harness" "${runs:-?}" "${rate:-?}" "$corpus"
  else
    printf 'run_fuzzers: %-13s FAILED (exit %s): see %s and %s\n' "$harness" "$status" "$log" "$artifacts" >&2
    grep -E 'FINDING|ERROR: |SUMMARY|runtime error|Test unit written' "$log" | head -n 20 >&2 || true
    failed+=("$harness")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_fuzzers: FAILED: ${failed[*]}" >&2
  exit 1
fi
