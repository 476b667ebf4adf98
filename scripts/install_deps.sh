#!/usr/bin/env bash
# install_deps.sh [--debian-only] [PACKAGE...]
#
# Everything this project needs on Debian 12 (bookworm) or 13 (trixie),
# read from /etc/debian_version and said:
#   1. Debian's system parts (compiler, cmake, hwloc, OpenBLAS, swig,
#      GoogleTest, Google Benchmark, oneTBB, clang for the fuzzers, ...),
#      whichever are not installed yet (apt-get; sudo only when not root).
#      The fuzzers' clang is the release's own, by name (14 on Debian 12,
#      19 on Debian 13: scripts/debian_release.sh).
#   2. The project's virtual environment .venv, from requirements/venv.txt
#      (numpy 2, pytest 8, matplotlib, h5py, hnswlib, usearch, Dask,
#      clang-format 14.0.6, the build backends), and .venv-stock, the
#      stock baseline's, from requirements/stock.txt (the faiss-cpu 1.15.1
#      wheel): `pip install --require-hashes`, every file checked against
#      the lock. A venv whose lock has not changed is left as it is (a
#      stamp in it holds the lock's SHA-256).
# Idempotent: with everything in place it runs neither apt-get nor pip.
# PACKAGE...: those Debian packages only (no venvs); --debian-only: step 1
# alone. The venvs are made with PATH's python3 (3.11 or newer, with its
# headers: the fork's Python module is built for it), or
# $FAISS_CCD_BASE_PYTHON.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/debian_release.sh
source "$repo/scripts/debian_release.sh"

debian_only=0
if [[ ${1:-} == --debian-only ]]; then
    debian_only=1
    shift
fi

default_packages=(
    build-essential
    cmake
    pkg-config
    libhwloc-dev
    hwloc
    libopenblas-dev
    libgtest-dev
    libbenchmark-dev
    libtbb-dev
    python3-dev     # when PATH's python3 is Debian's: its headers and venv
    python3-venv
    swig
    ccache
    libblas-dev
    liblapack-dev
    xz-utils
    patch
    dataset-fashion-mnist
    zlib1g-dev
    gdb             # tests/: a hung fork() child's stacks
    "clang-$fuzz_clang_version"              # scripts/fuzz.sh
    "libclang-rt-$fuzz_clang_version-dev"    # libFuzzer, clang's sanitizers
)

say() { echo "install_deps: $*"; }

sudo_cmd=()
need_root() {
    if [[ $(id -u) -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo_cmd=(sudo)
        else
            say "error: not root and sudo is not available; as root, run:" \
                "$*" >&2
            exit 1
        fi
    fi
}

debian_packages() {
    local missing=() pkg status
    for pkg in "$@"; do
        status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
        [[ $status == "install ok installed" ]] || missing+=("$pkg")
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        say "all $# Debian packages already installed"
        return 0
    fi
    say "missing: ${missing[*]}"
    if ! command -v apt-get >/dev/null 2>&1; then
        say "error: apt-get not found; this script needs Debian. Install" \
            "by hand: ${missing[*]}" >&2
        exit 1
    fi
    need_root "apt-get install ${missing[*]}"
    "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}"
    say "installed ${missing[*]}"
}

# venv DIR LOCK: DIR made (or remade) from the hashed lock file LOCK.
venv() {
    local dir=$repo/$1 lock=$repo/$2 want base
    want=$(sha256sum "$lock" | cut -d' ' -f1)
    if [[ -x $dir/bin/python && -f $dir/.faiss_ccd_lock &&
          $(cat "$dir/.faiss_ccd_lock") == "$want" ]]; then
        say "$1 up to date with $2"
        return 0
    fi
    base=${FAISS_CCD_BASE_PYTHON:-python3}
    if ! "$base" -c 'import os, sys, sysconfig, venv
assert sys.version_info >= (3, 11), sys.version
assert os.path.exists(os.path.join(sysconfig.get_paths()["include"],
                                   "Python.h"))'; then
        say "error: $base must be Python 3.11 or newer with venv and its" \
            "headers (FAISS_CCD_BASE_PYTHON names another)" >&2
        exit 1
    fi
    say "making $1 with $("$base" -c 'import sys; print(sys.executable,
        sys.version.split()[0])') from $2"
    rm -rf "$dir"
    "$base" -m venv "$dir"
    "$dir/bin/python" -m pip install -q --disable-pip-version-check \
        --require-hashes --no-deps -r "$lock"
    echo "$want" >"$dir/.faiss_ccd_lock"
    say "$1: $("$dir/bin/python" -m pip list --format=freeze 2>/dev/null |
        wc -l) packages"
}

say "Debian $debian_version_text (release $debian_major: fuzzers on" \
    "clang-$fuzz_clang_version)"
if [[ $# -gt 0 ]]; then
    debian_packages "$@"
    exit 0
fi
debian_packages "${default_packages[@]}"
[[ $debian_only -eq 1 ]] && exit 0
venv .venv requirements/venv.txt
venv .venv-stock requirements/stock.txt
