#!/usr/bin/env bash
# run.sh SRC WORK PYTHON
#
# The python_pip_install test: what a user does on a fresh machine.
# Copies the source tree (without build trees or .git) to WORK/src, makes a
# venv that sees Debian's packages (numpy, setuptools; Debian's own faiss
# too, which the venv's must shadow), runs
#   pip install --no-build-isolation --no-index WORK/src
# (setup.py drives this repository's CMake, which builds the fork), then
# imports the installed package from outside the tree, checks it is the
# fork, and runs the README's example.
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
import faiss
assert faiss.__file__.startswith(sys.argv[1]), faiss.__file__
assert faiss.PARALLEL_MODE_CCD == 1 << 16
from faiss.contrib.ccd import datasets, evaluation, loadgen, report
assert datasets.__file__.startswith(sys.argv[1]), datasets.__file__
print("installed:", faiss.__file__, "pool:", faiss.ccd.get_default_pool())
PY
"$venv_python" "$work/src/examples/python/example.py"
