# shellcheck shell=bash disable=SC2154,SC2034  # repo and build are the sourcing script's; brig is theirs
# vm-bench.sh: what bench-insns.sh and profile-insns.sh share, sourced by both.
# In the guest (tests/vm, under qemu -icount), vm_guest_workspace DIR makes the
# sandboxes' workspace: an ext4 on the scratch disk (the host's directories reach
# the guest over 9p, which cannot be idmapped). On the host, vm_host_prepare NAME
# finds the VM's kernel, makes the work directory W (removed at exit) and the
# probe bundle W/b that both guests run. Sourced after the options are read:
# as root only, and brig is $build's.

[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 77; }
brig=$build/runtime/brig

vm_guest_workspace() {
    mkfs.ext4 -q -F /dev/vda && mkdir -p "$1" && mount /dev/vda "$1" && chown 1000:1000 "$1" && return 0
    echo "cannot make the guest's workspace" >&2
    exit 1
}

vm_host_prepare() {
    : "${BRIG_VM_KERNEL:=}"
    if [ -z "$BRIG_VM_KERNEL" ]; then eval "$("$repo/tests/vm/setup-vm.sh")"; fi
    export BRIG_VM_KERNEL BRIG_VM_INITRD
    W=$(mktemp -d "/var/tmp/brig-$1.XXXXXX")
    # shellcheck disable=SC2064  # W is fixed now
    trap "rm -rf '$W'" EXIT
    chmod 0755 "$W"
    "$repo/rootfs-tools/brig-mkbundle" --brig "$brig" --probe "$build/tests/probe/brig-probe" "$W/b" -- /bin/true \
        >/dev/null
}
