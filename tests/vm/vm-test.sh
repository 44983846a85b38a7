#!/bin/bash
# meson entry point for the 'vm' suite: run-in-vm.sh, skipped (77) only when this machine
# cannot run the VM at all (not root: 9p must pass the host / through with real owners).
if [[ $EUID != 0 ]]; then
    echo "SKIP: the VM tests need root"
    exit 77
fi
exec bash "$(dirname "${BASH_SOURCE[0]}")/run-in-vm.sh" "$@"
