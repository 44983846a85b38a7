#!/usr/bin/env bash
# What a process inside sees: namespaces, hostname, mounts and their flags,
# read-only root, tmpfs, capabilities, no_new_privs, network, rlimits,
# identity, masked and read-only paths, inherited fds.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# ---- one container with a fully specified config ------------------------------
mkdir -p "$T/share" && echo host-data > "$T/share/data"
HOST_BLK=""
for d in /sys/block/*; do
    case ${d##*/} in loop*|ram*|'*') ;; *) HOST_BLK=${d##*/}; break ;; esac
done
HOST_FWD=$(cat /proc/sys/net/ipv4/ip_forward)
mkb iso -- /usr/bin/brig-probe report \
    --read /proc/keys --read /proc/timer_list --read /etc/secret --read /secretdir \
    --read /data/data --write /workspace --write /scratch \
    --read /proc/sys/net/ipv4/ip_forward --read /proc/sys/kernel/shmmni \
    --read /dev/null --read "/dev/${HOST_BLK:-vda}" || bail "cannot build a bundle"
echo top-secret > "$T/iso/rootfs/etc/secret"
mkdir -p "$T/iso/rootfs/secretdir" && echo hidden > "$T/iso/rootfs/secretdir/f"
cfg iso '
  .hostname = "brig-it" | .domainname = "it.example"
  | .root.readonly = true
  | .process.noNewPrivileges = true
  | .process.oomScoreAdj = 123
  | .linux.sysctl = {"net.ipv4.ip_forward": "1", "kernel.shmmni": "1234"}
  | .process.user = {uid: 1000, gid: 1000, additionalGids: [10, 20], umask: 23}
  | .process.cwd = "/tmp"
  | .process.capabilities = {
      bounding: ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      effective: ["CAP_NET_BIND_SERVICE"], permitted: ["CAP_NET_BIND_SERVICE"],
      inheritable: ["CAP_NET_BIND_SERVICE"], ambient: ["CAP_NET_BIND_SERVICE"]}
  | .process.rlimits = [{type: "RLIMIT_NOFILE", soft: 512, hard: 1000},
                        {type: "RLIMIT_CORE", soft: 0, hard: 0},
                        {type: "RLIMIT_NPROC", soft: 300, hard: 400}]
  | .mounts += [
      {destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=1777"]},
      {destination: "/scratch", type: "tmpfs", source: "tmpfs",
       options: ["nosuid", "nodev", "noexec", "size=1m", "mode=1777"]},
      {destination: "/workspace", type: "bind", source: $share, options: ["rbind", "rw"]},
      {destination: "/data", type: "bind", source: $share, options: ["rbind", "ro", "nosuid"]}]
  | .linux.maskedPaths = ["/proc/keys", "/proc/timer_list", "/etc/secret", "/secretdir"]
  | .linux.readonlyPaths = ["/proc/sys", "/proc/sysrq-trigger"]
  | .linux.namespaces = [{type: "pid"}, {type: "network"}, {type: "ipc"}, {type: "uts"},
                         {type: "mount"}, {type: "cgroup"}]
' --arg share "$T/share"
chmod 0777 "$T/share"

# An fd the caller holds must not reach the container.
exec 9<"$T/share/data"
run_ct iso
exec 9<&-
check_ran "the probe ran in the container" iso || bail "nothing to check"
R=iso

for ns in pid net ipc uts mnt cgroup; do
    check_probe "namespace $ns differs from the host's" $R ".namespaces.$ns != $(host_ns "$ns")"
done
check_probe "user namespace is the host's (none asked for)" $R ".namespaces.user == $(host_ns user)"
check_probe "the probe is pid 1 of its pid namespace" $R '.pid == 1'
check_probe "hostname" $R '.hostname == "brig-it"'
check_probe "domainname" $R '.domainname == "it.example"'
check_probe "uid/gid 1000, supplementary groups 10 and 20, not root's" $R \
    '.uid == 1000 and .euid == 1000 and .gid == 1000 and .egid == 1000
     and (.groups | index(10) != null and index(20) != null and index(0) == null)'
check_probe "umask 0027 and cwd /tmp" $R '.umask == "0027" and .cwd == "/tmp"'

# CAP_CHOWN=0 CAP_KILL=5 CAP_NET_BIND_SERVICE=10
check_probe "bounding set is exactly CHOWN,KILL,NET_BIND_SERVICE" $R '.caps.CapBnd == "0000000000000421"'
check_probe "effective/permitted/ambient are NET_BIND_SERVICE only" $R \
    '.caps.CapEff == "0000000000000400" and .caps.CapPrm == "0000000000000400" and .caps.CapAmb == "0000000000000400"'
check_probe "NoNewPrivs is set" $R '.no_new_privs == 1'
check_probe "no seccomp filter when none is configured" $R '.seccomp == 0'

# Mount table and flags (options are the per-mount ones from mountinfo).
mnt() { echo ".mounts | map(select(.mount_point == \"$1\")) | last"; }
check_probe "/ is mounted read-only" $R "$(mnt /) | .options | split(\",\") | index(\"ro\") != null"
check_probe "/proc is procfs" $R "$(mnt /proc) | .fstype == \"proc\""
check_probe "/dev is a tmpfs with nosuid" $R "$(mnt /dev) | .fstype == \"tmpfs\" and (.options | test(\"nosuid\"))"
check_probe "/sys is sysfs, read-only" $R "$(mnt /sys) | .fstype == \"sysfs\" and (.options | split(\",\") | index(\"ro\") != null)"
check_probe "/scratch tmpfs has nosuid,nodev,noexec" $R \
    "$(mnt /scratch) | .fstype == \"tmpfs\" and (.options | test(\"nosuid\") and test(\"nodev\") and test(\"noexec\"))"
check_probe "/data bind is read-only and nosuid" $R \
    "$(mnt /data) | (.options | split(\",\") | index(\"ro\") != null) and (.options | test(\"nosuid\"))"
check_probe "/proc/sys (readonlyPaths) is read-only" $R "$(mnt /proc/sys) | .options | split(\",\") | index(\"ro\") != null"
check_probe "no mount point outside the container's view of the bundle" $R \
    '[.mounts[].mount_point | select(startswith($t))] == []' --arg t "$T"

check_probe "a write to / fails with EROFS (root.readonly)" $R '.writes["/"] == "EROFS"'
check_probe "a write to the /tmp tmpfs works" $R '.writes["/tmp"] == "ok"'
check_probe "a write to the rw bind /workspace works" $R '.writes["/workspace"] == "ok"'
check_probe "a write to the /scratch tmpfs works" $R '.writes["/scratch"] == "ok"'
check_probe "the ro bind can be read" $R '.reads["/data/data"].result == "ok" and .reads["/data/data"].bytes == 10'

# Masked: unreadable, or readable but empty (a /dev/null or empty tmpfs over it).
masked() { echo "(.reads[\"$1\"] | (.result != \"ok\") or (.bytes // .entries) == 0)"; }
check_probe "masked /etc/secret is unreadable" $R "$(masked /etc/secret)"
check_probe "masked /secretdir is empty" $R "$(masked /secretdir)"
check_probe "masked /proc/keys is unreadable" $R "$(masked /proc/keys)"
check_probe "masked /proc/timer_list is unreadable" $R "$(masked /proc/timer_list)"
check "the masked file is intact on the host" grep -qx top-secret "$T/iso/rootfs/etc/secret"

check_probe "oomScoreAdj 123" $R '.oom_score_adj == 123'
check_probe "sysctl net.ipv4.ip_forward = 1 inside (network namespace)" $R \
    '.reads["/proc/sys/net/ipv4/ip_forward"].head == "1\n"'
check_probe "sysctl kernel.shmmni = 1234 inside (ipc namespace)" $R \
    '.reads["/proc/sys/kernel/shmmni"].head == "1234\n"'
check_eq "the host's ip_forward is unchanged" "$(cat /proc/sys/net/ipv4/ip_forward)" "$HOST_FWD"
check_probe "/dev/null is a character device that reads" $R '.reads["/dev/null"].type == "char" and .reads["/dev/null"].result == "ok"'
if [ -n "$HOST_BLK" ]; then
    check_probe "the host's block device /dev/$HOST_BLK is not in the container" $R \
        '.reads["/dev/" + $b].result == "ENOENT"' --arg b "$HOST_BLK"
fi
check_probe "network: only lo, and it is up" $R '[.interfaces[].name] == ["lo"] and .interfaces[0].up'
check_probe "TCP to 127.0.0.1 works" $R '.tcp_loopback == "ok"'

check_probe "RLIMIT_NOFILE 512/1000" $R '.rlimits.nofile == {soft: 512, hard: 1000}'
check_probe "RLIMIT_CORE 0/0" $R '.rlimits.core == {soft: 0, hard: 0}'
check_probe "RLIMIT_NPROC 300/400" $R '.rlimits.nproc == {soft: 300, hard: 400}'

check_probe "only fds 0, 1, 2 are open (nothing leaked from brig or its caller)" $R \
    '[.fds[].fd] == [0, 1, 2]'
check_probe "process.env reaches the process" $R \
    '.env | index("BRIG_IT_TAG=" + $id) != null' --arg id "$(cid iso)"
assert_clean iso

# ---- the opposite settings -------------------------------------------------
mkb iso2 --rw || bail "cannot build a bundle"
cfg iso2 '.process.noNewPrivileges = false | .process.user = {uid: 0, gid: 0}
  | .process.capabilities = {bounding: ["CAP_KILL"], effective: ["CAP_KILL"], permitted: ["CAP_KILL"]}'
run_ct iso2
if check_ran "a second container (rw root, no NNP) ran" iso2; then
    check_probe "NoNewPrivs is clear when not asked for" iso2 '.no_new_privs == 0'
    check_probe "a write to / works with a rw root" iso2 '.writes["/"] == "ok"'
    check_probe "root keeps only CAP_KILL in all sets" iso2 \
        '.caps.CapBnd == "0000000000000020" and .caps.CapEff == "0000000000000020" and .caps.CapInh == "0000000000000000"'
    check_probe "uid 0 inside" iso2 '.uid == 0 and .gid == 0'
fi
assert_clean iso2
