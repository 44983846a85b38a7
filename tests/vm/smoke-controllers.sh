#!/bin/sh
# Runs inside the test VM: the root cgroup is cgroup v2 with the controllers brig needs
# available and enabled for children (init.sh enables them).
set -eu
root=/sys/fs/cgroup

fstype=$(stat -f -c %T "$root")
[ "$fstype" = cgroup2fs ] || { echo "FAIL: $root is $fstype, not cgroup2fs"; exit 1; }

avail=$(cat "$root/cgroup.controllers")
enabled=$(cat "$root/cgroup.subtree_control")
echo "cgroup.controllers: $avail"
echo "cgroup.subtree_control: $enabled"
status=0
for c in memory pids cpu io cpuset hugetlb; do
    case " $avail " in *" $c "*) ;; *) echo "FAIL: controller $c not available"; status=1 ;; esac
    case " $enabled " in *" $c "*) ;; *) echo "FAIL: controller $c not enabled"; status=1 ;; esac
done

# A child cgroup must actually get the interface files of the enabled controllers.
cg=$root/smoke-controllers
mkdir "$cg"
for f in memory.max memory.swap.max pids.max cpu.max io.max cpuset.cpus; do
    [ -e "$cg/$f" ] || { echo "FAIL: child cgroup lacks $f"; status=1; }
done
# io.max needs a real block device: the harness's scratch disk.
if [ -e /sys/block/vda/dev ]; then
    dev=$(cat /sys/block/vda/dev)
    echo "$dev rbps=1048576" >"$cg/io.max"
    grep -q "^$dev rbps=1048576 " "$cg/io.max" || { echo "FAIL: io.max on vda ($dev) not set"; status=1; }
else
    echo "FAIL: no scratch disk /dev/vda in the VM"; status=1
fi
rmdir "$cg"
[ $status = 0 ] && echo "PASS"
exit $status
