#!/usr/bin/env bash
# Every test: install what is missing, build Release and ASan+UBSan, run the whole ctest suite in both.
# .ci/run calls this. Benchmarks run only as smoke tests here; tools/bench.sh measures.
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
