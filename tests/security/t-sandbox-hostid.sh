#!/usr/bin/env bash
# Every sandbox is a host identity of its own (docs/sandbox.md, "Host
# identity"). Per-user kernel counters (inotify instances, POSIX message
# queue bytes, ...) were uid 1000's for every sandbox and for the host's
# uid 1000: one sandbox that took all 128 inotify instances (or its
# message-queue allowance) left a second sandbox and the host's user with
# EMFILE. The attack: a hog exec'd into a long-lived sandbox takes every
# inotify instance, then every message queue, it can and holds them; then
# a second sandbox, a host process of uid 1000 and one of root each take
# one. Since Linux 5.11 the counters are charged at every level of the
# user-namespace chain, at the host's level to the namespace's owner: a
# namespace made by root would move the sharing to root, hence the root
# probe. Also checked from the host: each sandbox's ids 0-65535 are a slot
# of brig's range (root inside is no host user), its user namespace is
# owned by that slot's first id, and concurrent sandboxes never share one.
# Against the old binary the second sandbox and the host's uid 1000 get
# EMFILE.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is not installed"
command -v python3 >/dev/null || skip_all "python3 is needed to read a user namespace's owner"
SRC=$BRIG_SECURITY_SRC/sandbox-hostid
ROOTFS=$T/rootfs
busybox_rootfs "$ROOTFS" sh true cat
build_static "$ROOTFS/usr/bin/hog" "$SRC/hog.c"
build_static "$T/hog" "$SRC/hog.c"
chmod 0755 "$T/hog"
mkdir -p "$T/wsa" "$T/wsb"
SB_STATE=$T/sbstate
A=hid-a-$TAG
sbx() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$SB_STATE" "${@:2}"; }
trap 'rc=$?; exec 9>&-; sbx rm --force "$A" >/dev/null 2>&1; (exit $rc); it_finish' EXIT
sbx create --rootfs "$ROOTFS" --workspace "$T/wsa" --env "BRIG_IT_TAG=$TAG-sb" "$A" >/dev/null
check_eq "create: exit 0" "$?" 0

# ---- who a sandbox is on the host ----
pid=$(sbx ls --json | jq -r --arg n "$A" '.[] | select(.name == $n) | .pid')
read -r in base size < "/proc/$pid/uid_map"
read -r gin gbase gsize < "/proc/$pid/gid_map"
diag "sandbox $A: ids 0-65535 are host ids $base-$((base + size - 1))"
check_eq "its ids 0-65535 are mapped, uid and gid alike" "$in $size $gin $gbase $gsize" "0 65536 0 $base 65536"
check "they are a slot of brig's default range (1879048192 + k * 65536)" \
    test "$base" -ge 1879048192 -a "$base" -lt $((1879048192 + 1024 * 65536)) -a $((base % 65536)) = 0
check_not "root inside is no host user (/etc/passwd)" grep -q "^[^:]*:[^:]*:$base:" /etc/passwd
check_eq "its init runs as host uid base + 1000 (the policy's user)" \
    "$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")" $((base + 1000))
owner=$(python3 -c 'import fcntl, struct, sys
fd = open(sys.argv[1], "rb")
b = bytearray(4)
fcntl.ioctl(fd, 0xb704, b)                       # NS_GET_OWNER_UID
print(struct.unpack("I", b)[0])' "/proc/$pid/ns/user")
check_eq "its user namespace is owned by the slot's first id, not by root" "$owner" "$base"

# eight one-shot runs at once: eight different slots
for i in 1 2 3 4 5 6 7 8; do
    sbx run --json --rootfs "$ROOTFS" --workspace "$T/wsb" -- cat /proc/self/uid_map > "$T/c$i.json" 2>> "$T/brig.err" &
done
wait
bases=$(for i in 1 2 3 4 5 6 7 8; do jq -r .stdout.preview_head "$T/c$i.json" | awk '{print $2}'; done)
check_eq "8 concurrent runs: 8 different host id slots, none the long-lived sandbox's" \
    "$( (echo "$bases"; echo "$base") | sort -u | grep -c .)" 9

# ---- the counters: one sandbox takes all it can ----
for kind in inotify mqueue; do
    # the hog holds what it took until its stdin ends: fd 9 is its writer
    rm -f "$T/release" && mkfifo "$T/release"
    sbx exec "$A" --stdin - -- /usr/bin/hog hog "$kind" < "$T/release" > "$T/hog-$kind.out" 2>&1 &
    hp=$!
    exec 9> "$T/release"
    wait_until 30 grep -q "^TOOK" "$T/hog-$kind.out"
    read -r _ took why < <(grep "^TOOK" "$T/hog-$kind.out")
    diag "$kind: the hog in $A took ${took:-?} before ${why:-?}"
    check "$kind: the hog took some and then hit the limit (EMFILE)" test "${took:-0}" -gt 0 -a "${why:-}" = EMFILE
    res=$(sbx run --json --rootfs "$ROOTFS" --workspace "$T/wsb" -- /usr/bin/hog probe "$kind" 2>> "$T/brig.err" |
          jq -r .stdout.preview_head)
    check_eq "$kind: a second sandbox still gets its own" "$res" GOT
    check_eq "$kind: a host process of uid 1000 still gets one" \
        "$(setpriv --reuid 1000 --regid 1000 --clear-groups "$T/hog" probe "$kind")" GOT
    check_eq "$kind: a host process of root still gets one" "$("$T/hog" probe "$kind")" GOT
    exec 9>&-
    wait "$hp"
done

sbx rm --force "$A" >/dev/null
check_eq "rm: nothing of the sandboxes left" "$(tagged_pids "$TAG-sb" | tr '\n' ' ')" ""
