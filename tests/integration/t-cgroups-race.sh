#!/usr/bin/env bash
# Containers made at the same moment in a parent cgroup none of them finds:
# 20 `run`s in parallel into /brig-test-par-<pid>/a/par/<id>. The first
# mkdir of each shared level wins, the others find it made a moment ago;
# on v1 a fresh cpuset starts with empty cpuset.cpus/mems, and a task cannot
# join it (ENOSPC) until someone copies its parent's in. Every run must
# succeed, and once all are deleted the shared parents the runs made must be
# gone from every hierarchy (they were brig's, not the admin's). A parent
# the admin made stays.
. "$(dirname "$0")/lib.sh"
it_init

PAR=brig-test-par-$$
eval "lib_$(declare -f it_cleanup)"
it_cleanup() {
    lib_it_cleanup
    local c
    for c in /sys/fs/cgroup/*/"$PAR" /sys/fs/cgroup/*/brig-test-adm-$$; do
        [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
    done
}

N=${BRIG_RACE_N:-20}
mkb par -- /bin/true || bail "cannot build a bundle"

# race ROUND PREFIX: N runs at once into /PREFIX/a/par/<id>; RC_FILES per run.
race() {
    local round=$1 prefix=$2 i id
    for i in $(seq "$N"); do
        id=$(cid "r$round-$i")
        CLEAN_IDS+=("$id")
        mkdir -p "$T/r$round-$i"
        jq --arg p "/$prefix/a/par/$id" --arg r "$T/par/rootfs" \
            '.linux.cgroupsPath = $p | .root.path = $r' "$T/par/config.json" > "$T/r$round-$i/config.json"
    done
    for i in $(seq "$N"); do
        id=$(cid "r$round-$i")
        ( b run --bundle "$T/r$round-$i" "$id" </dev/null >"$T/r$round-$i.out" 2>"$T/r$round-$i.err"
          echo $? >"$T/r$round-$i.rc" ) &
    done
    wait
}

failed_runs() {
    local round=$1 i bad=()
    for i in $(seq "$N"); do
        [ "$(cat "$T/r$round-$i.rc" 2>/dev/null)" = 0 ] ||
            bad+=("r$round-$i: rc $(cat "$T/r$round-$i.rc" 2>/dev/null): $(head -c 300 "$T/r$round-$i.err")")
    done
    printf '%s\n' "${bad[@]}"
}

for round in 1 2 3; do
    race "$round" "$PAR"
    bad=$(failed_runs "$round")
    if [ -z "$bad" ]; then ok "round $round: $N parallel runs into a new shared parent all succeed"
    else not_ok "round $round: $N parallel runs into a new shared parent all succeed" "$bad"; fi
    left=$(ls -d /sys/fs/cgroup/*/"$PAR" 2>/dev/null | tr '\n' ' ')
    check_eq "round $round: the shared parents are gone from every hierarchy" "$left" ""
done

# A parent the admin made (here: with a cpuset of its own) is not brig's to
# remove, even when brig's runs leave it empty.
for c in /sys/fs/cgroup/*/; do
    case $c in */unified/) continue ;; esac
    mkdir -p "$c/brig-test-adm-$$"
done
if [ -f /sys/fs/cgroup/cpuset/cpuset.cpus ]; then
    cat /sys/fs/cgroup/cpuset/cpuset.cpus > /sys/fs/cgroup/cpuset/brig-test-adm-$$/cpuset.cpus
    cat /sys/fs/cgroup/cpuset/cpuset.mems > /sys/fs/cgroup/cpuset/brig-test-adm-$$/cpuset.mems
fi
N=6
race 4 "brig-test-adm-$$"
bad=$(failed_runs 4)
check_eq "runs below an admin's parent succeed" "$bad" ""
check "the admin's parent stays" test -d "/sys/fs/cgroup/memory/brig-test-adm-$$"
left=$(ls -d /sys/fs/cgroup/*/"brig-test-adm-$$"/a 2>/dev/null | tr '\n' ' ')
check_eq "the levels brig made below it are gone" "$left" ""
