#!/usr/bin/env bash
# workspace.maxSize (docs/policy.md): a container that writes more
# than the bound into its workspace is stopped by the kernel (ENOSPC on a
# filesystem no bigger than the bound, EDQUOT under a project quota) and the
# host keeps at most the bound; where the host cannot keep the bound (a big
# ext4 without project quotas, a tmpfs without size=, a filesystem mounted
# below the workspace), create is refused naming workspace.maxSize, never
# run unbounded. Audit mode runs it and logs the rule.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

AUDIT=$T/audit.jsonl
LIMIT=$((4 << 20))
# The agent profile with a 4MiB workspace bound (and a mode).
policy_file() { # NAME MODE [JQ-FILTER]
    "$BRIG" policy show agent | jq --arg a "$AUDIT" --arg m "$2" \
        ".audit.path = \$a | .mode = \$m | .workspace.maxSize = \"4MiB\" | ${3:-.}" > "$T/$1.json"
    echo "$T/$1.json"
}
ENF=$(policy_file enforce enforce)
AUD=$(policy_file audit audit)
# What the attacker runs: 16MiB into the workspace, then what it got.
FILL='dd if=/dev/zero of=/workspace/fill bs=65536 count=256 2>/tmp/dd.err; rc=$?;
      grep -o "No space left on device\|Disk quota exceeded" /tmp/dd.err | head -n 1;
      echo "dd=$rc size=$(stat -c %s /workspace/fill)"'

mkb hard -- /bin/sh -c "$FILL" || bail "cannot build a bundle"
PLAIN=$T/plain.json
"$BRIG" policy show agent | jq --arg a "$AUDIT" '.audit.path = $a' > "$PLAIN"

# ws_bundle NAME WORKSPACE-DIR: the bundle hardened with the workspace there.
ws_bundle() {
    mkdir -p "$T/$1"
    chown 1000:1000 "$2"
    # hard's root by its real path (a symlinked rootfs is refused, as by runc)
    jq --arg r "$T/hard/rootfs" '.root.path = $r' "$T/hard/config.json" > "$T/$1/in.json" &&
    "$BRIG" policy apply --policy "$PLAIN" --workspace "$2" --output "$T/$1/config.json" "$T/$1/in.json"
}

# bounded NAME DIR WHAT: the container runs, the kernel stops the writes at
# the bound (ERR seen inside), the host holds at most the bound.
bounded() {
    local name=$1 dir=$2 err=$3
    CLEAN_IDS+=("$(cid "$name")")
    b --policy "$ENF" run --bundle "$T/$name" "$(cid "$name")" </dev/null >"$T/$name.out" 2>"$T/$name.err"
    RC=$?
    local size; size=$(stat -c %s "$dir/fill" 2>/dev/null || echo 0)
    if [ "$RC" = 0 ] && grep -q "$err" "$T/$name.out" && grep -q "dd=1" "$T/$name.out" &&
        [ "$size" -gt 0 ] && [ "$size" -le "$LIMIT" ]; then
        ok "$name: the container's writes stop at 4MiB ($err inside, $size bytes on the host)"
    else
        not_ok "$name: the container's writes stop at 4MiB" "exit $RC, host file $size bytes" \
            "$(cat "$T/$name.out" "$T/$name.err")"
    fi
    assert_clean "$name"
}

# refused NAME WHY: create refuses naming the field, nothing made.
refused() {
    local name=$1 why=$2
    CLEAN_IDS+=("$(cid "$name")")
    b --policy "$ENF" create --bundle "$T/$name" "$(cid "$name")" </dev/null >"$T/$name.out" 2>"$T/$name.err"
    RC=$?
    if [ "$RC" != 0 ] && grep -q "refuses create: workspace.quota" "$T/$name.err" &&
        grep -q "workspace.maxSize" "$T/$name.err" && grep -q -- "$why" "$T/$name.err" &&
        [ ! -e "$STATE/$(cid "$name")" ]; then
        ok "$name: create refused naming workspace.maxSize ($why)"
    else
        not_ok "$name: create refused naming workspace.maxSize" "exit $RC" "$(cat "$T/$name.err")"
    fi
    b delete --force "$(cid "$name")" >/dev/null 2>&1
}

# ---- a filesystem no bigger than the bound ---------------------------------
mkdir -p "$T/small"
mount -t tmpfs -o size=4m,mode=0755 brig-test "$T/small" || bail "cannot mount a tmpfs"
mkdir "$T/small/ws"
ws_bundle tmpfs "$T/small/ws" || bail "policy apply failed"
check "check passes a workspace on a 4MiB tmpfs" "$BRIG" policy check --policy "$ENF" "$T/tmpfs"
bounded tmpfs "$T/small/ws" "No space left on device"

# A loop-mounted ext4 image of 4MiB: the image never grows past its size.
truncate -s 4M "$T/ws.img"
if mkfs.ext4 -q -F "$T/ws.img" >/dev/null 2>&1 && mkdir -p "$T/loopfs" &&
    mount -o loop "$T/ws.img" "$T/loopfs" 2>"$T/loop.err"; then
    mkdir "$T/loopfs/ws"
    ws_bundle loop "$T/loopfs/ws" || bail "policy apply failed"
    bounded loop "$T/loopfs/ws" "No space left on device"
    check_eq "the image file is still 4MiB" "$(stat -c %s "$T/ws.img")" "$LIMIT"
    umount "$T/loopfs"
    check_eq "no loop device left on the image" "$(losetup -j "$T/ws.img")" ""
else
    skip "loop: the container's writes stop at 4MiB" "no loop mount here: $(head -c 200 "$T/loop.err" 2>/dev/null)"
fi

# ---- a project quota (ext4 mounted with prjquota) ---------------------------
# Needs a kernel with CONFIG_QUOTA and CONFIG_QFMT_V2 (ext4) and loop devices.
truncate -s 64M "$T/prj.img"
mkdir -p "$T/prj"
if mkfs.ext4 -q -F -O quota,project -E quotatype=prjquota "$T/prj.img" >/dev/null 2>&1 &&
    mount -o loop,prjquota "$T/prj.img" "$T/prj" 2>"$T/prj.err"; then
    mkdir -p "$T/prj/ws/sub" "$T/prj/other"
    # The container runs in a user namespace: outside one, its user could
    # move its files to another project (FS_IOC_FSSETXATTR) and leave the quota.
    ws_bundle prj-nouserns "$T/prj/ws" || bail "policy apply failed"
    refused prj-nouserns "no user namespace"
    USERNS=$(policy_file userns enforce '.user = {"uid": 0, "gid": 0, "userns": true}')
    mkdir -p "$T/prj-userns"
    jq '.linux.namespaces += [{type: "user"}]
        | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
        | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
        | .mounts |= map(select(.destination != "/sys/fs/cgroup"))' \
        "$T/prj-nouserns/config.json" > "$T/prj-userns/config.json"
    chown 101000:101000 "$T/prj/ws" "$T/prj/ws/sub"    # uid 1000 inside
    CLEAN_IDS+=("$(cid prj-userns)")
    b --policy "$USERNS" run --bundle "$T/prj-userns" "$(cid prj-userns)" </dev/null \
        >"$T/prj-userns.out" 2>"$T/prj-userns.err"
    RC=$?
    size=$(stat -c %s "$T/prj/ws/fill" 2>/dev/null || echo 0)
    if [ "$RC" = 0 ] && grep -q "Disk quota exceeded" "$T/prj-userns.out" && [ "$size" -le "$LIMIT" ]; then
        ok "prj: EDQUOT inside at 4MiB, $size bytes on the host"
    else
        not_ok "prj: EDQUOT inside at 4MiB" "exit $RC, $size bytes" "$(cat "$T/prj-userns.out" "$T/prj-userns.err")"
    fi
    check "prj: the workspace and what was in it joined the project" bash -c \
        "lsattr -pd '$T/prj/ws' '$T/prj/ws/sub' | awk '{print \$1}' | sort -u | wc -l | grep -qx 1"
    umount "$T/prj"
    check_eq "no loop device left on the project image" "$(losetup -j "$T/prj.img")" ""
else
    why="this kernel cannot mount ext4 with project quotas (CONFIG_QFMT_V2): $(dmesg 2>/dev/null | grep -o 'EXT4-fs (loop[0-9]*): The kernel was not built.*' | tail -n 1)"
    skip "prj: a container without a user namespace is refused" "$why"
    skip "prj: EDQUOT inside at 4MiB" "$why"
    losetup -j "$T/prj.img" | cut -d: -f1 | while read -r dev; do losetup -d "$dev"; done
fi

# ---- where the host cannot keep the bound -----------------------------------
# $T is on the host's big disk, without project quotas.
mkdir -p "$T/bigws"
ws_bundle big "$T/bigws" || bail "policy apply failed"
out=$("$BRIG" policy check --policy "$ENF" --format json "$T/big" 2>&1)
if [ "$?" = 1 ] && jq -e '[.results[] | select(.pass | not) | .rule] == ["workspace.quota"]' <<<"$out" >/dev/null 2>&1; then
    ok "check reports workspace.quota for a workspace on the host's disk"
else
    not_ok "check reports workspace.quota for a workspace on the host's disk" "$out"
fi
refused big "without project quotas"
[ -e "$T/bigws/fill" ] && not_ok "nothing was written on the host's disk" || ok "nothing was written on the host's disk"

# A tmpfs without size= (half the host's memory) and one with size=0 (none).
mkdir -p "$T/half" "$T/nolimit"
mount -t tmpfs -o mode=0755 brig-test "$T/half" && mkdir "$T/half/ws"
mount -t tmpfs -o size=0,mode=0755 brig-test "$T/nolimit" && mkdir "$T/nolimit/ws"
ws_bundle half "$T/half/ws" && refused half "tmpfs of"
ws_bundle nolimit "$T/nolimit/ws" && refused nolimit "tmpfs of 0 bytes"
# A big filesystem mounted below a small workspace is inside the bind.
mkdir -p "$T/small/ws2/deep"
mount -t tmpfs -o size=64m brig-test "$T/small/ws2/deep"
ws_bundle submount "$T/small/ws2" && refused submount "a mount below the workspace"
# The same through a symlink to the workspace: check judges where it leads.
ln -sfn "$T/small/ws2" "$T/ws2link"
ws_bundle sublink "$T/ws2link" && refused sublink "a mount below the workspace"
out=$("$BRIG" policy check --policy "$ENF" "$T/sublink" 2>&1)
check "check sees the mount below a symlinked workspace" grep -q "mount below the workspace" <<<"$out"
umount "$T/small/ws2/deep"

# A writable bind of the big disk below (or beside) a bounded workspace
# would take the writes the bound stops.
mkdir -p "$T/cache" "$T/aside"
jq --arg s "$T/cache" '.mounts += [{destination: "/workspace/cache", type: "bind", source: $s, options: ["rbind", "rw"]}]' \
    "$T/tmpfs/config.json" > "$T/aside/config.json"
refused aside "besides the workspace"

# Audit mode: it runs, and the log says the bound did not hold.
CLEAN_IDS+=("$(cid big-audit)")
b --policy "$AUD" run --bundle "$T/big" "$(cid big-audit)" </dev/null >"$T/big-audit.out" 2>"$T/big-audit.err"
check_eq "audit mode runs the container" "$?" 0
check "audit mode logs workspace.quota" jq -se --arg id "$(cid big-audit)" \
    '[.[] | select(.id == $id and .op == "create" and .decision == "audit" and (.rules | index("workspace.quota")))] | length == 1' "$AUDIT"
rm -f "$T/bigws/fill"

umount "$T/half" "$T/nolimit" "$T/small"
