#!/usr/bin/env bash
# OCI conformance, namespaces and mounts: bundles made with
# `runc spec` and edited the way users edit them, each item compared with
# what runc 1.1.5 does on this machine.
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
# refused NAME MESSAGE: run was refused (exit 1, not a crash) with MESSAGE, nothing left.
refused() {
    local name=$1 msg=$2
    run_ct "$name"
    check_eq "$name: refused with exit 1" "$RC" 1
    check "$name: the error says \"$msg\"" grep -qF -- "$msg" "$T/$name.err"
    assert_clean "$name"
}
HOLDERS=()
trap '_rc=$?; for p in "${HOLDERS[@]}"; do kill "$p" 2>/dev/null; done; (exit $_rc); it_finish' EXIT

# ---- hostname in a uts namespace joined by path (runc and crun set it) ----
unshare --uts sleep 60 & HOLDERS+=($!)
holder=$!
sleep 0.2
runc_bundle utsjoin '["/usr/bin/brig-probe", "report"]' || bail "cannot build a runc spec bundle"
cfg utsjoin '.hostname = "joined-host" | .domainname = "joined.example"
             | .linux.namespaces = [.linux.namespaces[] | select(.type != "uts")] + [{type: "uts", path: $p}]' \
    --arg p "/proc/$holder/ns/uts"
run_ct utsjoin
check_ran "a config joining a uts namespace by path with a hostname runs" utsjoin
check_probe "the container sees the hostname" utsjoin '.hostname == "joined-host"'
check_probe "and the domainname" utsjoin '.domainname == "joined.example"'
check_eq "the joined namespace has it (set there, as runc does)" \
    "$(nsenter -t "$holder" -u hostname)" "joined-host"
check_not "the host's hostname is untouched" test "$(hostname)" = joined-host
assert_clean utsjoin
# brig's own uts namespace (the host's) joined by path: never renamed.
runc_bundle utshost '["/usr/bin/brig-probe", "report"]' || bail "cannot build a runc spec bundle"
cfg utshost '.hostname = "hijack"
             | .linux.namespaces = [.linux.namespaces[] | select(.type != "uts")] + [{type: "uts", path: "/proc/self/ns/uts"}]'
refused utshost "hostname: needs a private uts namespace"

# ---- linux.sysctl against hostname/domainname, as runc -----------------------
runc_bundle sysh '["/usr/bin/brig-probe", "report"]' || bail "cannot build a runc spec bundle"
cfg sysh '.linux.sysctl = {"kernel.hostname": "runc"}'
refused sysh 'linux.sysctl.kernel.hostname: not allowed, it conflicts with the "hostname" field'
runc_bundle sysd '["/usr/bin/brig-probe", "report"]' || bail "cannot build a runc spec bundle"
cfg sysd '.domainname = "d1" | .linux.sysctl = {"kernel.domainname": "d1"}'
run_ct sysd
check_ran "kernel.domainname with the same domainname runs (runc does)" sysd
check_probe "the domainname is set" sysd '.domainname == "d1"'
assert_clean sysd
runc_bundle sysd2 '["/usr/bin/brig-probe", "report"]' || bail "cannot build a runc spec bundle"
cfg sysd2 '.domainname = "d1" | .linux.sysctl = {"kernel.domainname": "d2"}'
refused sysd2 'linux.sysctl.kernel.domainname: "d2" conflicts with the "domainname" field ("d1")'
# crun refuses it too; runc runs it and lets the sysctl win.
if other_run crun sysd2; then
    check_eq "crun refuses the same bundle" "$OTHER_RC" 1
    check "... as a conflict" grep -qF "conflicts with OCI field \`domainname\`" "$T/sysd2.crun.err"
fi
other_run runc sysd2 && check "runc runs it, the sysctl's d2 winning (the difference)" \
    bash -c "grep '^{' '$T/sysd2.runc.out' | tail -n 1 | jq -e '.domainname == \"d2\"'"

# ---- tmpfs over an existing directory keeps its mode (runc does) ------------
runc_bundle tmode '["/bin/busybox", "stat", "-c", "%a %n", "/dir712", "/tmp", "/dirset"]' ||
    bail "cannot build a runc spec bundle"
mkdir -p "$T/tmode/rootfs/dir712" "$T/tmode/rootfs/tmp" "$T/tmode/rootfs/dirset"
chmod 0712 "$T/tmode/rootfs/dir712"; chmod 1777 "$T/tmode/rootfs/tmp"; chmod 0700 "$T/tmode/rootfs/dirset"
cfg tmode '.mounts += [{destination: "/dir712", type: "tmpfs", source: "tmpfs", options: ["nosuid"]},
                       {destination: "/tmp", type: "tmpfs", source: "tmpfs"},
                       {destination: "/dirset", type: "tmpfs", source: "tmpfs", options: ["mode=755"]}]'
run_ct tmode
check_eq "tmode: runs" "$RC" 0
check "a tmpfs without mode= over a 0712 directory is 0712" grep -qx "712 /dir712" "$T/tmode.out"
check "over a 1777 /tmp it is 1777" grep -qx "1777 /tmp" "$T/tmode.out"
check "an explicit mode= still wins" grep -qx "755 /dirset" "$T/tmode.out"
assert_clean tmode

# ---- mount destinations: "/" itself, and a dangling symlink -----------------
# A bind onto "/" (first, as runc needs it: later mounts go on top) replaces
# the root, as in runc; root.readonly then applies to it.
runc_bundle broot '["/bin/busybox", "sh", "-c", "cat /marker; test -d /proc/self && echo PROC; touch /w 2>/dev/null || echo RO"]' ||
    bail "cannot build a runc spec bundle"
cp -a "$T/broot/rootfs" "$T/broot-new" && echo from-the-bind >"$T/broot-new/marker" && echo from-root-path >"$T/broot/rootfs/marker"
cfg broot '.mounts = [{destination: "/", type: "bind", source: $s, options: ["rbind"]}] + .mounts | .root.readonly = true' \
    --arg s "$T/broot-new"
run_ct broot
check_eq "a bind onto / runs (runc runs it)" "$RC" 0
check "... the container's root is the bind's source" grep -qx from-the-bind "$T/broot.out"
check "... the mounts after it are in it (/proc)" grep -qx PROC "$T/broot.out"
check "... root.readonly holds on it" grep -qx RO "$T/broot.out"
check_not "... and nothing was written to the source" test -e "$T/broot-new/w"
assert_clean broot
other_run runc broot && check "runc shows the same root" grep -qx from-the-bind "$T/broot.runc.out"
"$BRIG" policy check --policy agent "$T/broot/config.json" >"$T/broot.pol" 2>&1
check "a policy refuses a mount onto / (mounts.forbidden)" grep -qF "a mount over the container's root replaces root.path" "$T/broot.pol"
cfg broot '.mounts[0] = {destination: "/", type: "tmpfs", source: "tmpfs"}'
refused broot "mounts[0] (/): refusing to mount tmpfs over the container's root (only a bind mount of a directory may replace it)"
# A destination that is a dangling symlink in the image: its target is made
# inside the root, as runc does (its securejoin; crun 1.8.1 refuses it).
runc_bundle dangl '["/bin/busybox", "sh", "-c", "cat /etc/not-existing; ls -d /linkdir"]' || bail "cannot build a runc spec bundle"
ln -s missing-file "$T/dangl/rootfs/etc/not-existing"
ln -s /made/by/link "$T/dangl/rootfs/linkdir"
echo bound-file >"$T/dangl-file"; mkdir -p "$T/dangl-dir"
cfg dangl '.mounts += [{destination: "/etc/not-existing", type: "bind", source: $f, options: ["bind"]},
                       {destination: "/linkdir", type: "bind", source: $d, options: ["bind"]}]' \
    --arg f "$T/dangl-file" --arg d "$T/dangl-dir"
run_ct dangl
check_eq "bind onto dangling symlinks (a file, a directory): runs" "$RC" 0
check "... the file is seen through the link" grep -qx bound-file "$T/dangl.out"
check "... the targets were made inside the root" test -f "$T/dangl/rootfs/etc/missing-file" -a -d "$T/dangl/rootfs/made/by/link"
check_not "... and nothing at /made on the host" test -e /made/by/link
assert_clean dangl
rm -rf "$T/dangl/rootfs/etc/missing-file" "$T/dangl/rootfs/made"
other_run runc dangl && check "runc runs it the same way" grep -qx bound-file "$T/dangl.runc.out"
rm -rf "$T/dangl/rootfs/etc/missing-file" "$T/dangl/rootfs/made"
# crun 1.8.1 refuses it ("openat2 `etc/not-existing`: No such file or directory").
other_run crun dangl && diag "crun on the same bundle: exit $OTHER_RC: $(head -c 200 "$T/dangl.crun.err")"

# ---- linux.memoryPolicy (spec 1.3) -------------------------------------------
if [ -r /proc/self/numa_maps ] && [ -d /sys/devices/system/node/node0 ]; then
    for m in "MPOL_BIND:bind=static:0:[\"MPOL_F_STATIC_NODES\"]" "MPOL_LOCAL:local::[]"; do
        IFS=: read -r mode want nodes flags <<<"$m"
        n=mpol-$(echo "$mode" | tr 'A-Z_' 'a-z-')
        runc_bundle "$n" '["/bin/busybox", "cat", "/proc/self/numa_maps"]' || bail "cannot build a runc spec bundle"
        cfg "$n" '.linux.memoryPolicy = {mode: $m, flags: $f} | if $n != "" then .linux.memoryPolicy.nodes = $n else . end' \
            --arg m "$mode" --arg n "$nodes" --argjson f "$flags"
        run_ct "$n"
        check_eq "$n: runs" "$RC" 0
        check "$n: the process's memory policy is $want" grep -qF " $want${nodes:+:$nodes} " "$T/$n.out"
        assert_clean "$n"
    done
    runc_bundle mpolnode '["/bin/busybox", "true"]' || bail "cannot build a runc spec bundle"
    cfg mpolnode '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: "1000"}'
    refused mpolnode "linux.memoryPolicy: the kernel refused the mode, flags or nodes"
    runc_bundle mpolbad '["/bin/busybox", "true"]' || bail "cannot build a runc spec bundle"
    cfg mpolbad '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: "0", flags: ["MPOL_F_STATIC_NODES", "MPOL_F_RELATIVE_NODES"]}'
    refused mpolbad "linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each other"
    check "features lists every mode and flag of the spec" \
        bash -c '"$BRIG" features | jq -e ".linux.memoryPolicy | (.modes | length) == 7 and (.flags | length) == 3"'
else
    skip "linux.memoryPolicy" "no NUMA support in this kernel (/proc/self/numa_maps)"
fi

# ---- crun's CLI: --cgroup-manager and --config ------------------------------
runc_bundle cfgfile '["/usr/bin/brig-probe", "report"]' || bail "cannot build a runc spec bundle"
mv "$T/cfgfile/config.json" "$T/cfgfile/my.json"
CLEAN_IDS+=("$(cid cfgfile)")
(cd "$T/cfgfile" && b run --config my.json "$(cid cfgfile)" </dev/null >"$T/cfgfile.out" 2>"$T/cfgfile.err"); RC=$?
check_ran "run --config FILE (crun's) reads that file, the bundle being the cwd" cfgfile
assert_clean cfgfile
ln -s my.json "$T/cfgfile/link.json"; mkfifo "$T/cfgfile/fifo.json"
(cd "$T/cfgfile" && b run --config link.json "$(cid cfgfile)" </dev/null >/dev/null 2>"$T/cfgfile.err"); RC=$?
check_eq "--config naming a symlink: refused with exit 1" "$RC" 1
check "and the error says so" grep -qF "run: --config: link.json: a symlink, refusing to follow it" "$T/cfgfile.err"
(cd "$T/cfgfile" && b run --config fifo.json "$(cid cfgfile)" </dev/null >/dev/null 2>"$T/cfgfile.err"); RC=$?
check_eq "--config naming a fifo: refused at once with exit 1 (not blocked)" "$RC" 1
check "and the error says so" grep -qF "run: --config: fifo.json: not a regular file (a fifo), refusing to read it" "$T/cfgfile.err"
assert_clean cfgfile

runc_bundle nocg '["/usr/bin/brig-probe", "report"]' || bail "cannot build a runc spec bundle"
CLEAN_IDS+=("$(cid nocg)")
b --cgroup-manager disabled run --bundle "$T/nocg" "$(cid nocg)" </dev/null >"$T/nocg.out" 2>"$T/nocg.err"; RC=$?
check_ran "--cgroup-manager disabled runs a runc spec bundle" nocg
check_probe "in the caller's cgroup: none was made for it" nocg \
    '.cgroup | tostring | contains("brig-test") | not'
assert_clean nocg
runc_bundle nocgl '["/usr/bin/brig-probe", "report"]' || bail "cannot build a runc spec bundle"
cfg nocgl '.linux.resources.pids = {limit: 10}'
CLEAN_IDS+=("$(cid nocgl)")
b --cgroup-manager disabled run --bundle "$T/nocgl" "$(cid nocgl)" </dev/null >"$T/nocgl.out" 2>"$T/nocgl.err"; RC=$?
check_eq "--cgroup-manager disabled with a pids limit: refused with exit 1" "$RC" 1
check "naming the field" grep -qF "linux.resources.pids: --cgroup-manager disabled makes no cgroup to enforce it" "$T/nocgl.err"
assert_clean nocgl
check "--cgroup-manager bogus is refused" bash -c '"$BRIG" --cgroup-manager bogus list 2>&1 | grep -qF "expected cgroupfs, systemd or disabled"'

# ---- no "mount" in linux.namespaces: inherit brig's (spec MUST) --------------
# runc 1.1.5 runs such a bundle (not run here: it makes the host's "/"
# rslave, recursively, and leaves /proc, /dev, /sys mounted on its copy of
# the rootfs). brig mounts in brig's namespace too, below a bind of
# root.path onto itself that delete detaches: every mount is under the
# rootfs, none stays, nothing else changes.
runc_bundle nomnt '["/bin/busybox", "sh", "-c", "ls /proc/self/fd >/dev/null && echo PROC; cat /proc/kcore 2>&1 | head -c 40; echo; touch /w 2>/dev/null || echo RO; echo HOME=$HOME; cat /only-in-root; cat $0 2>/dev/null || echo NOHOST", ""]' ||
    bail "cannot build a runc spec bundle"
echo in-root >"$T/nomnt/rootfs/only-in-root"; echo host >"$T/host-only"
cfg nomnt '.linux.namespaces = [.linux.namespaces[] | select(.type != "mount")] | .process.args[4] = $h' --arg h "$T/host-only"
keys_before=$(host_key_mounts "$T/nomnt/rootfs")
create_ct nomnt
check_eq "runc spec without a mount namespace: create succeeds (as runc)" "$RC" 0
[ "$RC" = 0 ] || diag "$(cat "$T/nomnt.err")"
check "... its mounts are in brig's namespace, below root.path" test -n "$(mounts_under "$T/nomnt/rootfs")"
check_eq "... and only there: no other mount point appeared or changed" "$(host_key_mounts "$T/nomnt/rootfs")" "$keys_before"
check "... its bind of the root is recorded" jq -e '.sharedMount | test("^[0-9]+ [uo] ")' "$STATE/$(cid nomnt)/state.json"
b start "$(cid nomnt)" >/dev/null 2>&1
wait_status "$(cid nomnt)" stopped 10
check "the process saw /proc" grep -qx PROC "$T/nomnt.out"
check "... its masked paths (/proc/kcore reads nothing)" bash -c "! grep -q ELF '$T/nomnt.out'"
check "... a read-only root (root.readonly)" grep -qx RO "$T/nomnt.out"
check "... HOME from its /etc/passwd" grep -qx HOME=/root "$T/nomnt.out"
check "... its root is root.path (a chroot)" grep -qx in-root "$T/nomnt.out"
check "... and a host file outside root.path is not reachable" grep -qx NOHOST "$T/nomnt.out"
b delete "$(cid nomnt)" >/dev/null 2>"$T/nomnt.del"
check_eq "delete detaches every mount it made" "$(mounts_under "$T")" ""
assert_clean nomnt
# A create killed after its mounts were made: delete --force detaches them.
cfg nomnt '.hooks.createRuntime = [{path: "/bin/sh", args: ["sh", "-c", "kill -9 $PPID"]}]'
create_ct nomnt
check_eq "brig create killed by its createRuntime hook (after the mounts)" "$RC" 137
b delete --force "$(cid nomnt)" >/dev/null 2>&1
check_eq "... delete --force detaches them" "$(mounts_under "$T")" ""
assert_clean nomnt
cfg nomnt 'del(.hooks)'
# Still refused: what leaves a chroot, a new user namespace (it cannot
# mount here), and the host's / as root.path (every mount would cover it).
cfg nomnt '.process.capabilities.bounding += ["CAP_SYS_CHROOT"]'
refused nomnt 'process.capabilities.bounding: CAP_SYS_CHROOT, CAP_SYS_ADMIN and CAP_DAC_READ_SEARCH (open_by_handle_at) would let the process leave root.path'
cfg nomnt '.process.capabilities.bounding -= ["CAP_SYS_CHROOT"] | .linux.namespaces += [{type: "user"}]
           | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
           | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
refused nomnt 'mounts[0] (/proc): a new user namespace may not mount in the mount namespace it inherits or joins'
mkdir -p "$T/hostroot-target"
cfg nomnt '.linux.namespaces -= [{type: "user"}] | del(.linux.uidMappings) | del(.linux.gidMappings)
           | .root.path = "/" | .mounts = [{destination: $d, type: "tmpfs", source: "tmpfs"}]' --arg d "$T/hostroot-target"
refused nomnt "mounts[0] ($T/hostroot-target): root.path is the host's \"/\""
check_eq "... nothing was mounted there" "$(mounts_under "$T/hostroot-target")" ""
# What needs no mount is only chrooted, as before.
runc_bundle nomnt0 '["/usr/bin/brig-probe", "report", "--read", "/only-in-root"]' || bail "cannot build a runc spec bundle"
echo in-root >"$T/nomnt0/rootfs/only-in-root"
cfg nomnt0 '.linux.namespaces = [.linux.namespaces[] | select(.type != "mount")] | del(.mounts)
            | del(.linux.maskedPaths) | del(.linux.readonlyPaths) | .root.readonly = false'
run_ct nomnt0 --keep
check_ran "without any mount: runs chrooted" nomnt0
check_probe "... in root.path" nomnt0 '.reads["/only-in-root"].result == "ok"'
check_eq "... not one mount was made" "$(mounts_under "$T/nomnt0")" ""
check_not "... none recorded" jq -e '.sharedMount' "$STATE/$(cid nomnt0)/state.json"
b delete "$(cid nomnt0)" >/dev/null 2>&1
assert_clean nomnt0
runc_bundle nomntx '["/usr/bin/brig-probe", "sleep", "30"]' || bail "cannot build a runc spec bundle"
cfg nomntx '.linux.namespaces = [.linux.namespaces[] | select(.type != "mount")]'
create_ct nomntx
check_eq "nomntx: created" "$RC" 0
start_ct nomntx
b exec "$(cid nomntx)" /usr/bin/brig-probe report >/dev/null 2>"$T/nomntx.exec"; rc=$?
check_eq "exec into it is refused with exit 1 (setns would not chroot)" "$rc" 1
check "naming why" grep -qF "exec: the container has no mount namespace of its own" "$T/nomntx.exec"
b delete --force "$(cid nomntx)" >/dev/null 2>&1
check_eq "delete --force of it running detaches its mounts" "$(mounts_under "$T")" ""
assert_clean nomntx
# A sandbox policy still refuses both (rule ns.host).
"$BRIG" policy check --policy agent "$T/nomntx/config.json" >"$T/nomntx.pol" 2>&1
check "a policy refuses a config without a mount namespace (ns.host)" grep -qF "no mount namespace: the host's is shared" "$T/nomntx.pol"
# A mount namespace joined by path: the mounts go there, and only there.
unshare --mount --propagation private sleep 60 & HOLDERS+=($!)
mholder=$!
sleep 0.2
runc_bundle joinmnt '["/bin/busybox", "sh", "-c", "ls /proc/self/fd >/dev/null && echo PROC"]' || bail "cannot build a runc spec bundle"
cfg joinmnt '.linux.namespaces = [.linux.namespaces[] | select(.type != "mount")] + [{type: "mount", path: $p}]' \
    --arg p "/proc/$mholder/ns/mnt"
mnt_in_holder=$(wc -l <"/proc/$mholder/mountinfo")
create_ct joinmnt
check_eq "a mount namespace joined by path: create succeeds" "$RC" 0
check "... its mounts are in the joined namespace" test "$(wc -l <"/proc/$mholder/mountinfo")" -gt "$mnt_in_holder"
check_eq "... and not in brig's" "$(mounts_under "$T")" ""
b start "$(cid joinmnt)" >/dev/null 2>&1
wait_status "$(cid joinmnt)" stopped 10
check "... the process saw /proc" grep -qx PROC "$T/joinmnt.out"
b delete "$(cid joinmnt)" >/dev/null 2>&1
check_eq "... delete detaches them from the joined namespace" "$(wc -l <"/proc/$mholder/mountinfo")" "$mnt_in_holder"
assert_clean joinmnt
"$BRIG" policy check --policy agent "$T/joinmnt/config.json" >"$T/joinmnt.pol" 2>&1
check "a policy refuses a joined mount namespace (ns.host)" grep -qF "joins an existing namespace" "$T/joinmnt.pol"

# ---- delete --force removes cgroups made inside the container --------------
# A container running its own manager (systemd, docker-in-docker) makes
# cgroups below its own; simulated from the host: a sub-cgroup two levels
# deep in every hierarchy, with a process in it.
runc_bundle nested '["/usr/bin/brig-probe", "sleep", "60"]' || bail "cannot build a runc spec bundle"
create_ct nested
check_eq "nested: created" "$RC" 0
start_ct nested
sleep 300 & HOLDERS+=($!)
inner=$!
for h in /sys/fs/cgroup/*/brig-test/"$(cid nested)"; do
    mkdir -p "$h/inner/deeper" && echo "$inner" >"$h/inner/deeper/cgroup.procs" 2>/dev/null
done
check "the process is in a sub-cgroup of the container's" grep -q "brig-test/$(cid nested)/inner/deeper" "/proc/$inner/cgroup"
b delete --force "$(cid nested)" >/dev/null 2>"$T/nested.del"; rc=$?
check_eq "delete --force succeeds (exit 0)" "$rc" 0
sleep 0.2
check_not "the process in the sub-cgroup was killed" kill -0 "$inner"
left=$(ls -d /sys/fs/cgroup/*/brig-test/"$(cid nested)" 2>/dev/null)
check_eq "no cgroup of it is left in any hierarchy" "$left" ""
assert_clean nested

# ---- bind sources opened before the user namespace ---------------------------
# The source lies in a 0700 directory of host root: unreachable by path from
# inside the container's user namespace; its own contents are the container's.
runc_bundle ubind '["/bin/busybox", "sh", "-c", "cat /data/file; touch /data/new 2>/dev/null && echo WROTE || echo READONLY"]' ||
    bail "cannot build a runc spec bundle"
mkdir -p "$T/priv/data" && chmod 0700 "$T/priv" && echo "container-data" >"$T/priv/data/file" &&
    chown -R 100000:100000 "$T/priv/data" "$T/ubind/rootfs" || bail "cannot make the private source"
cfg ubind '.linux.namespaces += [{type: "user"}]
           | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
           | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
           | .mounts += [{destination: "/data", type: "bind", source: $s, options: ["rbind", "ro"]}]' \
    --arg s "$T/priv/data"
run_ct ubind
check_eq "a bind source under a 0700 root directory, user namespace: runs (runc and crun do)" "$RC" 0
check "the container reads its file" grep -qx "container-data" "$T/ubind.out"
check "the mount's flags were applied (ro)" grep -qx "READONLY" "$T/ubind.out"
check_not "nothing was written to the source" test -e "$T/priv/data/new"
assert_clean ubind
