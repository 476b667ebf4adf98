#!/usr/bin/env bash
# run.sh SRC WORK PYTHON
#
# The python_pip_install test: what a user does on a fresh machine.
# Copies the source tree (without build trees, venvs or .git) to WORK/src,
# makes a venv with PYTHON's base interpreter and installs into it, from
# the project's hashed lock (requirements/venv.txt), only what the build
# needs (numpy, setuptools, wheel). Then:
#   1. with the faiss-cpu wheel installed there (requirements/stock.txt),
#      `pip install --no-build-isolation WORK/src` must refuse, naming it
#      (both provide the module faiss);
#   2. with it uninstalled, the same command builds the fork (setup.py
#      drives this repository's CMake);
# then imports the installed package from outside the tree, checks it is
# the fork, and runs the README's example.
set -euo pipefail

src=$1
work=$2
python=$3

rm -rf "$work"
mkdir -p "$work/src"
tar -C "$src" --exclude='./build*' --exclude=./.git --exclude='./.venv*' \
    -cf - . | tar -C "$work/src" -xf -

# locked NAME... < LOCK: the lock's entries for NAME... (with their hashes).
locked() {
    awk -v names=" $* " '
        /^[a-z0-9]/ { split($1, a, "=="); keep = index(names, " " a[1] " ") }
        keep && !/^ *#/ { print }' "$1"
}
base=$("$python" -c 'import sys; print(sys._base_executable)')
"$base" -m venv "$work/venv"
venv_python=$work/venv/bin/python
pip=("$venv_python" -m pip install -q --disable-pip-version-check
     --require-hashes --no-deps)
"${pip[@]}" -r <(locked "$src/requirements/venv.txt" numpy setuptools wheel)
"${pip[@]}" -r <(locked "$src/requirements/stock.txt" faiss-cpu packaging)

install=("$venv_python" -m pip install --no-build-isolation --no-deps
         "$work/src")
if "${install[@]}" >"$work/refused.log" 2>&1; then
    echo "FAIL: pip installed the fork over faiss-cpu" >&2
    exit 1
fi
grep -q "faiss-cpu .* provides the module faiss too" "$work/refused.log" || {
    echo "FAIL: the refusal does not name faiss-cpu:" >&2
    tail -20 "$work/refused.log" >&2
    exit 1
}
echo "refused beside faiss-cpu, as it should"
"$venv_python" -m pip uninstall -q -y faiss-cpu
FAISS_CCD_JOBS=${FAISS_CCD_JOBS:-$(nproc)} "${install[@]}"

cd "$work"
"$venv_python" - "$work/venv" <<'PY'
import sys
import faiss
assert faiss.__file__.startswith(sys.argv[1]), faiss.__file__
assert faiss.PARALLEL_MODE_CCD == 1 << 16
from faiss.contrib.ccd import datasets, evaluation, loadgen, report
assert datasets.__file__.startswith(sys.argv[1]), datasets.__file__
print("installed:", faiss.__file__, "pool:", faiss.ccd.get_default_pool())
PY
"$venv_python" "$work/src/examples/python/example.py"
