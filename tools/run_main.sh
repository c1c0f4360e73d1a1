#!/usr/bin/env bash
# The README's main job: install what is missing, build Release, run scenarios/default.json and print its report.
# Extra arguments go to `ibnetsim run` (e.g. --format json, --set /duration_us=100).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup_deps.sh
tools/build.sh release
exec build/release/bin/ibnetsim run scenarios/default.json "$@"
