#!/usr/bin/env bash
# Manual check (not part of CI): does the README's two-command quick start work
# on a FRESH Debian 12? Makes a minimal bookworm root with debootstrap, puts a
# git clone of this repository in it (/root/brig: committed state only, not the
# working tree), and runs, inside, exactly
#     bash scripts/setup.sh
#     bash scripts/test.sh
# then setup.sh a second time (it must install nothing and rebuild nothing).
# Between the two, what setup.sh installed is used as a user would, from /:
# `command -v brig`, `man -w brig`, `brig sandbox run` on the default runner
# rootfs, `import brig_sandbox`, `brig-mcp --help`.
# With --deb FILE, nothing is built: the fresh root installs brig's .deb
# (apt-get install ./FILE, its Depends and Recommends from the mirror) and
# runs the same checks: a VPS user's way in.
#
#   bash tests/fresh/fresh-root.sh [--root DIR] [--keep] [--reuse] [--shell] [--deb FILE] [--no-tests]
#
#   --root DIR  where the fresh root goes (default /var/tmp/fresh-root)
#   --keep      keep DIR afterwards (default: removed at the end)
#   --reuse     reuse an existing DIR (only the clone is redone): quicker, not fresh
#   --shell     after the run, open a shell inside (same mounts)
#   --no-tests  setup.sh and the uses of what it installed, not test.sh (minutes, not half an hour)
#   --deb FILE  install this brig_*.deb instead of running setup.sh/test.sh
#               (build one: see docs/clients.md, "The Debian package")
#
# The root is entered in a private mount namespace (unshare --mount), so none
# of its mounts is visible on the host and all of them go away with it: /proc,
# /sys (recursive, with the cgroup trees), /dev (recursive, with /dev/pts),
# and a fresh tmpfs on /run. It shares the host's kernel, PID and network
# namespaces and cgroups, like a privileged container. Logs go to
# DIR.logs/ (kept). See docs/testing.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
root=/var/tmp/fresh-root
keep=0 reuse=0 shell=0 deb= tests=1

die() { printf 'fresh-root: error: %s\n' "$*" >&2; exit 1; }
log() { printf '\033[1mfresh-root: %s\033[0m\n' "$*" >&2; }

while [ $# -gt 0 ]; do
    case $1 in
        --root) root=${2:?--root wants a directory}; shift 2 ;;
        --keep) keep=1; shift ;;
        --reuse) reuse=1; shift ;;
        --shell) shell=1; shift ;;
        --no-tests) tests=0; shift ;;
        --deb) deb=$(realpath "${2:?--deb wants a .deb}"); shift 2; [ -f "$deb" ] || die "no such file $deb" ;;
        -h|--help) sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument $1" ;;
    esac
done
[ "$(id -u)" = 0 ] || die "run as root"
case $root in /|/usr|/var|/var/tmp|/tmp|"") die "refusing --root $root" ;; esac
logs=$root.logs
mkdir -p "$logs"

# The Debian mirror this machine's apt uses (the only one reachable here).
host_mirror() {
    local m
    m=$(grep -hoE '^URIs: *[^ ]+' /etc/apt/sources.list.d/*.sources 2>/dev/null |
        awk '$2 ~ /debian$/ { print $2; exit }')
    [ -n "$m" ] || m=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' \
                       /etc/apt/sources.list 2>/dev/null)
    echo "${m:-http://deb.debian.org/debian}"
}

# Nothing of the fresh root may stay mounted on the host.
# shellcheck disable=SC2317  # called from the EXIT trap
mounted_under() { awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo; }

# shellcheck disable=SC2317  # the EXIT trap
cleanup() {
    local m
    m=$(mounted_under)
    [ -z "$m" ] || { printf 'fresh-root: still mounted on the host:\n%s\n' "$m" >&2; return 1; }
    if [ "$keep" = 0 ]; then
        log "removing $root"
        rm -rf --one-file-system "$root"
    else
        log "kept $root"
    fi
}
trap cleanup EXIT

if [ $reuse = 1 ] && [ -x "$root/usr/bin/apt-get" ]; then
    log "reusing $root (NOT a fresh machine any more)"
else
    [ ! -e "$root" ] || [ -z "$(ls -A "$root")" ] || die "$root exists (remove it, or --reuse)"
    command -v debootstrap >/dev/null ||
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q debootstrap >&2
    mirror=$(host_mirror)
    log "debootstrap --variant=minbase bookworm $root $mirror"
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$logs/debootstrap.log" 2>&1 ||
        die "debootstrap failed (see $logs/debootstrap.log)"
    # The host's Debian sources (main, updates, security), as a fresh install has them.
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
        rm -f "$root/etc/apt/sources.list"
    fi
    # A fresh install has these; debootstrap leaves them to the installer.
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    # What a machine of this site comes with to reach the npm registry over
    # HTTPS: the site's own CA certificates (picked up when setup.sh installs
    # ca-certificates) and npm's global settings.
    if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
        mkdir -p "$root/usr/local/share/ca-certificates"
        cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    fi
    [ ! -f /etc/npmrc ] || cp /etc/npmrc "$root/etc/npmrc"
    echo fresh-root > "$root/etc/hostname"
fi

rm -rf "$root/root/brig"
if [ -z "$deb" ]; then
    log "git clone $src -> $root/root/brig (HEAD $(git -C "$src" rev-parse --short HEAD))"
    git clone -q "$src" "$root/root/brig"
fi

# What a user does with an installed brig, from / (both modes).
cat > "$root/root/fresh-use.sh" <<'USE'
#!/bin/bash
set -u
cd /
rc=0
say() { echo "### $*"; }
b=$(command -v brig) && say "command -v brig: $b" || { say "brig is not on PATH"; rc=1; }
if command -v man >/dev/null; then
    m=$(man -w brig) && say "man -w brig: $m" || { say "man -w brig found nothing"; rc=1; }
else
    m=$(dpkg -L brig 2>/dev/null | grep '/man8/brig.8') && say "brig.8 installed: $m" || { say "no brig.8"; rc=1; }
fi
ws=$(mktemp -d) && chown 1000:1000 "$ws"
out=$(brig sandbox run --json --workspace "$ws" -- sh -c 'echo fresh > /workspace/out; id -u')
r=$?
say "brig sandbox run from / (default runner rootfs): status $r, $(cat "$ws/out" 2>/dev/null), $(printf '%s' "$out" | head -c 300)"
[ $r = 0 ] && [ "$(cat "$ws/out" 2>/dev/null)" = fresh ] || rc=1
out=$(python3 -c 'import brig_sandbox as bs, sys; print(bs.run(["echo", "py"], workspace=sys.argv[1]).stdout.text, end="")' "$ws" 2>&1)
say "python3 brig_sandbox.run: $out"
[ "$out" = py ] || rc=1
out=$(brig-mcp --help 2>&1 | head -n 1)
say "brig-mcp --help ($(node --version 2>&1)): $out"
case $out in Usage:*) ;; *) rc=1 ;; esac
exit $rc
USE

if [ -n "$deb" ]; then
    cp "$deb" "$root/root/"
    cat > "$root/root/fresh-run.sh" <<INNER
#!/bin/bash
set -u
export DEBIAN_FRONTEND=noninteractive
echo "### apt-get install ./$(basename "$deb")"
apt-get -q update >/dev/null && apt-get -y -q install "/root/$(basename "$deb")" > /tmp/apt.log 2>&1
rc1=\$?
echo "### apt-get install: status \$rc1"; tail -n 3 /tmp/apt.log
bash /root/fresh-use.sh; rc2=\$?
[ \$rc1 = 0 ] && [ \$rc2 = 0 ]
INNER
else
# What runs inside: the README's two commands, timed, then setup.sh again.
cat > "$root/root/fresh-run.sh" <<'INNER'
#!/bin/bash
set -u
cd /root/brig
t0=$(date +%s)
echo "### bash scripts/setup.sh"
bash scripts/setup.sh; rc1=$?
t1=$(date +%s)
echo "### setup.sh: status $rc1, $((t1 - t0)) s"
bash /root/fresh-use.sh || rc1=1
cd /root/brig
if [ -e /root/no-tests ]; then echo "### --no-tests: test.sh not run"; exit $rc1; fi
echo "### bash scripts/test.sh"
bash scripts/test.sh 2>&1 | tee /tmp/test.log; rc2=${PIPESTATUS[0]}
# The README promises this exact last line.
tail -n 1 /tmp/test.log | grep -Eq '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' ||
    { echo "### test.sh's last line is not \"N passed, N failed, N skipped\""; rc2=1; }
t2=$(date +%s)
echo "### test.sh: status $rc2, $((t2 - t1)) s"
echo "### bash scripts/setup.sh (second run: must install and rebuild nothing)"
bash scripts/setup.sh 2>&1 | tee /tmp/setup2.log; rc3=${PIPESTATUS[0]}
echo "### setup.sh again: status $rc3, $(( $(date +%s) - t2 )) s"
grep -q '==> installing' /tmp/setup2.log && { echo "### second setup.sh installed something"; rc3=1; }
grep -q 'Linking \|Compiling ' /tmp/setup2.log && { echo "### second setup.sh rebuilt something"; rc3=1; }
echo "### total: $((t2 - t0)) s (setup.sh + test.sh)"
[ $rc1 = 0 ] && [ $rc2 = 0 ] && [ $rc3 = 0 ]
INNER
fi

rm -f "$root/root/no-tests"
[ "$tests" = 1 ] || touch "$root/root/no-tests"

# Inside a private mount namespace: the root becomes a mount point of its own
# and then "/" through pivot_root (brig makes "/" private and reads
# mountinfo, which a plain chroot into a directory breaks: a chroot artifact,
# not what a fresh machine has). The host's tree is detached inside. At the
# end the mounts go in reverse order; leaving the namespace drops the rest.
log "running the checks in $root${deb:+ on $deb} (log: $logs/run.log)"
set +e
# shellcheck disable=SC2016  # expanded by the inner bash
unshare --mount --propagation private --fork -- env ROOT="$root" SHELL_AFTER=$shell bash -c '
    set -eu
    mount --bind "$ROOT" "$ROOT"
    mount --rbind /proc "$ROOT/proc"
    mount --rbind /sys "$ROOT/sys"
    mount --rbind /dev "$ROOT/dev"
    mountpoint -q "$ROOT/dev/pts" || mount --bind /dev/pts "$ROOT/dev/pts"
    mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$ROOT/run"
    cd "$ROOT"
    mkdir -p .host-root
    pivot_root . .host-root
    cd /
    umount -l /.host-root
    rmdir /.host-root
    # A fresh machine: a login shell'\''s environment, nothing of ours.
    envs=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
          TERM=${TERM:-dumb} USER=root LOGNAME=root)
    rc=0
    /usr/bin/env -i "${envs[@]}" /bin/bash /root/fresh-run.sh || rc=$?
    if [ "$SHELL_AFTER" = 1 ]; then
        /usr/bin/env -i "${envs[@]}" /bin/bash -l </dev/tty >/dev/tty 2>&1 || true
    fi
    umount /run
    umount -R /dev || umount -Rl /dev
    umount -R /sys || umount -Rl /sys
    umount -R /proc || umount -Rl /proc
    exit $rc
' 2>&1 | tee "$logs/run.log"
rc=${PIPESTATUS[0]}
set -e
grep -a '^###\|passed,' "$logs/run.log" >&2 || true
if [ "$rc" = 0 ]; then log "PASS"; else log "FAIL (status $rc): see $logs/run.log"; fi
exit "$rc"
