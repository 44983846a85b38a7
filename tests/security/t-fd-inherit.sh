#!/usr/bin/env bash
# Host descriptors inherited by the container's process and by its
# hooks, with every feature that opens one in use at once: console socket,
# --log, audit log, hooks, --preserve-fds.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

# An audit-mode policy: its log is one more descriptor brig holds.
AUD=$T/agent-audit.json
"$BRIG" policy show agent | jq --arg a "$T/audit.jsonl" '.audit.path = $a | .mode = "audit"' > "$AUD" ||
    bail "cannot write the audit policy"

# ---- descriptors: every feature at once, nothing of the host inherited ------
mkb fds -- /usr/bin/brig-probe sleep 60 || bail "cannot build a bundle"
cfg fds '.process.terminal = true'
cat > "$T/hook.sh" <<EOF
#!/bin/sh
ls -l /proc/self/fd/ > "$T/hook-fds.\$1" 2>&1
EOF
chmod 0755 "$T/hook.sh"
cfg fds '.hooks = {createRuntime: [{path: $h, args: ["hook.sh", "createRuntime"]}],
                   createContainer: [{path: $h, args: ["hook.sh", "createContainer"]}],
                   poststart: [{path: $h, args: ["hook.sh", "poststart"]}]}' --arg h "$T/hook.sh"
echo marker > "$T/marker"
sock=$T/fds.sock
"$BRIG_RECVTTY" "$sock" >"$T/recv.out" 2>"$T/recv.err" &
recv_pid=$!
n=50; while [ $n -gt 0 ] && [ ! -S "$sock" ]; do sleep 0.1; n=$((n - 1)); done
FID=$(cid fds)
CLEAN_IDS+=("$FID")
# fd 3 is a file the caller passes; fd 4 is closed, so that a brig
# descriptor landing on 4 would be inherited through --preserve-fds 2.
( exec 3<"$T/marker" 4>&-
  timeout -k 5 60 "$BRIG" --root "$STATE" --log "$T/brig.log" --policy "$AUD" \
      run -d --console-socket "$sock" --preserve-fds 2 --bundle "$T/fds" "$FID" </dev/null >"$T/fds.out" 2>"$T/fds.err" )
check_eq "run -d with terminal, --log, audit policy, hooks and --preserve-fds" "$?" 0
pid=$(state_field "$FID" pid)
fds=""
[ -n "$pid" ] && fds=$(for f in /proc/"$pid"/fd/*; do printf '%s=%s\n' "${f##*/}" "$(readlink "$f")"; done | sort -n)
want=$(printf '0=/dev/pts/0\n1=/dev/pts/0\n2=/dev/pts/0\n3=%s\n' "$T/marker")
check_eq "the container's init holds only its pty and the preserved fd" "$fds" "$want"
for h in createRuntime createContainer poststart; do
    # A hook has its stdin (the state), stdout, stderr; ls (a child of the
    # hook shell: the shell's own script fd is close-on-exec) adds its dir fd.
    extra=$(awk 'NR > 1 && $9 ~ /^[0-9]+$/ && $9 > 2 && $11 !~ /^\/proc\// { print $9 " -> " $11 }' "$T/hook-fds.$h" 2>/dev/null)
    if [ -s "$T/hook-fds.$h" ] && [ -z "$extra" ]; then
        ok "the $h hook inherits no brig descriptor"
    else
        not_ok "the $h hook inherits no brig descriptor" "$(cat "$T/hook-fds.$h" 2>&1)"
    fi
done
b delete --force "$FID" >/dev/null 2>&1
kill "$recv_pid" 2>/dev/null; wait "$recv_pid" 2>/dev/null
assert_clean fds
