#!/usr/bin/env bash
# A file a user names to brig or brig-rootfs that is a fifo (or a device):
# open(2) of a fifo for reading waits for a writer, so `--policy FIFO`
# held brig forever. Every such input goes through one helper
# (brig_open_input: O_PATH, fstat of what was opened, only a regular file
# reopened for reading), so each must end promptly with a clear error
# naming what it is, and change nothing. The timeout only catches a hang.
# Use side: the same commands with regular files work (the suites of each
# command).
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

F=$T/fifo
mkfifo "$F" || bail "cannot make a fifo"
BR=${BRIG_ROOTFS:?}
mkb ok -- /bin/sh -c 'sleep 30' || bail "cannot build a bundle"
mkdir -p "$T/fb" && mkfifo "$T/fb/config.json" && ln -s "$T/ok/rootfs" "$T/fb/rootfs"
"$BRIG" policy show agent | jq --arg f "$F" '.seccomp = {"profile": "file", "path": $f}' > "$T/seccomp-fifo.json"
"$BRIG" policy show agent | jq --arg a "$F" '.audit.path = $a' > "$T/audit-fifo.json"
printf 'services:\n  a:\n    image: busybox\n' > "$T/c.yaml"

# prompt DESC WHAT CMD...: CMD ends by itself (no timeout), fails (a
# refusal: 1, 2 or sandbox's 125, not a crash), and its message says WHAT.
prompt() {
    local d=$1 what=$2 out rc; shift 2
    out=$(run_to_file timeout -k 2 20 "$@" </dev/null)
    rc=$?
    if [ $rc = 0 ]; then
        not_ok "$d" "unexpectedly succeeded" "$(head -c 600 <<<"$out")"
    elif [ $rc = 124 ] || [ $rc = 137 ]; then
        not_ok "$d" "$(rc_reason $rc): brig waited on the fifo" "$(head -c 600 <<<"$out")"
    elif [ $rc -gt 125 ]; then
        not_ok "$d" "$(rc_reason $rc)" "$(head -c 600 <<<"$out")"
    elif ! grep -qF -- "$what" <<<"$out"; then
        not_ok "$d" "exit $rc without \"$what\"" "$(head -c 600 <<<"$out")"
    else
        ok "$d"
    fi
}
NRF="not a regular file (a fifo)"

# --policy
prompt "policy check --policy FIFO" "$NRF" "$BRIG" policy check --policy "$F" "$T/ok"
prompt "brig --policy FIFO create" "$NRF" "$BRIG" --root "$STATE" --policy "$F" create --bundle "$T/ok" "$(cid pol)"
check_not "... nothing created" test -e "$STATE/$(cid pol)"
prompt "brig --policy FIFO run" "$NRF" "$BRIG" --root "$STATE" --policy "$F" run --bundle "$T/ok" "$(cid polrun)"
prompt "policy apply --policy FIFO" "$NRF" "$BRIG" policy apply --policy "$F" --workspace "$T" "$T/ok"
prompt "policy show FIFO" "$NRF" "$BRIG" policy show "$F"
prompt "sandbox run --policy FIFO" "$NRF" "$BRIG" sandbox run --state-root "$T/sb" --policy "$F" -- true
prompt "brig-rootfs bundle --policy FIFO" "$NRF" "$BR" bundle --rootfs "$T/ok/rootfs" --policy "$F" "$T/out1" -- true
# a device as the policy: refused unopened (its driver is never called)
prompt "policy check --policy /dev/zero" "not a regular file (a device)" "$BRIG" policy check --policy /dev/zero "$T/ok"

# config.json
prompt "create of a bundle whose config.json is a fifo" "$NRF" "$BRIG" --root "$STATE" create --bundle "$T/fb" "$(cid fb)"
prompt "run of a bundle whose config.json is a fifo" "$NRF" "$BRIG" --root "$STATE" run --bundle "$T/fb" "$(cid fbrun)"
prompt "create --config FIFO" "$NRF" "$BRIG" --root "$STATE" create --bundle "$T/ok" --config "$F" "$(cid cfg)"
prompt "policy check of that bundle" "$NRF" "$BRIG" policy check --policy agent "$T/fb"
prompt "policy apply of that bundle" "$NRF" "$BRIG" policy apply --policy agent --workspace "$T" "$T/fb"
prompt "policy selftest --config FIFO" "$NRF" "$BRIG" policy selftest --policy agent --probe "$BRIG_PROBE" --config "$F"

# --compose, and a compose file's own seccomp profile
prompt "policy check --compose FIFO" "$NRF" "$BRIG" policy check --policy agent --compose "$F"

# the policy's seccomp profile file, the policy's audit log
prompt "policy apply with seccomp.path a fifo" "$NRF" "$BRIG" policy apply --policy "$T/seccomp-fifo.json" --workspace "$T" "$T/ok"
prompt "create under a policy whose audit.path is a fifo (the refusal is audited)" "refuses create" "$BRIG" --root "$STATE" --policy "$T/audit-fifo.json" create --bundle "$T/ok" "$(cid aud)"
b delete --force "$(cid aud)" >/dev/null 2>&1

# --process, update -r: on a live container
CLEAN_IDS+=("$(cid live)")
{ b create --bundle "$T/ok" "$(cid live)" && b start "$(cid live)"; } >/dev/null 2>&1 </dev/null ||
    bail "cannot start a container"
prompt "exec --process FIFO" "$NRF" "$BRIG" --root "$STATE" exec --process "$F" "$(cid live)"
prompt "update -r FIFO" "$NRF" "$BRIG" --root "$STATE" update -r "$F" "$(cid live)"
b delete --force "$(cid live)" >/dev/null 2>&1

# policy selftest's probe, brig-rootfs's inputs
prompt "policy selftest --busybox FIFO" "$NRF" "$BRIG" policy selftest --policy agent --probe "$BRIG_PROBE" --busybox "$F"
prompt "brig-rootfs verify --manifest FIFO" "$NRF" "$BR" verify --manifest "$F" "$T/ok/rootfs"
prompt "brig-rootfs bundle --image-config FIFO" "$NRF" "$BR" bundle --rootfs "$T/ok/rootfs" --image-config "$F" "$T/out2" -- true
prompt "brig-rootfs import FIFO" "$NRF" "$BR" import "$F" "$T/imported"
mkdir -p "$T/layout" && mkfifo "$T/layout/index.json" && echo '{"imageLayoutVersion": "1.0.0"}' > "$T/layout/oci-layout"
prompt "brig-rootfs import of a layout whose index.json is a fifo" "$NRF" "$BR" import "$T/layout" "$T/imported2"
check_not "... no rootfs made" test -e "$T/imported2"
