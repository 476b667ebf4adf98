#!/usr/bin/env bash
# run.sh SRC WORK PYTHON
#
# The python_pip_install test: what a user does on a fresh machine.
# Copies the source tree (without build trees or .git) to WORK/src, makes a
# venv that sees Debian's packages (numpy, faiss, setuptools), runs
#   pip install --no-build-isolation --no-index WORK/src
# (offline: setup.py drives this repository's CMake), then imports the
# installed package from outside the tree and runs the README's example.
set -euo pipefail

src=$1
work=$2
python=$3

rm -rf "$work"
mkdir -p "$work/src"
tar -C "$src" --exclude='./build*' --exclude=./.git -cf - . |
    tar -C "$work/src" -xf -

"$python" -m venv --system-site-packages "$work/venv"
venv_python=$work/venv/bin/python
FAISS_CCD_JOBS=${FAISS_CCD_JOBS:-$(nproc)} \
    "$venv_python" -m pip install --no-build-isolation --no-index --no-deps \
    "$work/src"

cd "$work"
"$venv_python" - "$work/venv" <<'PY'
import sys
import faiss_ccd
assert faiss_ccd.__file__.startswith(sys.argv[1]), faiss_ccd.__file__
print("installed:", faiss_ccd.__file__)
PY
"$venv_python" "$work/src/examples/python/example.py"
