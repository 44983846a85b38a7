#!/usr/bin/env bash
# workspace.maxSize (docs/policy.md, "Workspace bound"): a container that
# writes more than the bound into its workspace is stopped by the kernel
# (ENOSPC on a filesystem no bigger than the bound, EDQUOT under a project
# quota, and with workspace.bound "stage" ENOSPC in the staged workspace's
# tmpfs everywhere else: a big ext4 without project quotas, a tmpfs without
# size=) and the host keeps at most the bound (the default elsewhere, the
# watch, is attacked in t-workspace-watch.sh); what no mechanism can bound
# (a filesystem mounted below the workspace, another writable bind) is
# refused naming workspace.maxSize, never run unbounded. The staged workspace is written back when the
# container ends, never more than its tmpfs held: a file of hard links, a
# sparse file, a flood of empty names, a symlink or a directory swapped for
# one in the workspace do not make the host write more, or elsewhere. The
# sandbox's result names the limit that fired (limits_hit).
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

AUDIT=$T/audit.jsonl
LIMIT=$((4 << 20))
# The agent profile with a 4MiB workspace bound (and a mode).
policy_file() { # NAME MODE [JQ-FILTER]
    "$BRIG" policy show agent | jq --arg a "$AUDIT" --arg m "$2" \
        ".audit.path = \$a | .mode = \$m | .workspace.maxSize = \"4MiB\" | .workspace.bound = \"stage\" | ${3:-.}" > "$T/$1.json"
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
# (the bundles are made without a bound: what the attacker brings)
"$BRIG" policy show agent | jq --arg a "$AUDIT" '.audit.path = $a | del(.workspace.maxSize)' > "$PLAIN"

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
    # the kernel lets the loop device go after the umount, not with it
    for _ in $(seq 50); do [ -z "$(losetup -j "$T/ws.img")" ] && break; sleep 0.1; done
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
    bounded prj-nouserns "$T/prj/ws" "No space left on device"     # staged
    rm -f "$T/prj/ws/fill"
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
    skip "prj: a container without a user namespace is staged" "$why"
    skip "prj: EDQUOT inside at 4MiB" "$why"
    losetup -j "$T/prj.img" | cut -d: -f1 | while read -r dev; do losetup -d "$dev"; done
fi

# ---- the host's big disk, without project quotas: staged ---------------------
# $T is on the host's big disk. The bind becomes an overlay whose writes
# land on a tmpfs of the bound's size, written back when the container ends.
mkdir -p "$T/bigws"
echo kept > "$T/bigws/before"
ws_bundle big "$T/bigws" || bail "policy apply failed"
check "check passes a workspace on the host's disk (staged at create)" "$BRIG" policy check --policy "$ENF" "$T/big"
bounded big "$T/bigws" "No space left on device"
check_eq "staged: what was there before is still there" "$(cat "$T/bigws/before" 2>&1)" kept
check_eq "staged: no mount of the stage is left" "$(grep -c " $T/[^ ]*/wsstage" /proc/self/mountinfo)" 0

# A tmpfs without size= (half the host's memory) and one with size=0 (none).
mkdir -p "$T/half" "$T/nolimit"
mount -t tmpfs -o mode=0755 brig-test "$T/half" && mkdir "$T/half/ws"
mount -t tmpfs -o size=0,mode=0755 brig-test "$T/nolimit" && mkdir "$T/nolimit/ws"
ws_bundle half-ws "$T/half/ws" && bounded half-ws "$T/half/ws" "No space left on device"
ws_bundle nolimit-ws "$T/nolimit/ws" && bounded nolimit-ws "$T/nolimit/ws" "No space left on device"
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

# Audit mode: what cannot be bounded runs, and the log says so.
CLEAN_IDS+=("$(cid aside-audit)")
b --policy "$AUD" run --bundle "$T/aside" "$(cid aside-audit)" </dev/null >"$T/aside-audit.out" 2>"$T/aside-audit.err"
check_eq "audit mode runs the container" "$?" 0
check "audit mode logs workspace.quota" jq -se --arg id "$(cid aside-audit)" \
    '[.[] | select(.id == $id and .op == "create" and .decision == "audit" and (.rules | index("workspace.quota")))] | length == 1' "$AUDIT"

# ---- brig sandbox: the staged workspace, attacked -------------------------------
# What the command writes goes back into the workspace when the run ends;
# the result names the limit that fired.
busybox_rootfs "$T/sbroot" sh dd ln rm mkdir touch truncate stat seq cat echo ls head
SBPOL=$T/sb-4m.json
printf '{"extends": "agent", "workspace": {"maxSize": "4MiB", "bound": "stage"}, "audit": {"path": "%s"}}\n' "$AUDIT" > "$SBPOL"
SW=$T/sbws
sbrun() { # NAME SCRIPT: sandbox run of sh -c SCRIPT in $SW, the result in $T/NAME.json
    timeout -k 5 120 "$BRIG" sandbox run --policy "$SBPOL" --state-root "$T/sbstate" --rootfs "$T/sbroot" \
        --workspace "$SW" --json -- /bin/sh -c "$2" > "$T/$1.json" 2> "$T/$1.err"
}
fresh_ws() { rm -rf "$SW" && mkdir -p "$SW" && chown 1000:1000 "$SW"; }
used_kib() { du -sk "$SW" | cut -f1; }     # blocks on the host's disk

# the agent profile bounds the workspace by default (1GiB): on the host's
# disk by a watch (t-workspace-watch.sh), the workspace a live bind; the
# stage is asked for (workspace.bound), seen inside as a tmpfs-bound overlay
fresh_ws
timeout -k 5 120 "$BRIG" sandbox run --state-root "$T/sbstate" --rootfs "$T/sbroot" --workspace "$SW" --json \
    -- /bin/sh -c 'df -k /workspace | tail -n 1' > "$T/default.json" 2> "$T/default.err"
check_eq "the agent profile's default bound on the host's disk is no stage (a live bind)" \
    "$(jq -r .stdout.preview_head "$T/default.json" | awk 'NF {print $1}')" "$(df -k "$SW" | tail -n 1 | awk '{print $1}')"
sbrun staged 'df -k /workspace | tail -n 1'
check_eq "workspace.bound \"stage\": staged, seen inside as a 4MiB filesystem" \
    "$(jq -r .stdout.preview_head "$T/staged.json" | awk 'NF {print $1, $2}')" "brig-workspace 4096"
echo old > "$SW/gone" && echo keep > "$SW/kept" && chown 1000:1000 "$SW/gone" "$SW/kept"
sbrun fill 'rm /workspace/gone; mkdir -p /workspace/d/e; echo hi > /workspace/d/e/f;
            dd if=/dev/zero of=/workspace/fill bs=65536 count=256 2>/dev/null; echo dd=$?'
check_eq "sandbox run, 16MiB into a 4MiB workspace: the command ran (exit 0)" "$(jq -r .exit_code "$T/fill.json")" 0
check_eq "... the write was stopped inside (dd fails)" "$(jq -r .stdout.preview_head "$T/fill.json")" "dd=1"
check_eq "... limits_hit names workspace.maxSize" "$(jq -c .limits_hit "$T/fill.json")" '["workspace.maxSize"]'
size=$(stat -c %s "$SW/fill" 2>/dev/null || echo 0)
check "... the host holds at most 4MiB of it ($size bytes)" test "$size" -gt 0 -a "$size" -le "$LIMIT"
check_not "... written back: the deletion" test -e "$SW/gone"
check_eq "... a new file in new directories" "$(cat "$SW/d/e/f" 2>&1)" hi
check_eq "... what the command left alone" "$(cat "$SW/kept" 2>&1)" keep
check_eq "... owned by the command's user (1000)" "$(stat -c %u "$SW/fill" "$SW/d/e/f" | sort -u)" 1000
check "... the result validates against the schema" python3 -c '
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' "$T/fill.json" \
    "$(dirname "$0")/../../sandbox/result.schema.json"
sbrun small 'echo x > /workspace/small'
check_eq "a run that stays within the bound: limits_hit is empty" "$(jq -c .limits_hit "$T/small.json")" '[]'

# hard links: one 3MiB file and 600 links to it cost the tmpfs 3MiB; the
# host gets one file with 601 names, not 600 copies
fresh_ws
sbrun links 'dd if=/dev/urandom of=/workspace/a bs=65536 count=48 2>/dev/null;
             for i in $(seq 600); do ln /workspace/a /workspace/l$i || break; done; echo made=$i'
check_eq "hard links: written back as links of one file" "$(stat -c %h "$SW/a" 2>&1)" 601
check "hard links: the host holds one copy ($(used_kib) KiB)" test "$(used_kib)" -le 4200
# a sparse file: 10GiB long, a few blocks of data
fresh_ws
sbrun sparse 'truncate -s 10G /workspace/sparse && echo data >> /workspace/sparse; echo rc=$?'
check_eq "a sparse file: its length is kept" "$(stat -c %s "$SW/sparse" 2>&1)" $(((10 << 30) + 5))
check "a sparse file: the holes stay holes on the host ($(used_kib) KiB)" test "$(used_kib)" -le 64
# names: empty files cost no blocks but an inode each
fresh_ws
sbrun names 'mkdir /workspace/n; i=0; while [ $i -lt 20000 ] && touch /workspace/n/$i 2>/dev/null; do i=$((i+1)); done; echo made=$i'
made=$(jq -r .stdout.preview_head "$T/names.json" | sed -n 's/^made=//p')
check "a flood of empty files is stopped by the stage's inode bound (made ${made:-?})" test "${made:-20000}" -lt 20000
check_eq "... all of them, and no more, reach the host" "$(ls "$SW/n" | wc -l)" "${made:-x}"
check_eq "... limits_hit names workspace.maxSize" "$(jq -c .limits_hit "$T/names.json")" '["workspace.maxSize"]'
# the write-back follows no symlink: one the command made stays a symlink;
# a directory of the workspace that is a symlink to a host directory,
# replaced by a real directory inside, is replaced on the host, and the
# host directory it pointed at gets nothing
fresh_ws
mkdir -p "$T/outside" && ln -s "$T/outside" "$SW/out" && chown -h 1000:1000 "$SW/out"
shadow=$(stat -c '%Y %s %u %a' /etc/shadow)
sbrun links2 'ln -s /etc/shadow /workspace/shadow; rm /workspace/out && mkdir /workspace/out && echo x > /workspace/out/planted'
check "a symlink made inside is written back as a symlink" test -L "$SW/shadow"
check_eq "... owned by the command's user, and /etc/shadow untouched" \
    "$(stat -c %u "$SW/shadow" 2>&1) $(stat -c '%Y %s %u %a' /etc/shadow)" "1000 $shadow"
check "a directory that replaced a symlink is a real directory on the host" test -d "$SW/out" -a ! -L "$SW/out"
check_eq "... and the host directory the symlink named got nothing" "$(ls -A "$T/outside")" ""
check_eq "no mount of any stage is left" "$(grep -c " $T/[^ ]*/wsstage" /proc/self/mountinfo)" 0
# a write-back the command makes fail (a tree deeper than the write-back
# goes) is the result's error; what of it reached the workspace is the
# workspace owner's, never root's, so that the owner can remove it all
# (it was root's and 0700: the owner could not)
fresh_ws
sbrun deep 'd=/workspace/deep; i=0; while [ $i -lt 300 ]; do d=$d/d; i=$((i+1)); done; mkdir -p $d; echo made'
check "a write-back the command makes fail is the result's error" \
    jq -e '.error | test("writing the staged workspace back")' "$T/deep.json"
check_eq "... nothing it left in the workspace is root's (or anyone's but its owner)" \
    "$(find "$SW" \( ! -uid 1000 -o ! -gid 1000 \) -printf '%u:%g %p\n' | head -n 3)" ""
if command -v setpriv >/dev/null; then
    check "... its owner can remove all of it" setpriv --reuid 1000 --regid 1000 --clear-groups rm -rf "$SW/deep"
else
    skip "... its owner can remove all of it" "setpriv (util-linux) is not installed"
fi

# raced NAME INSIDE HOST: the command does INSIDE, says so and waits; the
# host does HOST meanwhile; then the command ends and is written back
raced() {
    local fifo=$T/$1.fifo
    rm -f "$fifo" && mkfifo "$fifo"
    timeout -k 5 60 "$BRIG" sandbox run --policy "$SBPOL" --state-root "$T/sbstate" --rootfs "$T/sbroot" \
        --workspace "$SW" --stdin - -- /bin/sh -c "$2 && echo ready; read x" < "$fifo" > "$T/$1.out" 2> "$T/$1.err" &
    local pid=$!
    exec 8> "$fifo"
    wait_until 30 grep -q ready "$T/$1.out" || diag "$1: the command did not get ready: $(cat "$T/$1.err")"
    eval "$3"
    exec 8>&-
    wait "$pid"
}
as_owner() { setpriv --reuid 1000 --regid 1000 --clear-groups "$@"; }
# The write-back is root's, the workspace its owner's: it never does there
# what the owner could not. A directory of root's in the workspace (a root
# build step leaves them) that the owner renames, while the command runs,
# to the name of one the command made, or of one it removed, is neither
# written into, taken over nor removed; a filesystem mounted meanwhile on a
# directory the command removed is not emptied.
if command -v setpriv >/dev/null; then
    fresh_ws
    mkdir "$SW/R" && echo root-config > "$SW/R/cfg"
    raced swap 'mkdir /workspace/X && echo planted > /workspace/X/cfg' 'as_owner mv "$SW/R" "$SW/X"'
    check_eq "a root-owned directory swapped in by the owner: its file is not replaced" \
        "$(cat "$SW/X/cfg" 2>&1) $(stat -c %u "$SW/X/cfg" 2>&1)" "root-config 0"
    check_eq "... and it is still root's" "$(stat -c %u "$SW/X" 2>&1)" 0
    fresh_ws
    mkdir "$SW/W" "$SW/R" && chown 1000:1000 "$SW/W" && echo root-file > "$SW/R/keep"
    raced gone 'rmdir /workspace/W' 'as_owner rmdir "$SW/W"; as_owner mv "$SW/R" "$SW/W"'
    check_eq "a root-owned directory swapped in for one the command removed is not removed" \
        "$(cat "$SW/W/keep" 2>&1)" root-file
    fresh_ws
    mkdir "$SW/M" && chown 1000:1000 "$SW/M"
    raced mnt 'rmdir /workspace/M' 'mount -t tmpfs brig-test-mnt "$SW/M" && echo precious > "$SW/M/p"'
    check_eq "a filesystem mounted on a directory the command removed is not emptied" \
        "$(cat "$SW/M/p" 2>&1)" precious
    umount "$SW/M" 2>/dev/null
else
    skip "a root-owned directory swapped in by the owner" "setpriv (util-linux) is not installed"
fi

# a long-lived sandbox: each exec's writes reach the workspace when it ends
fresh_ws
NAME=wsq-$TAG
sbx() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$T/sbstate" "${@:2}"; }
if sbx create --policy "$SBPOL" --rootfs "$T/sbroot" --workspace "$SW" "$NAME" >/dev/null 2>"$T/create.err"; then
    sbx exec --json "$NAME" -- /bin/sh -c 'echo one > /workspace/one' > "$T/e1.json" 2>/dev/null
    check_eq "session: the first exec's file is in the workspace after it" "$(cat "$SW/one" 2>&1)" one
    sbx exec --json "$NAME" -- /bin/sh -c 'rm /workspace/one; dd if=/dev/zero of=/workspace/big bs=65536 count=256 2>/dev/null' \
        > "$T/e2.json" 2>/dev/null
    check "session: the second exec's deletion reached it" test ! -e "$SW/one"
    check_eq "session: the bound is the session's (limits_hit)" "$(jq -c .limits_hit "$T/e2.json")" '["workspace.maxSize"]'
    size=$(stat -c %s "$SW/big" 2>/dev/null || echo 0)
    check "session: the host holds at most 4MiB ($size bytes)" test "$size" -gt 0 -a "$size" -le "$LIMIT"
    sbx rm --force "$NAME" >/dev/null 2>&1
    check_eq "session: after rm no mount of the stage is left" "$(grep -c " $T/[^ ]*/wsstage" /proc/self/mountinfo)" 0
else
    not_ok "session: sandbox create with a staged workspace" "$(cat "$T/create.err")"
fi

umount "$T/half" "$T/nolimit" "$T/small"
