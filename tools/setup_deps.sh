#!/usr/bin/env bash
# Installs ibnetsim's build and test dependencies on Debian 12 when any is missing. Needs root (or sudo) and apt.
set -euo pipefail

# opensm, ibsim-utils and infiniband-diags run the real OpenSM on a simulated fabric for the cross-check tests;
# python3-jsonschema checks scenarios and reports against scenarios/schema (tests/scenario/report_schema.sh);
# python3-matplotlib draws sweep plots (tools/plot_sweep.py); clang and libclang-rt-14-dev (libFuzzer and the
# sanitizer runtimes) build the fuzz harnesses (tests/fuzz); python3-dev and pybind11-dev build the Python module
# (tools/python), whose tables need python3-pandas.
packages=(g++ cmake make pkg-config libsimgrid-dev libboost-program-options-dev nlohmann-json3-dev catch2 python3
          python3-jsonschema python3-matplotlib opensm ibsim-utils infiniband-diags clang libclang-rt-14-dev
          python3-dev pybind11-dev python3-pandas)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "[setup] all dependencies present"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "[setup] need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
echo "[setup] installing: ${missing[*]}"
"${sudo_cmd[@]}" apt-get update
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
