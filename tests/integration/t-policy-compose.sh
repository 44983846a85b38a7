#!/usr/bin/env bash
# `brig policy check --compose` (docs/policy.md "Compose
# definitions"): the coding-agent sandbox's compose service, hardened as its
# own security page says, passes the `pi` profile; each weakening the
# page's definition check exists for (read_only, an added capability, a new
# mount, an unpinned image, no-new-privileges, the user, the network, the
# limits, a secret in the environment, an unknown key) fails with the rule
# id `check` gives on a config.json, and the offending value's compose key.
# Bad files are refused with exit 2, a position and no content.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

SRC=$(cd "$(dirname "$0")/../.." && pwd)
SECCOMP=$SRC/policy/seccomp-default.json
D=$T/proj
mkdir -p "$D/work"
PIN=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef

# The hardened definition: the table of the pi sandbox's security page,
# plus the limits and rlimits the pi profile asks for.
hardened() {
    cat <<YAML
services:
  pi:
    image: codeberg.org/example/pi-sandbox@$PIN
    runtime: brig
    user: "1000:1000"
    cap_drop: [ALL]
    security_opt:
      - no-new-privileges:true
      - seccomp=$SECCOMP
    read_only: true
    tmpfs:
      - /tmp:size=1g
      - /run/pi-session:size=64m
    init: true
    cpus: 4
    mem_limit: 8g
    memswap_limit: 8g
    pids_limit: 512
    network_mode: none
    ulimits:
      nofile: 65536
      core: 0
    environment:
      TERM: xterm
    volumes:
      - ./work:/workspace
YAML
}
hardened > "$D/compose.yaml"

# ccheck FILE [ARGS...]: sets RC and OUT
ccheck() { OUT=$("$BRIG" policy check --policy pi --compose "$@" 2>&1); RC=$?; }

ccheck "$D/compose.yaml"
if [ "$RC" = 0 ] && ! grep -q '^FAIL' <<<"$OUT" && [ "$(grep -c '^PASS' <<<"$OUT")" = $(( $("$BRIG" policy rules | wc -l) + 2 )) ]; then
    ok "the hardened pi definition passes every rule (and compose.keys, image.pinned)"
else
    not_ok "the hardened pi definition passes every rule" "exit $RC" "$OUT"
fi

# weaken NAME SED-EXPRESSION RULE WHAT: the weakened file fails RULE (exit 1)
# and the FAIL line names WHAT (a compose key or value).
weaken() {
    hardened | sed -e "$2" > "$D/$1.yaml"
    ccheck "$D/$1.yaml"
    local line
    line=$(grep "^FAIL $3 " <<<"$OUT" | head -n 1)
    if [ "$RC" = 1 ] && [ -n "$line" ] && grep -qF -- "$4" <<<"$line"; then
        ok "weakened ($1): FAIL $3, naming $4"
    else
        not_ok "weakened ($1): FAIL $3, naming $4" "exit $RC" "$OUT"
    fi
}
weaken rw-root       's/read_only: true/read_only: false/'              root.readonly 'read_only (root.readonly)'
weaken no-ro         '/read_only:/d'                                     root.readonly 'read_only'
weaken cap-add       's/cap_drop: \[ALL\]/cap_drop: [ALL]\n    cap_add: [SYS_ADMIN]/' caps.none 'CAP_SYS_ADMIN'
weaken no-cap-drop   '/cap_drop:/d'                                      caps.none 'CAP_NET_RAW'
weaken privileged    's/runtime: brig/runtime: brig\n    privileged: true/' caps.none 'cap_add/cap_drop/privileged'
weaken docker-sock   's|- ./work:/workspace|- ./work:/workspace\n      - /var/run/docker.sock:/var/run/docker.sock|' mounts.forbidden '/var/run/docker.sock'
weaken home-mount    's|- ./work:/workspace|- ./work:/workspace\n      - ~/.ssh:/home/pi/.ssh:ro|' mounts.forbidden '.ssh'
weaken dotdot-mount  's|- ./work:/workspace|- ./work/../../../../etc:/host-etc:ro|' mounts.forbidden '/etc'
weaken named-volume  's|- ./work:/workspace|- data:/workspace|' mounts.forbidden '/var/lib/docker/volumes/data/_data'
weaken tag           "s|@$PIN|:latest|"                                  image.pinned  'image'
weaken nnp           '/no-new-privileges/d'                              nnp           'security_opt'
weaken nnp-false     's/no-new-privileges:true/no-new-privileges:false/' nnp           'security_opt'
weaken unconfined    "s|seccomp=$SECCOMP|seccomp=unconfined|"             seccomp.present 'absent'
weaken docker-seccomp "\\|seccomp=|d"                                    seccomp.present '"ptrace" is allowed'
weaken root-user     '/user:/d'                                          user.nonroot  'user (process.user.uid)'
weaken named-user    's/user: "1000:1000"/user: pi/'                     compose.keys  'a name resolves in the image'
weaken bridge        '/network_mode:/d'                                  net.none      'network_mode'
weaken host-net      's/network_mode: none/network_mode: host/'          net.none      'network_mode'
weaken host-pid      's/network_mode: none/network_mode: none\n    pid: host/' ns.host  'pid'
weaken memory        's/mem_limit: 8g/mem_limit: 16g/'                   limits.memory 'mem_limit'
weaken swap          '/memswap_limit/d'                                  limits.memory 'linux.resources.memory.swap'
weaken pids          '/pids_limit/d'                                     limits.pids   'pids_limit'
weaken cpus          's/cpus: 4/cpus: 8/'                                limits.cpu    'cpus'
weaken tmpfs-size    's|/tmp:size=1g|/tmp|'                              mounts.tmpfs  'no size='
weaken no-init       '/init: true/d'                                     init          'init (process.args[0])'
weaken secret-env    's/TERM: xterm/AWS_SECRET_ACCESS_KEY: brig-test-secret-value/' env.secrets 'AWS_SECRET_ACCESS_KEY'
grep -q brig-test-secret-value <<<"$OUT" && not_ok "a secret's value never appears in the report" "$OUT" \
    || ok "a secret's value never appears in the report"
weaken ports         's/runtime: brig/runtime: brig\n    ports: ["8080:80"]/' compose.keys 'inbound'
weaken unknown-key   's/runtime: brig/runtime: brig\n    volumes_from: [other]/' compose.keys 'volumes_from'
weaken typo-key      's/runtime: brig/runtime: brig\n    read_onyl: true/' compose.keys 'read_onyl'
weaken sysctl        's/runtime: brig/runtime: brig\n    sysctls: {net.ipv4.ip_forward: "1"}/' sysctl 'net.ipv4.ip_forward'
weaken device        's/runtime: brig/runtime: brig\n    devices: ["\/dev\/null:\/dev\/xnull"]/' devices '/dev/xnull'
weaken nofile        's/nofile: 65536/nofile: 1048576/'                  rlimits       'RLIMIT_NOFILE'
# Docker compose sets mem_limit, then the deploy limit over it.
weaken deploy-memory 's/mem_limit: 8g/mem_limit: 8g\n    deploy: {resources: {limits: {memory: 64g}}}/' compose.keys 'differs from deploy.resources.limits.memory'
weaken deploy-pids   's/pids_limit: 512/pids_limit: 512\n    deploy: {resources: {limits: {pids: 100000}}}/' compose.keys 'differs from deploy.resources.limits.pids'
# compose fills "$NAME"/"${NAME}" from the shell and .env before Docker sees
# the file: "/${SOCK}" is /var/run/docker.sock, whatever brig reads as text.
printf 'SOCK=var/run/docker.sock\n' > "$D/.env"
# shellcheck disable=SC2016  # the ${SOCK} is compose's, not the shell's
weaken interpolated  's|- ./work:/workspace|- ./work:/workspace\n      - /${SOCK}:/var/run/docker.sock|' compose.keys 'interpolation'
rm -f "$D/.env"
# compose's !reset tag drops the key it tags: Docker gives its default
# capabilities to a service whose text says cap_drop: [ALL].
weaken reset-tag     's/cap_drop: \[ALL\]/cap_drop: !reset [ALL]/'         compose.keys  'a YAML tag at line'
hardened | sed 's/read_only: true/read_only: !!bool true/' > "$D/coretag.yaml"
ccheck "$D/coretag.yaml"
check_eq "a core YAML tag (!!bool) is plain YAML: passes" "$RC" 0
# shellcheck disable=SC2016  # a literal $$ for compose
hardened | sed 's/TERM: xterm/TERM: xterm\n      PRICE: "$$5"/' > "$D/dollar.yaml"
ccheck "$D/dollar.yaml"
check_eq "a literal \$\$ (compose's escaped \$) is not interpolation: passes" "$RC" 0

# ---- env_file: names are judged, values never shown -------------------------
printf 'GITHUB_TOKEN=ghp_brigtestvalue\n# comment\nexport PLAIN=1\n' > "$D/agent.env"
hardened | sed 's/runtime: brig/runtime: brig\n    env_file: agent.env/' > "$D/envfile.yaml"
ccheck "$D/envfile.yaml"
if [ "$RC" = 1 ] && grep -q '^FAIL env.secrets .*GITHUB_TOKEN' <<<"$OUT" && ! grep -q ghp_brigtestvalue <<<"$OUT"; then
    ok "env_file: GITHUB_TOKEN is caught by name, its value not shown"
else
    not_ok "env_file: GITHUB_TOKEN is caught by name, its value not shown" "exit $RC" "$OUT"
fi
hardened | sed 's/runtime: brig/runtime: brig\n    env_file: missing.env/' > "$D/envmissing.yaml"
ccheck "$D/envmissing.yaml"
[ "$RC" = 1 ] && grep -q '^FAIL compose.keys env_file' <<<"$OUT" \
    && ok "an unreadable env_file fails closed (compose.keys)" || not_ok "an unreadable env_file fails closed" "$OUT"

# A fifo (or a device) named as a compose file's own file is never read:
# the check neither blocks on it nor takes its bytes.
mkfifo "$D/fifo.env" "$D/fifo.json"
hardened | sed 's/runtime: brig/runtime: brig\n    env_file: fifo.env/' > "$D/envfifo.yaml"
OUT=$(timeout 20 "$BRIG" policy check --policy pi --compose "$D/envfifo.yaml" 2>&1); RC=$?
[ "$RC" = 1 ] && grep -q '^FAIL compose.keys env_file: fifo.env cannot be read .*not a regular file' <<<"$OUT" \
    && ok "a fifo as env_file is refused, not read (exit 1)" || not_ok "a fifo as env_file is refused" "exit $RC" "$OUT"
hardened | sed "s|seccomp=$SECCOMP|seccomp=$D/fifo.json|" > "$D/seccompfifo.yaml"
OUT=$(timeout 20 "$BRIG" policy check --policy pi --compose "$D/seccompfifo.yaml" 2>&1); RC=$?
[ "$RC" = 2 ] && grep -q "security_opt seccomp=$D/fifo.json: .*not a regular file" <<<"$OUT" \
    && ok "a fifo as the seccomp profile is refused, not read (exit 2)" || not_ok "a fifo as the seccomp profile is refused" "exit $RC" "$OUT"

# ---- anchors and merge keys: what compose files use for shared hardening ----
cat > "$D/anchors.yaml" <<YAML
x-hardening: &hardening
  user: "1000:1000"
  cap_drop: [ALL]
  security_opt: ["no-new-privileges", "seccomp=$SECCOMP"]
  read_only: yes
  tmpfs: ["/tmp:size=64m", "/run/pi-session:size=8m"]
  init: true
  network_mode: none
  cpus: "2"
  mem_limit: 1g
  memswap_limit: 1g
  pids_limit: 64
  ulimits: {nofile: {soft: 1024, hard: 4096}, core: 0}
services:
  agent:
    <<: *hardening
    image: example/agent@$PIN
  loose:
    <<: *hardening
    image: example/agent@$PIN
    read_only: false
YAML
ccheck "$D/anchors.yaml" --service agent
check_eq "merge keys: a service built from an anchor passes" "$RC" 0
ccheck "$D/anchors.yaml" --service loose
[ "$RC" = 1 ] && grep -q '^FAIL root.readonly' <<<"$OUT" \
    && ok "merge keys: the service's own read_only: false wins over the anchor's" \
    || not_ok "merge keys: the service's own read_only wins" "exit $RC" "$OUT"
ccheck "$D/anchors.yaml"
[ "$RC" = 2 ] && grep -q 'name one with --service' <<<"$OUT" \
    && ok "two services and no --service: exit 2, says to name one" || not_ok "two services, no --service" "exit $RC" "$OUT"
ccheck "$D/anchors.yaml" --service nope
[ "$RC" = 2 ] && grep -q 'services.nope: no such service' <<<"$OUT" \
    && ok "--service of a missing service: exit 2, named" || not_ok "--service missing" "exit $RC" "$OUT"

# ---- build: the Dockerfile's base images must be pinned ---------------------
mkdir -p "$D/img"
printf 'FROM debian:12 AS base\nRUN true\nFROM base\n' > "$D/img/Dockerfile"
hardened | sed "s|    image: .*|    build: ./img|" > "$D/build.yaml"
ccheck "$D/build.yaml"
[ "$RC" = 1 ] && grep -q '^FAIL image.pinned build: Dockerfile line 1: FROM without @sha256' <<<"$OUT" \
    && ! grep -q 'line 3' <<<"$OUT" \
    && ok "build: an unpinned FROM fails image.pinned (a later FROM of a stage does not)" \
    || not_ok "build: an unpinned FROM fails image.pinned" "exit $RC" "$OUT"
printf 'FROM debian@%s AS base\nFROM base\nFROM scratch\n' "$PIN" > "$D/img/Dockerfile"
ccheck "$D/build.yaml"
check_eq "build: pinned FROM, stage and scratch pass" "$RC" 0

# ---- JSON report --------------------------------------------------------------
OUT=$("$BRIG" policy check --policy pi --format json --compose "$D/rw-root.yaml" 2>&1)
jq -e '.pass == false and ([.results[] | select(.pass | not) | .rule] == ["root.readonly"])' <<<"$OUT" >/dev/null \
    && ok "--format json: the same rule ids" || not_ok "--format json: the same rule ids" "$OUT"

# ---- bad input: exit 2, a position, never the content -----------------------
printf 'services:\n  a:\n    image: "brig-secret-content\n  b: [\n' > "$D/bad.yaml"
ccheck "$D/bad.yaml"
[ "$RC" = 2 ] && grep -q 'line [0-9]*, column [0-9]*' <<<"$OUT" && ! grep -q brig-secret-content <<<"$OUT" \
    && ok "malformed YAML: exit 2 with line and column, no content" || not_ok "malformed YAML" "exit $RC" "$OUT"
ln -s "$D/compose.yaml" "$D/link.yaml"
ccheck "$D/link.yaml"
[ "$RC" = 2 ] && grep -q 'Too many levels of symbolic links\|a symlink, refusing' <<<"$OUT" \
    && ok "a symlinked compose file is refused (exit 2)" || not_ok "a symlinked compose file is refused" "exit $RC" "$OUT"
ccheck "$D"
[ "$RC" = 2 ] && grep -q 'not a regular file' <<<"$OUT" && ok "a directory: exit 2" || not_ok "a directory: exit 2" "$OUT"
head -c 2000000 /dev/zero | tr '\0' '#' > "$D/big.yaml"
ccheck "$D/big.yaml"
[ "$RC" = 2 ] && grep -q 'more than a compose file may have' <<<"$OUT" \
    && ok "a file over 1 MiB: exit 2" || not_ok "a file over 1 MiB: exit 2" "exit $RC" "${OUT:0:300}"
# "billion laughs": aliases are shared nodes, never expanded.
{
    echo 'a: &a ["x","x","x","x","x","x","x","x","x","x"]'
    p=a; for l in b c d e f g h i j k l m n o p q r s t u; do
        printf '%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n' $l $l $p $p $p $p $p $p $p $p $p $p; p=$l
    done
    printf 'services:\n  s:\n    image: x@%s\n    tmpfs: *u\n    environment: *u\n' "$PIN"
} > "$D/laughs.yaml"
OUT=$(timeout 20 "$BRIG" policy check --policy pi --compose "$D/laughs.yaml" 2>&1); RC=$?
[ "$RC" = 1 ] || [ "$RC" = 2 ] && ok "nested aliases (10^20 nodes if expanded): judged or refused in bounded time (exit $RC)" \
    || not_ok "nested aliases: bounded" "exit $RC" "${OUT:0:300}"
# compose merges a file's YAML documents, a later one overriding: a second
# document would make the hardened service privileged under Docker.
{ hardened; printf -- '---\nservices:\n  pi:\n    privileged: true\n'; } > "$D/multidoc.yaml"
ccheck "$D/multidoc.yaml"
[ "$RC" = 2 ] && grep -q 'more than one YAML document' <<<"$OUT" \
    && ok "a second YAML document is refused (exit 2)" || not_ok "a second YAML document is refused" "exit $RC" "${OUT:0:300}"
# `docker compose` in $D merges compose.override.yaml over compose.yaml.
printf 'services:\n  pi:\n    privileged: true\n' > "$D/compose.override.yaml"
ccheck "$D/compose.yaml"
[ "$RC" = 1 ] && grep -q '^FAIL compose.keys compose.override.yaml' <<<"$OUT" \
    && ok "an override file beside compose.yaml fails compose.keys" \
    || not_ok "an override file beside compose.yaml fails compose.keys" "exit $RC" "${OUT:0:600}"
rm -f "$D/compose.override.yaml"
# The same through merge keys, which lookups do follow: each level merges
# the previous one 50 times (50^8 mappings for one key), or itself.
{
    echo 'x-m0: &m0 {user: "1000:1000"}'
    for l in 1 2 3 4 5 6 7 8; do
        refs=$(for _ in $(seq 50); do printf '*m%s,' $((l - 1)); done)
        printf 'x-m%s: &m%s\n  <<: [%s]\n' "$l" "$l" "${refs%,}"
    done
    printf 'services:
  s:
    <<: *m8
    image: x@%s
' "$PIN"
} > "$D/merges.yaml"
printf 'x-c: &c
  <<: [*c]
services:
  s:
    <<: *c
    image: x@%s
' "$PIN" > "$D/merge-cycle.yaml"
for f in merges merge-cycle; do
    OUT=$(timeout 20 "$BRIG" policy check --policy pi --compose "$D/$f.yaml" 2>&1); RC=$?
    [ "$RC" = 2 ] && grep -q 'merge keys (<<) that form a cycle, chain deeper than 8 or reach more than 64' <<<"$OUT" \
        && ok "$f.yaml: merge keys past the bound are refused at once (exit 2)" \
        || not_ok "$f.yaml: merge keys past the bound are refused at once" "exit $RC" "${OUT:0:300}"
done

# libyaml looks each anchor and alias up among every anchor before it: a
# file of 1 MiB of anchors (42,000) took seconds, minutes under ASan. Past
# 256 anchors a file is refused before the load; one anchor with ~1 MiB of
# aliases to it is judged.
{
    printf 'services:\n  s:\n    image: x@%s\n    environment:\n' "$PIN"
    seq 42000 | sed 's/.*/      - \&a& E&=v/'
} > "$D/anchors.yaml"
OUT=$(timeout 60 "$BRIG" policy check --policy pi --compose "$D/anchors.yaml" 2>&1); RC=$?
[ "$RC" = 2 ] && grep -q 'line 261: more than 256 anchors' <<<"$OUT" \
    && ok "42,000 anchors ($(stat -c %s "$D/anchors.yaml") bytes): refused before the load, naming the line (exit 2)" \
    || not_ok "42,000 anchors: refused before the load" "exit $RC" "${OUT:0:300}"
{
    printf 'x-e: &e [E=v]\nservices:\n  s:\n    image: x@%s\n    read_only: true\n    environment: *e\n' "$PIN"
    printf 'x-refs:\n'
    yes '  - *e' | head -n 120000
} > "$D/aliases.yaml"
OUT=$(timeout 60 "$BRIG" policy check --policy pi --compose "$D/aliases.yaml" 2>&1); RC=$?
[ "$RC" = 1 ] || [ "$RC" = 0 ] && ! grep -q 'anchors' <<<"$OUT" \
    && ok "one anchor, 120,000 aliases (~0.8 MB): judged (exit $RC)" \
    || not_ok "one anchor, 120,000 aliases: judged" "exit $RC" "${OUT:0:300}"

# ---- the device rule: what Docker allows by default is not a wildcard -------
# c *:* m (mknod only) and c 136:* (pty slaves) pass devices; the reason the
# latter is safe, checked on this kernel: a pty slave node made with mknod
# outside its devpts instance opens nothing.
out=$(python3 - <<'PY' 2>&1
import os, pty
m, s = pty.openpty()
st = os.stat(os.ttyname(s))
p = os.environ.get("T", "/tmp") + "/pts-node"
os.mknod(p, 0o600 | 0o020000, st.st_rdev)
try:
    os.open(p, os.O_RDWR); print("opened")
except OSError as e:
    print("errno", e.errno)
finally:
    os.unlink(p)
PY
)
check_eq "a mknod'd pty slave node (c 136:N) outside devpts does not open (EIO)" "$out" "errno 5"

# ---- engine defaults: what Docker adds to every container -------------------
# Docker's per-container hosts/hostname/resolv.conf binds, its two net
# sysctls with its values, and its setkey hook pass the policy; a neighbour
# file of the same directory, another value, or another program do not.
mkdir -p "$T/eng/rootfs"
ID=$(printf '%064d' 7 | tr 0 a)
( cd "$T/eng" && "$BRIG" spec >/dev/null 2>&1 ) || bail "brig spec failed"
"$BRIG" policy apply --policy pi --output "$T/eng/hard.json" "$T/eng/config.json" >/dev/null 2>&1 \
    || bail "policy apply failed on brig spec's config"
engcfg() { jq "$@" "$T/eng/hard.json" > "$T/eng/config.json"; "$BRIG" policy check --policy pi "$T/eng" 2>&1; }
OUT=$(engcfg --arg id "$ID" '.mounts += [{"destination":"/etc/hosts","type":"bind","source":"/var/lib/docker/containers/\($id)/hosts","options":["rbind","rprivate","ro"]},{"destination":"/etc/resolv.conf","type":"bind","source":"/var/lib/docker/containers/\($id)/resolv.conf","options":["rbind","rprivate","ro"]}] | .linux.sysctl = {"net.ipv4.ip_unprivileged_port_start":"0","net.ipv4.ping_group_range":"0 2147483647"}'); RC=$?
check_eq "Docker's hosts/resolv.conf binds and its two sysctls pass" "$RC" 0
OUT=$(engcfg --arg id "$ID" '.mounts += [{"destination":"/x","type":"bind","source":"/var/lib/docker/containers/\($id)/config.v2.json","options":["rbind","ro"]}]'); RC=$?
[ "$RC" = 1 ] && grep -q 'FAIL mounts.forbidden .*config.v2.json' <<<"$OUT" \
    && ok "another file of Docker's container dir stays forbidden" || not_ok "Docker's config.v2.json stays forbidden" "$OUT"
OUT=$(engcfg --arg id "$ID" '.mounts += [{"destination":"/x","type":"bind","source":"/var/lib/docker/containers/../volumes/hosts","options":["rbind","ro"]}]'); RC=$?
check_eq "a .. path shaped like an engine file stays forbidden" "$RC" 1
OUT=$(engcfg '.linux.sysctl = {"net.ipv4.ping_group_range":"0 0"}'); RC=$?
check_eq "ping_group_range with another value than Docker's: refused (sysctl)" "$RC:$(grep -c '^FAIL sysctl' <<<"$OUT")" "1:1"
OUT=$(engcfg --arg id "$ID" '.hooks.prestart = [{"path":"/proc/1/exe","args":["libnetwork-setkey","-exec-root=/var/run/docker",$id,"0123456789ab"]}]'); RC=$?
[ "$RC" = 1 ] && grep -q '^FAIL hooks' <<<"$OUT" \
    && ok "a setkey-shaped hook whose /proc/PID/exe is not dockerd: refused (hooks)" || not_ok "setkey hook of a non-dockerd" "$OUT"
