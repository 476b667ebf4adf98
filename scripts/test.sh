#!/usr/bin/env bash
# test.sh: installs what is missing, builds build/ (Release, tests and
# benchmarks on) and runs every test with ctest.
#
# Tests run one at a time: many are timing-sensitive stress tests that would
# disturb each other. Extra arguments go to ctest, e.g.
#   ./scripts/test.sh -L scheduler
#   ./scripts/test.sh -R Topology
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

./scripts/install_deps.sh

build_dir=build
jobs=${FAISS_CCD_JOBS:-$(nproc)}

cmake -S . -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DFAISS_CCD_BUILD_TESTS=ON \
    -DFAISS_CCD_BUILD_BENCHS=ON
cmake --build "$build_dir" -j "$jobs"
ctest --test-dir "$build_dir" --output-on-failure "$@"
