#!/usr/bin/env bash
# Live cross-check against the real OpenSM: fabrics from `ibnetsim topo gen`, exported as ibsim net files, served
# by ibsim to OpenSM (tools/opensm/run_opensm.sh), then compared with our subnet manager by opensm_crosscheck:
# equal LIDs, equal hop counts, balance within one, and for every engine here equal LFTs (lash: also equal path
# SLs and layer count).
#   opensm_live.sh IBNETSIM OPENSM_CROSSCHECK
# Exit 77 (ctest: skipped) with a message when opensm, ibsim-utils or infiniband-diags are missing.
set -u -o pipefail
ibnetsim=$1
crosscheck=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
run_opensm=$here/tools/opensm/run_opensm.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for tool in ibsim opensm ibnetdiscover; do
    if ! command -v "$tool" >/dev/null; then
        echo "opensm_live: skipped: '$tool' not installed (Debian packages opensm, ibsim-utils, infiniband-diags)"
        exit 77
    fi
done

gen() { # name, generator arguments...
    local name=$1
    shift
    "$ibnetsim" topo gen "$@" -o "$work/$name.json" 2>/dev/null &&
        "$ibnetsim" topo export "$work/$name.json" --format ibsim -o "$work/$name.net"
}
gen ft2 fat-tree --k 4 --levels 2 || exit 1
gen ft3 fat-tree --k 4 --levels 3 || exit 1
gen mesh mesh --dims 3x3 --hosts-per-switch 1 || exit 1
gen ring torus --dims 6 --hosts-per-switch 1 || exit 1
gen torus torus --dims 3x3 --hosts-per-switch 1 || exit 1
gen dfly dragonfly --routers-per-group 2 --hosts-per-router 1 --global-links-per-router 1 || exit 1
gen ls leaf-spine --leaves 4 --spines 2 --hosts-per-leaf 3 --parallel-links 2 || exit 1
cp "$here/tools/opensm/netfiles/ft2u.net" "$work/ft2u.net" # uneven leaves: not a generator's shape

failures=0
check() { # case, net, engine, [--exact-lfts], [opensm args...]; SM=<node> puts the SM there (default h0)
    local case=$1 net=$2 engine=$3 exact=$4
    shift 4
    SM_NODE=${SM:-h0} "$run_opensm" "$work/$net.net" "$engine" "$work/$case" "$@" >"$work/$case.log" 2>&1
    local status=$?
    if [ $status -eq 77 ]; then
        echo "opensm_live: skipped: $(tail -1 "$work/$case.log")"
        exit 77
    fi
    if [ $status -ne 0 ]; then
        echo "FAIL $case: run_opensm.sh exited $status"
        tail -5 "$work/$case.log"
        failures=$((failures + 1))
        return
    fi
    "$crosscheck" $exact "$work/$case" || failures=$((failures + 1))
}
check ft2-minhop ft2 minhop --exact-lfts
check ft2-updn ft2 updn --exact-lfts
check ft2-ftree ft2 ftree --exact-lfts
check ft3-minhop ft3 minhop --exact-lfts
check ft3-updn ft3 updn --exact-lfts
check ft3-ftree ft3 ftree --exact-lfts
check ls-ftree ls ftree --exact-lfts
check ft2u-ftree ft2u ftree --exact-lfts
check mesh-minhop mesh minhop --exact-lfts
check mesh-dor mesh dor --exact-lfts
check ring-minhop ring minhop --exact-lfts
check ring-dor ring dor --exact-lfts
check ring-lash ring lash --exact-lfts
check torus-lash torus lash --exact-lfts
check dfly-lash dfly lash --exact-lfts
# The SM on a switch's management port 0: it takes LID 1 and discovery starts there.
SM=spine1 check ft2-minhop-sm-spine1 ft2 minhop --exact-lfts
SM=leaf2 check ft3-updn-sm-leaf2 ft3 updn --exact-lfts
echo "opensm_live: $failures failing case(s)"
[ $failures -eq 0 ]
