#!/usr/bin/env bash
# Regenerate tools/opensm/golden/ by running tools/opensm/run_opensm.sh on every case below, then trimming
# the outputs to the files worth keeping (see tools/opensm/README.md, "Golden outputs").
#
#   tools/opensm/make_golden.sh [CASE...]      # default: every case; CASE is e.g. ft2-minhop
#
# Needs the Debian packages opensm, ibsim-utils and infiniband-diags (exit 77 otherwise).
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
nets=$here/netfiles
golden=$here/golden
me=${0##*/}

# case name | net file | engine | extra opensm args [| SM node, default h0]
# The *-sm-<switch> cases run the SM on a switch's management port 0 (SIM_HOST=<switch>): it takes LID 1 and
# discovery starts there, so they keep their own ibnetdiscover.txt.
cases=(
    "ft2-minhop|ft2|minhop|"
    "ft2-updn|ft2|updn|"
    "ft2-ftree|ft2|ftree|"
    "ft2-lash|ft2|lash|"
    "ft2-dfsssp|ft2|dfsssp|"
    "ft2-minhop-lmc1|ft2|minhop|--lmc 1"
    "ft2-updn-lmc1|ft2|updn|--lmc 1"
    "ft3-minhop|ft3|minhop|"
    "ft3-updn|ft3|updn|"
    "ft3-ftree|ft3|ftree|"
    "ft3-lash|ft3|lash|"
    "ft3-dfsssp|ft3|dfsssp|"
    "mesh3x3-minhop|mesh3x3|minhop|"
    "mesh3x3-dor|mesh3x3|dor|"
    "mesh3x3-updn|mesh3x3|updn|-a $nets/mesh3x3.roots"
    "mesh3x3-lash|mesh3x3|lash|"
    "mesh3x3-dfsssp|mesh3x3|dfsssp|"
    "ring6-minhop|ring6|minhop|"
    "ring6-dor|ring6|dor|"
    "ring6-updn|ring6|updn|-a $nets/ring6.roots"
    "ring6-lash|ring6|lash|"
    "ring6-dfsssp|ring6|dfsssp|"
    "ft2u-minhop|ft2u|minhop|"
    "ft2u-ftree|ft2u|ftree|"
    "torus4x4-minhop|torus4x4|minhop|"
    "torus4x4-lash|torus4x4|lash|"
    "dfly-minhop|dfly|minhop|"
    "dfly-lash|dfly|lash|"
    "ft2-minhop-sm-leaf0|ft2|minhop||leaf0"
    "ft2-updn-lmc1-sm-spine1|ft2|updn|--lmc 1|spine1"
    "ft3-minhop-sm-core2|ft3|minhop||core2"
    "ft3-updn-sm-agg5|ft3|updn||agg5"
    "mesh3x3-dor-sm-sw4|mesh3x3|dor||sw4"
    "ring6-minhop-sm-sw3|ring6|minhop||sw3"
)

# LID -> port of every switch, from opensm-lfts.dump ("<guid> <lid> <port>" lines, decimal, sorted).
lfts_of_osm() {
    awk '/^Unicast lids/ { match($0, /guid 0x[0-9a-f]+/); g = substr($0, RSTART + 5, RLENGTH - 5); next }
         /^0x[0-9a-f]+ [0-9]+ #/ { printf "%s %s %d\n", g, tolower($1), $2 + 0 }' "$1" | sort
}
# The same from dump_fts output (what ibsim's switches actually hold).
lfts_of_diag() {
    awk '/^Unicast lids/ { match($0, /guid 0x[0-9a-f]+/); g = substr($0, RSTART + 5, RLENGTH - 5); next }
         /^0x[0-9a-f]+ [0-9]+ :/ { printf "%s %s %d\n", g, tolower($1), $2 + 0 }' "$1" | sort
}
# Highest port number cabled in a net file (for trimming the SL2VL dump).
max_port() { awk -F'[][]' '/^\[[0-9]+\]/ { if ($2 + 0 > m) m = $2 + 0 } END { print m }' "$1"; }

selected=("$@")
failed=0
for c in "${cases[@]}"; do
    IFS='|' read -r name net engine extra sm_node <<<"$c"
    if [ ${#selected[@]} -gt 0 ] && [[ " ${selected[*]} " != *" $name "* ]]; then continue; fi
    raw=$(mktemp -d)
    echo "== $name"
    # shellcheck disable=SC2086  # extra is a word list on purpose
    SM_NODE=${sm_node:-h0} "$here/run_opensm.sh" "$nets/$net.net" "$engine" "$raw" $extra \
        >"$raw/stdout.txt" 2>"$raw/stderr.txt"
    rc=$?
    cat "$raw/stderr.txt" >&2
    if [ $rc = 77 ]; then rm -rf "$raw"; exit 77; fi
    if [ $rc != 0 ]; then echo "$me: $name failed (rc $rc)" >&2; failed=1; rm -rf "$raw"; continue; fi
    if ! diff <(lfts_of_osm "$raw/opensm-lfts.dump") <(lfts_of_diag "$raw/dump_lfts.txt") >/dev/null; then
        echo "$me: $name: dump_fts (switch contents) differs from opensm-lfts.dump" >&2; failed=1
    fi
    out=$golden/$name
    rm -rf "$out"; mkdir -p "$out"
    cp "$raw/opensm-lfts.dump" "$raw/run.txt" "$out/"
    # guid2lid: drop the blank separator lines, sort by LID.
    grep -v '^$' "$raw/guid2lid" | sort -k2,2 >"$out/guid2lid"
    # Log without the date/time/thread prefix and with the temporary path elided.
    sed -E 's/^[A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} [0-9]{6} \[[0-9A-F]+\] //; s#/tmp/run_opensm\.[A-Za-z0-9]+#<work>#g' \
        "$raw/opensm.log" >"$out/opensm.log"
    for f in opensm-updn-roots.dump opensm-ftree-ca-order.dump path_records.txt; do
        [ -f "$raw/$f" ] && cp "$raw/$f" "$out/"
    done
    if [ -f "$raw/opensm-sl2vl.dump" ]; then
        mp=$(max_port "$nets/$net.net")
        awk -v mp="$mp" '/^[0-9]+ +[0-9]+ +:/ { if ($1 + 0 > mp || $2 + 0 > mp) next } { print }' \
            "$raw/opensm-sl2vl.dump" >"$out/opensm-sl2vl.dump"
    fi
    case $name in
        *-minhop | *-lmc1 | *-sm-*)
            cp "$raw/ibnetdiscover.txt" "$raw/dump_lfts.txt" "$raw/opensm-subnet.lst" "$out/" ;;
        *)  # Same fabric, same LIDs as the <net>-minhop case: check instead of storing again.
            base=$golden/$net-minhop
            if [ -f "$base/guid2lid" ] && ! cmp -s "$base/guid2lid" "$out/guid2lid"; then
                echo "$me: $name: guid2lid differs from $net-minhop" >&2; failed=1
            fi
            if [ -f "$base/ibnetdiscover.txt" ] &&
               ! diff -q <(grep -v '^# Topology file' "$base/ibnetdiscover.txt") \
                         <(grep -v '^# Topology file' "$raw/ibnetdiscover.txt") >/dev/null; then
                echo "$me: $name: ibnetdiscover output differs from $net-minhop" >&2; failed=1
            fi ;;
    esac
    sed -n 's/^engine_used /  engine used: /p; s/^seconds_total /  seconds: /p' "$out/run.txt"
    rm -rf "$raw"
done
exit $failed
