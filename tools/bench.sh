#!/usr/bin/env bash
# The kernel benchmarks of README's Performance section, from a Release build. Run on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup_deps.sh >/dev/null
tools/build.sh release >/dev/null
# The benchmarks live in build/release/tests/bench, not bin/: name the build's staged data for bench_fabric's profile.
export IBNETSIM_DATA_DIR="$PWD/build/release/share/ibnetsim"
echo "== (a) kernel alone, hold model, uniform 1 ns - 1 us increments"
build/release/tests/bench/bench_calendar "$@"
echo "== (b) kernel + SimGrid actors: 1 event in 10 / in 100 wakes an actor (100k pending, 16 actors)"
build/release/tests/bench/bench_coupled
echo "== (c) links and switches: 512-host leaf-spine, 4x EDR, uniform random 4 KiB packets at full load"
build/release/tests/bench/bench_fabric
echo "== (d) subnet manager: k-ary 3-tree, k = 20 (8,000 hosts, 1,200 switches): routing and credit-loop check"
build/release/tests/bench/bench_sm --k 20 --engine ftree
build/release/tests/bench/bench_sm --k 20 --engine minhop
echo "== (g) 8,192 fabric-level hosts, 3-level fat tree with 4x EDR links: uniform_random at 50 % load for 100 us"
build/release/bin/ibnetsim run scenarios/bench/uniform_random_8192.json | tail -n 3
