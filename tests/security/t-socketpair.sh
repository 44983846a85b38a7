#!/usr/bin/env bash
# The default seccomp profile allows socket(2) only for AF_UNIX, AF_INET,
# AF_INET6, AF_NETLINK and AF_PACKET: the other families are not namespaced
# (AF_VSOCK reaches the hypervisor) or rarely used kernel code, loaded on
# demand (net-pf-N). socketpair(2) creates its two sockets through the same
# family code (and the same module autoload) before the family says whether
# it has pairs; it was allowed for every family. It must be AF_UNIX only.
# AF_VSOCK is the probe: built into this kernel, it answers a socketpair the
# filter lets through with EOPNOTSUPP (after creating its sockets), while
# the filter's denial is EPERM. No module is loaded by this test.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
grep -q '^AF_VSOCK' /proc/net/protocols 2>/dev/null ||
    skip_all "AF_VSOCK is not registered in this kernel (the probe family; no module is loaded here)"

cat >"$T/sp.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* For each family: errno of socketpair(fam, SOCK_STREAM) and of socket(),
 * the family passed with high bits set too (the kernel reads an int). */
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        unsigned long fam = strtoul(argv[i], NULL, 0);
        int sv[2];
        long r = syscall(SYS_socketpair, fam, SOCK_STREAM, 0, sv);
        int pe = r < 0 ? errno : 0;
        if (r == 0) { close(sv[0]); close(sv[1]); }
        r = syscall(SYS_socketpair, (1UL << 32) | fam, SOCK_STREAM, 0, sv);
        int he = r < 0 ? errno : 0;
        if (r == 0) { close(sv[0]); close(sv[1]); }
        r = syscall(SYS_socket, fam, SOCK_STREAM, 0);
        int se = r < 0 ? errno : 0;
        if (r >= 0) close((int)r);
        printf("fam=%lu pair=%d pairhi=%d socket=%d\n", fam, pe, he, se);
    }
    return 0;
}
EOF
build_static "$T/sp" "$T/sp.c"

"$BRIG" policy show agent | jq --arg a "$T/audit.jsonl" '.audit.path = $a' >"$T/agent.json"
mkdir -p "$T/ws"
mkb ag -- /sp 40 1 || bail "cannot build a bundle"
cp "$T/sp" "$T/ag/rootfs/sp"
"$BRIG" policy apply --policy "$T/agent.json" --workspace "$T/ws" --output "$T/ag/config.json" "$T/ag" \
    >"$T/apply.err" 2>&1 || bail "policy apply failed: $(head -c 300 "$T/apply.err")"
CLEAN_IDS+=("$(cid ag)")
b --policy "$T/agent.json" run --bundle "$T/ag" "$(cid ag)" </dev/null >"$T/ag.out" 2>"$T/ag.err"
RC=$?
diag "$(cat "$T/ag.out")"
check "the container ran under the agent policy" [ "$RC" = 0 ]
vs=$(grep '^fam=40 ' "$T/ag.out")
check "control: socket(AF_VSOCK) is denied by the filter (EPERM)" grep -q ' socket=1$' <<<"$vs"
check "socketpair(AF_VSOCK) is denied by the filter (EPERM), not answered by vsock" \
    grep -q ' pair=1 ' <<<"$vs"
check "socketpair(AF_VSOCK) with high bits in the family is denied (EPERM)" grep -q ' pairhi=1 ' <<<"$vs"
check "use: socketpair(AF_UNIX) works" grep -q '^fam=1 pair=0 ' "$T/ag.out"
assert_clean ag
