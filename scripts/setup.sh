#!/usr/bin/env bash
# Quick start, step 1 (Debian 12, as root): install what brig needs, build it
# into ./build, install it (meson install: /usr/local), run a demo container,
# then the sandbox's main job with the installed brig.
#
#   bash scripts/setup.sh              deps + build + install + demo
#   bash scripts/setup.sh --no-demo    deps + build + install (scripts/test.sh uses this)
#   bash scripts/setup.sh --no-install deps + build (+ demo), nothing installed: the
#                                      build-only behaviour (brig stays in ./build)
#   bash scripts/setup.sh --deps-only  only the Debian packages (and the Node client's
#                                      npm packages)
#
# Environment: BRIG_BUILD_DIR (default build), BRIG_MESON_OPTS (extra
# `meson setup` arguments, e.g. "-Dbuildtype=debug" or "--prefix=/opt/brig").
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
SRC=$(pwd)
BUILD=${BRIG_BUILD_DIR:-build}

# Build dependencies, then what the tests and the demo use.
# python3 runs policy/embed.py at build time; python3-jsonschema checks the
# policy schema (policy-schema test); crun, runc and strace are what
# tests/bench compares brig with (bench.sh --ci leaves out what is missing, so
# a machine without them would silently test less); libssl-dev is the egress
# proxy's TLS helper's (brig-egress-tls), openssl makes the credential tests'
# CA; sudo is the sandbox's unprivileged-worker test's (t-sandbox-sudo);
# binutils' readelf, man-db's man
# (the install test), python3-venv and Debian's setuptools and wheel wheels
# (the Python client, installed offline into a venv), mypy (its types), lintian, debhelper,
# dpkg-dev, fakeroot and build-essential (the .deb, tests/clients/t-deb.sh), uidmap
# (newuidmap/newgidmap: a rootless test user's subordinate ids, t-rootless*).
# Node.js and npm (the Node client, brig-mcp) come from Debian unless a
# `node` and `npm` are already there (npm reaches its registry over HTTPS:
# ca-certificates, below, always). The VM and engines suites install their
# own extras on first use (tests/vm/setup-vm.sh, tests/engines/setup-engines.sh).
# docs/testing.md has the whole list.
BUILD_PKGS=(meson ninja-build pkg-config gcc libc6-dev libseccomp-dev libcap-dev
            libyajl-dev nettle-dev libyaml-dev libarchive-dev libcriterion-dev libssl-dev git python3)
TEST_PKGS=(busybox-static jq clang iproute2 util-linux procps coreutils findutils
           python3-jsonschema crun runc strace umoci skopeo zstd openssl sudo binutils man-db
           python3-venv python3-setuptools-whl python3-wheel-whl mypy
           lintian debhelper dpkg-dev fakeroot build-essential uidmap)
NODE_PKGS=(nodejs npm)
# What the default runner rootfs of `brig sandbox run` copies from the host
# (brig-rootfs from-host's default list, rootfs-tools/lib/rootfs.h): it
# leaves out what a host lacks, so a host without these has a thinner one.
RUNNER_PKGS=(dash coreutils findutils diffutils mawk sed grep tar gzip xz-utils zstd procps libc-bin
             util-linux debianutils ca-certificates)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# Installed means dpkg says "install ok installed", not merely known.
pkg_missing() {
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
            echo "$p"
    done
}

setup_deps() {
    local missing node=()
    # A node and npm of another origin (NodeSource's nodejs bundles npm) are
    # kept: Debian's npm package would conflict with them.
    command -v node >/dev/null && command -v npm >/dev/null || node=("${NODE_PKGS[@]}")
    mapfile -t missing < <(pkg_missing "${BUILD_PKGS[@]}" "${TEST_PKGS[@]}" "${node[@]}" "${RUNNER_PKGS[@]}")
    if [ ${#missing[@]} -eq 0 ]; then
        log "Debian packages: all present"
        return 0
    fi
    [ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}): run as root to install them"
    command -v apt-get >/dev/null || die "apt-get not found: brig's setup targets Debian 12"
    log "installing: ${missing[*]}"
    # Others may be running apt on the same machine: wait for the lock.
    local apt=(apt-get -o DPkg::Lock::Timeout=300 -y -q --no-install-recommends)
    export DEBIAN_FRONTEND=noninteractive
    # apt-get update only when something is missing, and only once.
    apt-get -o DPkg::Lock::Timeout=300 -q update >/dev/null || die "apt-get update failed"
    "${apt[@]}" install "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
}

# The Node client's one dependency, the MCP SDK (brig-mcp), from the npm
# registry, exactly as package-lock.json pins it; again only when the lock
# changed. Before meson setup: the install takes node_modules when it is there.
NODE_MODULES=contrib/node/node_modules
setup_node() {
    local stamp=$NODE_MODULES/.package-lock.json
    if [ -f "$stamp" ] && [ ! contrib/node/package-lock.json -nt "$stamp" ]; then
        return 0
    fi
    command -v npm >/dev/null || die "npm not found (Debian: apt-get install npm)"
    log "npm ci in contrib/node (the MCP SDK for brig-mcp)"
    (cd contrib/node && npm ci --omit=dev --no-audit --no-fund --loglevel=error >/dev/null) ||
        die "npm ci in contrib/node failed"
    NODE_NEW=1
}

setup_build() {
    if [ ! -f "$BUILD/build.ninja" ]; then
        log "meson setup $BUILD"
        # shellcheck disable=SC2086  # BRIG_MESON_OPTS is a list of words
        meson setup "$BUILD" ${BRIG_MESON_OPTS:-} >/dev/null || die "meson setup failed"
    elif [ "${NODE_NEW:-0}" = 1 ]; then
        meson setup --reconfigure "$BUILD" >/dev/null || die "meson setup --reconfigure failed"
    fi
    log "ninja -C $BUILD"
    ninja -C "$BUILD" || die "build failed"
    [ -x "$BUILD/runtime/brig" ] || die "$BUILD/runtime/brig was not built"
}

# meson install (into the build's prefix, /usr/local unless BRIG_MESON_OPTS
# says otherwise), then where things went.
setup_install() {
    log "meson install -C $BUILD"
    meson install -C "$BUILD" --no-rebuild --quiet || die "meson install failed"
    local prefix
    prefix=$(meson introspect "$BUILD" --buildoptions |
             python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
    meson introspect "$BUILD" --installed |
        python3 -c '
import json, os, sys
prefix = sys.argv[1]
where = sorted(set(json.load(sys.stdin).values()))
def show(what, pred):
    got = [p for p in where if pred(p)]
    if got:
        print(f"    {what:<22} " + ", ".join(got[:4]) + (" ..." if len(got) > 4 else ""), file=sys.stderr)
show("brig", lambda p: p.endswith(("/sbin/brig", "/bin/brig-rootfs", "/bin/brig-mkbundle", "/bin/brig-mcp")))
show("brig-init, brig-probe", lambda p: "/libexec/brig/" in p)
show("profiles, schemas", lambda p: p.endswith("/share/brig/seccomp-default.json") or p.endswith("/share/brig/policy/agent.json"))
show("man pages", lambda p: "/man/man" in p)
show("systemd units", lambda p: "/systemd/system/" in p or "/tmpfiles.d/" in p)
show("Python client", lambda p: p.endswith("/brig_sandbox"))
show("Node client, MCP", lambda p: p.endswith("/node_modules/brig-sandbox/package.json"))
' "$prefix"
    local brig
    brig=$(command -v brig || true)
    if [ "$brig" != "$prefix/sbin/brig" ]; then
        log "note: $prefix/sbin is not first on this PATH (brig is ${brig:-not found}): add it, or run $prefix/sbin/brig"
    fi
    log "installed under $prefix: brig --version says $("$prefix/sbin/brig" --version | sed -n 's/^commit: /commit /p')"
}

# The demo: a busybox container from brig-mkbundle, run with `brig run`.
# It prints what an agent sandbox user wants to see first.
run_demo() {
    local brig=$SRC/$BUILD/runtime/brig probe=$SRC/$BUILD/tests/probe/brig-probe
    [ "$(id -u)" = 0 ] || die "the demo runs a container and needs root"
    local tmp id=brig-demo-$$
    tmp=$(mktemp -d /tmp/brig-demo.XXXXXX)
    chmod 0755 "$tmp"
    # shellcheck disable=SC2064  # expand now: the values are fixed
    trap "'$brig' --root '$tmp/state' delete --force '$id' >/dev/null 2>&1; rm -rf --one-file-system '$tmp'" EXIT
    log "demo: building a busybox bundle in $tmp/bundle"
    # shellcheck disable=SC2016  # the script runs in the container's shell
    "$SRC/rootfs-tools/brig-mkbundle" --brig "$brig" --probe "$probe" \
        --hostname brig-demo --cgroups-path "/brig-demo/$id" "$tmp/bundle" -- /bin/sh -c '
            echo "hostname:   $(hostname)"
            echo "id:         $(id)"
            for i in $(ls /sys/class/net); do
                echo "interface:  $i $(ip -o addr show dev "$i" | awk "{ printf \"%s \", \$4 }")"
            done
            if err=$( { echo x > /brig-demo-write; } 2>&1 ); then
                echo "write to /: succeeded (the root is writable!)"; exit 1
            fi
            echo "write to /: refused: ${err##*: }"
            grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status | sed "s/^/status:     /"
        ' || die "brig-mkbundle failed"
    # brig spec's config, like runc spec's, has no seccomp filter: the demo
    # gets brig's default one (what the policies use), so Seccomp: 2 below.
    jq --slurpfile s "$SRC/policy/seccomp-default.json" '.linux.seccomp = $s[0]' "$tmp/bundle/config.json" \
        > "$tmp/config.json" && mv "$tmp/config.json" "$tmp/bundle/config.json" || die "jq failed"
    log "demo: brig run (read-only root, new namespaces, default capabilities, brig's default seccomp filter)"
    local rc=0
    "$brig" --root "$tmp/state" run --bundle "$tmp/bundle" "$id" </dev/null || rc=$?
    rmdir "/sys/fs/cgroup"/*/brig-demo 2>/dev/null || true
    [ "$rc" = 0 ] || die "the demo container exited with status $rc"
    log "demo: done"
}

# The README's main job: one agent command in a fresh sandbox, on the
# default runner rootfs (built from the host's own sh, coreutils and the
# rest of its default list by brig-rootfs from-host on first use, in
# /var/lib/brig/rootfs/default-2: nothing is downloaded), the workspace
# /srv/brig/demo as it is (idmapped: what the command writes there is the
# owner's, no chown needed; not under the clone: a clone in /root is a
# forbidden host path).
DEMO_WS=/srv/brig/demo
run_sandbox_demo() {
    local brig=$1
    mkdir -p "$DEMO_WS"
    log "demo: $brig sandbox run --json --workspace $DEMO_WS -- sh -c '...'"
    local rc=0
    "$brig" sandbox run --json --workspace "$DEMO_WS" -- \
        sh -c 'echo hi > /workspace/out; id; cat /proc/net/dev; touch /etc/x || echo read-only' || rc=$?
    [ "$rc" = 0 ] || die "the sandbox demo exited with status $rc"
    log "demo: $DEMO_WS/out says: $(cat "$DEMO_WS/out"). Next: bash scripts/test.sh"
}

main() {
    local demo=1 build=1 install=1
    for a in "$@"; do
        case $a in
            --no-demo) demo=0 ;;
            --no-install) install=0 ;;
            --deps-only) demo=0; build=0 ;;
            -h|--help) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; return 0 ;;
            *) die "unknown argument $a" ;;
        esac
    done
    setup_deps
    setup_node
    [ "$build" = 1 ] || return 0
    setup_build
    [ "$install" = 0 ] || setup_install
    [ "$demo" = 1 ] || return 0
    run_demo
    # the installed brig, found on PATH from the demo's directory, as a user runs it
    if [ "$install" = 1 ] && command -v brig >/dev/null; then
        run_sandbox_demo brig
    else
        run_sandbox_demo "$SRC/$BUILD/runtime/brig"
    fi
}

main "$@"
