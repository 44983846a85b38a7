#!/usr/bin/env bash
# A host disk reached through the device cgroup alone: a config whose
# linux.resources.devices allows one specific block device ("b 7:N rwm", no
# wildcard) needs no linux.devices entry when the image brings its own node
# (a rootfs is not mounted nodev). The disk here is a decoy: a loop device
# over a file of this test. Under the policy only the default devices (and
# the policy's own, by path) may be allowed: `policy check` catches the rule
# as `devices`, naming the field and the device, and create refuses it;
# what Docker and containerd write by default still passes.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v losetup >/dev/null || skip_all "no losetup (util-linux)"
# shellcheck source=tests/security/policy-lib.sh
. "$(dirname "$0")/policy-lib.sh"

# ---- the decoy disk -----------------------------------------------------------
{ printf 'brig-decoy-disk-secret\n'; head -c 65536 /dev/zero; } > "$T/disk.img"
LOOP=$(losetup -f --show "$T/disk.img" 2>"$T/losetup.err") ||
    skip_all "no loop device here: $(head -c 200 "$T/losetup.err")"
trap 'losetup -d "$LOOP" 2>/dev/null; it_finish' EXIT
MAJ=$((16#$(stat -c %t "$LOOP"))) MIN=$((16#$(stat -c %T "$LOOP")))
diag "decoy disk: $LOOP (b $MAJ:$MIN) over $T/disk.img"
# The image's own node for it: nothing in the config makes it.
mknod -m 0666 "$T/hard/rootfs/disk" b "$MAJ" "$MIN"

# check_match DESC TEXT ERE: TEXT has a line matching ERE.
check_match() {
    if grep -Eq -- "$3" <<<"$2"; then ok "$1"; else not_ok "$1" "no line matching: $3" "$(head -c 2000 <<<"$2")"; fi
}
# weaken with a cgroup of its own: a container the old brig let through
# must not hold the next one's.
weaken_cg() { # NAME JQ-FILTER
    weaken "$1" "$2 | .linux.cgroupsPath = \"/brig-test/$(cid "$1")\""
}
allow_rule() { # TYPE MAJOR MINOR ACCESS
    jq -n --arg t "$1" --argjson ma "$2" --argjson mi "$3" --arg a "$4" \
        '{allow: true, type: $t, major: $ma, minor: $mi, access: $a}'
}
# weaken_dev NAME RULE-JSON: the hardened config reading /disk, with one more allow rule.
weaken_dev() {
    weaken_cg "$1" '.process.args = ["/usr/bin/brig-probe", "read", "/disk"]'
    jq --argjson r "$2" '.linux.resources.devices += [$r]' "$T/$1/config.json" > "$T/$1/c.json" &&
        mv "$T/$1/c.json" "$T/$1/config.json"
}

# ---- the attack: b MAJ:MIN allowed, read through the image's node ------------
weaken_dev disk "$(allow_rule b "$MAJ" "$MIN" rwm)"
# Why the check matters: without a policy (runc's behaviour) the container
# reads the disk. (Under a policy, even in audit mode, the root is nodev:
# the image's node is dead; t-console-node.)
CLEAN_IDS+=("$(cid disk-audit)")
out=$(b run --bundle "$T/disk" "$(cid disk-audit)" 2>&1 </dev/null)
if grep -q brig-decoy-disk-secret <<<"$out"; then
    ok "an allow rule for the disk alone lets the container read it (why the check matters)"
else
    not_ok "an allow rule for the disk alone lets the container read it (why the check matters)" "$out"
fi
CLEAN_IDS+=("$(cid disk-audit2)")
out=$(b --policy "$AUD" run --bundle "$T/disk" "$(cid disk-audit2)" 2>&1 </dev/null)
if grep -q '"result":"EACCES"' <<<"$out" && ! grep -q brig-decoy-disk-secret <<<"$out"; then
    ok "under a policy (audit mode) the image's node is dead all the same (nodev root): EACCES"
else
    not_ok "under a policy (audit mode) the image's node is dead all the same" "$out"
fi
out=$("$BRIG" policy check --policy "$ENF" --format json "$T/disk/config.json" 2>&1)
rc=$?
idx=$(jq '.linux.resources.devices | length - 1' "$T/disk/config.json")
if [ "$rc" = 1 ] && jq -e --arg p "linux.resources.devices[$idx]" --arg v "allows b $MAJ:$MIN rwm" \
        '[.results[] | select(.pass | not)] | length == 1 and .[0].rule == "devices" and .[0].path == $p
         and (.[0].value | startswith($v))' <<<"$out" >/dev/null; then
    ok "check catches the disk's allow rule as devices, at its field, naming b $MAJ:$MIN"
else
    not_ok "check catches the disk's allow rule as devices, at its field" "exit $rc" "$out"
fi
out=$("$BRIG" policy check --policy "$ENF" "$T/disk/config.json" 2>&1)
check_match "... the text names the host's device" "$out" "^FAIL devices linux.resources.devices\\[$idx\\]: allows b $MAJ:$MIN rwm .*the host's $LOOP"
b --policy "$ENF" create --bundle "$T/disk" "$(cid disk)" >"$T/disk.err" 2>&1 </dev/null
check_refused_rc "enforce mode refuses create (exit 1)" "refuses create: devices" 1 "$?" "$T/disk.err"
CLEAN_IDS+=("$(cid disk)")
check "... nothing made" test ! -e "$STATE/$(cid disk)"
check "the refusal does not echo the disk's content" bash -c "! grep -q brig-decoy-disk-secret '$T/disk.err'"

# Read only, or the same disk as "a" (the kernel writes a c and a b rule).
for v in "b $MAJ $MIN r" "a $MAJ $MIN rw" "c 1 1 rwm" "c 10 229 rw"; do
    read -r ty ma mi ac <<<"$v"
    weaken_dev "v-$ty-$ma-$mi" "$(allow_rule "$ty" "$ma" "$mi" "$ac")"
    out=$("$BRIG" policy check --policy "$ENF" "$T/v-$ty-$ma-$mi/config.json" 2>&1)
    rc=$?
    if [ "$rc" = 1 ] && grep -q "^FAIL devices linux.resources.devices\[[0-9]*\]: allows $ty $ma:$mi $ac" <<<"$out"; then
        ok "check catches an allow of $ty $ma:$mi $ac"
    else
        not_ok "check catches an allow of $ty $ma:$mi $ac" "exit $rc" "$out"
    fi
done

# The node made by the config instead: linux.devices names it, the policy lists no device.
weaken ldev ".linux.devices = [{path: \"/dev/xdisk\", type: \"b\", major: $MAJ, minor: $MIN, fileMode: 438}]"
out=$("$BRIG" policy check --policy "$ENF" "$T/ldev/config.json" 2>&1)
check_match "check catches a linux.devices entry for the disk" "$out" \
    "FAIL devices linux.devices\\[0\\].path: \"/dev/xdisk\" as b $MAJ:$MIN is not an allowed device"

# ---- use: what engines write, and a device the policy lists -------------------
# shellcheck disable=SC2034  # read through ${!e} below
# Docker (moby's DefaultLinuxSpec + WithDevices), containerd's
# WithDefaultUnixDevices (ctr run, the CRI plugin), in their order.
docker='[{allow:false,access:"rwm"},
  {allow:true,type:"c",major:1,minor:5,access:"rwm"},{allow:true,type:"c",major:1,minor:3,access:"rwm"},
  {allow:true,type:"c",major:1,minor:9,access:"rwm"},{allow:true,type:"c",major:1,minor:8,access:"rwm"},
  {allow:true,type:"c",major:5,minor:0,access:"rwm"},{allow:true,type:"c",major:5,minor:1,access:"rwm"},
  {allow:false,type:"c",major:10,minor:229,access:"rwm"}]'
# shellcheck disable=SC2034
containerd='[{allow:false,access:"rwm"},
  {allow:true,type:"c",major:-1,minor:-1,access:"m"},{allow:true,type:"b",major:-1,minor:-1,access:"m"},
  {allow:true,type:"c",major:1,minor:3,access:"rwm"},{allow:true,type:"c",major:1,minor:8,access:"rwm"},
  {allow:true,type:"c",major:1,minor:7,access:"rwm"},{allow:true,type:"c",major:5,minor:0,access:"rwm"},
  {allow:true,type:"c",major:1,minor:5,access:"rwm"},{allow:true,type:"c",major:1,minor:9,access:"rwm"},
  {allow:true,type:"c",major:5,minor:1,access:"rwm"},{allow:true,type:"c",major:136,access:"rwm"},
  {allow:true,type:"c",major:5,minor:2,access:"rwm"},{allow:true,type:"c",major:10,minor:200,access:"rwm"}]'
for e in docker containerd; do
    weaken "eng-$e" ".linux.resources.devices = ${!e}"
    out=$("$BRIG" policy check --policy "$ENF" "$T/eng-$e/config.json" 2>&1)
    rc=$?
    check_eq "$e's default device rules pass the check" "$rc" 0
    [ "$rc" = 0 ] || diag "$out"
done
# The defaults listed as linux.devices nodes make nothing the runtime does not make itself.
weaken ldefault '.linux.devices = [{path: "/dev/null", type: "c", major: 1, minor: 3},
    {path: "/dev/urandom", type: "c", major: 1, minor: 9}, {path: "/dev/tty", type: "c", major: 5, minor: 0}]'
check "default nodes listed in linux.devices pass the check" "$BRIG" policy check --policy "$ENF" "$T/ldefault/config.json"
weaken lnull-disk '.linux.devices = [{path: "/dev/null", type: "b", major: 7, minor: 0}]'
out=$("$BRIG" policy check --policy "$ENF" "$T/lnull-disk/config.json" 2>&1)
check_match "... but /dev/null as a block device does not" "$out" 'FAIL devices linux.devices\[0\].path: "/dev/null" as b 7:0'
# The policy lists the disk by its host path: its node and its rule pass, and
# the container reads it under enforce mode.
jq --arg d "$LOOP" '.devices = [$d]' "$ENF" > "$T/enf-disk.json"
weaken_dev listed "$(allow_rule b "$MAJ" "$MIN" r)"
# (the node at its host path in the container's /dev: the root's own is dead)
jq --arg d "$LOOP" --argjson ma "$MAJ" --argjson mi "$MIN" \
    '.linux.devices += [{path: $d, type: "b", major: $ma, minor: $mi}] | .process.args[2] = $d' \
    "$T/listed/config.json" > "$T/listed/c.json" && mv "$T/listed/c.json" "$T/listed/config.json"
out=$("$BRIG" policy check --policy "$T/enf-disk.json" "$T/listed/config.json" 2>&1)
rc=$?
check_eq "a rule for a device the policy lists passes the check" "$rc" 0
[ "$rc" = 0 ] || diag "$out"
run_ct_pol() { CLEAN_IDS+=("$(cid "$1")"); b --policy "$2" run --bundle "$T/$1" "$(cid "$1")" </dev/null >"$T/$1.out" 2>"$T/$1.err"; RC=$?; }
run_ct_pol listed "$T/enf-disk.json"
check "... and the container reads it under enforce mode" grep -q brig-decoy-disk-secret "$T/listed.out"
[ "$RC" = 0 ] || diag "$(cat "$T/listed.err")"
# The hardened config itself (what policy apply writes) runs.
cfgh() { jq '.process.args = ["/usr/bin/brig-probe", "read", "/dev/null"]' "$T/hard/config.json" > "$T/hard/c.json" && mv "$T/hard/c.json" "$T/hard/config.json"; }
cfgh
run_ct_pol hard "$ENF"
check_eq "the hardened config runs under enforce mode" "$RC" 0
# apply removes the disk's rule and keeps the defaults.
"$BRIG" policy apply --policy "$ENF" --output "$T/applied.json" "$T/disk/config.json" >/dev/null 2>&1
check "policy apply drops the disk's allow rule" jq -e --argjson ma "$MAJ" --argjson mi "$MIN" \
    '[.linux.resources.devices[] | select(.allow and .major == $ma and .minor == $mi)] | length == 0' "$T/applied.json"
"$BRIG" policy apply --policy "$ENF" --output "$T/applied-c.json" "$T/eng-containerd/config.json" >/dev/null 2>&1
check "... and keeps containerd's default nodes" jq -e \
    '[.linux.resources.devices[] | select(.allow and .type == "c" and .major == 1)] | length == 5' "$T/applied-c.json"
assert_clean disk
assert_clean listed
