#!/usr/bin/env bash
# Run the real OpenSM (Debian 12: opensm 3.3.23) on a fabric simulated by ibsim (ibsim-utils 0.10),
# without InfiniBand hardware, and collect its results in OUTDIR. See tools/opensm/README.md.
#
#   tools/opensm/run_opensm.sh NETFILE ENGINE OUTDIR [extra opensm args...]
#
# ENGINE is OpenSM's routing_engine value (minhop, updn, ftree, dor, lash, dfsssp, sssp, ...; a comma list is
# allowed). Extra arguments go to opensm's command line after `-F <generated config>` and so override it
# (e.g. `--lmc 1`, `-a roots.guids`); arguments naming existing files relative to the caller's directory are
# made absolute, because every process here runs in a private temporary directory.
#
# Environment (all optional):
#   SM_NODE        net-file node name the SM (and the diag tools) attach to; default: the first Hca/Ca in NETFILE
#   OSM_TIMEOUT    seconds to wait for "SUBNET UP" (default 60)
#   OSM_LOG_FLAGS  OpenSM log_flags (default 0x43 = ERROR|INFO|ROUTING; ROUTING is what enables the dumps)
#   OSM_QOS        TRUE/FALSE for the qos key (default: TRUE for lash, dfsssp, sssp and nue, else FALSE)
#   RUN_DIAGS      1 (default) runs ibnetdiscover and dump_fts after SUBNET UP; 0 skips them
#   PATH_RECORDS   1 also queries one SA PathRecord per ordered host pair (SL/path per pair) into
#                  OUTDIR/path_records.txt; default 1 for lash/dfsssp/sssp/nue, 0 otherwise
#   KEEP_WORKDIR   1 keeps the temporary directory (its path is printed)
#
# Exit status: 0 on success, 77 if ibsim/opensm/umad2sim are not installed (skip), 1 on any failure
# (message on stderr; OUTDIR keeps what was produced, including opensm.log and ibsim.log).
set -u -o pipefail

me=${0##*/}
die() { echo "$me: $*" >&2; exit 1; }

if [ $# -lt 3 ]; then
    echo "usage: $me NETFILE ENGINE OUTDIR [extra opensm args...]" >&2
    exit 2
fi
netfile=$1 engine=$2 outdir=$3
shift 3

# ---- prerequisites (exit 77 = skip) ---------------------------------------------------------------
UMAD2SIM=${UMAD2SIM:-}
if [ -z "$UMAD2SIM" ]; then
    for c in /usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so /usr/lib/*/umad2sim/libumad2sim.so \
             /usr/lib/umad2sim/libumad2sim.so /usr/lib64/umad2sim/libumad2sim.so \
             /usr/local/lib/umad2sim/libumad2sim.so; do
        [ -f "$c" ] && { UMAD2SIM=$c; break; }
    done
fi
for tool in ibsim opensm; do
    if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
        echo "$me: skip: '$tool' not found (apt-get install -y opensm ibsim-utils infiniband-diags)" >&2
        exit 77
    fi
done
if [ -z "$UMAD2SIM" ] || [ ! -f "$UMAD2SIM" ]; then
    echo "$me: skip: libumad2sim.so not found (apt-get install -y ibsim-utils)" >&2
    exit 77
fi
export PATH="$PATH:/usr/sbin:/sbin"
have_diags=1
for tool in ibnetdiscover dump_fts saquery; do
    command -v "$tool" >/dev/null 2>&1 || have_diags=0
done

[ -f "$netfile" ] || die "net file '$netfile' not found"
mkdir -p "$outdir" || die "cannot create '$outdir'"
netfile=$(cd "$(dirname "$netfile")" && pwd)/$(basename "$netfile")
outdir=$(cd "$outdir" && pwd)
caller_dir=$PWD

timeout_s=${OSM_TIMEOUT:-60}
log_flags=${OSM_LOG_FLAGS:-0x43}
case ",$engine," in
    *,lash,* | *,dfsssp,* | *,sssp,* | *,nue,*) qos_default=TRUE; pr_default=1 ;;
    *) qos_default=FALSE; pr_default=0 ;;
esac
qos=${OSM_QOS:-$qos_default}
path_records=${PATH_RECORDS:-$pr_default}
run_diags=${RUN_DIAGS:-1}

# Node the SM attaches to (ibsim's SIM_HOST): first Hca/Ca record of the net file unless SM_NODE is set.
sm_node=${SM_NODE:-$(awk '/^(Hca|Ca)[ \t]/ { if (match($0, /"[^"]*"/)) { print substr($0, RSTART + 1, RLENGTH - 2); exit } }' "$netfile")}
[ -n "$sm_node" ] || die "no Hca/Ca node in '$netfile' and SM_NODE not set"

grep -q "^[^#]*\"$sm_node\"" "$netfile" || die "SM node '$sm_node' not in '$netfile'"

# Extra args: make existing relative file names absolute.
extra=()
for a in "$@"; do
    if [ "${a#-}" = "$a" ] && [ "${a#/}" = "$a" ] && [ -e "$caller_dir/$a" ]; then
        extra+=("$caller_dir/$a")
    else
        extra+=("$a")
    fi
done

# ---- private working directory and socket name --------------------------------------------------
# ibsim and umad2sim talk over UNIX datagram sockets in the *abstract* namespace named
# "<IBSIM_SOCKNAME>:ctl", ":in<pid>", ":out<n>" (default base name "sim"); a unique IBSIM_SOCKNAME per run
# isolates concurrent runs. umad2sim also writes a fake sysfs tree ./sys-<pid> into the current directory,
# and OpenSM writes its cache (guid2lid...) into OSM_CACHE_DIR, so every process runs inside $work.
work=$(mktemp -d "${TMPDIR:-/tmp}/run_opensm.XXXXXX") || die "mktemp failed"
export IBSIM_SOCKNAME="ibnetsim-$$-${RANDOM}"
export OSM_CACHE_DIR="$work/cache" OSM_TMP_DIR="$work"
export SIM_HOST="$sm_node"
unset IBSIM_SERVER_NAME IBSIM_SERVER_PORT SIM_SET_ISSM
mkdir -p "$OSM_CACHE_DIR"

ibsim_pid='' osm_pid=''
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    for pid in $osm_pid $ibsim_pid; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
        fi
    done
    if [ "${KEEP_WORKDIR:-0}" = 1 ]; then
        echo "$me: work directory kept: $work" >&2
    else
        rm -rf "$work"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

cd "$work" || die "cannot cd to $work"
t_start=$(date +%s.%N)
rm -f "$outdir"/opensm-*.dump "$outdir"/opensm.fdbs "$outdir"/opensm.mcfdbs "$outdir"/opensm-subnet.lst \
      "$outdir"/guid2lid "$outdir"/opensm.log "$outdir"/ibsim.log "$outdir"/ibnetdiscover.txt \
      "$outdir"/dump_lfts.txt "$outdir"/path_records.txt "$outdir"/opensm.conf "$outdir"/run.txt

# ---- ibsim ---------------------------------------------------------------------------------------
# -s: start the fabric at once; -n: no console (stdin is not read).
ibsim -s -n "$netfile" >"$outdir/ibsim.log" 2>&1 </dev/null &
ibsim_pid=$!
ready=0
for _ in $(seq 100); do
    kill -0 "$ibsim_pid" 2>/dev/null || break
    if grep -q "@$IBSIM_SOCKNAME:ctl\$" /proc/net/unix 2>/dev/null ||
       grep -q "Network simulator ready" "$outdir/ibsim.log" 2>/dev/null; then
        ready=1; break
    fi
    sleep 0.1
done
if [ $ready != 1 ]; then
    tail -5 "$outdir/ibsim.log" >&2
    die "ibsim did not become ready on '$netfile' (see $outdir/ibsim.log)"
fi

# ---- OpenSM configuration ------------------------------------------------------------------------
# Template with built-in defaults only (-F /dev/null keeps /etc/opensm/opensm.conf out), then every key
# that matters is set explicitly.
conf="$work/opensm.conf"
opensm -F /dev/null -c "$conf" >/dev/null 2>&1 || die "opensm -c failed"
set_key() { # KEY VALUE: replace the unique "KEY value" line of the template
    local n
    n=$(grep -c "^$1 " "$conf")
    [ "$n" = 1 ] || die "config key '$1' found $n times in the opensm -c template"
    awk -v k="$1" -v v="$2" '$1 == k { print k " " v; next } { print }' "$conf" >"$conf.new" &&
        mv "$conf.new" "$conf"
}
set_key routing_engine "$engine"
set_key log_file "$outdir/opensm.log"
set_key log_flags "$log_flags"
set_key force_log_flush TRUE
set_key accum_log_file FALSE
set_key dump_files_dir "$outdir"
set_key sweep_interval 0            # one sweep; no periodic re-sweeps while the diag tools run
set_key reassign_lids FALSE
set_key honor_guid2lid_file FALSE
set_key lmc 0
set_key qos "$qos"
set_key partition_config_file "$work/partitions.conf"      # absent: default partition only
set_key qos_policy_file "(null)"        # no QoS policy file: default QoS levels (an empty file is an error)
set_key prefix_routes_file "$work/prefix-routes.conf"      # absent
set_key per_module_logging_file "$work/per-module-logging.conf"
set_key torus_config "$work/torus-2QoS.conf"
set_key daemon FALSE
set_key console off
cp "$conf" "$outdir/opensm.conf"

# ---- OpenSM --------------------------------------------------------------------------------------
# Not --once: the SM stays up (no sweeps) so that the SA can answer PathRecord queries; it is stopped
# with SIGTERM after the diagnostics.
LD_PRELOAD="$UMAD2SIM" opensm -F "$conf" "${extra[@]}" >"$work/opensm.stdout" 2>&1 </dev/null &
osm_pid=$!
up=0
deadline=$(( $(date +%s) + timeout_s ))
while [ "$(date +%s)" -lt "$deadline" ]; do
    if grep -q "SUBNET UP" "$outdir/opensm.log" 2>/dev/null; then up=1; break; fi
    kill -0 "$osm_pid" 2>/dev/null || break
    sleep 0.05
done
t_up=$(date +%s.%N)
if [ $up != 1 ]; then
    cat "$work/opensm.stdout" >&2
    grep -E "ERR|Errors|error" "$outdir/opensm.log" 2>/dev/null | tail -5 >&2
    if kill -0 "$osm_pid" 2>/dev/null; then
        die "OpenSM did not reach SUBNET UP within ${timeout_s}s (engine '$engine'; see $outdir/opensm.log)"
    fi
    die "OpenSM exited before SUBNET UP (engine '$engine'; see $outdir/opensm.log)"
fi
cp "$OSM_CACHE_DIR/guid2lid" "$outdir/guid2lid" 2>/dev/null || echo "$me: warning: no guid2lid written" >&2

# ---- diagnostics against the configured fabric -----------------------------------------------------
diag() { LD_PRELOAD="$UMAD2SIM" timeout 60 "$@"; }
if [ "$run_diags" = 1 ] && [ $have_diags = 1 ]; then
    diag ibnetdiscover >"$outdir/ibnetdiscover.txt" 2>"$work/diag.err" ||
        { cat "$work/diag.err" >&2; die "ibnetdiscover failed"; }
    diag dump_fts >"$outdir/dump_lfts.txt" 2>"$work/diag.err" ||
        { cat "$work/diag.err" >&2; die "dump_fts failed"; }
    if [ "$path_records" = 1 ]; then
        # One PathRecord per ordered pair of CA ports (base LIDs from guid2lid via ibnetdiscover's CA list).
        mapfile -t ca_lids < <(awk '/^Ca[ \t]/ { getline; if (match($0, /# lid [0-9]+/)) print substr($0, RSTART + 6, RLENGTH - 6) }' \
            "$outdir/ibnetdiscover.txt" | sort -n)
        : >"$outdir/path_records.txt"
        pr_fail=0
        for s in "${ca_lids[@]}"; do
            for d in "${ca_lids[@]}"; do
                [ "$s" = "$d" ] && continue
                sl=$(LD_PRELOAD="$UMAD2SIM" timeout 10 saquery -p --slid "$s" --dlid "$d" 2>/dev/null |
                     awk '/^[ \t]*sl\.+/ { sub(/^[ \t]*sl\.+/, ""); print }')
                if [ -z "$sl" ]; then
                    pr_fail=$((pr_fail + 1))
                    [ $pr_fail -le 3 ] || die "saquery PathRecord failed $pr_fail times (last: slid $s dlid $d)"
                fi
                echo "slid $s dlid $d sl ${sl:-?}" >>"$outdir/path_records.txt"
            done
        done
    fi
elif [ "$run_diags" = 1 ]; then
    echo "$me: warning: infiniband-diags missing; no ibnetdiscover.txt / dump_lfts.txt" >&2
fi

kill -TERM "$osm_pid" 2>/dev/null
for _ in $(seq 100); do kill -0 "$osm_pid" 2>/dev/null || break; sleep 0.05; done
t_end=$(date +%s.%N)

for f in opensm-lfts.dump opensm-subnet.lst; do
    [ -s "$outdir/$f" ] || die "OpenSM did not write $outdir/$f (log_flags must include 0x40)"
done
engine_used=$(grep -o "[a-z0-9_-]* tables configured on all switches" "$outdir/opensm.log" | head -1 | awk '{print $1}')
{
    echo "netfile $(basename "$netfile")"
    echo "engine_requested $engine"
    echo "engine_used ${engine_used:-unknown}"
    echo "sm_node $sm_node"
    echo "extra_args ${*:-}"
    awk -v a="$t_start" -v b="$t_up" -v c="$t_end" \
        'BEGIN { printf "seconds_to_subnet_up %.2f\nseconds_total %.2f\n", b - a, c - a }'
} >"$outdir/run.txt"
if [ -n "$engine_used" ] && [ "${engine%%,*}" != "$engine_used" ]; then
    echo "$me: warning: requested '$engine' but OpenSM used '$engine_used' (see $outdir/opensm.log)" >&2
fi
cat "$outdir/run.txt"
exit 0
