#!/usr/bin/env bash
# Builds ibnetsim for long runs: Release with link-time optimisation and GCC's profile-guided optimisation, trained
# on the shipped scenarios, in build/fast (binary build/fast/bin/ibnetsim). It takes two builds and a training run,
# about twice as long as tools/build.sh release, and gives the same reports byte for byte (it checks so on the
# default scenario before it finishes). Measured figures: docs/performance.md ("Build: profile-guided and link-time
# optimisation"). Usage: tools/build_fast.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 0 ] || { echo "usage: tools/build_fast.sh (no arguments; the build goes to build/fast)" >&2; exit 2; }
command -v g++ >/dev/null || { echo "build_fast.sh: needs g++ (profile-guided optimisation is GCC's here)" >&2; exit 2; }
root=$PWD
build=$root/build/fast
profile=$build/profile
jobs="$(nproc)"

# Both phases compile the same sources in the same directory, so the profile's files (named after each object's
# path) match the objects of the second phase; -fprofile-partial-training keeps code the training never ran
# optimised for speed, as in the plain Release build, rather than for size.
configure() {
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON \
    -DCMAKE_CXX_FLAGS="$1" -DCMAKE_EXE_LINKER_FLAGS="$2" -DCMAKE_MODULE_LINKER_FLAGS="$2" \
    -DCMAKE_SHARED_LINKER_FLAGS="$2" >/dev/null
  cmake --build "$build" -j "$jobs" --target ibnetsim ibnetsim_simgrid
}

echo "== build_fast: instrumented build"
rm -rf "$profile"
configure "-fprofile-generate -fprofile-update=single -fprofile-dir=$profile" "-fprofile-generate"

echo "== build_fast: training on the shipped scenarios"
# Every layer the runs exercise: full hosts (programs, verbs, HCAs, PCIe) and fabric-level hosts, perftests and
# patterns, faults with the SM's reaction, congestion control and adaptive routing, PHOLD.
train=$(mktemp -d)
trap 'rm -rf "$train"' EXIT
i=0
for args in "scenarios/default.json" \
  "scenarios/experiments/uniform_random.json" \
  "scenarios/experiments/uniform_random.json --set /host_model=\"fabric\"" \
  "scenarios/experiments/write_rate.json" \
  "scenarios/experiments/write_lat.json" \
  "scenarios/experiments/spine_link_failure.json" \
  "scenarios/experiments/hot_spot_cc.json" \
  "scenarios/experiments/adaptive_routing.json" \
  "scenarios/phold.json"; do
  i=$((i + 1))
  # shellcheck disable=SC2086 # word splitting of the argument lists is intended
  "$build/bin/ibnetsim" run $args --quiet --format json --out "$train/$i.json"
done

echo "== build_fast: optimised build"
configure "-fprofile-use -fprofile-partial-training -Wno-missing-profile -fprofile-dir=$profile" ""

# The optimisations must not change a result: the default scenario's report, performance fields aside, against the
# instrumented build's (which is compiled without them).
"$build/bin/ibnetsim" run scenarios/default.json --quiet --format json --out "$train/check.json"
if ! tools/compare_reports.py "$train/1.json" "$train/check.json"; then
  echo "build_fast.sh: the optimised build's report differs from the instrumented build's on scenarios/default.json" >&2
  exit 1
fi
echo "== build_fast: $build/bin/ibnetsim (reports identical to the instrumented build's on scenarios/default.json)"
