#!/usr/bin/env bash
# Fails when ctest knows fewer Catch2 test cases than the test executables hold: CMake's list handling silently
# drops every test after a name with an unbalanced '[' or ']' and splits names at ';', so names must avoid
# both. Usage: BUILD_DIR
set -euo pipefail
build="${1:?build directory}"
listed=0
for exe in $(find "$build" -type f -perm -u+x \( -name 'unit_*' -o -name 'scenario_tests' \)); do
  # Catch2 v2 exits with the number of tests listed, so its status is not an error here.
  names=$("$exe" --list-test-names-only || true)
  listed=$((listed + $(grep -c . <<<"$names")))
done
known=$(ctest --test-dir "$build" -N -L 'unit|scenario' | sed -n 's/^Total Tests: //p')
if [ "$listed" -ne "$known" ]; then
  echo "[discovery] ctest knows $known Catch2 test cases but the executables hold $listed (a name with [, ] or ;?)" >&2
  exit 1
fi
echo "[discovery] all $known Catch2 test cases are registered with ctest"
