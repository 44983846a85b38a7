#!/usr/bin/env bash
# Install the container engines the engines suite drives (Debian 12, as root):
# containerd 1.6 (with ctr and the runc v2 shim), podman 4.3 (with conmon) and
# Docker 20.10 (docker.io, with docker-init = tini),
# plus what the test scripts use. The system services are never left running:
# the tests start a private containerd of their own, and podman needs no daemon.
#
#   bash tests/engines/setup-engines.sh          install what is missing
#   bash tests/engines/setup-engines.sh --check  exit 1 listing what is missing
#
# runc stays installed: containerd's shim only needs a runtime binary path
# (BinaryName / --runc-binary), which the tests point at brig.
set -euo pipefail

# python3-grpcio: tests/engines/cri-client.py talks CRI to containerd (no
# crictl in Debian 12). uidmap: rootless podman's newuidmap/newgidmap.
PKGS=(containerd podman conmon runc docker.io docker-compose busybox-static jq iproute2 util-linux procps
      coreutils tar gzip python3-grpcio uidmap)

die() { printf 'setup-engines: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'setup-engines: %s\n' "$*" >&2; }

pkg_missing() {
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
            echo "$p"
    done
}

# Service units the packages ship: stop (and mask for this boot) whatever a
# package may have started, so that only the tests' own daemons run.
SERVICES=(docker.service docker.socket containerd.service podman.service podman.socket podman-restart.service
          podman-auto-update.timer)

systemd_running() {
    # systemctl may be installed on a machine whose PID 1 is not systemd.
    command -v systemctl >/dev/null && [ -d /run/systemd/system ]
}

stop_services() {
    if systemd_running; then
        local s
        for s in "${SERVICES[@]}"; do
            if systemctl is-active --quiet "$s" 2>/dev/null; then
                log "stopping $s (the tests start their own daemons)"
                systemctl stop "$s" || true
            fi
            systemctl disable --quiet "$s" 2>/dev/null || true
        done
    fi
    # Without systemd an init script may still have started containerd.
    if [ -x /etc/init.d/containerd ] && ! systemd_running; then
        /etc/init.d/containerd stop >/dev/null 2>&1 || true
    fi
}

main() {
    local check=0 missing
    [ "${1:-}" = --check ] && check=1
    mapfile -t missing < <(pkg_missing "${PKGS[@]}")
    if [ ${#missing[@]} -eq 0 ]; then
        log "all present: ${PKGS[*]}"
        [ $check = 1 ] || stop_services
        return 0
    fi
    if [ $check = 1 ]; then
        echo "missing: ${missing[*]}"
        return 1
    fi
    [ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}): run as root"
    command -v apt-get >/dev/null || die "apt-get not found: this script targets Debian 12"
    export DEBIAN_FRONTEND=noninteractive
    # Keep maintainer scripts from starting the services (invoke-rc.d honours
    # policy-rc.d; exit 101 = "action forbidden"). Only ours is removed after.
    local prc=/usr/sbin/policy-rc.d ours=0
    if [ ! -e "$prc" ]; then
        printf '#!/bin/sh\nexit 101\n' > "$prc"
        chmod 0755 "$prc"
        ours=1
    fi
    log "installing: ${missing[*]}"
    local rc=0
    apt-get -o DPkg::Lock::Timeout=300 -q update >/dev/null || rc=$?
    if [ $rc = 0 ]; then
        apt-get -o DPkg::Lock::Timeout=300 -y -q --no-install-recommends \
            install "${missing[@]}" >/dev/null || rc=$?
    fi
    [ $ours = 1 ] && rm -f "$prc"
    [ $rc = 0 ] || die "apt-get install ${missing[*]} failed (status $rc)"
    stop_services
    log "installed: ${missing[*]}"
}

main "$@"
