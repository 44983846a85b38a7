#!/bin/sh
# /init of the brig test VM (busybox sh). See docs/testing-vm.md.
#
# Stage 1 (PID 1 in the initramfs): load the 9p/virtio/overlay modules, mount the host's /
# read-only over 9p under a tmpfs overlay, mount the results share, switch_root into it.
# Stage 2 (PID 1 in the overlay): mount /proc /sys /dev/* and cgroup2 with every
# controller enabled, run the job script the host wrote into the results share, record its
# exit status there, power off.
#
# Any failure powers the VM off without a status file; run-in-vm.sh then prints this
# console log and fails.

BB=/bin/busybox
RES=/run/brig-vm/results
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# msize sets the 9p payload size; the default 8 KiB makes every read of the host tree slow.
P9OPTS=trans=virtio,version=9p2000.L,msize=524288

say() { echo "brig-vm-init: $*" >/dev/console; }

halt_now() {
    sync
    $BB poweroff -f
    echo o >/proc/sysrq-trigger
    sleep 1000
}

fail() {
    say "FAILED: $*"
    halt_now
}

stage1() {
    $BB --install -s /bin
    $BB mkdir -p /proc /sys /dev /host /rw /newroot
    $BB mount -t proc proc /proc || fail "mount /proc"
    $BB mount -t sysfs sysfs /sys || fail "mount /sys"
    $BB mount -t devtmpfs devtmpfs /dev || fail "mount /dev"
    exec </dev/console >/dev/console 2>&1
    say "stage 1 up after $(cut -d' ' -f1 /proc/uptime)s"

    for m in $(cat /modules/order); do
        $BB insmod "/modules/$m" || fail "insmod $m"
    done

    # The host tree does not change under a test run, so let 9p cache it (much faster).
    $BB mount -t 9p -o "$P9OPTS,ro,cache=loose" hostroot /host || fail "mount 9p hostroot"
    $BB mount -t tmpfs -o mode=0755 tmpfs /rw || fail "mount tmpfs /rw"
    $BB mkdir -p /rw/upper /rw/work
    $BB mount -t overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
        fail "mount overlay"

    # /run must exist before switch_root: stage 2 and busybox live there.
    $BB mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run || fail "mount /run"
    $BB mkdir -p /newroot$RES
    $BB mount -t 9p -o "$P9OPTS,cache=none" results /newroot$RES || fail "mount 9p results"
    $BB cp /bin/busybox /init /modules/tree /newroot/run/brig-vm/ || fail "copy stage 2"

    $BB mount --move /dev /newroot/dev || fail "move /dev"
    $BB umount /sys /proc
    exec $BB switch_root /newroot /run/brig-vm/busybox sh /run/brig-vm/init stage2
    fail "switch_root"
}

stage2() {
    BB=/run/brig-vm/busybox
    $BB mount -t proc -o nosuid,nodev,noexec proc /proc || fail "mount /proc"
    $BB mount -t sysfs -o nosuid,nodev,noexec sysfs /sys || fail "mount /sys"
    # nsdelegate: cgroup namespaces become delegation boundaries, as on a systemd host.
    $BB mount -t cgroup2 -o nosuid,nodev,noexec,nsdelegate cgroup2 /sys/fs/cgroup ||
        fail "mount cgroup2"
    # One write per controller so a missing one is named instead of failing them all.
    for c in cpu memory pids io cpuset hugetlb; do
        echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control || say "cannot enable controller $c"
    done

    $BB mkdir -p /dev/pts /dev/shm /dev/mqueue
    $BB mount -t devpts -o nosuid,noexec,gid=5,mode=0620,ptmxmode=0666 devpts /dev/pts
    $BB mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /dev/shm
    $BB mount -t mqueue -o nosuid,nodev,noexec mqueue /dev/mqueue
    $BB ln -sf /proc/self/fd /dev/fd
    $BB ln -sf /proc/self/fd/0 /dev/stdin
    $BB ln -sf /proc/self/fd/1 /dev/stdout
    $BB ln -sf /proc/self/fd/2 /dev/stderr
    # /tmp stays the overlay's: the host's /tmp read-only below, writes in the tmpfs upper
    # layer. A fresh tmpfs would hide a source tree or build directory cloned under /tmp.
    # The host's /lib/modules is for the host kernel: show this kernel's, so modprobe works.
    tree=$(cat /run/brig-vm/tree)
    if [ -d "$tree" ]; then
        $BB mkdir -p "/lib/modules/${tree##*/}"
        $BB mount --bind "$tree" "/lib/modules/${tree##*/}"
    fi
    $BB hostname brig-vm
    $BB ifconfig lo 127.0.0.1 up

    [ -r $RES/job.sh ] || fail "no job script in the results share"
    say "running job after $(cut -d' ' -f1 /proc/uptime)s"
    cd /
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root USER=root LOGNAME=root TERM=dumb LANG=C.UTF-8 \
        BRIG_VM=1 BRIG_VM_RESULTS=$RES \
        /bin/bash $RES/job.sh </dev/null >$RES/stdout 2>$RES/stderr
    rc=$?
    # Written last and renamed, so the host never reads a half-written status.
    echo $rc >$RES/status.tmp && $BB mv $RES/status.tmp $RES/status
    say "job exited with $rc after $(cut -d' ' -f1 /proc/uptime)s"
    $BB umount $RES
    halt_now
}

case "$1" in
    stage2) stage2 ;;
    *) stage1 ;;
esac
