#!/usr/bin/env bash
# A user namespace with uid/gid mappings: root inside is 100000 outside,
# the maps are what the config says, and host-owned files stay protected.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init
[ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] ||
    skip_all "user namespaces are disabled (user.max_user_namespaces = 0)"

HOST_ID=100000
# userns_bundle NAME ARGS...: container 0-65535 -> host 100000-165535.
userns_bundle() {
    local name=$1; shift
    mkb "$name" --chown "$HOST_ID:$HOST_ID" -- "$@" || return 1
    # A v1 cgroup hierarchy cannot be mounted from a child user namespace;
    # this test is about the mapping, not about /sys/fs/cgroup.
    cfg "$name" '
      .linux.namespaces = ((.linux.namespaces // []) | map(select(.type != "user")) + [{type: "user"}])
      | .linux.uidMappings = [{containerID: 0, hostID: ($h | tonumber), size: 65536}]
      | .linux.gidMappings = [{containerID: 0, hostID: ($h | tonumber), size: 65536}]
      | .mounts |= map(select(.destination != "/sys/fs/cgroup"))
      | .process.capabilities = {bounding: ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_SYS_ADMIN"],
          effective: ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_SYS_ADMIN"],
          permitted: ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_SYS_ADMIN"]}
    ' --arg h "$HOST_ID"
}

# ---- from the host: the init runs as 100000 ------------------------------------
userns_bundle un-host /usr/bin/brig-probe sleep 60 || bail "cannot build a bundle"
create_ct un-host
check_eq "create with a user namespace succeeds" "$RC" 0
[ "$RC" = 0 ] || diag "$(cat "$T/un-host.err")"
ID=$(cid un-host)
b start "$ID" >/dev/null 2>&1
PID=$(state_field "$ID" pid)
if [ -n "$PID" ] && [ -e "/proc/$PID" ]; then
    check_eq "host sees the init's uid as $HOST_ID" "$(awk '/^Uid:/ { print $2 }' "/proc/$PID/status")" "$HOST_ID"
    check_eq "host sees the init's gid as $HOST_ID" "$(awk '/^Gid:/ { print $2 }' "/proc/$PID/status")" "$HOST_ID"
    check_eq "uid_map is 0 $HOST_ID 65536" "$(awk '{ print $1, $2, $3 }' "/proc/$PID/uid_map")" "0 $HOST_ID 65536"
    check_eq "gid_map is 0 $HOST_ID 65536" "$(awk '{ print $1, $2, $3 }' "/proc/$PID/gid_map")" "0 $HOST_ID 65536"
    check "its user namespace is not the host's" test "$(stat -L -c %i "/proc/$PID/ns/user")" != "$(host_ns user)"
else
    not_ok "the container's init is visible on the host" "state: $(b state "$ID" 2>&1)"
fi
b delete --force "$ID" >/dev/null 2>&1
assert_clean un-host

# ---- from the inside -----------------------------------------------------------
mkdir -p "$T/hostonly" && echo host > "$T/hostonly/f" && chmod 0755 "$T/hostonly"
userns_bundle un-in /usr/bin/brig-probe report --read /proc/self/uid_map --read /hostonly/f --write /hostonly
cfg un-in '.mounts += [{destination: "/hostonly", type: "bind", source: $d, options: ["rbind", "rw"]}]' \
    --arg d "$T/hostonly"
run_ct un-in
if check_ran "the probe ran in a user namespace" un-in; then
    check_probe "uid/gid 0 inside" un-in '.uid == 0 and .euid == 0 and .gid == 0'
    check_probe "the user namespace differs from the host's" un-in ".namespaces.user != $(host_ns user)"
    check_probe "the caps asked for (CHOWN, DAC_OVERRIDE, SYS_ADMIN) inside" un-in \
        '.caps.CapEff == "0000000000200003"'
    check_probe "a host-root-owned bind mount is readable" un-in '.reads["/hostonly/f"].result == "ok"'
    check_probe "but not writable: root inside is not root outside" un-in \
        '.writes["/hostonly"] == "EACCES" or .writes["/hostonly"] == "EPERM" or .writes["/hostonly"] == "EOVERFLOW"' 
fi
check "nothing was written into the host directory" test "$(ls -A "$T/hostonly")" = f
assert_clean un-in

userns_bundle un-map /usr/bin/brig-probe read /proc/self/uid_map
run_ct un-map
check_eq "probe read of /proc/self/uid_map works" "$RC" 0
check_probe "inside, uid_map reads 0 $HOST_ID 65536" un-map \
    '.data | test("^\\s*0\\s+" + $h + "\\s+65536\\s*$")' --arg h "$HOST_ID"
assert_clean un-map

# A mapping the kernel must refuse: fail closed, leave nothing.
userns_bundle un-bad /usr/bin/brig-probe report
cfg un-bad '.linux.uidMappings = [{containerID: 0, hostID: 100000, size: 10}, {containerID: 5, hostID: 200000, size: 10}]'
run_ct un-bad
check "overlapping uid mappings fail" test "$RC" -ne 0
check "... with a message" test -s "$T/un-bad.err"
check "... and nothing ran" bash -c "! grep -q '^{' '$T/un-bad.out'"
assert_clean un-bad

# process.cwd is entered again after the identity switch, even as uid 0: in a
# user namespace a directory owned by an unmapped uid is searchable only
# through its mode bits, and the init's gid before the switch (0) is not the
# process's after it (process.user.gid).
userns_bundle un-cwd /usr/bin/brig-probe report
mkdir -p "$T/un-cwd/rootfs/w" && chown "0:$HOST_ID" "$T/un-cwd/rootfs/w" && chmod 0750 "$T/un-cwd/rootfs/w"
cfg un-cwd '.process.cwd = "/w" | .process.user = {uid: 0, gid: 1000}'
run_ct un-cwd
check "uid 0, a gid that may not search process.cwd: run fails" test "$RC" -ne 0
check "... and nothing ran" bash -c "! grep -q '^{' '$T/un-cwd.out'"
assert_clean un-cwd
