#!/usr/bin/env bash
# OCI conformance ("Errors after start", "Process"): `start`
# returns once the process has exec'd and fails with the init's error when
# it did not; brig's steps after the seccomp filter need nothing the filter
# may deny; HOME comes from the container's /etc/passwd; a missing
# process.cwd is made inside the root. Bundles are `runc spec` output.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v runc >/dev/null || skip_all "runc is not installed (bash scripts/setup.sh installs it)"

# One rootfs for every bundle (root.path absolute, read-only as runc spec
# has it): building one per bundle costs more than the cases themselves.
mkb base -- /usr/bin/brig-probe report >/dev/null || bail "cannot build the rootfs"
# runc_bundle NAME ARGS-JSON: `runc spec` in $T/NAME on the shared rootfs.
runc_bundle() {
    local name=$1 args=$2
    mkdir -p "$T/$name" && (cd "$T/$name" && runc spec) || return 1
    cfg "$name" '.process.args = $a | .process.terminal = false | .root.path = $r
                 | .linux.cgroupsPath = "/brig-test/" + $id
                 | .process.env += ["BRIG_IT_TAG=" + $id]' --argjson a "$args" --arg id "$(cid "$name")" \
        --arg r "$T/base/rootfs"
}

# userns NAME: container ids 0-65535 are host 100000-165535 (as t-userns),
# on a copy of the rootfs owned by them.
userns() {
    [ -d "$T/base-userns" ] || { cp -a "$T/base/rootfs" "$T/base-userns" &&
        chown -R 100000:100000 "$T/base-userns"; } || return 1
    cfg "$1" '.linux.namespaces += [{type: "user"}] | .root.path = $r
      | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
      | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
      | .mounts |= map(select(.destination != "/sys/fs/cgroup"))' --arg r "$T/base-userns"
}

# ---- seccomp: nothing brig does after the filter needs openat2 -----------
# An older Docker/containerd profile has no openat2 (EPERM by default):
# brig's re-entry of process.cwd after the identity switch used it.
SC_NO_OPENAT2='{defaultAction: "SCMP_ACT_ALLOW",
    syscalls: [{names: ["openat2"], action: "SCMP_ACT_ERRNO"},
               {names: ["keyctl"], action: "SCMP_ACT_ERRNO", errnoRet: 42}]}'
# What brig used to call after the filter besides: a profile that denies
# them all must still run the program (which needs none of them).
SC_NO_MORE='{defaultAction: "SCMP_ACT_ALLOW",
    syscalls: [{names: ["openat2", "close_range", "getcwd", "chdir", "fchdir", "fstatfs",
                        "pidfd_open", "faccessat2", "statx", "newfstatat"],
                action: "SCMP_ACT_ERRNO"},
               {names: ["keyctl"], action: "SCMP_ACT_ERRNO", errnoRet: 42}]}'
sc_case() { # NAME PROFILE JQ-EDIT DESC
    local name=$1 prof=$2 edit=$3 desc=$4
    runc_bundle "$name" '["/usr/bin/brig-probe", "syscall", "keyctl"]' || return
    cfg "$name" ".linux.seccomp = $prof | $edit"
    run_ct "$name"
    # The probe exits with the errno of what it tried: 42 (ENOMSG), i.e.
    # the filter is in force and the process ran.
    check_eq "$desc: the process runs under the filter (keyctl ENOMSG)" "$RC" 42
    check_probe "... the probe saw ENOMSG" "$name" '.result == "ENOMSG"'
    check_not "... no error from brig" grep -q "process.cwd\|Operation not permitted" "$T/$name.err"
    assert_clean "$name"
}
sc_case sc-more "$SC_NO_MORE" '.process.noNewPrivileges = false | .process.user = {uid: 1000, gid: 1000}
    | .process.cwd = "/tmp" | .hooks.startContainer = [{path: "/bin/true"}]' \
    "uid 1000 without noNewPrivileges, a startContainer hook, no openat2, getcwd, close_range, pidfd_open..."
if [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" != 0 ]; then
    runc_bundle sc-userns '["/usr/bin/brig-probe", "syscall", "keyctl"]' &&
    userns sc-userns && {
        cfg sc-userns ".linux.seccomp = $SC_NO_OPENAT2 | .process.noNewPrivileges = false"
        run_ct sc-userns
        check_eq "root in a user namespace without noNewPrivileges, no openat2: runs (keyctl ENOMSG)" "$RC" 42
        check_not "... no error from brig" grep -q "process.cwd" "$T/sc-userns.err"
        assert_clean sc-userns
    }
else
    skip "user namespace case" "user namespaces are disabled"
fi
# The same through exec: a process exec'd into a running container.
runc_bundle sc-exec '["/usr/bin/brig-probe", "sleep", "30"]' || bail "cannot build a bundle"
cfg sc-exec ".linux.seccomp = $SC_NO_OPENAT2 | .process.noNewPrivileges = false"
run_ct sc-exec -d
check_eq "a container with a profile without openat2 runs detached" "$RC" 0
b exec --user 1000:1000 "$(cid sc-exec)" /usr/bin/brig-probe syscall keyctl >"$T/sc-exec.x.out" 2>"$T/sc-exec.x.err"
check_eq "... brig exec --user 1000 without noNewPrivileges runs its process (keyctl ENOMSG)" "$?" 42
check_not "... no error from brig" grep -q "process.cwd" "$T/sc-exec.x.err"
b exec --user 1000:1000 "$(cid sc-exec)" /usr/bin/brig-probe report >"$T/sc-exec-h.out" 2>&1
check_probe "brig exec --user 1000 without HOME: HOME=/home/user, as runc" sc-exec-h \
    '[.env[] | select(startswith("HOME="))] == ["HOME=/home/user"]'
b exec --env HOME=/mine "$(cid sc-exec)" /usr/bin/brig-probe report >"$T/sc-exec-h2.out" 2>&1
check_probe "brig exec --env HOME=/mine keeps it, once" sc-exec-h2 \
    '[.env[] | select(startswith("HOME="))] == ["HOME=/mine"]'
b delete --force "$(cid sc-exec)" >/dev/null 2>&1
assert_clean sc-exec

# ---- process: HOME and a missing cwd -------------------------------------
# runc spec's env has no HOME: it comes from the container's /etc/passwd
# (mkb's: user 1000 is /home/user), "/" for a uid it does not list. A
# process.cwd missing from the (read-only, as runc spec) root is made inside
# the root, 0755, owned by the container's root; a symlink on its way is
# followed inside the root, never out of it.
runc_bundle home '["/usr/bin/brig-probe", "report"]' || bail "cannot build a bundle"
cfg home '.process.user = {uid: 1000, gid: 1000} | .process.cwd = "/made/by/brig"'
run_ct home
check_ran "uid 1000, no HOME, cwd missing: runs" home
check_probe "... HOME is /home/user (the container's passwd), once" home \
    '[.env[] | select(startswith("HOME="))] == ["HOME=/home/user"]'
check_probe "... its cwd is /made/by/brig" home '.cwd == "/made/by/brig"'
check_eq "... made 0755, owned by root" "$(stat -c '%a %u' "$T/base/rootfs/made/by/brig" 2>&1)" "755 0"
assert_clean home

# The link's target exists both on the host and (as runc needs too) inside the root.
mkdir -p "$T/outside" "$T/base/rootfs$T/outside"
ln -s "/../../../../..$T/outside" "$T/base/rootfs/cwdlink"
runc_bundle nohome '["/usr/bin/brig-probe", "report"]' || bail "cannot build a bundle"
cfg nohome '.process.user = {uid: 4242, gid: 4242} | .process.cwd = "/cwdlink/sub"'
run_ct nohome
check_ran "uid 4242 (not in passwd), cwd through a symlink pointing out: runs" nohome
check_probe "... HOME is /" nohome '[.env[] | select(startswith("HOME="))] == ["HOME=/"]'
check "... the cwd was made inside the root" test -d "$T/base/rootfs$T/outside/sub"
check_not "... and not on the host" test -e "$T/outside/sub"
assert_clean nohome

# HOME from a symlinked /etc/passwd (/etc/passwd -> ../usr/share/passwd, as
# some distributions ship): followed inside the root, as runc and crun
# follow it. Attack variants: a link pointing out of the root (absolute, or
# by ../) reads the file at that path inside the root, never the host's; a
# device, a huge file and a symlink loop give HOME=/, at once.
cp -a "$T/base/rootfs" "$T/pwroot" && mkdir -p "$T/pwroot/usr/share" "$T/pwroot$T" ||
    bail "cannot copy the rootfs"
echo "u:x:1000:1000::/home/via-link:/bin/sh" >"$T/pwroot/usr/share/passwd"
echo "u:x:1000:1000::/HOST-LEAK:/bin/sh" >"$T/hostpw"
echo "u:x:1000:1000::/home/in-root:/bin/sh" >"$T/pwroot$T/hostpw"
truncate -s 1G "$T/pwroot/usr/share/huge"
pw_case() { # NAME LINK-TARGET WANT-HOME DESC
    local name=$1 target=$2 want=$3 desc=$4
    rm -f "$T/pwroot/etc/passwd" && ln -s "$target" "$T/pwroot/etc/passwd"
    runc_bundle "$name" '["/usr/bin/brig-probe", "report"]' || return
    cfg "$name" '.process.user = {uid: 1000, gid: 1000} | .root.path = $r' --arg r "$T/pwroot"
    BRIG_TIMEOUT=20 run_ct "$name"
    check_ran "$desc: runs" "$name"
    check_probe "... HOME is $want" "$name" '[.env[] | select(startswith("HOME="))] == ["HOME=" + $h]' --arg h "$want"
    assert_clean "$name"
}
pw_case pwlink ../usr/share/passwd /home/via-link "/etc/passwd -> ../usr/share/passwd"
other_run runc pwlink && check "runc follows it too (HOME=/home/via-link)" \
    bash -c "grep '^{' '$T/pwlink.runc.out' | tail -n 1 | jq -e '.env | index(\"HOME=/home/via-link\")'"
pw_case pwabs "$T/hostpw" /home/in-root "/etc/passwd -> $T/hostpw (a host path)"
pw_case pwrel "../../../../../../../..$T/hostpw" /home/in-root "/etc/passwd -> ../../..$T/hostpw"
pw_case pwdev /dev/zero / "/etc/passwd -> /dev/zero"
pw_case pwhuge /usr/share/huge / "/etc/passwd -> a 1 GiB file"
ln -s /etc/passwd "$T/pwroot/etc/pw2"
pw_case pwloop /etc/pw2 / "/etc/passwd -> /etc/pw2 -> /etc/passwd (a loop)"
check_not "no HOME ever came from the host's file" grep -rq "HOST-LEAK" "$T"/pw*.out

# ---- start: returns once the process has exec'd, or fails ----------------
# start_fails NAME WANT-MESSAGE DESC: `brig start` exits 1 with the init's
# error; the container is then stopped and a plain delete removes it all.
start_fails() {
    local name=$1 want=$2 desc=$3 id
    id=$(cid "$name")
    b start "$id" >"$T/$name.start.out" 2>"$T/$name.start.err"
    check_eq "$desc: brig start exits 1" "$?" 1
    check "... with the init's error" grep -qF "start $id: $want" "$T/$name.start.err"
    check_eq "... the container is stopped as start returns" "$(state_field "$id" status)" stopped
    check "... a plain delete removes it" b delete "$id"
    assert_clean "$name"
}

# The program removed between create and start (runc: start says nothing).
cp "$BRIG_PROBE" "$T/base/rootfs/usr/bin/gone-probe"
runc_bundle gone '["/usr/bin/gone-probe", "report"]' || bail "cannot build a bundle"
create_ct gone
check_eq "create with the program present succeeds" "$RC" 0
rm -f "$T/base/rootfs/usr/bin/gone-probe"
start_fails gone "exec /usr/bin/gone-probe: No such file or directory" "the program is gone at start"

# A startContainer hook that fails: runs in the init after start.
runc_bundle schook '["/usr/bin/brig-probe", "report"]' || bail "cannot build a bundle"
cfg schook '.hooks.startContainer = [{path: "/bin/false"}]'
create_ct schook
check_eq "create with a failing startContainer hook succeeds (it runs at start)" "$RC" 0
start_fails schook "hooks.startContainer[0] (/bin/false): exited with status 1" \
    "a startContainer hook fails"

# What can be known before "created" is refused by create: an effective
# capability outside the permitted set (capset refuses it after start).
runc_bundle capeff '["/usr/bin/brig-probe", "report"]' || bail "cannot build a bundle"
cfg capeff '.process.capabilities.effective += ["CAP_SYS_ADMIN"]'
create_ct capeff
check_eq "effective CAP_SYS_ADMIN outside permitted: create exits 1" "$RC" 1
check "... naming the fields" grep -qF "process.capabilities.effective: CAP_SYS_ADMIN is not in process.capabilities.permitted" "$T/capeff.err"
assert_clean capeff

# ---- hooks (config.md "POSIX-platform Hooks") -----------------------------
# A failing poststop hook is a warning: the rest of its list runs (a
# failing poststart hook is an error: t-edges). A hook without env gets the
# runtime's environment (the process's, for startContainer, which runs in
# the container). startContainer runs during start: it reads status
# "created", never "creating".
runc_bundle hooks '["/usr/bin/brig-probe", "sleep", "30"]' || bail "cannot build a bundle"
cfg hooks '.process.env += ["HOOK_MARK=in-process"] | .hooks = {
    startContainer: [{path: "/bin/sh", args: ["sh", "-c", "echo START-STDIN; cat; echo; echo START-ENV=$HOOK_MARK"]}],
    poststart: [{path: "/bin/sh", args: ["sh", "-c", "cat > \($t)/ps.json; echo \"$HOOK_MARK\" > \($t)/ps.env"]}],
    poststop: [{path: "/bin/false"}, {path: "/bin/sh", args: ["sh", "-c", "cat > \($t)/pst.json"]}]}' \
    --arg t "$T"
create_ct hooks
check_eq "create with hooks succeeds" "$RC" 0
HOOK_MARK=runtime-env b start "$(cid hooks)" >"$T/hooks.start.out" 2>"$T/hooks.start.err"
check_eq "start succeeds" "$?" 0
# As start returns, the process has exec'd: the pid no longer runs the init
# (brig, from a sealed memfd) but the probe.
exe=$(readlink "/proc/$(state_field "$(cid hooks)" pid)/exe" 2>&1)
check "... the process has exec'd when start returns ($exe)" test "${exe#*brig-probe}" != "$exe"
check "... poststart read status running" jq -e '.status == "running"' "$T/ps.json"
check_eq "... poststart without env got the runtime's environment" "$(cat "$T/ps.env" 2>/dev/null)" runtime-env
start_state=$(sed -n '/^START-STDIN$/{n;p}' "$T/hooks.err")
check "startContainer read status created" jq -e --argjson pid "$(state_field "$(cid hooks)" pid)" \
    '.status == "created" and .pid == $pid' <<<"$start_state"
check "... and without env got the process's environment" grep -qx "START-ENV=in-process" "$T/hooks.err"
b kill "$(cid hooks)" KILL >/dev/null 2>&1
wait_status "$(cid hooks)" stopped 10
b delete "$(cid hooks)" >"$T/hooks.del.out" 2>"$T/hooks.del.err"
check_eq "delete succeeds although poststop[0] fails" "$?" 0
check "... a warning names poststop[0]" grep -q "warning: delete $(cid hooks): hooks.poststop\[0\] (/bin/false): exited with status 1" "$T/hooks.del.err"
check "... poststop[1] ran after it" jq -e '.status == "stopped"' "$T/pst.json"
assert_clean hooks

# In a new user namespace, a uid its mappings leave out (setresuid: EINVAL
# after start, before) is refused by create, naming the field.
if [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" != 0 ]; then
    runc_bundle unmapped '["/usr/bin/brig-probe", "report"]' || bail "cannot build a bundle"
    userns unmapped
    cfg unmapped '.process.user = {uid: 70000, gid: 0}'
    create_ct unmapped
    check_eq "uid 70000 outside linux.uidMappings (0-65535): create exits 1" "$RC" 1
    check "... naming the field" grep -qF "process.user.uid: 70000 is not mapped by linux.uidMappings" "$T/unmapped.err"
    assert_clean unmapped
fi

# A hostile image: /etc/passwd a fifo (a plain open would wait for a writer
# forever) is never opened for reading: HOME is "/" and the process runs.
if [ -d "$T/base-userns" ]; then
    rm -f "$T/base-userns/etc/passwd" && mkfifo "$T/base-userns/etc/passwd"
    runc_bundle fifopw '["/usr/bin/brig-probe", "report"]' || bail "cannot build a bundle"
    userns fifopw
    BRIG_TIMEOUT=20 run_ct fifopw
    check_ran "/etc/passwd a fifo: the container runs, no hang" fifopw
    check_probe "... HOME is /" fifopw '[.env[] | select(startswith("HOME="))] == ["HOME=/"]'
    assert_clean fifopw
fi
