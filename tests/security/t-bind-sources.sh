#!/usr/bin/env bash
# Bind sources a policy must refuse (docs/policy.md "mounts.forbidden",
# "mounts.sockets"):
#  - the other engines' and orchestrators' sockets and credentials (k3s,
#    BuildKit, LXD/Incus, libvirt, D-Bus, kubelet, Kubernetes PKI, podman's
#    storage and logins), by their real host paths, and any parent of them;
#  - any UNIX socket, judged by what the source is (not by its name), through
#    a symlink too, unless the policy's sockets list names its exact path;
#  - a source swapped between a plain file and a socket while create runs
#    (a rename-exchange swapper): never a socket in the container.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v python3 >/dev/null || skip_all "python3 is needed to make the test's UNIX sockets"

AUDIT=$T/audit.jsonl
mkdir -p "$T/ws" "$T/decoy"
# The agent profile with the audit log here; extra fields merged in.
policy_file() { # NAME JQ-FILTER
    "$BRIG" policy show agent | jq --arg a "$AUDIT" --arg t "$T" ".audit.path = \$a | del(.workspace.maxSize) | $2" > "$T/$1.json"
    echo "$T/$1.json"
}
ENF=$(policy_file enforce '.')

mkb hard -- /usr/bin/brig-probe report || bail "cannot build a bundle"
"$BRIG" policy apply --policy "$ENF" --workspace "$T/ws" --output "$T/hard/config.json" "$T/hard" ||
    bail "policy apply failed"
# Every bundle below shares hard's root by its real path (a symlinked rootfs
# is refused, as by runc).
jq --arg r "$T/hard/rootfs" '.root.path = $r' "$T/hard/config.json" > "$T/hard/c.json" &&
    mv "$T/hard/c.json" "$T/hard/config.json"

# with_bind NAME SOURCE DEST [SCRIPT]: the hardened bundle plus one bind
# (and /bin/sh -c SCRIPT as its process).
with_bind() {
    local name=$1 src=$2 dst=$3 script=${4:-}
    mkdir -p "$T/$name"
    jq --arg s "$src" --arg d "$dst" --arg c "$script" \
        '.mounts += [{"destination": $d, "type": "bind", "source": $s, "options": ["rbind"]}] |
         if $c != "" then .process.args = ["/bin/sh", "-c", $c] else . end' \
        "$T/hard/config.json" > "$T/$name/config.json"
}

# check_rule DESC POLICY CONFIG RULE [VALUE-SUBSTRING]: `policy check` exits
# 1 and the only failed rule is RULE (its value holding the substring).
check_rule() {
    local d=$1 pol=$2 conf=$3 rule=$4 sub=${5:-} out rc
    out=$("$BRIG" policy check --policy "$pol" --format json "$conf" 2>&1)
    rc=$?
    if [ "$rc" = 1 ] && jq -e --arg r "$rule" --arg v "$sub" \
        '([.results[] | select(.pass | not) | .rule] | unique == [$r]) and
         ([.results[] | select(.pass | not) | .value | contains($v)] | any)' <<<"$out" >/dev/null 2>&1; then
        ok "$d"
    else
        not_ok "$d" "exit $rc" "$out"
    fi
}

# refused DESC POLICY NAME RULE: create is refused naming RULE, nothing made.
refused() {
    local d=$1 pol=$2 name=$3 rule=$4 err rc
    CLEAN_IDS+=("$(cid "$name")")
    # Files, not $(...): a container the old brig made holds the pipe open.
    b --policy "$pol" create --bundle "$T/$name" "$(cid "$name")" </dev/null >"$T/$name.out" 2>"$T/$name.err"
    rc=$?
    if [ "$rc" != 0 ] && grep -q "refuses create: .*$rule" "$T/$name.err" && [ ! -e "$STATE/$(cid "$name")" ]; then
        ok "$d"
    else
        not_ok "$d" "exit $rc" "$(cat "$T/$name.err")"
    fi
    b delete --force "$(cid "$name")" >/dev/null 2>&1
}

check "the hardened config passes the check" "$BRIG" policy check --policy "$ENF" "$T/hard"

# ---- the built-in forbidden list holds the real paths -----------------------
# Judged by spelling (and by where a symlink leads): none of these needs to
# exist for `policy check` to refuse it. Each is a socket or a credential of
# a real deployment: the path it lives at, then the list entry that holds it.
declare -A REAL=(
    [/run/k3s/containerd/containerd.sock]=/run/k3s
    [/var/lib/rancher/k3s/server/token]=/var/lib/rancher
    [/etc/rancher/k3s/k3s.yaml]=/etc/rancher
    [/run/buildkit/buildkitd.sock]=/run/buildkit
    [/var/lib/buildkit]=/var/lib/buildkit
    [/var/snap/lxd/common/lxd/unix.socket]=/var/snap/lxd
    [/var/lib/lxd/unix.socket]=/var/lib/lxd
    [/var/lib/incus/unix.socket]=/var/lib/incus
    [/run/incus]=/run/incus
    [/run/libvirt/libvirt-sock]=/run/libvirt
    [/var/lib/libvirt/images]=/var/lib/libvirt
    [/etc/libvirt/hooks]=/etc/libvirt
    [/run/dbus/system_bus_socket]=/run/dbus
    [/run/systemd/private]=/run/systemd
    [/var/lib/kubelet/pods]=/var/lib/kubelet
    [/etc/kubernetes/admin.conf]=/etc/kubernetes
    [/var/lib/etcd/member]=/var/lib/etcd
    [/var/lib/containers/storage]=/var/lib/containers
    [/run/containers/0/auth.json]=/run/containers
    [/etc/containers/policy.json]=/etc/containers
    [/run/podman/podman.sock]=/run/podman
    [/etc/docker/daemon.json]=/etc/docker
    [/etc/containerd/config.toml]=/etc/containerd
)
n=0
for src in "${!REAL[@]}"; do
    n=$((n + 1))
    with_bind "real$n" "$src" /mnt/x
    check_rule "check refuses a bind of $src (forbidden ${REAL[$src]})" "$ENF" "$T/real$n/config.json" \
        mounts.forbidden "forbidden host path ${REAL[$src]}"
done
# A parent holds them: binding /var/snap exposes LXD's socket.
with_bind parent /var/snap /mnt/x
check_rule "check refuses a bind of /var/snap (holds /var/snap/lxd)" "$ENF" "$T/parent/config.json" \
    mounts.forbidden "/var/snap/lxd"
# create refuses them too, existing (/run/dbus here) or not.
with_bind dbus /run/dbus /run/dbus
refused "create refuses a bind of /run/dbus" "$ENF" dbus mounts.forbidden
with_bind kubelet /var/lib/kubelet /var/lib/kubelet
refused "create refuses a bind of /var/lib/kubelet" "$ENF" kubelet mounts.forbidden

# The same through decoys the policy adds: a symlink in the test's dir that
# leads to a decoy "/run/k3s" is judged by where it leads.
mkdir -p "$T/decoy/run/k3s/containerd"
ln -sfn "$T/decoy/run/k3s" "$T/innocent"
DEC=$(policy_file decoys '.forbiddenPaths = [$t + "/decoy/run/k3s"]')
with_bind decoy "$T/innocent/containerd" /mnt/x
check_rule "a symlink to a forbidden decoy is judged by where it leads" "$DEC" "$T/decoy/config.json" \
    mounts.forbidden "$T/decoy/run/k3s"
refused "create refuses the symlink to the decoy" "$DEC" decoy mounts.forbidden

# ---- UNIX sockets: judged by what the source is ------------------------------
# A listening socket with an innocent name, and a symlink to it.
python3 - "$T/decoy/agent.txt" <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); time.sleep(600)
EOF
SOCK_PID=$!
n=50; while [ $n -gt 0 ] && [ ! -S "$T/decoy/agent.txt" ]; do sleep 0.1; n=$((n - 1)); done
[ -S "$T/decoy/agent.txt" ] || bail "the test's socket did not come up"
ln -sfn "$T/decoy/agent.txt" "$T/notes"
SH='if test -S /run/agent.sock; then echo SOCKET; elif test -d /run/agent.sock; then echo DIR; else echo ABSENT; fi'

with_bind sock "$T/decoy/agent.txt" /run/agent.sock "$SH"
check_rule "check refuses a bind of a UNIX socket" "$ENF" "$T/sock/config.json" mounts.sockets \
    "is a UNIX socket"
refused "create refuses a bind of a UNIX socket" "$ENF" sock mounts.sockets
CLEAN_IDS+=("$(cid sock-run)")
b --policy "$ENF" run --bundle "$T/sock" "$(cid sock-run)" </dev/null >"$T/sock.out" 2>"$T/sock.err"
RC=$?
if [ "$RC" != 0 ] && grep -q "refuses create: mounts.sockets" "$T/sock.err" && ! grep -q SOCKET "$T/sock.out"; then
    ok "run refuses a bind of a UNIX socket"
else
    not_ok "run refuses a bind of a UNIX socket" "exit $RC" "$(cat "$T/sock.err" "$T/sock.out")"
fi
with_bind link "$T/notes" /run/agent.sock "$SH"
check_rule "check refuses a symlink to a socket, naming where it leads" "$ENF" "$T/link/config.json" \
    mounts.sockets "-> $T/decoy/agent.txt"
refused "create refuses a symlink to a socket" "$ENF" link mounts.sockets

# A config made the way users make them (`runc spec`), hardened by apply,
# then given the socket: refused the same way.
if command -v runc >/dev/null; then
    mkdir -p "$T/runc"
    (cd "$T/runc" && runc spec) &&
        jq '.process.terminal = false | .linux.cgroupsPath = "/brig-test/" + $id | .root.path = $r' --arg id "$(cid runc)" --arg r "$T/hard/rootfs" \
            "$T/runc/config.json" > "$T/runc/c.json" &&
        "$BRIG" policy apply --policy "$ENF" --workspace "$T/ws" --output "$T/runc/config.json" "$T/runc/c.json" &&
        jq --arg s "$T/notes" '.mounts += [{"destination": "/run/agent.sock", "type": "bind", "source": $s, "options": ["rbind"]}]' \
            "$T/runc/config.json" > "$T/runc/c.json" && mv "$T/runc/c.json" "$T/runc/config.json"
    refused "create refuses a socket bound into a runc spec config" "$ENF" runc mounts.sockets
else
    skip "create refuses a socket bound into a runc spec config" "runc is not installed"
fi

# The policy names the socket: allowed, and the container sees it.
ALLOW=$(policy_file allow '.sockets = [$t + "/decoy/agent.txt"]')
check "check allows the socket the policy names" "$BRIG" policy check --policy "$ALLOW" "$T/sock"
CLEAN_IDS+=("$(cid sock-ok)")
b --policy "$ALLOW" run --bundle "$T/sock" "$(cid sock-ok)" </dev/null >"$T/sock-ok.out" 2>"$T/sock-ok.err"
RC=$?
if [ "$RC" = 0 ] && grep -q SOCKET "$T/sock-ok.out"; then
    ok "a container under a policy naming the socket gets it"
else
    not_ok "a container under a policy naming the socket gets it" "exit $RC" "$(cat "$T/sock-ok.err")"
fi
assert_clean sock-ok
# Naming the symlink is not naming the socket: judged by what it is.
LNK=$(policy_file allowlink '.sockets = [$t + "/notes"]')
check_rule "a policy naming the symlink does not allow the socket" "$LNK" "$T/link/config.json" \
    mounts.sockets "$T/decoy/agent.txt"
check "a policy naming the socket allows a symlink to it" "$BRIG" policy check --policy "$ALLOW" "$T/link"
# A forbidden socket cannot be allowed: the policy itself is refused.
BAD=$(policy_file badsock '.sockets = ["/var/run/docker.sock"]')
out=$("$BRIG" policy check --policy "$BAD" "$T/hard" 2>&1)
rc=$?
if [ "$rc" = 2 ] && grep -q 'sockets\[0\]: "/var/run/docker.sock" is a forbidden host path' <<<"$out"; then
    ok "a policy allowing a forbidden socket is bad input"
else
    not_ok "a policy allowing a forbidden socket is bad input" "exit $rc" "$out"
fi
# apply drops a socket bind, as it drops a forbidden one.
"$BRIG" policy apply --policy "$ENF" --workspace "$T/ws" "$T/sock/config.json" > "$T/sock-applied.json"
check "apply drops the socket bind" jq -e --arg s "$T/decoy/agent.txt" \
    '[.mounts[] | select(.source == $s)] | length == 0' "$T/sock-applied.json"

# ---- a source swapped between a plain file and a socket during create -------
# The swapper exchanges $T/swap/src (a plain file) and $T/swap/alt (a socket)
# (every 20 ms, so that creates see both sides); each create opens the source once and judges, then
# mounts, what it opened: a socket is refused, never mounted.
cat > "$T/swapper.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    useconds_t pause = argc > 3 ? (useconds_t)atoi(argv[3]) : 0;
    for (;;) {
        renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE);
        if (pause) usleep(pause);
    }
}
EOF
build_static "$T/swapper" "$T/swapper.c"
mkdir -p "$T/swap" && echo notes > "$T/swap/src"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/swap/alt"
SWAP_ALLOW=$(policy_file swapallow '.')
"$T/swapper" "$T/swap/src" "$T/swap/alt" 20000 &
SWAP_PID=$!
with_bind swap "$T/swap/src" /run/swapped \
    'if test -S /run/swapped; then echo SOCKET; elif test -f /run/swapped; then echo FILE; else echo ABSENT; fi'
sockets=0 files=0 refusals=0
for i in $(seq 1 20); do
    CLEAN_IDS+=("$(cid "swap$i")")
    b --policy "$SWAP_ALLOW" run --bundle "$T/swap" "$(cid "swap$i")" </dev/null >"$T/swap$i.out" 2>"$T/swap$i.err"
    if grep -q SOCKET "$T/swap$i.out"; then sockets=$((sockets + 1))
    elif grep -q "refuses create: mounts.sockets" "$T/swap$i.err"; then refusals=$((refusals + 1))
    elif grep -q FILE "$T/swap$i.out"; then files=$((files + 1)); fi
done
kill "$SWAP_PID" 2>/dev/null; wait "$SWAP_PID" 2>/dev/null
diag "swapped source: $files runs saw the file, $refusals refused the socket, $sockets saw a socket"
check_eq "a swapped source never mounts a socket" "$sockets" 0
if [ $((files + refusals)) -gt 0 ]; then ok "the swap race ran (creates judged both sides)"
else not_ok "the swap race ran (creates judged both sides)" "$(cat "$T/swap1.err")"; fi

kill "$SOCK_PID" 2>/dev/null; wait "$SOCK_PID" 2>/dev/null
check "the audit log records the refusals" jq -se \
    '[.[] | select(.op == "create" and .decision == "deny" and (.rules | index("mounts.sockets")))] | length >= 3' "$AUDIT"
