#!/usr/bin/env bash
# linux.maskedPaths seen by the one process that could read them: uid 0 with
# every capability. Each default masked path (runc spec's list) is compared
# with what the host shows and with a control container without masks, so a
# mask that is not applied fails here rather than hiding behind permissions
# (a uid-1000 process cannot read /proc/keys or /proc/kcore either way).
# Also with /proc bound from the host instead of a procfs of its own (the
# masks then take the fd-based way, paths.c).
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# The lists users get: runc spec's, when runc is here; else the same, written out.
MASKED='["/proc/acpi","/proc/asound","/proc/kcore","/proc/keys","/proc/latency_stats","/proc/timer_list","/proc/timer_stats","/proc/sched_debug","/sys/firmware","/proc/scsi"]'
if command -v runc >/dev/null && mkdir "$T/runc-spec" && (cd "$T/runc-spec" && runc spec 2>/dev/null); then
    MASKED=$(jq -c '.linux.maskedPaths' "$T/runc-spec/config.json")
    diag "maskedPaths from runc spec: $MASKED"
fi
mapfile -t PATHS < <(jq -r '.[]' <<<"$MASKED")
READS=()
for p in "${PATHS[@]}"; do READS+=(--read "$p"); done

# Every capability this kernel knows, so that only a mask can hide a file.
last_cap=$(cat /proc/sys/kernel/cap_last_cap)
ALL_CAPS='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_DAC_READ_SEARCH","CAP_FOWNER","CAP_KILL","CAP_SETGID","CAP_SETUID","CAP_SYS_RAWIO","CAP_SYS_ADMIN","CAP_SYSLOG","CAP_SYS_PTRACE","CAP_SYS_RESOURCE"]'
if command -v capsh >/dev/null; then
    ALL_CAPS=$(capsh --decode="$(printf '0x%x' $(( (1 << (last_cap + 1)) - 1 )))" |
        sed 's/.*=//' | tr ',' '\n' | tr a-z A-Z | jq -R . | jq -cs .)
fi

# masks_bundle NAME MASKS: uid 0, every capability, runc's maskedPaths or none.
masks_bundle() {
    local name=$1 masks=$2
    mkb "$name" -- /usr/bin/brig-probe report "${READS[@]}" || return 1
    cfg "$name" '.process.user = {uid: 0, gid: 0} | .process.noNewPrivileges = false
      | .process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps}
      | .linux.maskedPaths = $masks' --argjson caps "$ALL_CAPS" --argjson masks "$masks"
}

masks_bundle m-on "$MASKED" || bail "cannot build a bundle"
masks_bundle m-off '[]' || bail "cannot build a bundle"
run_ct m-on
check_ran "uid 0 with every capability, runc's maskedPaths" m-on || bail "nothing to check"
run_ct m-off
check_ran "the same without maskedPaths (the control)" m-off || bail "nothing to check"
check_probe "the control runs as uid 0 with CAP_SYS_ADMIN and CAP_SYS_RAWIO" m-off \
    '.uid == 0 and ((.caps.CapEff | ltrimstr("0") | length) > 0)'

# The host's view, by the same probe.
HOST=$("$BRIG_PROBE" report "${READS[@]}" | grep '^{' | tail -n 1)
[ -n "$HOST" ] || bail "the probe reported nothing on the host"

# shows JSON PATH: the path holds something (readable and not empty).
shows() {
    jq -e --arg p "$2" '.reads[$p] | .result == "ok" and (.bytes // .entries) > 0' <<<"$1" >/dev/null
}
masked_seen() {
    jq -e --arg p "$2" '.reads[$p] | .result != "ok" or (.bytes // .entries) == 0' <<<"$1" >/dev/null
}
ON=$(probe_json m-on) OFF=$(probe_json m-off)
compared=0
for p in "${PATHS[@]}"; do
    if ! shows "$HOST" "$p"; then
        skip "masked $p" "the host shows nothing there: $(jq -c --arg p "$p" '.reads[$p]' <<<"$HOST")"
        continue
    fi
    if ! shows "$OFF" "$p"; then
        # Not the mask's doing: this kernel hides it from a container anyway.
        skip "masked $p" "a container without masks sees nothing there either: $(jq -c --arg p "$p" '.reads[$p]' <<<"$OFF")"
        continue
    fi
    compared=$((compared + 1))
    if masked_seen "$ON" "$p"; then
        ok "masked $p: the host and an unmasked container see it, the masked one does not"
    else
        not_ok "masked $p: the host and an unmasked container see it, the masked one does not" \
            "masked container: $(jq -c --arg p "$p" '.reads[$p]' <<<"$ON")"
    fi
done
# /proc/keys, /proc/kcore, /proc/sched_debug and /sys/firmware show something
# on any Linux that runs these tests: fewer than 3 compared means the test
# checked nothing.
if [ $compared -ge 3 ]; then
    ok "masks compared against the host on $compared paths"
else
    not_ok "masks compared against the host on $compared paths (want at least 3)" "host: $HOST"
fi
assert_clean m-on
assert_clean m-off

# ---- /proc bound from the host, not a procfs of the container's own --------
# No pid namespace (a host /proc in a new pid namespace shows the host's
# processes anyway; the point is the masks).
masks_bundle m-bind "$MASKED" || bail "cannot build a bundle"
cfg m-bind '.mounts |= map(if .destination == "/proc"
                            then {destination: "/proc", type: "bind", source: "/proc", options: ["rbind"]}
                            else . end)
  | .linux.namespaces |= map(select(.type != "pid"))'
run_ct m-bind
if check_ran "/proc bound from the host: the container ran" m-bind; then
    BIND=$(probe_json m-bind)
    n=0
    for p in "${PATHS[@]}"; do
        case $p in /proc/*) ;; *) continue ;; esac
        shows "$HOST" "$p" || continue
        n=$((n + 1))
        if masked_seen "$BIND" "$p"; then
            ok "host /proc bound: $p is masked"
        else
            not_ok "host /proc bound: $p is masked" "got: $(jq -c --arg p "$p" '.reads[$p]' <<<"$BIND")"
        fi
    done
    check "host /proc bound: at least 2 /proc paths compared (got $n)" test $n -ge 2
    check "the host's own /proc/keys is still readable (the mask stayed inside)" test -r /proc/keys
    check "nothing is mounted on the host's /proc/keys" bash -c '! awk "\$5 == \"/proc/keys\"" /proc/self/mountinfo | grep -q .'
fi
assert_clean m-bind
