#!/bin/bash
# Prepare everything the cgroup v2 test VM needs, once, in a cache directory:
#   - qemu-system-x86 and busybox-static on the host (apt-get, only if missing);
#   - Debian's kernel package, downloaded and unpacked into the cache (never into /boot);
#   - an initramfs: busybox-static, the 9p/virtio/overlay modules, and init.sh.
# Later runs reuse the cache without touching the network.
#
# On success prints, on stdout, shell assignments for run-in-vm.sh:
#   BRIG_VM_KERNEL=<vmlinuz>  BRIG_VM_INITRD=<initramfs>
# Everything else goes to stderr.
#
# Environment:
#   BRIG_VM_CACHE        cache directory (default /var/cache/brig-vm)
#   BRIG_VM_KERNEL_PKG   kernel package to use (default: what linux-image-amd64 depends on)
#   BRIG_VM_REFRESH=1    re-resolve the kernel package even if one is cached
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${BRIG_VM_CACHE:-/var/cache/brig-vm}

# Modules the init needs; their dependencies are added from modules.dep. Anything built
# into the kernel (modules.builtin) is skipped.
# virtio_blk: a scratch disk gives io.max a real block device to throttle.
wanted_modules=(virtio virtio_ring virtio_pci 9pnet 9pnet_virtio 9p overlay virtio_blk)

log() { printf 'setup-vm: %s\n' "$*" >&2; }
die() { printf 'setup-vm: error: %s\n' "$*" >&2; exit 1; }

# Other people may run apt on the same machine: wait for its locks instead of failing.
apt_opts=(-o DPkg::Lock::Timeout=300)

apt_updated=0
apt_update_once() {
    if [[ $apt_updated == 0 ]]; then
        log "apt-get update"
        apt-get "${apt_opts[@]}" update -qq >&2 || die "apt-get update failed"
        apt_updated=1
    fi
}

# Install Debian packages that are missing; a clean machine may have empty apt lists, so
# retry once after an update.
ensure_packages() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    [[ ${#missing[@]} == 0 ]] && return 0
    [[ $EUID == 0 ]] || die "need root to install ${missing[*]}"
    log "installing ${missing[*]}"
    if ! DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends \
            "${missing[@]}" >&2; then
        apt_update_once
        DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends \
            "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
    fi
}

# The versioned package linux-image-amd64 depends on, e.g. linux-image-6.1.0-57-amd64.
resolve_kernel_pkg() {
    local pkg
    if [[ -n ${BRIG_VM_KERNEL_PKG:-} ]]; then
        echo "$BRIG_VM_KERNEL_PKG"
        return
    fi
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
          awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
    if [[ -z $pkg ]]; then
        apt_update_once
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
              awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
    fi
    [[ -n $pkg ]] || die "cannot resolve the kernel package linux-image-amd64 depends on"
    echo "$pkg"
}

# Download and unpack the kernel package into $cache/<pkg>/root; the "complete" marker is
# written last so an interrupted run is redone rather than half reused. Returns 1 when the
# download fails (stale apt lists: the caller updates and resolves the version again).
fetch_kernel() {
    local pkg=$1 dir=$cache/$1
    [[ -e $dir/complete ]] && return 0
    log "downloading $pkg"
    rm -rf "$dir"
    mkdir -p "$dir/dl"
    # apt drops to the _apt user for downloads; it cannot write into a root-owned cache,
    # and root is already trusted here.
    if ! (cd "$dir/dl" && apt-get download -o APT::Sandbox::User=root "$pkg" >&2); then
        rm -rf "$dir"
        return 1
    fi
    dpkg-deb -x "$dir"/dl/*.deb "$dir/root"
    rm -rf "$dir/dl"
    touch "$dir/complete"
}

# Print the absolute paths of the wanted modules and everything they depend on, dependencies
# first (the order insmod needs), each once.
module_closure() {
    local moddir=$1
    awk -v wanted="${wanted_modules[*]}" '
        function base(p,   b) { b = p; sub(/.*\//, "", b); sub(/\.ko(\.[a-z]+)?$/, "", b);
                               gsub(/-/, "_", b); return b }
        function visit(m,   n, i, d) {
            if (m in seen) return
            seen[m] = 1
            n = split(deps[m], d, " ")
            for (i = 1; i <= n; i++) visit(base(d[i]))
            if (m in path) print path[m]
        }
        FILENAME ~ /modules\.builtin$/ { builtin[base($1)] = 1; next }
        {
            f = $1; sub(/:$/, "", f)
            m = base(f); path[m] = f
            $1 = ""; deps[m] = $0
        }
        END {
            n = split(wanted, w, " ")
            for (i = 1; i <= n; i++) {
                if (w[i] in builtin) continue
                if (!(w[i] in path)) { print "missing module " w[i] > "/dev/stderr"; exit 1 }
                visit(w[i])
            }
        }' "$moddir/modules.builtin" "$moddir/modules.dep" | sed "s|^|$moddir/|"
}

build_initramfs() {
    local kroot=$1 kver=$2 out=$3 stage m name
    local moddir=$kroot/lib/modules/$kver mods
    # The package ships no modules.dep (the postinst makes it): generate it in the cache.
    [[ -e $moddir/modules.dep ]] || depmod -b "$kroot" "$kver" || die "depmod failed"
    mods=$(module_closure "$moddir") || die "cannot resolve the initramfs modules"
    stage=$(mktemp -d "$cache/initramfs.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$stage'" RETURN
    mkdir -p "$stage"/{bin,dev,proc,sys,newroot,modules}
    cp /bin/busybox "$stage/bin/busybox"
    # Only "sh" is needed before init installs the rest of the applets itself.
    ln -s busybox "$stage/bin/sh"
    install -m 0755 "$here/init.sh" "$stage/init"
    # The VM sees this cache through the host /, so it can bind the module tree from here.
    echo "$moddir" >"$stage/modules/tree"
    : >"$stage/modules/order"
    for m in $mods; do
        name=$(basename "$m")
        # busybox insmod may lack xz/zstd support: store plain .ko files.
        case $name in
            *.ko.xz) xz -dc "$m" >"$stage/modules/${name%.xz}"; name=${name%.xz} ;;
            *.ko.zst) zstd -qdc "$m" >"$stage/modules/${name%.zst}"; name=${name%.zst} ;;
            *.ko.gz) gzip -dc "$m" >"$stage/modules/${name%.gz}"; name=${name%.gz} ;;
            *) cp "$m" "$stage/modules/$name" ;;
        esac
        echo "$name" >>"$stage/modules/order"
    done
    log "initramfs modules: $(tr '\n' ' ' <"$stage/modules/order")"
    (cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
        busybox cpio -o -H newc -R 0:0 2>/dev/null) | gzip -9n >"$out.tmp"
    mv -f "$out.tmp" "$out"
}

# The bzImage decompresses itself inside the guest, which takes seconds under TCG. The plain
# ELF vmlinux inside it boots directly through PVH (CONFIG_PVH, qemu's pvh option ROM), so
# unpack it once on the host. Returns 1 (caller keeps the bzImage) if that is not possible.
extract_vmlinux() {
    local bz=$1 out=$2 off magic
    command -v xz >/dev/null || return 1
    off=$(LC_ALL=C grep -abo $'\xfd7zXZ\x00' "$bz" | head -n1 | cut -d: -f1)
    [[ -n $off ]] || return 1
    # xz complains about the data after the stream; the ELF check below is the real test.
    tail -c +$((off + 1)) "$bz" | xz -dc >"$out.tmp" 2>/dev/null || true
    magic=$(head -c 4 "$out.tmp" | od -An -tx1 | tr -d ' \n')
    if [[ $magic != 7f454c46 ]] || ! grep -q '^CONFIG_PVH=y' "${bz/vmlinuz/config}"; then
        rm -f "$out.tmp"
        return 1
    fi
    mv -f "$out.tmp" "$out"
}

main() {
    local pkg kroot kver vmlinuz initrd stamp want
    mkdir -p "$cache"
    # One setup at a time: parallel first runs must not download or build over each other.
    exec 9>"$cache/.lock"
    flock 9

    if ! command -v qemu-system-x86_64 >/dev/null || [[ ! -x /bin/busybox ]]; then
        ensure_packages qemu-system-x86 busybox-static
    fi
    command -v depmod >/dev/null || ensure_packages kmod
    # xz unpacks the ELF vmlinux (a much faster boot); a fresh minbase lacks it.
    command -v xz >/dev/null || ensure_packages xz-utils

    if [[ -z ${BRIG_VM_REFRESH:-} && -z ${BRIG_VM_KERNEL_PKG:-} && -L $cache/current &&
          -e $cache/current/complete ]]; then
        pkg=$(basename "$(readlink "$cache/current")")
    else
        pkg=$(resolve_kernel_pkg)
        if ! fetch_kernel "$pkg"; then
            apt_update_once
            pkg=$(resolve_kernel_pkg)
            fetch_kernel "$pkg" || die "apt-get download $pkg failed"
        fi
        ln -sfn "$pkg" "$cache/current"
    fi
    kroot=$cache/$pkg/root
    local trees=("$kroot"/lib/modules/*)
    [[ -d ${trees[0]} ]] || die "$pkg has no /lib/modules"
    kver=${trees[0]##*/}
    vmlinuz=$kroot/boot/vmlinuz-$kver
    [[ -r $vmlinuz ]] || die "$pkg has no $vmlinuz"
    if [[ -e $cache/$pkg/vmlinux ]] || extract_vmlinux "$vmlinuz" "$cache/$pkg/vmlinux"; then
        vmlinuz=$cache/$pkg/vmlinux
    else
        log "cannot unpack an ELF vmlinux from $vmlinuz: booting the bzImage (slower)"
    fi

    # Rebuild the initramfs whenever init.sh, this script, busybox or the cache path changed.
    want=$( (cat "$here/init.sh" "${BASH_SOURCE[0]}" /bin/busybox; echo "$kroot") |
           sha256sum | cut -c1-16)
    initrd=$cache/$pkg/initramfs.gz
    stamp=$cache/$pkg/initramfs.stamp
    if [[ ! -e $initrd || $(cat "$stamp" 2>/dev/null) != "$want" ]]; then
        log "building initramfs for $kver"
        build_initramfs "$kroot" "$kver" "$initrd"
        echo "$want" >"$stamp"
    fi

    printf 'BRIG_VM_KERNEL=%q\nBRIG_VM_INITRD=%q\n' "$vmlinuz" "$initrd"
}

main "$@"
