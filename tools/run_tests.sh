#!/usr/bin/env bash
# Every test: install what is missing, build Release and ASan+UBSan, run the whole ctest suite in both, then build
# the libFuzzer harnesses and run each briefly. .ci/run calls this. Benchmarks run only as smoke tests here;
# tools/bench.sh measures. FUZZ_SECONDS (default 15) sets each harness's run.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup_deps.sh
jobs="$(nproc)"

echo "== Release build and tests"
tools/build.sh release
tools/check_test_discovery.sh build/release
ctest --preset release -j "$jobs"

echo "== ASan+UBSan build and tests"
tools/build.sh asan
ctest --preset asan -j "$jobs" --label-exclude bench

echo "== libFuzzer harnesses (clang, ASan+UBSan): ${FUZZ_SECONDS:-15} s each"
tools/build.sh fuzz
tests/fuzz/run_fuzzers.sh "${FUZZ_SECONDS:-15}"
