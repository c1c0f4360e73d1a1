#!/usr/bin/env bash
# The installed ibnetsim is relocatable and reads its data relative to itself, never from the source tree:
# installs BUILD into a temporary prefix, moves the prefix, and from another directory checks
#  - a scenario shipped in the moved prefix runs (exit 0, a figure in the report);
#  - `params switch --profile NAME` reads NAME from the moved prefix's share/ibnetsim;
#  - --data-dir and IBNETSIM_DATA_DIR naming a copy of the data with an edited profile take effect, also in the child
#    processes of `sweep`;
#  - an unusable data directory (missing, without topologies/hardware, or no share/ next to the executable) is exit
#    2 with a message naming the directory and its source, and commands needing no data still work;
#  - a CMake project finds the moved prefix with find_package(ibnetsim), links ibnetsim::scenario and runs a
#    scenario through ib::scenario::load_scenario and ib::scenario::run;
#  - with PYTHON and PYTHON_DIR (the Python module was built): the moved prefix's package imports, finds its data
#    in the moved prefix and runs a shipped scenario to the figures the moved binary gives.
# Everything is written under a mktemp directory.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR CXX [SANITIZE [PYTHON PYTHON_DIR]]
set -euo pipefail
build="$1"
source_dir="$2"
cxx="$3"
sanitize="${4:-OFF}"
python="${5:-}"
python_dir="${6:-}"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/ibnetsim-install-test.XXXXXX")"
tmp="$(cd "$tmp" && pwd -P)" # as /proc/self/exe shows it: symbolic links resolved
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# expect CODE PATTERN CMD...: runs CMD (output in $tmp/out, $tmp/err); its exit code must be CODE and its stdout
# or stderr must contain PATTERN (a fixed string; "" for any output).
expect() {
  local code="$1" pattern="$2"
  shift 2
  local got=0
  "$@" >"$tmp/out" 2>"$tmp/err" || got=$?
  if [[ "$got" != "$code" ]] || { [[ -n "$pattern" ]] && ! grep -qF -- "$pattern" "$tmp/out" "$tmp/err"; }; then
    echo "--- stdout" >&2
    head -c 3000 "$tmp/out" >&2
    echo "--- stderr" >&2
    head -c 3000 "$tmp/err" >&2
    fail "'$*' gave exit $got (expected $code) or lacks '$pattern'"
  fi
}

echo "== install into a temporary prefix, then move it"
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
for f in bin/ibnetsim share/ibnetsim/topologies/hardware/switch-ib2-edr.json share/ibnetsim/scenarios/default.json \
  share/ibnetsim/topologies/schema/profile.schema.json share/ibnetsim/topologies/examples/ft2-16.json \
  share/man/man1/ibnetsim.1 include/ibnetsim/sim/profile.h include/ibnetsim/models/scenario/run.h \
  lib/libibnetsim_scenario.a lib/cmake/ibnetsim/ibnetsimConfig.cmake; do
  [[ -e "$tmp/prefix/$f" ]] || fail "the install lacks $f"
done
mv "$tmp/prefix" "$tmp/moved"
moved="$tmp/moved"
ibnetsim="$moved/bin/ibnetsim"
data="$moved/share/ibnetsim"
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
unset IBNETSIM_DATA_DIR

echo "== the moved binary runs a shipped scenario from another directory"
expect 0 "config digest" "$ibnetsim" run "$data/scenarios/default.json" --set /workloads/0/iterations=20 \
  --set /workloads/1/messages=1
grep -qE "simulated [0-9]+\.[0-9]+ us" "$tmp/out" || fail "no simulated time in the report"

echo "== profiles come from the moved prefix"
expect 0 "file: $data/topologies/hardware/switch-ib2-edr.json" "$ibnetsim" params switch --profile switch-ib2-edr
grep -qE "port_to_port_latency_ns +90 " "$tmp/out" || fail "the shipped latency is not 90 ns"
! grep -qF "$source_dir" "$tmp/out" || fail "params names the source tree"
expect 0 "switch-ib2-edr" "$ibnetsim" params

echo "== --data-dir and IBNETSIM_DATA_DIR select a copy with an edited profile"
cp -r "$data" "$tmp/copy"
python3 - "$tmp/copy/topologies/hardware/switch-ib2-edr.json" <<'EOF'
import json, sys
path = sys.argv[1]
profile = json.load(open(path))
profile["parameters"]["port_to_port_latency_ns"] = {"value": 123, "source": "edited copy"}
json.dump(profile, open(path, "w"), indent=2)
EOF
edited="file: $tmp/copy/topologies/hardware/switch-ib2-edr.json"
expect 0 "$edited" "$ibnetsim" --data-dir "$tmp/copy" params switch --profile switch-ib2-edr
grep -qE "port_to_port_latency_ns +123 +ns +edited copy" "$tmp/out" || fail "--data-dir: the edit did not take effect"
expect 0 "$edited" "$ibnetsim" params switch --profile switch-ib2-edr --data-dir "$tmp/copy"
expect 0 "$edited" env IBNETSIM_DATA_DIR="$tmp/copy" "$ibnetsim" params switch --profile switch-ib2-edr
grep -qE "port_to_port_latency_ns +123 " "$tmp/out" || fail "IBNETSIM_DATA_DIR: the edit did not take effect"
expect 0 "$edited" env IBNETSIM_DATA_DIR="$tmp/nowhere" "$ibnetsim" --data-dir "$tmp/copy" params switch \
  --profile switch-ib2-edr
# The validation digest covers the profiles: the edited copy gives another.
expect 0 "config digest" "$ibnetsim" validate "$data/scenarios/default.json"
shipped_digest="$(cat "$tmp/out")"
expect 0 "config digest" "$ibnetsim" --data-dir "$tmp/copy" validate "$data/scenarios/default.json"
[[ "$(cat "$tmp/out")" != "$shipped_digest" ]] || fail "the edited profile did not change the config digest"
# sweep runs its points as child processes: they read the same data directory.
expect 0 "" "$ibnetsim" --data-dir "$tmp/copy" sweep "$data/scenarios/default.json" --sweep /seed=1 \
  --set /workloads/0/iterations=20 --set /workloads/1/messages=1 --out "$tmp/sweep" --jobs 1 --quiet
grep -rqF '"edited copy"' "$tmp/sweep" || fail "sweep's child runs did not read the --data-dir profile"

echo "== an unusable data directory is exit 2, saying which, from where, and how to set one"
expect 2 "'$tmp/missing' (from --data-dir) does not exist" "$ibnetsim" --data-dir "$tmp/missing" params switch \
  --profile switch-ib2-edr
grep -qF "IBNETSIM_DATA_DIR" "$tmp/err" || fail "the message does not say how to set the data directory"
mkdir "$tmp/empty"
expect 2 "'$tmp/empty' (from the environment variable IBNETSIM_DATA_DIR) has no topologies/hardware" \
  env IBNETSIM_DATA_DIR="$tmp/empty" "$ibnetsim" run "$data/scenarios/default.json"
mkdir -p "$tmp/lonely/bin"
cp "$ibnetsim" "$tmp/lonely/bin/"
expect 2 "'$tmp/lonely/share/ibnetsim' (from next to the executable $tmp/lonely/bin/ibnetsim" \
  "$tmp/lonely/bin/ibnetsim" params switch --profile switch-ib2-edr
expect 2 "--data-dir needs a directory" "$ibnetsim" params --data-dir
# What needs no data works without it: the version, a profile named by path, a phold scenario.
expect 0 "ibnetsim 0.1.0" "$tmp/lonely/bin/ibnetsim" --data-dir "$tmp/missing" --version
expect 0 "port_to_port_latency_ns" "$tmp/lonely/bin/ibnetsim" params switch \
  --profile "$data/topologies/hardware/switch-ib2-edr.json"
expect 0 "" "$tmp/lonely/bin/ibnetsim" run "$data/scenarios/phold.json" --set /duration_us=1 --quiet

echo "== find_package(ibnetsim) from the moved prefix"
consumer_flags=()
if [[ "$sanitize" == ON ]]; then
  consumer_flags=(-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined)
fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$source_dir/tests/install/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$moved" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "${consumer_flags[@]}" \
  >"$tmp/consumer.log" 2>&1 || {
  cat "$tmp/consumer.log" >&2
  fail "the consumer project does not configure"
}
grep -qF "$moved/lib/cmake/ibnetsim" "$tmp/consumer/CMakeCache.txt" || fail "find_package did not use the moved prefix"
cmake --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 || {
  cat "$tmp/consumer.log" >&2
  fail "the consumer project does not build"
}
expect 0 "consumer: simulated_time_us" env IBNETSIM_DATA_DIR="$data" "$tmp/consumer/consumer" \
  "$data/scenarios/default.json" /workloads/0/iterations=20 /workloads/1/messages=1
if [[ -n "$python" ]]; then
  echo "== the Python module from the moved prefix"
  [[ -e "$moved/$python_dir/ibnetsim/__init__.py" ]] || fail "the install lacks $python_dir/ibnetsim"
  expect 0 "" "$ibnetsim" run "$data/scenarios/default.json" --set /workloads/0/iterations=20 \
    --set /workloads/1/messages=1 --format csv
  cp "$tmp/out" "$tmp/cli.csv"
  cat >"$tmp/check.py" <<'EOF'
import csv, sys
import ibnetsim
assert ibnetsim.data_dir().endswith("/moved/share/ibnetsim"), ibnetsim.data_dir()
report = ibnetsim.run(ibnetsim.data_path("scenarios/default.json"),
                      {"/workloads/0/iterations": 20, "/workloads/1/messages": 1})
row = next(csv.DictReader(open(sys.argv[1])))
for name, value in ibnetsim.metrics(report).items():
    assert float(row[name]) == float(value), (name, row[name], value)
print("same figures")
EOF
  expect 0 "same figures" env PYTHONPATH="$moved/$python_dir" PYTHONDONTWRITEBYTECODE=1 "$python" "$tmp/check.py" \
    "$tmp/cli.csv"
fi
echo "install test passed"
