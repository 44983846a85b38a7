#!/usr/bin/env bash
# The Python client as a user installs it: a fresh venv of Debian's python3,
# `pip install --no-index --find-links /usr/share/python-wheels ./contrib/python`
# (the README's command: offline, the build backend from Debian's setuptools
# and wheel, python3-setuptools-whl and python3-wheel-whl), then the tests against
# the installed package (the stand-in brig, and the real one as root: BRIG).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
"$py" -c 'import venv, ensurepip' 2>/dev/null || { echo "SKIP: $py has no venv/ensurepip (Debian: python3-venv)"; exit 77; }
T=$(mktemp -d /tmp/brig-pyvenv.XXXXXX)
trap 'rm -rf "$T"' EXIT
"$py" -m venv "$T/venv"
cd "$src"
for w in setuptools wheel; do
    compgen -G "/usr/share/python-wheels/$w-*.whl" >/dev/null ||
        { echo "SKIP: no $w wheel in /usr/share/python-wheels (Debian: python3-$w-whl)"; exit 77; }
done
# Nothing from an index, nothing from this machine's own pip settings.
env -u PIP_FIND_LINKS -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE=/dev/null \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$T/venv/bin/pip" install -q --no-index --find-links /usr/share/python-wheels ./contrib/python
# typed: the package checks under mypy --strict (Debian's mypy)
if "$py" -m mypy --version >/dev/null 2>&1; then
    "$py" -m mypy --strict --cache-dir "$T/mypy-cache" "$src/contrib/python/brig_sandbox"
else
    echo "SKIP: no mypy for $py (Debian: mypy): the types are not checked" >&2; exit 77
fi
cd "$T"
BRIG_CLIENT_INSTALLED=$T/venv "$T/venv/bin/python" -W error::ResourceWarning -m unittest discover -v \
    -s "$src/contrib/python/tests" -t "$src/contrib/python/tests"
