#!/usr/bin/env bash
# The policy accepts Docker's libnetwork-setkey prestart hook by its shape:
# /proc/PID/exe of a root-owned binary named dockerd (policy/policy_engine.c).
# Any container image can hold a root-owned /usr/bin/dockerd: with the PID
# of a container running it, the hook would run the image's program on the
# host, as root, at create. Attack: a decoy container runs a hostile
# "dockerd" (compiled here); a config names its /proc/PID/exe as the setkey
# hook. `policy check` must fail it (hooks) and `create --policy` refuse it,
# and the hostile program must never run on the host. Use: a dockerd of
# the host's own mount namespace, running as root, still passes; with an
# env in the hook (LD_PRELOAD of the author's library) it does not.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/security/policy-lib.sh
. "$(dirname "$0")/policy-lib.sh"

# Hook mode (argv: libnetwork-setkey -exec-root=MARK ID SHORTID): write MARK.
# Otherwise wait, as a daemon would.
cat > "$T/fake-dockerd.c" <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    if (getenv("NODUMP")) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);   /* /proc/PID then shows root */
    if (argc == 4 && strncmp(argv[1], "-exec-root=", 11) == 0) {
        int fd = open(argv[1] + 11, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) write(fd, "ran on the host as root\n", 24);
        return 0;
    }
    for (;;) pause();
}
C
build_static "$T/fake-dockerd" "$T/fake-dockerd.c"

ID=$(printf '%064d' 7 | tr 0 a)
hook_at() { # NAME PID MARK: $T/hard with the setkey hook of /proc/PID/exe
    weaken "$1" '.'
    cfg "$1" '.hooks.prestart = [{"path": ("/proc/" + $pid + "/exe"), "args": ["libnetwork-setkey", ("-exec-root=" + $m), $id, "0123456789ab"]}]' \
        --arg pid "$2" --arg m "$3" --arg id "$ID"
}

# ---- attack: a container's process named dockerd ----
mkb decoy -- /usr/bin/dockerd || bail "cannot build the decoy bundle"
install -m 0755 "$T/fake-dockerd" "$T/decoy/rootfs/usr/bin/dockerd"
create_ct decoy
[ "$RC" = 0 ] || bail "decoy create failed: $(head -c 500 "$T/decoy.err")"
b start "$(cid decoy)" >/dev/null 2>&1 || bail "decoy start failed"
dpid=
for _ in $(seq 50); do
    dpid=$(state_field "$(cid decoy)" pid)
    [ -n "$dpid" ] && [ "$(readlink "/proc/$dpid/exe" 2>/dev/null)" = /usr/bin/dockerd ] && break
    sleep 0.1
done
[ "$(readlink "/proc/$dpid/exe" 2>/dev/null)" = /usr/bin/dockerd ] ||
    bail "the decoy does not run its /usr/bin/dockerd (pid '$dpid')"

hook_at w-hook "$dpid" "$T/pwned"
jq -e '.hooks.prestart[0].args | length == 4' "$T/w-hook/config.json" >/dev/null || bail "hook config not made"
check_refused "check: the setkey hook of a container's \"dockerd\" fails hooks" \
    "FAIL hooks hooks.prestart[0].path" 1 "$BRIG" policy check --policy "$ENF" "$T/w-hook"
check_refused "create --policy: the setkey hook of a container's \"dockerd\" is refused" \
    "hooks run on the host as root" 1 b --policy "$ENF" create --bundle "$T/w-hook" "$(cid w-hook)"
CLEAN_IDS+=("$(cid w-hook)")
b start "$(cid w-hook)" >/dev/null 2>&1
if [ -e "$T/pwned" ]; then
    not_ok "the container's program never runs on the host" "$(cat "$T/pwned")"
else
    ok "the container's program never runs on the host"
fi
b delete --force "$(cid w-hook)" >/dev/null 2>&1
assert_clean w-hook

# ---- use: a root dockerd of the host's mount namespace ----
mkdir -p "$T/engine"
install -m 0755 "$T/fake-dockerd" "$T/engine/dockerd"
"$T/engine/dockerd" </dev/null >/dev/null 2>&1 &
hpid=$!
for _ in $(seq 50); do
    [ "$(readlink "/proc/$hpid/exe" 2>/dev/null)" = "$T/engine/dockerd" ] && break
    sleep 0.1
done
hook_at u-hook "$hpid" "$T/used"
check "check: the setkey hook of the host's root dockerd passes" "$BRIG" policy check --policy "$ENF" "$T/u-hook"
kill "$hpid" 2>/dev/null
wait "$hpid" 2>/dev/null

# ---- attack: a user's process of the host's root-owned dockerd ----
# Non-dumpable, so the files of /proc/PID are root's; its uids are the user's.
NODUMP=1 setpriv --reuid=65534 --regid=65534 --clear-groups "$T/engine/dockerd" </dev/null >/dev/null 2>&1 &
upid=$!
for _ in $(seq 50); do
    [ "$(readlink "/proc/$upid/exe" 2>/dev/null)" = "$T/engine/dockerd" ] && break
    sleep 0.1
done
sleep 0.2   # past its prctl
hook_at w-user "$upid" "$T/user-mark"
check_refused "check: the setkey hook of a non-root process of a root-owned dockerd fails hooks" \
    "FAIL hooks hooks.prestart[0].path" 1 "$BRIG" policy check --policy "$ENF" "$T/w-user"
kill "$upid" 2>/dev/null
wait "$upid" 2>/dev/null

# ---- attack: the host's own dockerd, with the hook's env ----
# A dynamically linked dockerd honours LD_PRELOAD: the hook would load the
# config author's library into a root process on the host.
cat > "$T/evil.c" <<'C'
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void)
{
    int fd = open(EVIL_MARK, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) write(fd, "preloaded as root\n", 18);
}
C
cc -shared -fPIC -DEVIL_MARK="\"$T/preloaded\"" -o "$T/evil.so" "$T/evil.c" 2>"$T/evil.cc.log" ||
    bail "cannot compile evil.c: $(head -c 300 "$T/evil.cc.log")"
cc -O1 -o "$T/engine/dockerd" "$T/fake-dockerd.c" 2>"$T/dyn.cc.log" ||
    bail "cannot compile a dynamic dockerd: $(head -c 300 "$T/dyn.cc.log")"
"$T/engine/dockerd" </dev/null >/dev/null 2>&1 &
hpid=$!
for _ in $(seq 50); do
    [ "$(readlink "/proc/$hpid/exe" 2>/dev/null)" = "$T/engine/dockerd" ] && break
    sleep 0.1
done
hook_at w-env "$hpid" "$T/env-mark"
cfg w-env '.hooks.prestart[0].env = ["LD_PRELOAD=" + $so]' --arg so "$T/evil.so"
check_refused "check: the setkey hook with an env (LD_PRELOAD) fails hooks" \
    "FAIL hooks hooks.prestart[0].path" 1 "$BRIG" policy check --policy "$ENF" "$T/w-env"
check_refused "create --policy: the setkey hook with an env is refused" \
    "hooks run on the host as root" 1 b --policy "$ENF" create --bundle "$T/w-env" "$(cid w-env)"
CLEAN_IDS+=("$(cid w-env)")
b start "$(cid w-env)" >/dev/null 2>&1
if [ -e "$T/preloaded" ]; then
    not_ok "the author's library is never loaded into the hook" "$(cat "$T/preloaded")"
else
    ok "the author's library is never loaded into the hook"
fi
kill "$hpid" 2>/dev/null
wait "$hpid" 2>/dev/null
b delete --force "$(cid w-env)" >/dev/null 2>&1
assert_clean w-env

b delete --force "$(cid decoy)" >/dev/null 2>&1
assert_clean decoy
