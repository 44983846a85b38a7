#!/usr/bin/env bash
# OCI conformance: configs made the way users make them run under
# brig as under runc and crun. Today: `runc spec` unchanged but for args,
# terminal and an absolute cgroupsPath (its ambient caps are not
# inheritable), and capabilities this host cannot grant (left out with a
# warning, never an error, never granted).
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v runc >/dev/null || skip_all "runc is not installed (bash scripts/setup.sh installs it)"

# runc_bundle NAME ARGS-JSON: `runc spec` in $T/NAME with mkb's rootfs.
runc_bundle() {
    local name=$1 args=$2
    mkb "$name-src" -- /usr/bin/brig-probe report || return 1
    mkdir -p "$T/$name" && mv "$T/$name-src/rootfs" "$T/$name/rootfs" || return 1
    (cd "$T/$name" && runc spec) || return 1
    cfg "$name" '.process.args = $a | .process.terminal = false
                 | .linux.cgroupsPath = "/brig-test/" + $id
                 | .process.env += ["BRIG_IT_TAG=" + $id]' --argjson a "$args" --arg id "$(cid "$name")"
}

caps_of() { # NAME SET: the probe's hex value of Cap<SET>
    probe_json "$1" | jq -r ".caps.Cap$2 // empty"
}

# ---- runc spec, unchanged ------------------------------------------------
runc_bundle spec '["/usr/bin/brig-probe", "report"]' || bail "cannot build the runc spec bundle"
check "runc spec's ambient list is not in its inheritable set (the case itself)" \
    jq -e '(.process.capabilities.ambient // []) - (.process.capabilities.inheritable // []) | length > 0' \
    "$T/spec/config.json"
run_ct spec
check_ran "a runc spec bundle runs" spec
check_probe "its ambient set is empty (not raisable: left out)" spec '.caps.CapAmb == "0000000000000000"'
check_probe "its permitted set is runc spec's (KILL, NET_BIND_SERVICE, AUDIT_WRITE)" spec \
    '.caps.CapPrm == "0000000020000420"'
check_eq "nothing on stderr for them, as runc" "$(cat "$T/spec.err")" ""
assert_clean spec
# --debug still names what was left out.
runc_bundle specd '["/usr/bin/brig-probe", "report"]' || bail "cannot build the runc spec bundle"
CLEAN_IDS+=("$(cid specd)")
b --debug run --bundle "$T/specd" "$(cid specd)" </dev/null >"$T/specd.out" 2>"$T/specd.err"
check "--debug names the ambient caps left out" grep -q "process.capabilities.ambient: CAP_KILL is not in both.*left out" "$T/specd.err"
assert_clean specd

# The same bundle through create + start.
runc_bundle spec2 '["/usr/bin/brig-probe", "report"]' || bail "cannot build the runc spec bundle"
create_ct spec2
check_eq "create of a runc spec bundle succeeds" "$RC" 0
b start "$(cid spec2)" >/dev/null 2>&1
wait_status "$(cid spec2)" stopped 10
check_probe "its process ran after start" spec2 '.caps != null'
b delete "$(cid spec2)" >/dev/null 2>&1
assert_clean spec2

# ---- a capability the host cannot grant ---------------------------------
# Granted only if brig holds it: look for one outside our own bounding set.
bnd=$((16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)))
last=$(cat /proc/sys/kernel/cap_last_cap)
missing=
for c in $(seq 0 "$last"); do
    if [ $(( (bnd >> c) & 1 )) = 0 ]; then missing=$c; break; fi
done
if [ -z "$missing" ]; then
    skip "a cap this host cannot grant is left out" "brig's bounding set holds every capability here"
else
    name=$(python3 -c "import sys; print({0:'CHOWN',1:'DAC_OVERRIDE',2:'DAC_READ_SEARCH',3:'FOWNER',4:'FSETID',5:'KILL',6:'SETGID',7:'SETUID',8:'SETPCAP',9:'LINUX_IMMUTABLE',10:'NET_BIND_SERVICE',11:'NET_BROADCAST',12:'NET_ADMIN',13:'NET_RAW',14:'IPC_LOCK',15:'IPC_OWNER',16:'SYS_MODULE',17:'SYS_RAWIO',18:'SYS_CHROOT',19:'SYS_PTRACE',20:'SYS_PACCT',21:'SYS_ADMIN',22:'SYS_BOOT',23:'SYS_NICE',24:'SYS_RESOURCE',25:'SYS_TIME',26:'SYS_TTY_CONFIG',27:'MKNOD',28:'LEASE',29:'AUDIT_WRITE',30:'AUDIT_CONTROL',31:'SETFCAP',32:'MAC_OVERRIDE',33:'MAC_ADMIN',34:'SYSLOG',35:'WAKE_ALARM',36:'BLOCK_SUSPEND',37:'AUDIT_READ',38:'PERFMON',39:'BPF',40:'CHECKPOINT_RESTORE'}[int(sys.argv[1])])" "$missing")
    runc_bundle ungr '["/usr/bin/brig-probe", "report"]' || bail "cannot build the runc spec bundle"
    cfg ungr '.process.capabilities |= with_entries(.value += [$c]) | .process.capabilities.inheritable = .process.capabilities.permitted' \
        --arg c "CAP_$name"
    run_ct ungr
    check_ran "a config asking for CAP_$name, which this host cannot grant, runs" ungr
    got=$(caps_of ungr Prm)
    if [ -n "$got" ] && [ $(( (16#$got >> missing) & 1 )) = 0 ]; then
        ok "CAP_$name is not granted (permitted $got)"
    else
        not_ok "CAP_$name is not granted" "permitted: '$got'" "$(cat "$T/ungr.err")"
    fi
    check "the warning names CAP_$name" grep -q "warning: .*CAP_$name cannot be granted on this host: left out" "$T/ungr.err"
    assert_clean ungr
fi
