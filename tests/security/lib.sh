# Shared helpers for the attack tests (sourced, bash): the integration
# helpers plus a compiler for the hostile pieces.
# shellcheck shell=bash
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

# build_static OUT SRC.c [CFLAGS...]: a small static C program for the attack,
# compiled here from the test's own source. Bails when no static libc exists.
build_static() {
    local out=$1 src=$2; shift 2
    command -v cc >/dev/null || skip_all "no C compiler (bash scripts/setup.sh installs gcc)"
    cc -static -O1 -o "$out" "$src" "$@" 2>"$out.cc.log" ||
        bail "cannot compile $src: $(head -c 500 "$out.cc.log")"
}
