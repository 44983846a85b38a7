#!/usr/bin/env bash
# Security review findings (docs/threat-model.md), one test each:
#  - configs that pass a policy check yet run with less isolation
#    (mounts of host storage that are not binds, a second proc without the
#    masks, seccomp rules that let namespaces be created or hand blocked
#    syscalls to a notifier/tracer);
#  - descriptors the container's process and hooks inherit with every
#    feature in use (console socket, --log, audit log, hooks, preserve-fds);
#  - a --pid-file in a directory an unprivileged user owns.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

AUDIT=$T/audit.jsonl
mkdir -p "$T/secret" "$T/ws"
echo brig-host-secret > "$T/secret/file"
# The agent profile, with our temp secret dir as one more forbidden path.
profile_file() { # MODE
    "$BRIG" policy show agent | jq --arg a "$AUDIT" --arg m "$1" --arg s "$T/secret" \
        '.audit.path = $a | .mode = $m | .forbiddenPaths = [$s]' > "$T/agent-$1.json"
    echo "$T/agent-$1.json"
}
ENF=$(profile_file enforce)
AUD=$(profile_file audit)

mkb hard -- /usr/bin/brig-probe report || bail "cannot build a bundle"
"$BRIG" policy apply --policy "$ENF" --workspace "$T/ws" --output "$T/hard/config.json" "$T/hard" ||
    bail "policy apply failed"
check "the hardened config passes the check" "$BRIG" policy check --policy "$ENF" "$T/hard"

weaken() { # NAME JQ-FILTER ($s is the secret dir)
    mkdir -p "$T/$1"
    # hard's rootfs by its path (a symlinked rootfs is refused, as by runc)
    jq --arg s "$T/secret" --arg r "$T/hard/rootfs" ".root.path = \$r | $2" "$T/hard/config.json" > "$T/$1/config.json"
}

# ---- policy bypasses: each must be caught by check and refused by create ----
# Baseline: the secret bound directly is caught.
weaken w-bind '.mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind", "ro"]}]'
# An overlay whose lower layer is a forbidden host directory shows its files.
weaken w-overlay '.mounts += [{"destination": "/mnt", "type": "overlay", "source": "overlay", "options": ["ro", "lowerdir=/usr:" + $s]}]'
# devtmpfs is the host's one instance: every host device node.
weaken w-devtmpfs '.mounts += [{"destination": "/mnt", "type": "devtmpfs", "source": "devtmpfs", "options": ["ro"]}]'
# A disk filesystem mounts a host block device: the host's files.
weaken w-blockdev '.mounts += [{"destination": "/mnt", "type": "ext4", "source": "/dev/vda"}]'
# A second proc instance has none of the masks the policy asks for at /proc.
weaken w-proc2 '.mounts += [{"destination": "/mnt", "type": "proc", "source": "proc"}]'
# clone without the namespace-flag condition (or clone3, whose flags seccomp
# cannot see) creates namespaces: the unshare the filter blocks.
weaken w-clone '.linux.seccomp.syscalls += [{"names": ["clone"], "action": "SCMP_ACT_ALLOW"}]'
weaken w-clone3 '.linux.seccomp.syscalls += [{"names": ["clone3"], "action": "SCMP_ACT_ALLOW"}]'
# A notifier answering "continue" or a tracer lets a blocked syscall run.
weaken w-notify '.linux.seccomp.syscalls += [{"names": ["mount"], "action": "SCMP_ACT_NOTIFY"}]'
weaken w-trace '.linux.seccomp.syscalls += [{"names": ["ptrace"], "action": "SCMP_ACT_TRACE"}]'
# A realtime scheduler class is outside the CFS quota (where the kernel has
# no RT group scheduling, the container takes 95% of each CPU it runs on).
weaken w-rt '.process.scheduler = {"policy": "SCHED_FIFO", "priority": 50}'
# The host's / (or a directory holding a forbidden path) as the container's
# root shows everything a bind of it would.
weaken w-hostroot '.root.path = "/"'
weaken w-homeroot '.root.path = "/home"'
# A user namespace the policy did not ask for, mapping the policy's uid to
# host root: "uid 1000" inside is uid 0 on every file it touches.
weaken w-maproot '.linux.namespaces += [{"type": "user"}] | .linux.uidMappings = [{"containerID": 1000, "hostID": 0, "size": 1}] | .linux.gidMappings = [{"containerID": 1000, "hostID": 0, "size": 1}]'
declare -A RULE=([w-maproot]=user.nonroot [w-rt]=limits.cpu [w-hostroot]=mounts.forbidden [w-homeroot]=mounts.forbidden [w-bind]=mounts.forbidden [w-overlay]=mounts.forbidden [w-devtmpfs]=mounts.forbidden
                 [w-blockdev]=mounts.forbidden [w-proc2]=mounts.sys [w-clone]=seccomp.present
                 [w-clone3]=seccomp.present [w-notify]=seccomp.present [w-trace]=seccomp.present)

for w in w-maproot w-rt w-hostroot w-homeroot w-bind w-overlay w-devtmpfs w-blockdev w-proc2 w-clone w-clone3 w-notify w-trace; do
    out=$("$BRIG" policy check --policy "$ENF" --format json "$T/$w/config.json" 2>&1)
    rc=$?
    if [ "$rc" = 1 ] && jq -e --arg r "${RULE[$w]}" '[.results[] | select(.pass | not) | .rule] | unique == [$r]' <<<"$out" >/dev/null; then
        ok "check catches $w as ${RULE[$w]}"
    else
        not_ok "check catches $w as ${RULE[$w]}" "exit $rc" "$out"
    fi
    CLEAN_IDS+=("$(cid "$w")")
    # Into a file: a created init would hold a $(...) pipe open.
    b --policy "$ENF" create --bundle "$T/$w" "$(cid "$w")" >"$T/$w.err" 2>&1 </dev/null
    rc=$?
    err=$(cat "$T/$w.err")
    # brig has no seccomp notify support yet: it refuses that config itself.
    want="refuses create: ${RULE[$w]}"
    [ "$w" = w-notify ] && want="refuses create: ${RULE[$w]}\|SCMP_ACT_NOTIFY is not supported"
    if [ "$rc" != 0 ] && grep -q "$want" <<<"$err" && [ ! -e "$STATE/$(cid "$w")" ]; then
        ok "enforce mode refuses $w, nothing made"
    else
        not_ok "enforce mode refuses $w, nothing made" "exit $rc" "$err"
        b delete --force "$(cid "$w")" >/dev/null 2>&1
    fi
done

# The overlay is a real bypass, not a theoretical one: in audit mode the
# container reads the forbidden directory's file.
if grep -qw overlay /proc/filesystems; then
    jq '.process.args = ["/bin/cat", "/mnt/file"]' "$T/w-overlay/config.json" > "$T/w-overlay/c.json" &&
        mv "$T/w-overlay/c.json" "$T/w-overlay/config.json"
    CLEAN_IDS+=("$(cid w-overlay-run)")
    out=$(b --policy "$AUD" run --bundle "$T/w-overlay" "$(cid w-overlay-run)" 2>&1 </dev/null)
    if grep -q brig-host-secret <<<"$out"; then
        ok "the overlay of a forbidden path does expose it (why the check matters)"
    else
        not_ok "the overlay of a forbidden path does expose it (why the check matters)" "$out"
    fi
    check "audit mode logs the overlay as mounts.forbidden" jq -se --arg id "$(cid w-overlay-run)" \
        '[.[] | select(.id == $id and .decision == "audit" and (.rules | index("mounts.forbidden")))] | length == 1' "$AUDIT"
else
    skip "the overlay of a forbidden path does expose it" "no overlay filesystem in this kernel"
    skip "audit mode logs the overlay as mounts.forbidden" "no overlay filesystem in this kernel"
fi

# ---- a forbidden path spelled with repeated slashes ---------------------------
# realpath cannot judge a path that does not exist yet (a socket made when
# the engine starts): the spelling itself must be caught.
for src in //var/run/docker.sock /var//run/docker.sock /run//containerd; do
    jq --arg s "$src" '.mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind"]}]' \
        "$T/hard/config.json" > "$T/slash.json"
    out=$("$BRIG" policy check --policy "$ENF" --format json "$T/slash.json" 2>&1)
    rc=$?
    if [ "$rc" = 1 ] && jq -e '[.results[] | select(.pass | not) | .rule] | unique == ["mounts.forbidden"]' <<<"$out" >/dev/null; then
        ok "check catches a bind of $src"
    else
        not_ok "check catches a bind of $src" "exit $rc" "$out"
    fi
done

# ---- a bind source swapped between the check and the mount ------------------
# A running container owns its workspace: it can flip a subdirectory into a
# symlink to a forbidden path while another container binding that
# subdirectory is created. What is mounted must be what was judged.
mkdir -p "$T/race/ws/dir" && echo safe > "$T/race/ws/dir/file"
ln -s "$T/secret" "$T/race/ws/link"
cp -a "$T/race/ws/dir" "$T/race/ws/sub"
python3 - "$T/race/ws" <<'PY' &
import os, sys, time
d = sys.argv[1]
end = time.time() + 120
while time.time() < end and os.path.isdir(d):
    try:
        os.rename(d + "/sub", d + "/old"); os.rename(d + "/link", d + "/sub")
        os.rename(d + "/sub", d + "/link"); os.rename(d + "/old", d + "/sub")
    except OSError:
        pass
PY
flipper=$!
weaken race '.process.args = ["/bin/cat", "/mnt/file"] | .mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind", "ro"]}]'
jq --arg s "$T/race/ws/sub" '(.mounts[] | select(.destination == "/mnt")).source = $s' "$T/race/config.json" > "$T/race/c.json" &&
    mv "$T/race/c.json" "$T/race/config.json"
leaks=0 runs=0 refused=0
for i in $(seq 1 40); do
    CLEAN_IDS+=("$(cid "race-$i")")
    out=$(b --policy "$ENF" run --bundle "$T/race" "$(cid "race-$i")" 2>&1 </dev/null)
    case $out in
        *brig-host-secret*) leaks=$((leaks + 1)) ;;
        *safe*) runs=$((runs + 1)) ;;
        *"refuses create"*) refused=$((refused + 1)) ;;
    esac
done
kill "$flipper" 2>/dev/null; wait "$flipper" 2>/dev/null
diag "bind swap race: $runs safe runs, $refused refused, $leaks leaks"
check_eq "a bind source swapped after the check never mounts the forbidden path" "$leaks" 0

# ---- an allowed device path naming another device ---------------------------
# The policy allows /dev/null; the config's entry for /dev/null must be the
# host's /dev/null (c 1:3), not a disk made at that path.
jq '.devices = ["/dev/null"]' "$ENF" > "$T/agent-dev.json"
weaken d-null '.linux.devices = [{"path": "/dev/null", "type": "c", "major": 1, "minor": 3}]'
weaken d-disk '.linux.devices = [{"path": "/dev/null", "type": "b", "major": 7, "minor": 0, "fileMode": 438}]'
check "an allowed device that is the host's passes the check" \
    "$BRIG" policy check --policy "$T/agent-dev.json" "$T/d-null/config.json"
out=$("$BRIG" policy check --policy "$T/agent-dev.json" --format json "$T/d-disk/config.json" 2>&1)
rc=$?
if [ "$rc" = 1 ] && jq -e '[.results[] | select(.pass | not) | .rule] | unique == ["devices"]' <<<"$out" >/dev/null; then
    ok "check catches a block device made at an allowed path"
else
    not_ok "check catches a block device made at an allowed path" "exit $rc" "$out"
fi

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

# ---- --pid-file in a directory an unprivileged user owns --------------------
mkb pidf -- /usr/bin/brig-probe sleep 60 || bail "cannot build a bundle"
mkdir -p "$T/userdir" && chown 65534:65534 "$T/userdir"
echo untouched > "$T/target"
ln -s "$T/target" "$T/userdir/pid"
create_ct pidf --pid-file "$T/userdir/pid"
check_eq "create with --pid-file in a user's directory" "$RC" 0
check_eq "the symlink planted at the pid file is not followed" "$(cat "$T/target")" "untouched"
check "the pid file is a regular file with the pid" test ! -L "$T/userdir/pid" -a \
    "$(cat "$T/userdir/pid" 2>/dev/null)" = "$(state_field "$(cid pidf)" pid)"
b delete --force "$(cid pidf)" >/dev/null 2>&1
assert_clean pidf

# ---- the seccomp cache and the state root -----------------------------------
# The cache holds BPF the next container runs under: a cache directory that
# another user owns is neither read nor written, and the filter still loads.
R2=$T/state2
mkb sc -- /usr/bin/brig-probe report || bail "cannot build a bundle"
cfg sc '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["keyctl"], action: "SCMP_ACT_ERRNO"}]}'
CLEAN_IDS+=("$(cid sc)")
# Twice: the first create makes the state root after compiling.
for i in 1 2; do
    timeout -k 5 60 "$BRIG" --root "$R2" run --bundle "$T/sc" "$(cid sc)" </dev/null >"$T/sc.out" 2>"$T/sc.err"
    RC=$?
done
check_ran "a container with a filter runs (cache filled)" sc
n_before=$(find "$R2/.seccomp-cache" -type f 2>/dev/null | wc -l)
check "the cache holds an entry" test "$n_before" -ge 1
chown 65534:65534 "$R2/.seccomp-cache"
cfg sc '.linux.seccomp.syscalls[0].names += ["add_key"]'
timeout -k 5 60 "$BRIG" --root "$R2" run --bundle "$T/sc" "$(cid sc)" </dev/null >"$T/sc.out" 2>"$T/sc.err"
RC=$?
check_ran "with the cache dir owned by another user the container still runs" sc
check_probe "... under its seccomp filter" sc '.seccomp == 2'
check_eq "... and brig wrote nothing into that directory" \
    "$(find "$R2/.seccomp-cache" -type f | wc -l)" "$n_before"
mkdir -p "$T/wroot" && chmod 1777 "$T/wroot"
out=$(timeout -k 5 60 "$BRIG" --root "$T/wroot" run --bundle "$T/sc" "$(cid sc-w)" 2>&1 </dev/null)
rc=$?
if [ "$rc" != 0 ] && grep -q "writable by group or others" <<<"$out" && [ -z "$(ls -A "$T/wroot")" ]; then
    ok "a --root others can write is refused, nothing made in it"
else
    not_ok "a --root others can write is refused, nothing made in it" "exit $rc" "$out"
fi
timeout -k 5 30 "$BRIG" --root "$R2" delete --force "$(cid sc)" >/dev/null 2>&1
