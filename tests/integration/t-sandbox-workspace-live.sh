#!/usr/bin/env bash
# The workspace is the host's directory, live, under the default bound (the
# agent profile's workspace.maxSize: on the host's disk without project
# quotas a watch, docs/policy.md "Workspace bound"): the host sees what a
# command writes while it runs, the command sees what the host writes while
# it runs, and a long-lived sandbox's exec sees the host's new version of a
# file an earlier exec wrote (an upload between two execs). The attacks on
# the watch are in tests/security/t-workspace-watch.sh.
# shellcheck disable=SC2016  # sh -c scripts are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/../security/lib.sh"
it_init

busybox_rootfs "$T/root" sh cat echo sleep touch
WS=$T/ws
mkdir -p "$WS" && chown 1000:1000 "$WS"
SBS=$T/sbstate
NAME=live-$TAG
sbx() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$SBS" "${@:2}"; }
trap 'rc=$?; sbx rm --force "$NAME" >/dev/null 2>&1; kill -9 $RUN 2>/dev/null; (exit $rc); it_finish' EXIT

# a run: the command writes, then waits (at most 20 s) for the host's file
timeout -k 5 60 "$BRIG" sandbox run --state-root "$SBS" --rootfs "$T/root" --workspace "$WS" --json -- \
    /bin/sh -c 'echo early > /workspace/early; i=0; while [ ! -e /workspace/go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; cat /workspace/go' \
    > "$T/run.json" 2> "$T/run.err" &
RUN=$!
check "the host sees the command's file while it runs" wait_until 20 test -s "$WS/early"
echo from-host > "$WS/go"
wait "$RUN"
check_eq "the command sees the host's file while it runs" \
    "$(jq -r '"\(.exit_code) \(.stdout.preview_head)"' "$T/run.json")" "0 from-host"
check_eq "... and no limit fired" "$(jq -c .limits_hit "$T/run.json")" '[]'
check_eq "what it wrote is there" "$(cat "$WS/early")" early

# a long-lived sandbox: exec 1 writes f, the host replaces f, exec 2 reads it
if sbx create --rootfs "$T/root" --workspace "$WS" "$NAME" >/dev/null 2>"$T/create.err"; then
    sbx exec --json "$NAME" -- /bin/sh -c 'echo from-exec > /workspace/f' > "$T/e1.json" 2>/dev/null
    check_eq "session: exec 1's file is on the host right after it" "$(cat "$WS/f" 2>&1)" from-exec
    # an upload: a new file renamed over the old one, and one written in place
    echo uploaded > "$WS/.f.tmp" && mv "$WS/.f.tmp" "$WS/f"
    echo new > "$WS/g"
    sbx exec --json "$NAME" -- /bin/sh -c 'cat /workspace/f /workspace/g' > "$T/e2.json" 2>/dev/null
    check_eq "session: exec 2 sees the host's versions" "$(jq -r .stdout.preview_head "$T/e2.json")" "$(printf 'uploaded\nnew\n')"
    sbx rm --force "$NAME" >/dev/null 2>&1
else
    not_ok "sandbox create with the default workspace bound" "$(cat "$T/create.err")"
fi
