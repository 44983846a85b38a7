# Shared helpers for the engines suite (sourced, bash): real containerd and
# podman with brig as their OCI runtime.
#
# Each test file is one meson test speaking TAP. It calls eng_init, which
# makes a temp dir, a small image built from busybox-static and the probe,
# and the trap that tears everything down. Every daemon it starts is its own,
# killed by PID; every container cgroup lives under /brig-engines/$TAG; brig
# is called through a wrapper that only records its argv (then execs brig, so
# pids and parents are exactly those of the real binary).
#
# Environment (set by tests/engines/meson.build):
#   BRIG              the brig binary under test
#   BRIG_PROBE        the static brig-probe binary
#   BRIG_MKBUNDLE     rootfs-tools/brig-mkbundle
#   BRIG_CONTRIB      the contrib/ directory (its snippets are loaded)
#   BRIG_ENG_KEEP=1   keep the temp dir for debugging
#   BRIG_ENG_INSTALL=0  do not apt-get install missing engines (skip instead)
# shellcheck shell=bash disable=SC2034  # RC, PID, ... are read by the test files

set -u

TAP_N=0
TAP_FAILED=0
FAILED_NAMES=()

# ---- TAP --------------------------------------------------------------------

ok() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1"; }
not_ok() {
    TAP_N=$((TAP_N + 1)); TAP_FAILED=$((TAP_FAILED + 1)); FAILED_NAMES+=("$1")
    echo "not ok $TAP_N - $1"; shift
    local l; for l in "$@"; do printf '%s\n' "$l" | head -c 4000 | sed 's/^/#   /'; done
}
skip() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1 # SKIP $2"; }
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }
# skip_all REASON: the machine lacks something this whole file needs. Under
# meson's TAP protocol the "1..0 # SKIP" plan is the skip (exit 77 would be
# counted as an error); run by hand, BRIG_ENG_SKIP_RC=77 makes it visible.
skip_all() { echo "1..0 # SKIP $1"; trap - EXIT; eng_cleanup_quiet; exit "${BRIG_ENG_SKIP_RC:-0}"; }
bail() { echo "Bail out! $1"; exit 1; }

# check DESC CMD...: pass if CMD succeeds (its output shown on failure).
check() {
    local d=$1; shift
    local out
    if out=$("$@" 2>&1); then ok "$d"; else not_ok "$d" "failed: $*" "$out" "$(brig_last_calls)"; fi
}
# check_not DESC CMD...: pass if CMD fails.
check_not() {
    local d=$1; shift
    if "$@" >/dev/null 2>&1; then not_ok "$d" "unexpectedly succeeded: $*" "$(brig_last_calls)"; else ok "$d"; fi
}
check_eq() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:  $2" "want: $3" "$(brig_last_calls)"; fi
}
# check_match DESC GOT ERE
check_match() {
    if [[ $2 =~ $3 ]]; then ok "$1"; else not_ok "$1" "got:  $2" "want (ERE): $3" "$(brig_last_calls)"; fi
}

# ---- setup and teardown -----------------------------------------------------

CLEANUPS=()       # commands run (in reverse) at exit
SEEN_PIDS=()      # container pids seen during the test: none may survive
MOUNTS_BEFORE=""

eng_init() {
    ENG_NAME=$(basename "$0" .sh)
    [ "$(id -u)" = 0 ] || skip_all "the engines tests run containers and daemons and need root"
    : "${BRIG:?BRIG must point at the brig binary}" "${BRIG_PROBE:?}" "${BRIG_MKBUNDLE:?}" "${BRIG_CONTRIB:?}"
    [ -x "$BRIG" ] || bail "BRIG=$BRIG is not executable"
    local here; here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    if ! bash "$here/setup-engines.sh" --check >/dev/null 2>&1; then
        if [ "${BRIG_ENG_INSTALL:-1}" = 1 ]; then
            bash "$here/setup-engines.sh" >&2 || skip_all "installing the engines failed (no Debian mirror?): $(bash "$here/setup-engines.sh" --check)"
        else
            skip_all "engines not installed and BRIG_ENG_INSTALL=0: $(bash "$here/setup-engines.sh" --check)"
        fi
    fi
    TAG="e$$$((RANDOM % 100))"
    T=$(mktemp -d "/tmp/brig-eng-$ENG_NAME.XXXXXX")
    chmod 0755 "$T"
    CG_PARENT=/brig-engines/$TAG
    MOUNTS_BEFORE=$(cut -d' ' -f5 /proc/self/mountinfo | sort)
    trap eng_finish EXIT
    # brig through a recording wrapper named brig (podman names the runtime by
    # its basename). exec keeps pid, parent and fds those of brig itself.
    mkdir -p "$T/bin"
    cat > "$T/bin/brig" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >> "$T/brig-calls.log"
exec "$BRIG" "\$@"
EOF
    chmod 0755 "$T/bin/brig"
    BRIGW=$T/bin/brig
    diag "brig: $BRIG (called through $BRIGW, argv logged in $T/brig-calls.log)"
    diag "temp dir: $T  tag: $TAG  cgroup parent: $CG_PARENT"
}

# The last brig calls, for failure messages.
brig_last_calls() {
    [ -s "${T:-/nonexistent}/brig-calls.log" ] || return 0
    echo "last brig calls (T=$T):"
    tail -n 3 "$T/brig-calls.log" | sed "s#$T#\$T#g" | cut -c1-300
}

eng_on_exit() { CLEANUPS+=("$*"); }

eng_finish() {
    local rc=$?
    eng_cleanup_quiet
    echo "1..$TAP_N"
    if [ "$TAP_FAILED" -gt 0 ]; then
        diag "failed: ${FAILED_NAMES[*]}"
    fi
    if [ "$TAP_FAILED" -gt 0 ] || [ "$rc" -ne 0 ]; then exit 1; fi
    exit 0
}

eng_cleanup_quiet() {
    local i p m c
    for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do
        eval "${CLEANUPS[$i]}" >/dev/null 2>&1
    done
    CLEANUPS=()
    for p in "${SEEN_PIDS[@]}"; do pid_alive "$p" && kill -9 "$p" 2>/dev/null; done
    [ -n "${T:-}" ] || return 0
    for m in $(mounts_under "$T" | sort -r); do umount -l "$m" 2>/dev/null; done
    cgroups_remove_under "${CG_PARENT:-/nonexistent}"
    if [ "${BRIG_ENG_KEEP:-0}" = 1 ]; then
        diag "kept $T"
    elif [ -n "$(mounts_under "$T")" ]; then
        diag "not removing $T: mounts remain under it"
    else
        rm -rf --one-file-system "$T"
    fi
}

# ---- what the host has left -------------------------------------------------

# pid_alive PID: PID exists and is not a zombie.
pid_alive() {
    local s
    s=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
    [ -n "$s" ] && [ "$s" != Z ]
}
seen_pid() { local p; for p in "$@"; do [[ $p =~ ^[0-9]+$ ]] && [ "$p" -gt 1 ] && SEEN_PIDS+=("$p"); done; }

mounts_under() {
    awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo
}

# Cgroup directories (any hierarchy) at or below the absolute cgroup path P.
cgroups_under() {
    local c
    for c in /sys/fs/cgroup/*"$1"; do
        [ -d "$c" ] && find "$c" -mindepth 1 -type d 2>/dev/null
    done
}
# Remove the cgroup subtree P (deepest first; rmdir only, never a cgroup
# with processes), and /brig-engines itself once it is empty.
cgroups_remove_under() {
    local c
    for c in /sys/fs/cgroup/*"$1"; do
        [ -d "$c" ] || continue
        find "$c" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
        rmdir "$c" 2>/dev/null
        rmdir "$(dirname "$c")" 2>/dev/null
    done
}

# assert_nothing_left DESC BRIG_ROOT [IDS...]: the container processes we saw
# are gone; no brig state dir for IDS under BRIG_ROOT (all of BRIG_ROOT when no
# ids); no cgroup under $CG_PARENT but the engine's own (ENGINE_CGROUPS_OK, an
# ERE of basenames, e.g. podman's conmon); no new mount under $T.
assert_nothing_left() {
    local desc=$1 root=$2; shift 2
    local problems=() p id c m
    for p in "${SEEN_PIDS[@]}"; do
        pid_alive "$p" && problems+=("process left: $p ($(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null))")
    done
    if [ $# -gt 0 ]; then
        for id in "$@"; do [ ! -e "$root/$id" ] || problems+=("brig state dir left: $root/$id"); done
    elif [ -d "$root" ]; then
        for id in "$root"/* "$root"/.[!.]*; do
            [ -e "$id" ] && problems+=("brig state dir left: $id")
        done
    fi
    for c in $(cgroups_under "$CG_PARENT"); do
        if [ -n "${ENGINE_CGROUPS_OK:-}" ] && [[ $(basename "$c") =~ ${ENGINE_CGROUPS_OK} ]]; then
            continue
        fi
        problems+=("cgroup left: $c (procs: $(tr '\n' ' ' < "$c/cgroup.procs" 2>/dev/null))")
    done
    for m in $(mounts_under "$T"); do
        grep -qxF "$m" <<<"$MOUNTS_BEFORE" || problems+=("mount left: $m")
    done
    if [ ${#problems[@]} -eq 0 ]; then ok "$desc"; else not_ok "$desc" "${problems[@]}"; fi
}

# ---- the image --------------------------------------------------------------

# image_rootfs: $T/image/rootfs (busybox-static + applet links + passwd/group +
# /usr/bin/brig-probe) and $T/image/rootfs.tar of it.
image_rootfs() {
    local out
    out=$("$BRIG_MKBUNDLE" --probe "$BRIG_PROBE" --no-config "$T/image" 2>&1) ||
        bail "brig-mkbundle --no-config failed: $out"
    # A file the read-only and bind-mount checks can look for.
    echo brig-image > "$T/image/rootfs/etc/brig-image"
    tar --numeric-owner -C "$T/image/rootfs" -cf "$T/image/rootfs.tar" . ||
        bail "tar of the image rootfs failed"
}

# blob FILE MEDIATYPE: put FILE into the OCI layout's blobs; print a descriptor.
oci_blob() {
    local f=$1 mt=$2 sum size
    sum=$(sha256sum "$f" | cut -d' ' -f1)
    size=$(stat -c %s "$f")
    mkdir -p "$T/oci/blobs/sha256"
    cp "$f" "$T/oci/blobs/sha256/$sum"
    jq -cn --arg mt "$mt" --arg d "sha256:$sum" --argjson s "$size" \
        '{mediaType: $mt, digest: $d, size: $s}'
}

# image_oci_archive NAME: an OCI image layout tarball ($T/image/oci.tar) made
# by hand from rootfs.tar: one uncompressed layer, config, manifest, index.
# Its default command waits for SIGTERM, so it also serves as a CRI pod's
# sandbox ("pause") image.
image_oci_archive() {
    local name=$1 layer cfg manifest diffid
    rm -rf "$T/oci"; mkdir -p "$T/oci"
    layer=$(oci_blob "$T/image/rootfs.tar" application/vnd.oci.image.layer.v1.tar)
    diffid=$(jq -r .digest <<<"$layer")
    jq -n --arg d "$diffid" '{
        architecture: "amd64", os: "linux",
        config: {Env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], WorkingDir: "/",
                 Cmd: ["/bin/sh", "-c", "trap \"exit 0\" TERM; while :; do sleep 1; done"]},
        rootfs: {type: "layers", diff_ids: [$d]},
        history: [{created_by: "brig tests/engines/lib.sh"}]
    }' > "$T/image/config.json"
    cfg=$(oci_blob "$T/image/config.json" application/vnd.oci.image.config.v1+json)
    jq -n --argjson c "$cfg" --argjson l "$layer" \
        '{schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", config: $c, layers: [$l]}' \
        > "$T/image/manifest.json"
    manifest=$(oci_blob "$T/image/manifest.json" application/vnd.oci.image.manifest.v1+json)
    jq -n --argjson m "$manifest" --arg n "$name" '{schemaVersion: 2,
        manifests: [$m + {annotations: {"io.containerd.image.name": $n,
                                        "org.opencontainers.image.ref.name": ($n | sub(".*:"; ""))},
                          platform: {architecture: "amd64", os: "linux"}}]}' > "$T/oci/index.json"
    echo '{"imageLayoutVersion":"1.0.0"}' > "$T/oci/oci-layout"
    tar -C "$T/oci" -cf "$T/image/oci.tar" . || bail "tar of the OCI layout failed"
}

# ---- container output -------------------------------------------------------

# cid NAME: the engine's container id/name for a test container.
cid() { echo "$TAG-$1"; }
# out NAME: the container's stdout without a tty's carriage returns.
out() { tr -d '\r' < "$T/$1.out"; }
# The probe's JSON: the last line of NAME's stdout that is an object.
probe_json() { grep '^{' "$T/$1.out" | tr -d '\r' | tail -n 1; }
# check_probe DESC NAME FILTER [jq args]: jq -e FILTER holds on the probe's
# JSON (empty output never passes).
check_probe() {
    local d=$1 name=$2 filter=$3 json; shift 3
    json=$(probe_json "$name")
    if [ -n "$json" ] && jq -e "$@" "$filter" <<<"$json" >/dev/null 2>&1; then
        ok "$d"
    else
        not_ok "$d" "filter: $filter" "exit status: ${RC:-?}" \
            "stdout: $(head -c 2000 "$T/$name.out")" "stderr: $(head -c 2000 "$T/$name.err" 2>/dev/null)" \
            "$(brig_last_calls)"
    fi
}

# in_pty CMD...: run CMD (a program, not a function) with a pty as its
# stdin/stdout, through script(1): `ctr -t` and `podman -t` want a console.
in_pty() {
    local q; q=$(printf '%q ' "$@")
    script -qefc "$q" /dev/null < /dev/null
}

# ---- waiting ----------------------------------------------------------------

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds, for at
# most SECONDS by the clock: a CMD that itself hangs (a `ctr version` against
# a containerd that is not up takes 10 s) is cut at the deadline, not counted
# as one 0.1 s turn. (A shell function cannot be cut: it runs as it is.)
wait_for() {
    local end=$(( $(date +%s%N) / 1000000 + $1 * 1000 )) left; shift
    while :; do
        left=$(( end - $(date +%s%N) / 1000000 ))
        [ $left -gt 0 ] || return 1
        if [ "$(type -t "$1")" = function ]; then
            "$@" >/dev/null 2>&1 && return 0
        else
            timeout -k 1 "$(( (left + 999) / 1000 ))" "$@" >/dev/null 2>&1 && return 0
        fi
        sleep 0.1
    done
}

# freeze_state PID: FROZEN or THAWED for the cgroup of PID, whichever freezer
# froze it: brig prefers the v2 cgroup.freeze even on this hybrid host (every
# process is in a v2 leaf too), runc uses the v1 freezer hierarchy.
freeze_state() {
    local v1 v2 f1 f2=""
    v1=$(awk -F: '$2 == "freezer" { print $3 }' "/proc/$1/cgroup" 2>/dev/null)
    v2=$(awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup" 2>/dev/null)
    f1=$(cat "/sys/fs/cgroup/freezer$v1/freezer.state" 2>/dev/null)
    [ -n "$v2" ] && f2=$(awk '$1 == "frozen" { print $2 }' "/sys/fs/cgroup/unified$v2/cgroup.events" 2>/dev/null)
    if [ "$f1" = FROZEN ] || [ "$f2" = 1 ]; then echo FROZEN
    elif [ -n "$f1$f2" ]; then echo THAWED
    else echo "no freezer found for pid $1"; fi
}

# ticking PID: the processes in PID's memory cgroup change within 1.5 s (the
# test containers loop over `sleep 0.2`, a frozen one cannot).
ticking() {
    local cg a b
    cg=$(awk -F: '$2 == "memory" || $1 == "0" { print $3; exit }' "/proc/$1/cgroup" 2>/dev/null)
    [ -n "$cg" ] || return 1
    a=$(cat "/sys/fs/cgroup/memory$cg/cgroup.procs" 2>/dev/null)
    sleep 1.5
    b=$(cat "/sys/fs/cgroup/memory$cg/cgroup.procs" 2>/dev/null)
    [ -n "$a" ] && [ "$a" != "$b" ]
}

# proc_state PID: the one-letter state from /proc/PID/status.
proc_state() { awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
