#!/usr/bin/env bash
# "extends" (docs/policy.md, "Building on a profile"): a policy file that
# names a profile (or another file) and only the keys it changes. Use: a
# file with "extends": "pi" and only a network key runs a sandbox with pi's
# user, init, tmpfs and limits (read on the host from the sandbox's cgroup
# while it runs) and with the new network (its proxy answers inside). The
# merge (RFC 7386: objects merged, lists replaced, null removes) is what
# `policy show` prints. Refusals: a cycle, a chain deeper than 8, a key the
# policy does not know, a base file its owner does not control (another
# user's, or in a directory others can write), a built-in name that does
# not exist; each with exit 2 and the chain in the message. The base file
# changed after create changes nothing in the sandbox (the merged text is
# its snapshot).
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

"$BRIG_MKBUNDLE" --probe "$BRIG_PROBE" --no-config "$T/b" >/dev/null 2>&1 || bail "brig-mkbundle failed"
R=$T/b/rootfs
WS=$T/ws
mkdir -p "$WS" && chown 1000:1000 "$WS" || bail "cannot make the workspace"
P=$T/pol
mkdir -p "$P"
# pi with an egress network: the only key besides extends (and where to
# audit, so that the test writes nothing to /var/log)
cat > "$P/pi-net.json" <<JSON
{"extends": "pi",
 "network": {"mode": "egress", "allow": ["api.example.test:443"]},
 "audit": {"path": "$T/audit.jsonl"}}
JSON
sbx() { timeout -k 5 120 "$BRIG" sandbox "$1" --state-root "$T/sb" "${@:2}"; }
json_of() { "$BRIG" policy show "$1" 2>&1; }

# ---- what the merge makes ---------------------------------------------------
out=$(json_of "$P/pi-net.json")
check_eq "policy show: the merged policy has pi's limits" \
    "$(jq -c '.limits' <<<"$out" 2>&1)" "$("$BRIG" policy show pi | jq -c '.limits')"
check_eq "... pi's init, user and tmpfs" "$(jq -c '[.init, .user, .tmpfs]' <<<"$out" 2>&1)" \
    "$("$BRIG" policy show pi | jq -c '[.init, .user, .tmpfs]')"
check_eq "... the new network (the base's object merged: mode replaced, allow added)" \
    "$(jq -c '.network' <<<"$out" 2>&1)" '{"mode":"egress","allow":["api.example.test:443"]}'
check_eq "... no extends left, and pi's name not taken" "$(jq -c '[has("extends"), .name]' <<<"$out" 2>&1)" '[false,null]'
# lists are replaced, null removes a key, nested objects merge
cat > "$P/lists.json" <<'JSON'
{"extends": "pi", "tmpfs": [{"path": "/tmp", "size": "16MiB"}], "init": null, "limits": {"memory": "1GiB"}}
JSON
out=$(json_of "$P/lists.json")
check_eq "a list replaces the base's whole list" "$(jq -c '.tmpfs' <<<"$out" 2>&1)" '[{"path":"/tmp","size":"16MiB"}]'
check_eq "null removes the key" "$(jq -c 'has("init")' <<<"$out" 2>&1)" false
check_eq "an object merges key by key" "$(jq -c '.limits' <<<"$out" 2>&1)" '{"memory":"1GiB","swap":"0","pids":512,"cpus":"4"}'
# a chain of files, relative paths from the extending file's directory
mkdir -p "$P/sub"
echo '{"extends": "../pi-net.json", "limits": {"pids": 100}}' > "$P/sub/two.json"
out=$(json_of "$P/sub/two.json")
check_eq "a chain (file -> file -> pi), relative to the file's directory" \
    "$(jq -c '[.limits.pids, .limits.memory, .network.mode]' <<<"$out" 2>&1)" '[100,"8GiB","egress"]'

# ---- a sandbox run under it: what the sandbox sees ----------------------------
rm -f "$WS/up" "$WS/go"
sbx run --policy "$P/pi-net.json" --rootfs "$R" --workspace "$WS" --env "BRIG_IT_TAG=$TAG-x" --json -- \
    /bin/sh -c 'id -u; cat /proc/1/cmdline | tr "\0" " "; echo; grep " /run/pi-session " /proc/mounts;
        echo "proxy=$HTTP_PROXY"; wget -q -O- http://denied.example.test/ 2>&1; touch /workspace/up;
        while [ ! -e /workspace/go ]; do sleep 0.1; done' > "$T/run.json" 2> "$T/run.err" &
spid=$!
for _ in $(seq 600); do [ -e "$WS/up" ] && break; kill -0 $spid 2>/dev/null || break; sleep 0.05; done
pid=$(tagged_pids "$TAG-x" | head -n 1)
mem=; pids=; quota=
if [ -n "$pid" ]; then
    m=$(awk -F: '$2 == "memory" {print $3}' "/proc/$pid/cgroup")
    p=$(awk -F: '$2 == "pids" {print $3}' "/proc/$pid/cgroup")
    c=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' "/proc/$pid/cgroup")
    mem=$(cat "/sys/fs/cgroup/memory$m/memory.limit_in_bytes" 2>/dev/null)
    pids=$(cat "/sys/fs/cgroup/pids$p/pids.max" 2>/dev/null)
    quota=$(cat /sys/fs/cgroup/cpu,cpuacct"$c"/cpu.cfs_quota_us /sys/fs/cgroup/cpu"$c"/cpu.cfs_quota_us 2>/dev/null | head -n 1)
fi
touch "$WS/go"
wait $spid
RC=$?
check_eq "sandbox run under pi + network: exit 0" "$RC" 0 || diag "$(cat "$T/run.json" "$T/run.err")"
check_eq "the sandbox's memory limit is pi's 8GiB (host cgroup)" "$mem" 8589934592
check_eq "its pids limit is pi's 512" "$pids" 512
check_eq "its CPU quota is pi's 4 CPUs" "$quota" 400000
so=$(jq -r '.stdout.preview_head' "$T/run.json" 2>/dev/null)
check_eq "it runs as pi's user 1000" "$(sed -n 1p <<<"$so")" 1000
check "PID 1 is pi's init (/sbin/docker-init)" grep -q '^/sbin/docker-init ' <<<"$so"
check "pi's /run/pi-session tmpfs is there" grep -q ' /run/pi-session tmpfs ' <<<"$so"
check "the new network: the proxy's address is given" grep -q '^proxy=http://127.0.0.1:3128' <<<"$so"
check "the new network: the proxy answers inside and refuses an unlisted host (403)" grep -q '403' <<<"$so"
check_eq "the result names the merged policy (no name of its own: custom)" "$(jq -r .policy "$T/run.json")" custom

# ---- refusals: exit 2, the chain named -----------------------------------------
# refused DESC FILE MESSAGE
refused() {
    local out rc
    out=$("$BRIG" policy check --policy "$2" "$T/b" 2>&1); rc=$?
    if [ $rc = 2 ] && grep -qF -- "$3" <<<"$out"; then ok "$1"
    else not_ok "$1" "exit $rc" "$(head -c 800 <<<"$out")"; fi
}
echo '{"extends": "./c2.json"}' > "$P/c1.json"
echo '{"extends": "./c1.json"}' > "$P/c2.json"
refused "a cycle of two files is refused" "$P/c1.json" "extends ./c2.json: extends ./c1.json: a cycle"
echo '{"extends": "./self.json"}' > "$P/self.json"
refused "a file extending itself is refused" "$P/self.json" "extends ./self.json: a cycle"
for i in $(seq 1 9); do echo "{\"extends\": \"./d$((i + 1)).json\"}" > "$P/d$i.json"; done
echo '{"extends": "agent"}' > "$P/d10.json"
refused "a chain of 11 policies is refused" "$P/d1.json" "a chain of more than 8 policies"
check "a chain of 8 is read" "$BRIG" policy show "$P/d4.json"
echo '{"extends": "pi", "capabilites": []}' > "$P/typo.json"
refused "an unknown key in the extending file is still refused" "$P/typo.json" "capabilites"
echo '{"extends": "pi", "limits": {"memroy": "1G"}}' > "$P/typo2.json"
refused "... and in a merged object" "$P/typo2.json" "memroy"
echo '{"extends": "nosuchprofile"}' > "$P/none.json"
refused "an unknown built-in profile" "$P/none.json" 'no such built-in profile "nosuchprofile"'
echo '{"extends": 5}' > "$P/num.json"
refused "extends that is not a string" "$P/num.json" "extends: expected"
# a base another user can rewrite
mkdir -p "$P/other" && echo '{"extends": "agent", "capabilities": ["CAP_SYS_ADMIN"]}' > "$P/other/base.json"
chown 1000 "$P/other/base.json"
echo '{"extends": "./other/base.json"}' > "$P/uses-other.json"
refused "a base owned by another user is refused" "$P/uses-other.json" "owned by uid 1000"
chown 0 "$P/other/base.json" && chmod 0666 "$P/other/base.json"
refused "a base writable by others is refused" "$P/uses-other.json" "neither writable by group or others"
chmod 0644 "$P/other/base.json" && chmod 1777 "$P/other"
refused "a base in a directory others can write is refused" "$P/uses-other.json" "directory $P/./other"
chmod 0755 "$P/other"
# ---- the base changed after create: the sandbox keeps the merged snapshot ------
cp "$P/pi-net.json" "$P/snap.json"
jq '.limits = {"memory": "64MiB"}' "$P/lists.json" > "$P/snapbase.json"
jq --arg b "$P/snapbase.json" '.extends = $b' "$P/pi-net.json" > "$P/snap.json"
NAME=ext-$TAG
sbx create --policy "$P/snap.json" --rootfs "$R" --workspace "$WS" "$NAME" >/dev/null 2>&1 ||
    not_ok "sandbox create under an extending policy" "$(sbx create --policy "$P/snap.json" --rootfs "$R" --workspace "$WS" "$NAME" 2>&1)"
jq '.limits = {"memory": "16GiB"} | .timeouts = {"wall": "12h"}' "$P/lists.json" > "$P/snapbase.json.new" &&
    mv "$P/snapbase.json.new" "$P/snapbase.json"
m=$(sbx exec --json "$NAME" -- /bin/sh -c 'cat /proc/self/cgroup' 2>/dev/null | jq -r '.exit_code')
check_eq "sandbox exec after the base changed: runs" "$m" 0
pid=$(sbx ls --json 2>/dev/null | jq -r --arg n "$NAME" '.[] | select(.name == $n) | .pid')
m=$(awk -F: '$2 == "memory" {print $3}' "/proc/${pid:-0}/cgroup" 2>/dev/null)
check_eq "... the memory limit is still the one merged at create (64MiB)" \
    "$(cat "/sys/fs/cgroup/memory$m/memory.limit_in_bytes" 2>/dev/null)" 67108864
sbx rm --force "$NAME" >/dev/null 2>&1
