#!/usr/bin/env bash
# Mutation run: apply each listed small bug (a mutant) to a copy of the
# source, one at a time, rebuild, run the integration or security tests
# that should catch it, and report which mutants survive (no test failed).
# A surviving mutant is a hole in the tests (docs/testing.md, "Mutation run").
#
#   bash scripts/mutate.sh [--list] [--keep] [NAME...]
#
# NAME...  only these mutants (default: all of tests/mutation/mutants.txt)
# --list   print the mutants and exit
# --keep   keep the copy and its build (under $BRIG_MUTATE_DIR)
# --build  only copy and build (to prepare $BRIG_MUTATE_DIR), run nothing
#
# Environment: BRIG_MUTATE_DIR (default /tmp/brig-mutate.$$): the copy and
# its build dir; an existing one is reused (files copied again keep their
# times, so only what changed is rebuilt). The copy is made from the working tree (tracked files, with
# uncommitted edits), never a git worktree: the repository is not touched.
# Mutants run one after the other (-j1: tests share the host's cgroups and
# mounts); each rebuild is incremental. Ends with one line:
# "mutants: N killed, N survived, N broken" and exits 1 if any survived or
# was broken (did not apply or did not build).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
SRC=$PWD
LIST=tests/mutation/mutants.txt
KEEP=0 ONLY_LIST=0 ONLY_BUILD=0 WANT=()
for a in "$@"; do
    case $a in
        --list) ONLY_LIST=1 ;;
        --keep) KEEP=1 ;;
        --build) ONLY_BUILD=1 KEEP=1 ;;
        -h | --help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "mutate.sh: unknown option $a" >&2; exit 2 ;;
        *) WANT+=("$a") ;;
    esac
done

# mutants.txt: one mutant per line, fields separated by " | ":
#   NAME | FILE | SED-EXPRESSION | TESTS (meson test names, space-separated)
# '#' starts a comment line.
NAMES=() FILES=() SEDS=() TESTS=()
while IFS= read -r line; do
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    IFS='|' read -r n f s t <<<"$line"
    trim() { local x=$1; x=${x#"${x%%[![:space:]]*}"}; echo "${x%"${x##*[![:space:]]}"}"; }
    n=$(trim "$n") f=$(trim "$f") s=$(trim "$s") t=$(trim "$t")
    if [ ${#WANT[@]} -gt 0 ]; then
        local_want=0
        for w in "${WANT[@]}"; do [ "$w" = "$n" ] && local_want=1; done
        [ $local_want = 1 ] || continue
    fi
    NAMES+=("$n") FILES+=("$f") SEDS+=("$s") TESTS+=("$t")
done <"$LIST"
if [ $ONLY_LIST = 1 ]; then
    for i in "${!NAMES[@]}"; do printf '%-28s %-40s %s\n' "${NAMES[$i]}" "${FILES[$i]}" "${TESTS[$i]}"; done
    exit 0
fi
[ ${#NAMES[@]} -gt 0 ] || [ $ONLY_BUILD = 1 ] || { echo "mutate.sh: no mutant selected" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "mutate.sh: the integration tests need root" >&2; exit 2; }

DIR=${BRIG_MUTATE_DIR:-/tmp/brig-mutate.$$}
COPY=$DIR/src
BUILD=$DIR/build
mkdir -p "$COPY"
finish() { [ $KEEP = 1 ] && echo "kept $DIR" || rm -rf --one-file-system "$DIR"; }
trap finish EXIT

echo "==> copying the working tree to $COPY"
git -C "$SRC" ls-files -z --cached --others --exclude-standard |
    (cd "$SRC" && xargs -0 cp --parents -a -t "$COPY" 2>/dev/null)
# meson needs to find a git tree for the commit id only: without one it says "unknown".
echo "==> building the unmutated copy"
if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" "$COPY" >"$DIR/setup.log" 2>&1 || { cat "$DIR/setup.log"; exit 2; }
fi
ninja -C "$BUILD" -j2 >"$DIR/build.log" 2>&1 || { tail -50 "$DIR/build.log"; exit 2; }
[ $ONLY_BUILD = 1 ] && exit 0

# run_tests TESTS LOG: 0 if every test passed.
run_tests() {
    local tests=$1 log=$2
    # shellcheck disable=SC2086  # a list of test names
    meson test -C "$BUILD" --no-rebuild --print-errorlogs --timeout-multiplier 3 $tests >"$log" 2>&1
}

# The baseline: the tests must pass without a mutant, or a kill means nothing.
all_tests=$(printf '%s\n' "${TESTS[@]}" | tr ' ' '\n' | sort -u | tr '\n' ' ')
start=$(date +%s)
if ! run_tests "$all_tests" "$DIR/baseline.log"; then
    grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)' "$DIR/baseline.log"
    echo "mutate.sh: the tests fail without any mutant ($DIR/baseline.log); nothing to learn" >&2
    KEEP=1
    exit 2
fi
echo "    baseline: $all_tests passed in $(( $(date +%s) - start )) s"

killed=0 survived=0 broken=0 RESULTS=()
for i in "${!NAMES[@]}"; do
    n=${NAMES[$i]} f=${FILES[$i]} s=${SEDS[$i]} t=${TESTS[$i]}
    echo "==> mutant $n: $f"
    cp -a "$COPY/$f" "$DIR/orig"
    sed -i -e "$s" "$COPY/$f"
    verdict=
    if cmp -s "$COPY/$f" "$DIR/orig"; then
        verdict="broken (the sed expression changed nothing)"
    elif ! ninja -C "$BUILD" -j2 >"$DIR/$n.build.log" 2>&1; then
        verdict="broken (does not build: $DIR/$n.build.log)"
    else
        start=$(date +%s)
        if run_tests "$t" "$DIR/$n.log"; then
            verdict="SURVIVED ($t all passed)"
        else
            # "1/1 brig:integration / integration-masks FAIL ...": the test's name
            by=$(grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT|ERROR) ' "$DIR/$n.log" |
                sed -E 's/.* ([^ ]+) +(FAIL|TIMEOUT|ERROR) .*/\1/' | sort -u | tr '\n' ' ')
            # and its first failing subtest ("▶ 1/1 - DESC FAIL")
            first=$(grep -m1 -E '^▶ .* FAIL *$' "$DIR/$n.log" | sed -E 's/^▶ [0-9]+\/[0-9]+ - //; s/ +FAIL *$//')
            verdict="killed by ${by:-?}($(( $(date +%s) - start )) s)${first:+: \"$first\"}"
        fi
    fi
    case $verdict in
        killed*) killed=$((killed + 1)) ;;
        SURVIVED*) survived=$((survived + 1)) ;;
        *) broken=$((broken + 1)) ;;
    esac
    # A mutant can make brig leave processes no test knows of (an id that
    # escaped the state dir): ours are those started as the copy's binaries
    # (argv[0]; brig runs from a sealed memfd, so not /proc/PID/exe).
    for p in /proc/[0-9]*; do
        [[ $(tr '\0' '\n' <"$p/cmdline" 2>/dev/null | head -n 1) == "$BUILD"/* ]] &&
            kill -9 "${p#/proc/}" 2>/dev/null
    done
    cp -a "$DIR/orig" "$COPY/$f"
    # the restored file must be rebuilt even if its mtime went back
    touch "$COPY/$f"
    echo "    $verdict"
    RESULTS+=("$(printf '%-28s %s' "$n" "$verdict")")
done
ninja -C "$BUILD" -j2 >/dev/null 2>&1

echo
echo "mutation run $(date -u +%Y-%m-%d) on $(git -C "$SRC" rev-parse --short HEAD):"
printf '  %s\n' "${RESULTS[@]}"
echo "mutants: $killed killed, $survived survived, $broken broken"
[ $survived = 0 ] && [ $broken = 0 ]
