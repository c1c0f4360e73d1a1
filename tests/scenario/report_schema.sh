#!/usr/bin/env bash
# The JSON Schemas against what ibnetsim reads and writes: scenarios/default.json, the phold scenarios, the
# experiments' scenarios and tests/scenario/data/all_workloads.json (every workload type once) validate against
# scenarios/schema/scenario.schema.json (inline topologies also against topologies/schema/topology.schema.json),
# the experiments' sweeps against scenarios/schema/sweep.schema.json;
# every shipped topology (topologies/examples) and hardware profile (topologies/hardware) against its schema;
# their reports (--out), one with --timing, one cut short by duration_us and two interrupted, validate against
# scenarios/schema/report.schema.json; and scenarios the loader rejects (exit 2) are rejected by the schema too.
#   report_schema.sh IBNETSIM
# Exit 77 (ctest: skipped) with a message when python3 or its jsonschema module (python3-jsonschema) is missing.
set -u -o pipefail
ibnetsim=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Debian's own python3 and python3-jsonschema (4.10 on Debian 12) first: the schemas must hold with what users of
# the distribution have, not only with whatever newer jsonschema another python3 on PATH may carry.
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3
if ! command -v "$python" >/dev/null; then
    echo "report_schema: skipped: python3 not installed"
    exit 77
fi
if ! "$python" -c 'from jsonschema import Draft202012Validator' 2>/dev/null; then
    echo "report_schema: skipped: $python has no jsonschema 4 (Draft 2020-12) module (Debian: python3-jsonschema)"
    exit 77
fi
echo "report_schema: $python, jsonschema $("$python" -c 'import importlib.metadata as m; print(m.version("jsonschema"))')"

failures=0
run() { # report name, ibnetsim run arguments...
    local name=$1
    shift
    if ! "$ibnetsim" run "$@" --quiet --out "$work/$name.report.json" 2>"$work/$name.err"; then
        echo "report_schema: FAIL: ibnetsim run $* failed:"
        cat "$work/$name.err"
        failures=$((failures + 1))
    fi
}
all_workloads=$here/tests/scenario/data/all_workloads.json
run default "$here/scenarios/default.json"
run all_workloads "$all_workloads" --timing
# Stopped at 2 us: the patterns have posted their first messages and none has completed.
run all_workloads_cut_short "$all_workloads" --set /duration_us=2
# Faults: the spine link failure, shortened, with bit errors on a host link added.
run faults "$here/scenarios/experiments/spine_link_failure.json" --set /workloads/0/messages=200 \
    --set '/faults=[{"type": "link_down", "at_us": 10000, "link": "leaf0/5"},
                    {"type": "bit_errors", "at_us": 0, "link": "h3/1", "bit_error_rate": 1e-7}]'
# Congestion control (with timelines) and adaptive routing (also with a spine link failing), shortened.
run congestion "$here/scenarios/experiments/hot_spot_cc.json" --set /workloads/0/messages=100 \
    --set /workloads/1/messages=100
run adaptive "$here/scenarios/experiments/adaptive_routing.json" --set /workloads/0/messages=50
run adaptive_faults "$here/scenarios/experiments/adaptive_routing.json" --set /workloads/0/messages=50 \
    --set '/faults=[{"type": "link_down", "at_us": 5, "link": "leaf0/9"}]'
run phold "$here/scenarios/phold.json" --set /duration_us=2 --timing
run phold_programs "$here/scenarios/phold_programs.json" --set /duration_us=2
# Interrupted by SIGINT once its progress line shows it simulating: a partial report, exit 130.
interrupted() { # report name, ibnetsim run arguments...
    local name=$1
    shift
    "$ibnetsim" run "$@" --format csv --out "$work/$name.report.json" >/dev/null 2>"$work/$name.err" &
    local pid=$! waited=0 status=0
    until grep -qs "simulated" "$work/$name.err" || [ $waited -ge 1200 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    kill -INT $pid
    wait $pid || status=$?
    if [ $status -ne 130 ] || ! grep -q '"partial": true' "$work/$name.report.json"; then
        echo "report_schema: FAIL: ibnetsim run $* interrupted: exit $status, expected 130 and a partial report:"
        cat "$work/$name.err"
        failures=$((failures + 1))
    fi
}
interrupted write_bw_interrupted "$here/scenarios/experiments/write_bw_pair.json" --set /workloads/0/iterations=100000000
interrupted phold_interrupted "$here/scenarios/phold.json" --set /duration_us=100000000

"$python" - "$here" "$work" "$ibnetsim" <<'EOF' || failures=$((failures + 1))
import copy, glob, json, os, subprocess, sys
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

here, work, ibnetsim = sys.argv[1:4]
def load(path):
    with open(path) as f:
        return json.load(f)
def validator(path):
    schema = load(path)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)
scenario_schema = validator(os.path.join(here, "scenarios/schema/scenario.schema.json"))
report_schema = validator(os.path.join(here, "scenarios/schema/report.schema.json"))
topology_schema = validator(os.path.join(here, "topologies/schema/topology.schema.json"))

failures = 0
def check(v, document, what):
    global failures
    errors = list(v.iter_errors(document))
    if not errors:
        print(f"report_schema: ok: {what}")
        return
    failures += 1
    print(f"report_schema: FAIL: {what} does not validate:")
    # Each form is a branch of a top-level oneOf: show the errors of the branch with the fewest.
    shown = errors
    for e in errors:
        if e.validator == "oneOf" and e.context:
            branches = {}
            for sub in e.context:
                branches.setdefault(sub.relative_schema_path[0], []).append(sub)
            shown = min(branches.values(), key=len)
    for e in shown[:10]:
        print(f"  at /{'/'.join(str(p) for p in e.absolute_path)}: {best_match([e]).message[:300]}")

scenarios = [os.path.join(here, "scenarios/default.json"), os.path.join(here, "scenarios/phold.json"),
             os.path.join(here, "scenarios/phold_programs.json"),
             os.path.join(here, "tests/scenario/data/all_workloads.json")]
scenarios += sorted(glob.glob(os.path.join(here, "scenarios/bench/*.json")))
scenarios += sorted(p for p in glob.glob(os.path.join(here, "scenarios/experiments/*.json"))
                    if not p.endswith(".sweep.json"))
for path in scenarios:
    document = load(path)
    check(scenario_schema, document, os.path.relpath(path, here))
    if isinstance(document.get("topology"), dict):
        check(topology_schema, document["topology"], os.path.relpath(path, here) + " /topology")

# Every shipped topology and hardware profile against its schema.
for path in sorted(glob.glob(os.path.join(here, "topologies/examples/*.json"))):
    check(topology_schema, load(path), os.path.relpath(path, here))
profile_schema = validator(os.path.join(here, "topologies/schema/profile.schema.json"))
for path in sorted(glob.glob(os.path.join(here, "topologies/hardware/*.json"))):
    check(profile_schema, load(path), os.path.relpath(path, here))

sweep_schema = validator(os.path.join(here, "scenarios/schema/sweep.schema.json"))
for path in sorted(glob.glob(os.path.join(here, "scenarios/experiments/*.sweep.json"))):
    check(sweep_schema, load(path), os.path.relpath(path, here))

for path in sorted(glob.glob(os.path.join(work, "*.report.json"))):
    check(report_schema, load(path), "report of " + os.path.basename(path)[: -len(".report.json")])

# The loader and the schema agree: each of these is rejected by both.
base = load(os.path.join(here, "tests/scenario/data/all_workloads.json"))
def workload_of(type_):
    return next(i for i, w in enumerate(base["workloads"]) if w["type"] == type_)
def changed(index, **keys):
    s = copy.deepcopy(base)
    s["workloads"][index].update(keys)
    for k, v in keys.items():
        if v is None:
            del s["workloads"][index][k]
    return s
lat, atomic, bw, incast = (workload_of(t) for t in ("ib_write_lat", "ib_atomic_lat", "ib_write_bw", "incast"))
read_lat = workload_of("ib_read_lat")
atomic_bw = workload_of("ib_atomic_bw")
bad = {
    "unknown workload key": changed(lat, sizes_bytes=2),
    "size_bytes with all_sizes": changed(lat, all_sizes=True),
    "latency test with qps 2": changed(lat, qps=2),
    "latency test bidirectional": changed(lat, bidirectional=True),
    "all_sizes_max_bytes without all_sizes": changed(lat, all_sizes_max_bytes=64),
    "atomic of 16 bytes": changed(atomic, size_bytes=16),
    "inline on a READ test": changed(read_lat, inline_size_bytes=16),
    "mtu of 1000": changed(bw, mtu_bytes=1000),
    "tx_depth 0": changed(bw, tx_depth=0),
    "unknown workload type": changed(bw, type="ib_write_bandwidth"),
    "atomic bandwidth over UD": changed(atomic_bw, connection="UD"),
    "atomic bandwidth on 0 counters": changed(atomic_bw, counters=0),
    "counter stride not a multiple of 8": changed(atomic_bw, counter_stride_bytes=12),
    "atomic bandwidth with inline data": changed(atomic_bw, inline_size_bytes=8),
    "header-only WRITE": changed(bw, size_bytes=0),
    "incast without receiver": changed(incast, receiver=None),
    "size_bytes with size_distribution": changed(workload_of("permutation"), size_bytes=4096),
    "hot_fraction above 1": changed(workload_of("hot_spot"), hot_fraction=1.5),
    "offered_load 0": changed(workload_of("uniform_random"), offered_load=0),
    "no workloads": dict(base, workloads=[]),
    "unknown routing": dict(base, subnet_manager={"routing": "shortest"}),
    "lmc 8": dict(base, subnet_manager={"routing": "updn", "lmc": 8}),
    "unknown top-level key": dict(base, stop_us=5),
    "workload (phold key) in a fabric scenario": dict(base, workload={"type": "phold"}),
    "no seed": {k: v for k, v in base.items() if k != "seed"},
}
for name, document in bad.items():
    path = os.path.join(work, "bad.json")
    with open(path, "w") as f:
        json.dump(document, f)
    loader = subprocess.run([ibnetsim, "validate", path], capture_output=True, text=True)
    schema_ok = scenario_schema.is_valid(document)
    if loader.returncode == 2 and not schema_ok:
        print(f"report_schema: ok: rejected by loader and schema: {name}")
        continue
    failures += 1
    print(f"report_schema: FAIL: {name}: loader exit {loader.returncode} ({loader.stderr.strip()}), "
          f"schema {'accepts' if schema_ok else 'rejects'} it")
sys.exit(1 if failures else 0)
EOF

if [ $failures -ne 0 ]; then
    echo "report_schema: $failures failure(s)"
    exit 1
fi
echo "report_schema: all passed"
