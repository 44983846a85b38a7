#!/usr/bin/env bash
# Host device events into a sandbox: a command opens an AF_NETLINK socket of
# protocol NETLINK_KOBJECT_UEVENT (or another host-wide netlink family) and
# listens while the test attaches and detaches a loop device on the host.
# The default seccomp profile lets netlink sockets be made only of
# NETLINK_ROUTE (the sandbox's own interfaces), and the policy rule
# seccomp.netlink fails a config whose filter lets any other protocol in
# (check, and create in enforce mode). Use side: NETLINK_ROUTE still works.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v losetup >/dev/null || skip_all "no losetup (util-linux)"

R=$T/rootfs
busybox_rootfs "$R" sh true
build_static "$R/usr/bin/uevent-listen" "$BRIG_SECURITY_SRC/netlink-uevent/uevent-listen.c"
# a workspace of its own small filesystem (the agent profile's bound then
# holds without staging): the host sees the listener's ready file at once
WS=$T/ws
mkdir -p "$WS" && mount -t tmpfs -o size=16m,mode=0755 brig-test "$WS" && chown 1000:1000 "$WS" ||
    bail "cannot make the workspace"
truncate -s 1M "$T/disk.img" || bail "cannot make the loop image"
LOOPS=()
trap 'for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done; it_finish' EXIT

# listen PROTO [WAIT_S]: the listener in a sandbox (agent policy) while the host
# attaches and detaches a loop device once the listener is bound; its
# output in $T/listen.out. Sets ATTACHED when a loop device was attached.
listen() {
    rm -f "$WS/ready"
    timeout -k 5 60 "$BRIG" sandbox run --state-root "$T/sb" --rootfs "$R" --workspace "$WS" \
        -- /usr/bin/uevent-listen /workspace/ready "$1" "${2:-20}" > "$T/listen.out" 2> "$T/listen.err" &
    local pid=$! i loop
    ATTACHED=
    # the listener is bound once it made the file; a refused one exits first
    for i in $(seq 600); do
        [ -e "$WS/ready" ] && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.05
    done
    if [ -e "$WS/ready" ] && loop=$(losetup -f --show "$T/disk.img" 2>"$T/losetup.err"); then
        LOOPS+=("$loop")
        ATTACHED=$loop
        losetup -d "$loop"
    fi
    wait $pid
    RC=$?
}

listen 15
check_eq "the listener ran (exit 0)" "$RC" 0 || diag "$(cat "$T/listen.out" "$T/listen.err")"
check "NETLINK_KOBJECT_UEVENT: socket() refused inside the sandbox" grep -qx "REFUSED EPERM" "$T/listen.out"
check_not "no host device event reached the sandbox" grep -q "^EVENT" "$T/listen.out"
diag "the listener saw: $(tr -c '[:print:]\n' ' ' < "$T/listen.out" | head -c 300) (loop device attached: ${ATTACHED:-none})"
check "NETLINK_ROUTE still opens (the sandbox's own interfaces)" grep -qx "ROUTE ok" "$T/listen.out"
# Every other netlink family is as refused: audit (9), generic (16, its
# families are not all namespaced), sock_diag (4), connector (11).
for p in 4 9 11 16; do
    listen $p 2
    check "netlink protocol $p refused inside the sandbox" grep -qx "REFUSED EPERM" "$T/listen.out"
done

# ---- the policy rule: a filter that lets other protocols in fails ----------
# shellcheck source=tests/security/policy-lib.sh
. "$(dirname "$0")/policy-lib.sh"
# the netlink rule as it was: any protocol
weaken nl-any '.linux.seccomp.syscalls |= map(if .names == ["socket"] and any(.args[]; .valueTwo == 16) then .args = [{"index": 0, "value": 4294967295, "valueTwo": 16, "op": "SCMP_CMP_MASKED_EQ"}] else . end)'
# a second condition on the family turns every condition into a rule of
# its own (ORed, as runc): "family 16" alone then allows any protocol,
# though read as ANDed conditions the rule could match nothing
weaken nl-or '.linux.seccomp.syscalls += [{"names": ["socket"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": 16, "op": "SCMP_CMP_EQ"}, {"index": 0, "value": 2, "op": "SCMP_CMP_EQ"}, {"index": 2, "value": 0, "op": "SCMP_CMP_EQ"}]}]'
# protocol 15 through the high 32 bits the kernel ignores
weaken nl-high '.linux.seccomp.syscalls += [{"names": ["socket"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": 4294967295, "valueTwo": 16, "op": "SCMP_CMP_MASKED_EQ"}, {"index": 2, "value": 4294967311, "op": "SCMP_CMP_EQ"}]}]'
# a range of protocols (GT 0)
weaken nl-gt '.linux.seccomp.syscalls += [{"names": ["socket"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": 16, "op": "SCMP_CMP_EQ"}, {"index": 2, "value": 0, "op": "SCMP_CMP_GT"}]}]'
# socket allowed unconditionally (Docker's own default profile does)
weaken nl-all '.linux.seccomp.syscalls += [{"names": ["socket"], "action": "SCMP_ACT_ALLOW"}]'
# a log action lets the call run as well
weaken nl-log '.linux.seccomp.syscalls += [{"names": ["socket"], "action": "SCMP_ACT_LOG", "args": [{"index": 0, "value": 16, "op": "SCMP_CMP_EQ"}]}]'
# Not bypasses: only protocol 0 (ROUTE), or protocol 15 under an errno action.
weaken nl-route '.linux.seccomp.syscalls += [{"names": ["socket"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": 16, "op": "SCMP_CMP_EQ"}, {"index": 2, "value": 4294967295, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]}]'
weaken nl-errno '.linux.seccomp.syscalls += [{"names": ["socket"], "action": "SCMP_ACT_ERRNO", "args": [{"index": 0, "value": 16, "op": "SCMP_CMP_EQ"}]}]'

for w in nl-any nl-or nl-high nl-gt nl-all nl-log; do
    out=$("$BRIG" policy check --policy "$ENF" --format json "$T/$w/config.json" 2>&1)
    rc=$?
    if [ "$rc" = 1 ] && jq -e '[.results[] | select(.pass | not) | .rule] | unique == ["seccomp.netlink"]' <<<"$out" >/dev/null; then
        ok "check catches $w as seccomp.netlink"
    else
        not_ok "check catches $w as seccomp.netlink" "exit $rc" "$out"
    fi
done
check_refused "enforce mode refuses nl-any at create, nothing made" "refuses create: seccomp.netlink" \
    b --policy "$ENF" create --bundle "$T/nl-any" "$(cid nl-any)"
check_not "... no state left" test -e "$STATE/$(cid nl-any)"
for w in nl-route nl-errno; do
    check "check passes $w (ROUTE only, or a refusal)" "$BRIG" policy check --policy "$ENF" "$T/$w/config.json"
done
