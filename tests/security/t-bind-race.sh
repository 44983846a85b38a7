#!/usr/bin/env bash
# A bind source swapped between the policy check and the mount: a running
# container owns its workspace and can flip a subdirectory into a symlink to a
# forbidden path while another container binding that subdirectory is created.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/security/policy-lib.sh
. "$(dirname "$0")/policy-lib.sh"
"$BRIG" policy check --policy "$ENF" "$T/hard" >/dev/null || bail "the hardened config fails the check"

# ---- a bind source swapped between the check and the mount ------------------
# What is mounted must be what was judged. The flipper (a static C program
# built here) swaps the subdirectory and a symlink to the secret dir with
# renameat2(RENAME_EXCHANGE): the name always exists, half the time as each.
mkdir -p "$T/race/ws/sub" && echo safe > "$T/race/ws/sub/file"
ln -s "$T/secret" "$T/race/ws/link"
cat > "$T/flip.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
/* flip DIR SECONDS: swap DIR/sub and DIR/link until DIR is gone or time is up. */
int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int dir = open(argv[1], O_PATH | O_DIRECTORY);
    if (dir < 0) { perror(argv[1]); return 1; }
    time_t end = time(NULL) + atoi(argv[2]);
    struct stat st;
    for (unsigned long n = 1; ; n++) {
        if (renameat2(dir, "sub", dir, "link", RENAME_EXCHANGE) < 0) { perror("renameat2"); return 1; }
        if ((n & 1023) == 0 && (time(NULL) > end || fstat(dir, &st) < 0 || st.st_nlink == 0))
            return 0;
    }
}
C
build_static "$T/flip" "$T/flip.c"
"$T/flip" "$T/race/ws" 120 &
flipper=$!
weaken race '.process.args = ["/bin/cat", "/mnt/file"] | .mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["rbind", "ro"]}]'
jq --arg s "$T/race/ws/sub" '(.mounts[] | select(.destination == "/mnt")).source = $s' "$T/race/config.json" > "$T/race/c.json" &&
    mv "$T/race/c.json" "$T/race/config.json"
leaks=0 runs=0 refused=0 other=0
for i in $(seq 1 40); do
    CLEAN_IDS+=("$(cid "race-$i")")
    out=$(b --policy "$ENF" run --bundle "$T/race" "$(cid "race-$i")" 2>&1 </dev/null)
    case $out in
        *brig-host-secret*) leaks=$((leaks + 1)) ;;
        *safe*) runs=$((runs + 1)) ;;
        # Refused by the policy, or the judged source was a symlink at the mount.
        *"refuses create"*|*"(as the policy judged it)"*) refused=$((refused + 1)) ;;
        *) other=$((other + 1)); [ "$other" = 1 ] && diag "an unexpected outcome: $out" ;;
    esac
done
kill "$flipper" 2>/dev/null; wait "$flipper" 2>/dev/null
diag "bind swap race: $runs safe runs, $refused refused, $leaks leaks, $other other"
check_eq "a bind source swapped after the check never mounts the forbidden path" "$leaks" 0
# The use half: the same config runs, with the real directory, when it is
# there. Not counted during the race: under load the flipper can win every
# one of the 40 (CI saw 0 safe, 40 refused); with it stopped and the
# directory back in place, the run must mount it.
if [ -L "$T/race/ws/sub" ]; then
    mv "$T/race/ws/sub" "$T/race/ws/tmp" && mv "$T/race/ws/link" "$T/race/ws/sub" && mv "$T/race/ws/tmp" "$T/race/ws/link"
fi
CLEAN_IDS+=("$(cid race-after)")
out=$(b --policy "$ENF" run --bundle "$T/race" "$(cid race-after)" 2>&1 </dev/null)
check_eq "... while a run that finds the directory mounts it" "$out" safe
# Each of the 40 runs ended one of the ways above: a run that failed for
# another reason (a crash, a timeout, a broken bundle) would make the count
# of leaks meaningless.
check_eq "... and every run was either a safe run or a refusal (other outcomes)" "$other" 0
# The race was exercised: some creates saw the symlink (a flipper that had
# stopped, or a bundle that never bound the flipped name, would pass the rest).
check "... and some creates met the swapped symlink and were refused ($refused)" test "$refused" -ge 1
