#!/usr/bin/env bash
# The egress proxy (docs/egress.md) parses hostile bytes from the
# container: it must run with nothing a bug in that parsing could be
# turned into. Seen from the host: the proxy of a `sandbox run` and of a
# created container has a uid of its own (not 0), no capability (not even
# in its bounding set), no_new_privs, a seccomp filter, not dumpable, and
# holds only its sockets (listeners, control, the routing table's, the
# audit writer's), /dev/null and the hosts file - and egress still works through it (allowed 200, denied 403).
# Its lifetime: `brig exec` into the created container gets the proxy
# environment and reaches the allowed host; a killed proxy leaves the
# container with no way out (never direct); `delete` leaves no proxy,
# audit writer or fd.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/integration/egress-lib.sh
. "$(dirname "$0")/../integration/egress-lib.sh"
eg_setup
API="api.example.test:$PORT"
EGRESS_ENV=(HTTP_PROXY=http://127.0.0.1:3128 http_proxy=http://127.0.0.1:3128
    HTTPS_PROXY=http://127.0.0.1:3128 https_proxy=http://127.0.0.1:3128
    ALL_PROXY=socks5h://127.0.0.1:1080 all_proxy=socks5h://127.0.0.1:1080
    NO_PROXY=localhost,127.0.0.1,::1 no_proxy=localhost,127.0.0.1,::1)
eg_policy "{\"mode\": \"egress\", \"allow\": [\"$API\", \"127.0.0.1:$PORT\"], \"deny\": [\"evil.example.test:*\"]}"

# our_proxy MARK: the brig-egress process whose command line (brig's: the
# proxy is forked, not exec'd) names MARK; other tests' proxies may run.
our_proxy() {
    local p _
    for _ in $(seq 100); do
        for p in $(pgrep -x brig-egress); do
            grep -qF "$1" "/proc/$p/cmdline" 2>/dev/null && { echo "$p"; return 0; }
        done
        sleep 0.1
    done
    return 1
}
status_field() { awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "/proc/$1/status"; }
# check_confined PID WHAT FDS: FDS what /proc/PID/fd shows, counted.
check_confined() {
    local pid=$1 w=$2 uid
    uid=$(status_field "$pid" Uid | awk '{print $1}')
    check "$w: real uid is not root (got '$uid')" test -n "$uid" -a "$uid" != 0
    check_eq "$w: real, effective, saved, fs uid all its own" "$(status_field "$pid" Uid | tr -s '\t ' ' ')" "$uid $uid $uid $uid"
    check_eq "$w: gids likewise" "$(status_field "$pid" Gid | tr -s '\t ' ' ')" "$uid $uid $uid $uid"
    check_eq "$w: no supplementary groups" "$(status_field "$pid" Groups)" ""
    local c
    for c in CapInh CapPrm CapEff CapBnd CapAmb; do
        check_eq "$w: $c empty" "$(status_field "$pid" "$c")" 0000000000000000
    done
    check_eq "$w: NoNewPrivs" "$(status_field "$pid" NoNewPrivs)" 1
    check_eq "$w: Seccomp 2 (a filter)" "$(status_field "$pid" Seccomp)" 2
    check_eq "$w: every thread filtered" "$(status_field "$pid" Seccomp_filters)" 1
    # Non-dumpable: /proc/PID/fd belongs to root, not to the process's uid.
    check_eq "$w: not dumpable (its /proc files are root's)" "$(stat -c %u "/proc/$pid/fd")" 0
    local fds
    fds=$(for f in /proc/"$pid"/fd/*; do readlink "$f"; done | sed 's/:\[[0-9]*\]$//' | sort | uniq -c | awk '{print $2 "x" $1}' | tr '\n' ' ')
    check_eq "$w: only its fds (nothing of brig's)" "$fds" "$3"
}

# ---- sandbox run: the proxy while it serves ----
# The command says "ready" and waits on its stdin (a fifo) until the
# proxy has been looked at: the look sees the proxy idle, not serving one
# of the requests (an extra socket) nor gone because the command ended.
mkfifo "$T/go"
"$BRIG" sandbox run --policy "$T/pol.json" --state-root "$SB_STATE" --rootfs "$ROOTFS" --env "BRIG_IT_TAG=$TAG-sb" --stdin - -- \
    sh -c "echo ready; read -r _; /usr/bin/egress-client send 127.0.0.1 3128 'GET http://$API/ HTTP/1.0\r\nHost: $API\r\n\r\n'; \
           /usr/bin/egress-client send 127.0.0.1 3128 'GET http://evil.example.test:$PORT/ HTTP/1.0\r\nHost: evil.example.test:$PORT\r\n\r\n'" \
    < "$T/go" > "$T/out" 2> "$T/err" &
SB=$!
exec 7> "$T/go"
for _ in $(seq 300); do grep -qx ready "$T/out" && break; sleep 0.1; done
check "sandbox run: its command runs (it said ready)" grep -qx ready "$T/out"
proxy=$(our_proxy "$SB_STATE")
check "sandbox run: its proxy runs" test -n "$proxy"
[ -z "$proxy" ] || check_confined "$proxy" "sandbox run proxy" \
    "/dev/nullx3 ${BRIG_EGRESS_HOSTS}x1 anon_inode:[pidfd]x1 socketx5 "
# The filter's content, not only its presence: the proxy's own filter,
# taken from the kernel and replayed by it, call by call.
if [ -n "$proxy" ]; then
    build_static "$T/replay" "$(dirname "$0")/egress-filter-replay.c"
    "$T/replay" "$proxy" openat-rdonly socket-inet getpid openat-wronly openat-rdwr openat-creat openat-trunc \
        openat-append openat-tmpfile open-wronly creat openat2 fork vfork clone-process clone3 execve execveat \
        socket-unix socket-netlink bind listen kill tgkill ptrace mmap-exec mprotect-exec setuid unshare \
        > "$T/replay.out" 2> "$T/replay.err"
    check_eq "the proxy's filter, replayed: what it needs passes" "$(head -3 "$T/replay.out" | tr '\n' ' ')" \
        "openat-rdonly ok socket-inet ok getpid ok "
    check_eq "the proxy's filter, replayed: no open for writing (any flag), no process, no exec" \
        "$(sed -n '4,18p' "$T/replay.out" | tr '\n' ' ')" \
        "$(printf '%s killed ' openat-wronly openat-rdwr openat-creat openat-trunc openat-append openat-tmpfile \
            open-wronly creat openat2 fork vfork clone-process)clone3 errno ENOSYS execve killed execveat killed "
    check_eq "the proxy's filter, replayed: no unix or netlink socket, no bind, listen, signal, trace, exec mapping, uid, namespace" \
        "$(sed -n '19,$p' "$T/replay.out" | tr '\n' ' ')" \
        "socket-unix errno EACCES socket-netlink errno EACCES $(printf '%s killed ' bind listen kill tgkill ptrace \
            mmap-exec mprotect-exec setuid unshare)"
    [ -s "$T/replay.err" ] && diag "replay: $(cat "$T/replay.err")"
fi
echo go >&7
exec 7>&-
wait "$SB"
check_eq "sandbox run: exit 0" "$?" 0
check "confined, the proxy still serves an allowed name: 200 and the body" bash -c "grep -q '^HTTP/1.0 200 OK' '$T/out' && grep -qx hello '$T/out'"
check "confined, the proxy still refuses a denied name: 403 and why" grep -qx 'brig egress: denied: network.deny\[0\] "evil.example.test:\*"' "$T/out"
check_eq "confined, the audit lines are still written (allow, deny)" \
    "$(jq -r 'select(.op == "egress") | .decision' "$AUDIT" | tr '\n' ' ')" "allow deny "
check "sandbox run ended: no proxy, no audit writer" eg_proxy_gone

# ---- the C library's resolver (no hosts file) under the filter ----
# getaddrinfo reads /etc/hosts, nsswitch.conf, resolv.conf and calls what
# the filter must allow (uname, UDP sockets): the proxy must survive it.
eg_policy '{"mode": "egress", "allow": ["*:*"]}'
(unset BRIG_EGRESS_HOSTS; eg_client send 127.0.0.1 3128 'CONNECT localhost:80 HTTP/1.1\r\n\r\n')
check "getaddrinfo under the filter: localhost resolved, then refused as loopback" \
    grep -q '^brig egress: denied: 127.0.0.1 is loopback' "$T/out"
eg_policy "{\"mode\": \"egress\", \"allow\": [\"$API\", \"127.0.0.1:$PORT\"], \"deny\": [\"evil.example.test:*\"]}"

# ---- create: the proxy outlives brig create, confined ----
mkdir -p "$T/eb" && cp -a "$ROOTFS" "$T/eb/rootfs"
(cd "$T/eb" && runc spec) || bail "runc spec failed"
jq '.process.terminal = false | .process.args = ["sleep", "60"]
    | .linux.cgroupsPath = "/brig-test/'"$TAG"'-eg" | .process.env += ["BRIG_IT_TAG='"$TAG"'-eg"]' \
    "$T/eb/config.json" > "$T/eb/c" && mv "$T/eb/c" "$T/eb/config.json"
ln -s busybox "$T/eb/rootfs/bin/sleep"
# Judged by the policy as an engine would have it; without the proxy
# variables (create adds them for the init; the saved config lacks them).
"$BRIG" policy apply --policy "$T/pol.json" "$T/eb" | jq '.process.env |= map(select(test("^[a-zA-Z_]*_(proxy|PROXY)=") | not))' > "$T/eb/c" &&
    mv "$T/eb/c" "$T/eb/config.json"
check_eq "the bundle's config has no proxy variable" "$(jq '[.process.env[] | select(test("proxy="; "i"))] | length' "$T/eb/config.json")" 0
ID=$TAG-eg
CLEAN_IDS+=("$ID")
: > "$AUDIT"
b --policy "$T/pol.json" create -b "$T/eb" "$ID" > "$T/eb.out" 2>&1
check_eq "create under an egress policy (a runc spec config): exit 0" "$?" 0
b --policy "$T/pol.json" start "$ID" >> "$T/eb.out" 2>&1
cproxy=$(our_proxy "$STATE")
check "create: its proxy runs" test -n "$cproxy"
[ -z "$cproxy" ] || check_confined "$cproxy" "created container's proxy" \
    "/dev/nullx3 ${BRIG_EGRESS_HOSTS}x1 anon_inode:[pidfd]x1 socketx4 "

# ---- exec gets the proxy environment ----
b --policy "$T/pol.json" exec "$ID" sh -c "env | grep -i '_proxy=' | sort | tr '\n' ' '" > "$T/x.out" 2>&1
check_eq "brig exec: the 8 proxy variables, as the container's process has them" "$(cat "$T/x.out")" \
    "$(printf '%s\n' "${EGRESS_ENV[@]}" | sort | tr '\n' ' ')"
b --policy "$T/pol.json" exec "$ID" wget -q -O - "http://$API/" > "$T/x.out" 2>&1
check_eq "brig exec: a real client (busybox wget) reaches the allowed name through the proxy" "$(cat "$T/x.out")" hello
b --policy "$T/pol.json" exec --env "NO_PROXY=example.test" "$ID" sh -c 'echo "$NO_PROXY $no_proxy"' > "$T/x.out" 2>&1
check_eq "brig exec --env NO_PROXY: the exec's own value wins for its name, the others stay" "$(cat "$T/x.out")" \
    "example.test localhost,127.0.0.1,::1"

# ---- a dead proxy: the container's connections fail, never direct ----
before=$(eg_accepted)
kill -KILL "$cproxy"
b --policy "$T/pol.json" exec "$ID" /usr/bin/egress-client send 127.0.0.1 3128 "GET http://$API/ HTTP/1.0\r\nHost: $API\r\n\r\n" > "$T/x.out" 2>&1
check_eq "proxy killed: the proxy's port is closed" "$(cat "$T/x.out")" "connect: ECONNREFUSED"
b --policy "$T/pol.json" exec "$ID" /usr/bin/egress-client send 127.0.0.1 "$PORT" 'GET / HTTP/1.0\r\n\r\n' > "$T/x.out" 2>&1
check_eq "proxy killed: the server's port is not reachable directly" "$(cat "$T/x.out")" "connect: ECONNREFUSED"
check_eq "proxy killed: nothing reached the server" "$(eg_accepted)" "$before"
b --policy "$T/pol.json" delete --force "$ID"
check "delete: no proxy, no audit writer left" eg_proxy_gone

# ---- a long-lived sandbox: sandbox exec gets the proxy, rm ends it ----
NAME=$TAG-ss
"$BRIG" sandbox create --policy "$T/pol.json" --state-root "$SB_STATE" --rootfs "$ROOTFS" \
    --env "BRIG_IT_TAG=$TAG-sb" "$NAME" > "$T/ss.out" 2>&1
check_eq "sandbox create under an egress policy: exit 0" "$?" 0
sproxy=$(our_proxy "$SB_STATE")
check "sandbox create: its proxy runs" test -n "$sproxy"
[ -z "$sproxy" ] || check_eq "sandbox create: its proxy is confined too (uid, CapBnd, Seccomp)" \
    "$(status_field "$sproxy" Uid | awk '{print ($1 != 0)}') $(status_field "$sproxy" CapBnd) $(status_field "$sproxy" Seccomp)" \
    "1 0000000000000000 2"
timeout 60 "$BRIG" sandbox exec --state-root "$SB_STATE" "$NAME" -- sh -c "env | grep -i '_proxy=' | sort | tr '\n' ' '; echo; wget -q -O - http://$API/" > "$T/x.out" 2> "$T/x.err"
check_eq "sandbox exec: the 8 proxy variables" "$(head -1 "$T/x.out")" "$(printf '%s\n' "${EGRESS_ENV[@]}" | sort | tr '\n' ' ')"
check_eq "sandbox exec: wget reaches the allowed name through the proxy" "$(tail -1 "$T/x.out")" hello
timeout 60 "$BRIG" sandbox rm --state-root "$SB_STATE" "$NAME" > "$T/rm.out" 2>&1
check_eq "sandbox rm: exit 0" "$?" 0
check "sandbox rm: no proxy, no audit writer left" eg_proxy_gone
check_eq "sandbox rm: no tagged process left" "$(tagged_pids "$TAG-sb")" ""
