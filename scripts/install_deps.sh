#!/usr/bin/env bash
# install_deps.sh [PACKAGE...]
#
# Installs whichever of the given Debian packages (default: everything this
# project needs) are not installed yet. Idempotent: when all are present it
# changes nothing and runs no apt-get at all. Uses sudo only when not root.
set -euo pipefail

default_packages=(
    build-essential
    clang-format
    cmake
    pkg-config
    python3-faiss   # Debian's generic FAISS: the benchmarks' reference row only
    libhwloc-dev
    hwloc
    libopenblas-dev
    libgtest-dev
    libbenchmark-dev
    libtbb-dev
    python3-numpy
    python3-pytest
    python3-matplotlib
    python3-h5py    # contrib.ccd.datasets: ann-benchmarks HDF5 files
    python3-dev
    python3-pip
    python3-setuptools
    python3-venv
    python3-wheel
    swig
    ccache
    libblas-dev
    liblapack-dev
    xz-utils
    patch
    dataset-fashion-mnist
    zlib1g-dev
    clang               # scripts/fuzz.sh: the libFuzzer targets (tests/fuzz/)
    libclang-rt-14-dev  # libFuzzer and clang's sanitizer runtimes
)

if [[ $# -gt 0 ]]; then
    packages=("$@")
else
    packages=("${default_packages[@]}")
fi

missing=()
for pkg in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    if [[ "$status" != "install ok installed" ]]; then
        missing+=("$pkg")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install_deps: all ${#packages[@]} packages already installed"
    exit 0
fi

echo "install_deps: missing: ${missing[*]}"

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_deps: error: apt-get not found; this script needs Debian" \
         "or Ubuntu. Install by hand: ${missing[*]}" >&2
    exit 1
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo_cmd=(sudo)
    else
        echo "install_deps: error: not root and sudo is not available." >&2
        echo "install_deps: as root, run: apt-get install ${missing[*]}" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
echo "install_deps: installed ${missing[*]}"
