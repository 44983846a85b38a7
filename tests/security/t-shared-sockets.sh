#!/usr/bin/env bash
# A policy refuses a bound UNIX socket (mounts.sockets), but a bound
# directory holding one gives the container the same connect(2): pathname
# sockets are not in the network namespace, so network "none" does not
# help. /tmp is where every user's services keep theirs (tmux-UID/default,
# ssh-XXXX/agent.N, .X11-unix/X0): with /tmp as the workspace, the agent's
# uid 1000 drove the host user 1000's tmux server (send-keys: commands in
# the user's shells, outside the sandbox). A world-writable sticky
# directory is refused as a bind source under a policy, judged by what it
# is, whatever it is called. The "host service" is a small static program
# compiled here, listening in a decoy sticky directory in the test's temp
# dir.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

cat >"$T/u.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* serve PATH: accept one client, greet it, exit (30 s at most).
 * connect PATH: print what the service says. */
int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", argv[2]);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0) { perror("socket"); return 1; }
    if (strcmp(argv[1], "serve") == 0) {
        alarm(30);
        unlink(a.sun_path);
        if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 1) < 0) { perror("bind"); return 1; }
        int c = accept(s, NULL, NULL);
        if (c >= 0) (void)!write(c, "HOST-SERVICE-REACHED\n", 21);
        return 0;
    }
    if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) { printf("connect: %m\n"); return 0; }
    char buf[64] = { 0 };
    (void)!read(s, buf, sizeof(buf) - 1);
    printf("got: %s", buf);
    return 0;
}
EOF
build_static "$T/u" "$T/u.c"

"$BRIG" policy show agent | jq --arg a "$T/audit.jsonl" '.audit.path = $a' >"$T/agent.json"
# The decoy /tmp: world-writable, sticky, with a service of uid 1000 in a
# private subdirectory, as tmux keeps /tmp/tmux-1000/default.
mkdir -p "$T/shared/tmux-1000" "$T/ws"
chmod 1777 "$T/shared"
chown 1000:1000 "$T/shared/tmux-1000"
chmod 0700 "$T/shared/tmux-1000"
SOCK=$T/shared/tmux-1000/default

# agentb NAME: an agent-hardened bundle (workspace $T/ws) connecting to the
# service through its workspace.
agentb() {
    mkb "$1" -- /u connect /workspace/tmux-1000/default || bail "cannot build bundle $1"
    cp "$T/u" "$T/$1/rootfs/u"
    "$BRIG" policy apply --policy "$T/agent.json" --workspace "$T/ws" --output "$T/$1/config.json" \
        "$T/$1" >"$T/$1.apply" 2>&1 || bail "policy apply failed: $(head -c 300 "$T/$1.apply")"
}
# prun NAME [create]: brig --policy agent run (or create + start).
prun() {
    CLEAN_IDS+=("$(cid "$1")")
    b --policy "$T/agent.json" "${2:-run}" --bundle "$T/$1" "$(cid "$1")" </dev/null \
        >"$T/$1.out" 2>"$T/$1.err"
    RC=$?
    if [ "${2:-run}" = create ] && [ $RC = 0 ]; then
        b start "$(cid "$1")" >/dev/null 2>&1
        wait_status "$(cid "$1")" stopped 10 || true
    fi
}

# ---- the attack: the workspace's source swapped for the /tmp-like dir ----------------
agentb tmp
check "policy apply refuses a shared sticky directory as the workspace" \
    eval '! "$BRIG" policy apply --policy "$T/agent.json" --workspace "$T/shared" --output "$T/x.json" \
        "$T/tmp" >/dev/null 2>&1'
cfg tmp '(.mounts[] | select(.destination == "/workspace") | .source) = $s' --arg s "$T/shared"
for mode in run create; do
    setpriv --reuid 1000 --regid 1000 --clear-groups "$T/u" serve "$SOCK" &
    SERVER=$!
    for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
    prun tmp "$mode"
    check_not "$mode: the container did not reach a host service in a shared sticky workspace" \
        grep -q HOST-SERVICE-REACHED "$T/tmp.out"
    check "$mode: refused, naming mounts.sockets" \
        eval '[ "$RC" != 0 ] && grep -q "mounts.sockets.*sticky" "$T/tmp.err"'
    kill "$SERVER" 2>/dev/null
    wait "$SERVER" 2>/dev/null
    b delete -f "$(cid tmp)" >/dev/null 2>&1
    assert_clean tmp
done
# The same directory as the container's root (readonly, as the agent has it).
cp "$T/u" "$T/shared/u"
agentb root
cfg root '.root.path = $s | .process.args = ["/u", "connect", "/tmux-1000/default"]' --arg s "$T/shared"
setpriv --reuid 1000 --regid 1000 --clear-groups "$T/u" serve "$SOCK" &
SERVER=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
prun root
check_not "root.path: the container did not reach a host service through its root" \
    grep -q HOST-SERVICE-REACHED "$T/root.out"
check "root.path: refused, naming mounts.sockets" \
    eval '[ "$RC" != 0 ] && grep -q "mounts.sockets.*root.path.*sticky" "$T/root.err"'
kill "$SERVER" 2>/dev/null
wait "$SERVER" 2>/dev/null
b delete -f "$(cid root)" >/dev/null 2>&1
assert_clean root

check "policy check names the shared sticky directory" \
    eval '"$BRIG" policy check --policy "$T/agent.json" "$T/tmp" 2>&1 | grep -q "sticky"'

# ---- use: a workspace of the user's own still works -----------------------------------
agentb own
prun own
check "use: an agent container with a plain workspace runs" [ "$RC" = 0 ]
check "use: nothing to connect to there" grep -q '^connect:' "$T/own.out"
assert_clean own
