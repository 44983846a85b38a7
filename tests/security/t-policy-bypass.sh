#!/usr/bin/env bash
# Configs that pass a policy check yet run with less isolation
# (docs/threat-model.md): mounts of host storage that are not binds, a second
# proc without the masks, seccomp rules that let namespaces be created or hand
# blocked syscalls to a notifier/tracer, a realtime scheduler, the host's / as
# root, a user namespace mapping host root, forbidden paths spelled with
# repeated slashes, a disk made at an allowed device path. Each must be caught
# by `policy check` and refused by `create` in enforce mode.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/security/policy-lib.sh
. "$(dirname "$0")/policy-lib.sh"
check "the hardened config passes the check" "$BRIG" policy check --policy "$ENF" "$T/hard"

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
