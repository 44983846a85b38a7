# Shared helpers for brig's integration tests (sourced, bash).
#
# Each test file is one meson test speaking TAP. It calls it_init, builds
# bundles in its own temp dir with mkb, edits them with cfg, runs the built
# brig with --root pointing at a private state dir, and checks both what the
# probe reported and what the host has left afterwards (assert_clean).
#
# Environment (set by tests/integration/meson.build):
#   BRIG            the brig binary under test
#   BRIG_PROBE      the static brig-probe binary
#   BRIG_MKBUNDLE   rootfs-tools/brig-mkbundle
#   BRIG_IT_KEEP=1  keep the temp dir for debugging
#   BRIG_TIMEOUT    seconds one brig command may take (default 60)
# shellcheck shell=bash disable=SC2016  # jq filters are single-quoted on purpose

set -u

TAP_N=0
TAP_FAILED=0
CLEAN_IDS=()

# ---- TAP --------------------------------------------------------------------

ok() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1"; }
not_ok() {
    TAP_N=$((TAP_N + 1)); TAP_FAILED=$((TAP_FAILED + 1))
    echo "not ok $TAP_N - $1"; shift
    local l; for l in "$@"; do printf '%s\n' "$l" | sed 's/^/#   /'; done
}
skip() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1 # SKIP $2"; }
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }
# skip_all REASON: the machine lacks something this whole file needs.
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
# bail REASON: setup failed; the rest of the file cannot run.
bail() { echo "Bail out! $1"; exit 1; }

# check DESC CMD...: pass if CMD succeeds.
check() {
    local d=$1; shift
    local out
    if out=$("$@" 2>&1); then ok "$d"; else not_ok "$d" "failed: $*" "$out"; fi
}
# check_not DESC CMD...: pass if CMD fails in the ordinary way (exit 1-123).
# A timeout (124, 137), a command that could not run (126, 127) or a signal
# (>= 128) is never a pass. For a refusal by brig, use check_refused, which
# also names the message.
check_not() {
    local d=$1; shift
    local out rc
    out=$(run_to_file "$@")
    rc=$?
    if [ $rc = 0 ]; then
        not_ok "$d" "unexpectedly succeeded: $*"
    elif [ $rc -ge 124 ]; then
        not_ok "$d" "$(rc_reason $rc): $*" "$(head -c 2000 <<<"$out")"
    else
        ok "$d"
    fi
}

# run_to_file CMD...: run CMD with its output in a file (stdin as given:
# callers feed herestrings), then print the file; CMD's exit status. Not
# through a pipe: a `create` that unexpectedly succeeds leaves an init
# holding its stdout, and $(...) would wait for that init forever.
run_to_file() {
    local f rc
    f=$(mktemp "${T:-/tmp}/.out.XXXXXX")
    "$@" >"$f" 2>&1
    rc=$?
    cat "$f"
    rm -f "$f"
    return $rc
}

# rc_reason RC: what an exit status >= 124 means.
rc_reason() {
    case $1 in
        124) echo "timed out (exit 124)" ;;
        126 | 127) echo "could not run (exit $1)" ;;
        *) if [ "$1" -gt 128 ]; then echo "killed by signal $(($1 - 128)) (exit $1)"; else echo "exit $1"; fi ;;
    esac
}

# check_refused DESC MESSAGE [EXIT] CMD...: pass if CMD fails with exit
# status EXIT (default 1: brig's status for a refusal) and its stderr or
# stdout holds MESSAGE (a fixed string, brig's own wording). A crash, a
# timeout or another failure with another message is not a refusal.
check_refused() {
    local d=$1 msg=$2 want=1; shift 2
    if [[ ${1:-} =~ ^[0-9]+$ ]]; then want=$1; shift; fi
    local out rc
    out=$(run_to_file "$@")
    rc=$?
    if [ $rc = 0 ]; then
        not_ok "$d" "unexpectedly succeeded: $*" "$(head -c 2000 <<<"$out")"
    elif [ $rc != "$want" ]; then
        not_ok "$d" "$(rc_reason $rc), want exit $want: $*" "$(head -c 2000 <<<"$out")"
    elif ! grep -qF -- "$msg" <<<"$out"; then
        not_ok "$d" "exit $rc but the message is not \"$msg\": $*" "$(head -c 2000 <<<"$out")"
    else
        ok "$d"
    fi
}

# check_refused_rc DESC MESSAGE EXIT RC FILE: the same for a command already
# run (run_ct, create_ct): its exit status RC and its output in FILE.
check_refused_rc() {
    local d=$1 msg=$2 want=$3 rc=$4 f=$5
    if [ "$rc" = 0 ]; then
        not_ok "$d" "unexpectedly succeeded" "$(head -c 2000 "$f" 2>/dev/null)"
    elif [ "$rc" != "$want" ]; then
        not_ok "$d" "$(rc_reason "$rc"), want exit $want" "$(head -c 2000 "$f" 2>/dev/null)"
    elif ! grep -qF -- "$msg" "$f" 2>/dev/null; then
        not_ok "$d" "exit $rc but the message is not \"$msg\"" "$(head -c 2000 "$f" 2>/dev/null)"
    else
        ok "$d"
    fi
}
# check_eq DESC GOT WANT
check_eq() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:  $2" "want: $3"; fi
}

# ---- setup and teardown -----------------------------------------------------

it_init() {
    IT_NAME=$(basename "$0" .sh)
    [ "$(id -u)" = 0 ] || skip_all "integration tests run containers and need root"
    command -v jq >/dev/null || skip_all "jq is not installed (bash scripts/setup.sh installs it)"
    [ -x /bin/busybox ] || skip_all "busybox-static is not installed (bash scripts/setup.sh installs it)"
    : "${BRIG:?BRIG must point at the brig binary}" "${BRIG_PROBE:?}" "${BRIG_MKBUNDLE:?}"
    [ -x "$BRIG" ] || bail "BRIG=$BRIG is not executable"
    # Short unique tag: container ids, cgroup paths and the env marker use it.
    TAG="it$$-$((RANDOM % 1000))"
    T=$(mktemp -d "/tmp/brig-$IT_NAME.XXXXXX")
    # Containers with a user namespace run as unprivileged host ids: they
    # must be able to reach their bundle.
    chmod 0755 "$T"
    STATE=$T/state
    trap it_finish EXIT
    diag "brig: $BRIG"
    diag "temp dir: $T  tag: $TAG"
}

it_finish() {
    local rc=$?
    it_cleanup
    echo "1..$TAP_N"
    if [ "$TAP_FAILED" -gt 0 ] || [ "$rc" -ne 0 ]; then exit 1; fi
    exit 0
}

# Undo whatever a failed test may have left: only things this test made
# (its ids, its tag, its temp dir, its cgroup leaves).
it_cleanup() {
    local id pid m c
    if [ -d "$STATE" ]; then
        for id in "$STATE"/*; do
            [ -e "$id" ] || continue
            id=${id##*/}
            timeout -k 5 30 "$BRIG" --root "$STATE" delete --force "$id" >/dev/null 2>&1
        done
    fi
    for id in "${CLEAN_IDS[@]}"; do
        timeout -k 5 30 "$BRIG" --root "$STATE" delete --force "$id" >/dev/null 2>&1
    done
    for pid in $(tagged_pids); do kill -9 "$pid" 2>/dev/null; done
    # Deepest mounts first; lazy, since a stuck mount must not hang the run.
    for m in $(mounts_under "$T" | sort -r); do umount -l "$m" 2>/dev/null; done
    for c in /sys/fs/cgroup/*/brig-test; do
        [ -d "$c" ] || continue
        # rmdir only: a cgroup with processes or children stays (and is reported).
        find "$c" -mindepth 1 -depth -type d -name "$TAG-*" -exec rmdir {} + 2>/dev/null
        rmdir "$c" 2>/dev/null
    done
    if [ "${BRIG_IT_KEEP:-0}" = 1 ]; then
        diag "kept $T"
    elif [ -n "$(mounts_under "$T")" ]; then
        diag "not removing $T: mounts remain under it"
    else
        rm -rf --one-file-system "$T"
    fi
}

# ---- bundles ----------------------------------------------------------------

cid() { echo "$TAG-$1"; }
bundle() { echo "$T/$1"; }

# mkb NAME [brig-mkbundle options] [-- ARGS...]: a bundle in $T/NAME with a
# private absolute cgroup path (/brig-test/ID) and BRIG_IT_TAG=ID in the
# environment, so that leftover processes can be found from the host.
# The rootfs is built once per test file (brig-mkbundle links ~400 busybox
# applets, ~1.5 s, and a file makes dozens of bundles) and copied into each
# bundle (cp -a: files of its own, which a test may write, chown or swap).
MKB_ROOTFS_PROBE=
mkb() {
    local name=$1; shift
    local opts=() args=() out
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
    [ $# -gt 0 ] && { shift; args=(-- "$@"); }
    if [ "$MKB_ROOTFS_PROBE" != "$T|$BRIG_PROBE" ]; then
        rm -rf --one-file-system "$T/.mkb-rootfs"
        out=$("$BRIG_MKBUNDLE" --probe "$BRIG_PROBE" --no-config "$T/.mkb-rootfs" 2>&1) ||
            { not_ok "build bundle $name (its rootfs)" "$out"; return 1; }
        MKB_ROOTFS_PROBE="$T|$BRIG_PROBE"
    fi
    out=$("$BRIG_MKBUNDLE" --probe "$BRIG_PROBE" --brig "$BRIG" --rootfs-from "$T/.mkb-rootfs/rootfs" \
        --cgroups-path "/brig-test/$(cid "$name")" "${opts[@]}" "$T/$name" "${args[@]}" 2>&1) ||
        { not_ok "build bundle $name" "$out"; return 1; }
    cfg "$name" '.process.env = ((.process.env // []) + ["BRIG_IT_TAG=" + $id])' --arg id "$(cid "$name")"
}

# cfg NAME FILTER [jq args...]: edit $T/NAME/config.json in place.
cfg() {
    local name=$1 filter=$2; shift 2
    local f=$T/$name/config.json
    jq "$@" "$filter" "$f" > "$f.tmp" && mv "$f.tmp" "$f"
}

# ---- running brig -----------------------------------------------------------

# b ARGS...: the brig under test with our private state root.
b() { timeout -k 5 "${BRIG_TIMEOUT:-60}" "$BRIG" --root "$STATE" "$@"; }

# run_ct NAME [run options]: brig run the bundle; stdout in $T/NAME.out,
# stderr in $T/NAME.err, exit status in RC.
run_ct() {
    local name=$1; shift
    CLEAN_IDS+=("$(cid "$name")")
    b run --bundle "$T/$name" "$@" "$(cid "$name")" </dev/null >"$T/$name.out" 2>"$T/$name.err"
    RC=$?
}

# create_ct NAME [create options]: brig create; RC, $T/NAME.{out,err}.
create_ct() {
    local name=$1; shift
    CLEAN_IDS+=("$(cid "$name")")
    b create --bundle "$T/$name" "$@" "$(cid "$name")" </dev/null >"$T/$name.out" 2>"$T/$name.err"
    RC=$?
}

# other_run RUNTIME NAME: the same bundle under runc or crun, for a test that
# compares (state in $T/RUNTIME-state; the container is deleted after).
# crun 1.8 cannot run beside this host's cgroup2 mount (hybrid layout): it
# runs in a mount namespace where /sys/fs/cgroup/unified is an empty tmpfs.
# OTHER_RC; stdout and stderr in $T/NAME.RUNTIME.out and .err. Skipped
# (OTHER_RC 127) when RUNTIME is not installed.
other_run() {
    local rt=$1 name=$2 id
    id=$(cid "$name")
    OTHER_RC=127
    command -v "$rt" >/dev/null || return 1
    if [ "$rt" = crun ]; then
        timeout -k 5 "${BRIG_TIMEOUT:-60}" unshare -m --propagation private sh -c \
            'mount -t tmpfs none /sys/fs/cgroup/unified 2>/dev/null; exec crun --root "$1" run -b "$2" "$3"' \
            sh "$T/crun-state" "$T/$name" "$id" </dev/null >"$T/$name.crun.out" 2>"$T/$name.crun.err"
        OTHER_RC=$?
        crun --root "$T/crun-state" delete -f "$id" >/dev/null 2>&1
    else
        timeout -k 5 "${BRIG_TIMEOUT:-60}" "$rt" --root "$T/$rt-state" run -b "$T/$name" "$id" \
            </dev/null >"$T/$name.$rt.out" 2>"$T/$name.$rt.err"
        OTHER_RC=$?
        "$rt" --root "$T/$rt-state" delete -f "$id" >/dev/null 2>&1
    fi
    return 0
}

# The probe's JSON: the last line of the container's stdout that is an object.
probe_json() { grep '^{' "$T/$1.out" | tail -n 1; }

# jq_ok NAME FILTER [jq args]: the probe output satisfies FILTER.
jq_ok() {
    local name=$1 filter=$2 json; shift 2
    json=$(probe_json "$name")
    # jq -e on empty input exits 0: no output must never pass.
    [ -n "$json" ] && jq -e "$@" "$filter" <<<"$json" >/dev/null 2>&1
}

# check_probe DESC NAME FILTER [jq args]: one TAP line per assertion, with
# the relevant output on failure.
check_probe() {
    local d=$1 name=$2 filter=$3; shift 3
    if jq_ok "$name" "$filter" "$@"; then
        ok "$d"
    else
        not_ok "$d" "filter: $filter" "brig exit status: ${RC:-?}" \
            "stdout: $(head -c 3000 "$T/$name.out" 2>/dev/null)" \
            "stderr: $(head -c 2000 "$T/$name.err" 2>/dev/null)"
    fi
}

# check_ran DESC NAME: brig run exited 0 and the probe printed JSON.
check_ran() {
    if [ "${RC:-1}" = 0 ] && [ -n "$(probe_json "$2")" ]; then
        ok "$1"
        return 0
    fi
    not_ok "$1" "brig exit status: ${RC:-?}" "stdout: $(head -c 2000 "$T/$2.out")" \
        "stderr: $(head -c 2000 "$T/$2.err")"
    return 1
}

# start_ct NAME: brig start, then wait (5 s at most) until process.args runs:
# for `brig-probe sleep`, until it printed its line, which it does after
# installing its signal handlers. A signal sent before that reaches a pid 1
# without handlers, and the kernel drops it.
start_ct() {
    local name=$1 n=50 id
    id=$(cid "$name")
    b start "$id" || return 1
    local probe_sleep=0
    jq -e '.process.args[0:2] == ["/usr/bin/brig-probe", "sleep"]' "$T/$name/config.json" \
        >/dev/null 2>&1 && probe_sleep=1
    while [ $n -gt 0 ]; do
        if [ $probe_sleep = 1 ]; then
            grep -q '"op":"sleep"' "$T/$name.out" 2>/dev/null && return 0
        else
            [ -n "$(tagged_pids "$id")" ] && return 0
        fi
        sleep 0.1; n=$((n - 1))
    done
    echo "start_ct $name: the process did not come up within 5 s" >&2
    return 1
}

# state_field ID FIELD: a field of `brig state ID` (empty if it fails).
state_field() { b state "$1" 2>/dev/null | jq -r ".$2 // empty" 2>/dev/null; }

# wait_status ID STATUS [SECONDS]: poll `brig state` until it reports STATUS.
wait_status() {
    local id=$1 want=$2 n=$(( ${3:-10} * 10 ))
    while [ $n -gt 0 ]; do
        [ "$(state_field "$id" status)" = "$want" ] && return 0
        sleep 0.1; n=$((n - 1))
    done
    return 1
}

# wait_until SECONDS CMD...: poll CMD every 0.05 s until it succeeds (0) or
# SECONDS pass (1): wait for the thing itself rather than a fixed sleep.
wait_until() {
    local n=$(( $1 * 20 )); shift
    until "$@"; do
        [ $n -gt 0 ] || return 1
        sleep 0.05; n=$((n - 1))
    done
}

# ---- what the host has left -------------------------------------------------

# Processes whose environment carries our tag: only containers of this test
# (tagged_pids), or of one container (tagged_pids ID).
# One grep over every environ file: a grep per process took ~25 s on a
# loaded machine with a few hundred processes, on every assert_clean.
tagged_pids() {
    local pat="^BRIG_IT_TAG=${1:-$TAG-.*}\$"
    grep -lsz -- "$pat" /proc/[0-9]*/environ 2>/dev/null | sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p'
}

# Mount points (host mount namespace) at or below DIR.
mounts_under() {
    awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo
}

# What a mount that escaped a container's root would change in brig's
# mount namespace, and nothing another test may mount meanwhile: the mounts
# at /, /proc, /sys, /dev and /tmp themselves, and every mount under $T but
# those under the root given (a container's, without a mount namespace).
host_key_mounts() {
    awk -v t="$T" -v r="${1:-/nonexistent}" '$5 == "/" || $5 == "/proc" || $5 == "/sys" || $5 == "/dev" ||
        $5 == "/tmp" || ((index($5, t "/") == 1) && $5 != r && index($5, r "/") != 1) { print $5, $6 }' \
        /proc/self/mountinfo | sort
}

# Host namespace inode, for comparison with the probe's.
host_ns() { stat -L -c %i "/proc/self/ns/$1"; }

# assert_clean NAME: after the container is gone, nothing of it remains:
# no process, no mount referencing its bundle, no state dir, no cgroup.
assert_clean() {
    local name=$1 id problems=()
    id=$(cid "$name")
    local pids; pids=$(tagged_pids "$id" | tr '\n' ' ')
    [ -z "$pids" ] || problems+=("processes left: $pids")
    local m; m=$(mounts_under "$T/$name")
    [ -z "$m" ] || problems+=("mounts left: $m")
    [ ! -e "$STATE/$id" ] || problems+=("state dir left: $STATE/$id")
    local c
    for c in /sys/fs/cgroup/*/brig-test/"$id"; do
        [ ! -d "$c" ] || problems+=("cgroup left: $c")
    done
    if [ ${#problems[@]} -eq 0 ]; then
        ok "$name: nothing left behind"
    else
        not_ok "$name: nothing left behind" "${problems[@]}"
    fi
}
