#!/usr/bin/env bash
# The host's console through an image's own device node: a rootfs is not
# mounted nodev, so a node "c 5 1" (mode 0666) the image brings opens the
# host's /dev/console, its input and output, wherever the device cgroup
# allows c 5:1 (runc's default list does). brig's default list leaves it
# out (the container's /dev/console is its pty, 136:N), for `brig run` and
# the sandbox alike; under a policy a config that lists the console itself
# is refused as `devices`; Docker's own rule for it passes, and under a
# policy the root is nodev. Only opening is tried: nothing read or written.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

# probe: NUL-OPEN if the image's null node opens, CONSOLE-OPEN if its
# console node does (the attack), DEVNULL-OPEN if /dev/null does (the use)
PROBE='(exec 3</nul) && echo NUL-OPEN; (exec 4</con) && echo CONSOLE-OPEN; (exec 5</dev/null) && echo DEVNULL-OPEN; true'
mkb con --rw -- /bin/sh -c "$PROBE" || bail "cannot build a bundle"
mknod -m 0666 "$T/con/rootfs/con" c 5 1 && mknod -m 0666 "$T/con/rootfs/nul" c 1 3 ||
    bail "cannot make the image's nodes"

# ---- brig run, a runc-style config with the default device rules ------------
run_ct con
check_eq "run: exits 0" "$RC" 0
check "run: the image's own null node opens (allowed devices work)" grep -q NUL-OPEN "$T/con.out"
check_not "run: the image's own console node does not open" grep -q CONSOLE-OPEN "$T/con.out"
assert_clean con

# ---- brig sandbox run under the agent policy -----------------------------------
mkdir -p "$T/ws" && chown 1000:1000 "$T/ws"
"$BRIG" sandbox run --policy agent --state-root "$T/sbstate" --rootfs "$T/con/rootfs" \
    --workspace "$T/ws" --env "BRIG_IT_TAG=$(cid sb)" --json -- sh -c "$PROBE" >"$T/sb.json" 2>"$T/sb.err"
check_eq "sandbox run: exits 0" "$?" 0
check "sandbox run: /dev/null opens" jq -e '.stdout.preview_head | test("DEVNULL-OPEN")' "$T/sb.json"
check_not "sandbox run: the image's null node does not open either (the root is nodev)" \
    jq -e '.stdout.preview_head | test("NUL-OPEN\n")' "$T/sb.json"
check_not "sandbox run: the console node does not open" jq -e '.stdout.preview_head | test("CONSOLE-OPEN")' "$T/sb.json"

# ---- under a policy: Docker's device rules allow c 5:1 ------------------------
# moby writes "c 5:1 rwm" into every container's device cgroup; the policy
# passes that rule (refusing it would refuse every docker run), so the
# image's node is dead by the root mount's nodev instead.
# shellcheck source=tests/security/policy-lib.sh
. "$(dirname "$0")/policy-lib.sh"
mknod -m 0666 "$T/hard/rootfs/con" c 5 1 && mknod -m 0666 "$T/hard/rootfs/nul" c 1 3 ||
    bail "cannot make the image's nodes"
weaken dock '.process.args = ["/bin/sh", "-c", '"$(jq -Rn --arg p "$PROBE" '$p')"']
             | .linux.resources.devices += [{allow: true, type: "c", major: 5, minor: 1, access: "rwm"}]
             | .linux.cgroupsPath = "/brig-test/'"$(cid dock)"'"'
check "policy check: Docker's c 5:1 rule passes the devices rule" \
    bash -c '"$1" policy check --policy "$2" "$3" | grep -q "^PASS devices"' _ "$BRIG" "$ENF" "$T/dock"
CLEAN_IDS+=("$(cid dock)")
b --policy "$ENF" run --bundle "$T/dock" "$(cid dock)" </dev/null >"$T/dock.out" 2>"$T/dock.err"
check_eq "policy run (c 5:1 allowed by the config): exits 0" "$?" 0
check "policy run: /dev/null opens" grep -q DEVNULL-OPEN "$T/dock.out"
check_not "policy run: the image's null node is dead too (the root is nodev)" grep -q '^NUL-OPEN' "$T/dock.out"
check_not "policy run: the image's console node does not open" grep -q CONSOLE-OPEN "$T/dock.out"
assert_clean dock

# ---- the same, with /dev spelled "//dev/" -------------------------------------
# The runtime cleans a destination (the tmpfs is /dev, its nodes are made);
# the policy must see the same /dev mount, or the root stays device-capable.
weaken dock2 '.process.args = ["/bin/sh", "-c", '"$(jq -Rn --arg p "$PROBE" '$p')"']
              | .mounts |= map(if .destination == "/dev" then .destination = "//dev/" else . end)
              | .linux.resources.devices += [{allow: true, type: "c", major: 5, minor: 1, access: "rwm"}]
              | .linux.cgroupsPath = "/brig-test/'"$(cid dock2)"'"'
CLEAN_IDS+=("$(cid dock2)")
b --policy "$ENF" run --bundle "$T/dock2" "$(cid dock2)" </dev/null >"$T/dock2.out" 2>"$T/dock2.err"
check_eq "policy run, /dev as \"//dev/\": exits 0" "$?" 0
check "policy run, //dev/: /dev/null opens (the tmpfs is /dev)" grep -q DEVNULL-OPEN "$T/dock2.out"
check_not "policy run, //dev/: the image's null node is dead (the root is nodev)" grep -q '^NUL-OPEN' "$T/dock2.out"
check_not "policy run, //dev/: the image's console node does not open" grep -q CONSOLE-OPEN "$T/dock2.out"
assert_clean dock2

# ---- the same rule with no /dev mount: the root keeps the image's nodes --------
# nodev only where /dev is a mount of its own; without one the runtime makes
# its nodes in the image's /dev on the root, so the rule itself is refused.
weaken dock3 '.process.args = ["/bin/sh", "-c", '"$(jq -Rn --arg p "$PROBE" '$p')"']
              | .mounts |= map(select(.destination != "/dev"))
              | .linux.resources.devices += [{allow: true, type: "c", major: 5, minor: 1, access: "rwm"}]
              | .linux.cgroupsPath = "/brig-test/'"$(cid dock3)"'"'
CLEAN_IDS+=("$(cid dock3)")
b --policy "$ENF" run --bundle "$T/dock3" "$(cid dock3)" </dev/null >"$T/dock3.out" 2>&1
check_refused_rc "policy run: c 5:1 with no /dev mount is refused as devices, naming the rule" \
    "FAIL devices linux.resources.devices[" 1 "$?" "$T/dock3.out"
check_not "policy run, no /dev mount: the image's console node was not opened" grep -q CONSOLE-OPEN "$T/dock3.out"
assert_clean dock3
out=$("$BRIG" policy check --policy "$ENF" "$T/dock3" 2>&1)
check "policy check says why (no /dev mount of its own)" grep -q "/dev is not a mount of its own" <<<"$out"

# ---- the image's node through a bind of its own subdirectory -----------------
# A bind is another mount: the root's nodev does not reach it (a volume an
# engine filled from the image is the same), so under a policy binds are nodev.
mkdir -p "$T/hard/rootfs/sub" && mknod -m 0666 "$T/hard/rootfs/sub/con" c 5 1 || bail "cannot make the node"
weaken dock4 '.process.args = ["/bin/sh", "-c", "(exec 6</mnt/con) && echo MNT-CON; true"]
              | .mounts += [{destination: "/mnt", type: "bind", source: "'"$T"'/hard/rootfs/sub", options: ["rbind", "ro", "nosuid", "dev"]}]
              | .linux.resources.devices += [{allow: true, type: "c", major: 5, minor: 1, access: "rwm"}]
              | .linux.cgroupsPath = "/brig-test/'"$(cid dock4)"'"'
CLEAN_IDS+=("$(cid dock4)")
b --policy "$ENF" run --bundle "$T/dock4" "$(cid dock4)" </dev/null >"$T/dock4.out" 2>"$T/dock4.err"
check_eq "policy run, a bind of an image subdirectory: exits 0" "$?" 0
check_not "policy run: the console node through the bind does not open (binds are nodev)" grep -q MNT-CON "$T/dock4.out"
assert_clean dock4

# ---- a config that lists the console as a node: refused under the policy -----
cfg con '.linux.devices += [{path: "/dev/console", type: "c", major: 5, minor: 1}]'
out=$("$BRIG" policy check --policy agent "$T/con" 2>&1)
check "policy check: a console node in linux.devices is refused as devices, naming it" \
    grep -Eq '^FAIL devices linux\.devices\[[0-9]+\]' <<<"$out"
