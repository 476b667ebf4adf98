#!/usr/bin/env bash
# bench.sh: installs what is missing, builds build/ (Release) and runs the
# main job, benchs/python/bench_headline.py: stock FAISS's parallel modes
# against the CCD mode side by side on IVF (embedded synthetic data and
# Debian's Fashion-MNIST) and on many HNSW tables, and the monitor under a
# drifting hot set. Writes benchs/out/headline.* and benchs/out/RESULTS.md
# (ignored by git: the checkout stays as it was); --record, from a clean
# tree only, writes the committed benchs/results/ and benchs/RESULTS.md.
# Extra arguments go to bench_headline.py:
#   ./scripts/bench.sh --quick     # about a minute
#   ./scripts/bench.sh --full      # wider sweeps, more rounds
#   ./scripts/bench.sh --record    # the figures the README quotes
# The pool's C++ benchmark, build/benchs/bench_pool, and the scale model,
# build/tools/scale_model/bench_sim, run on their own (see the README).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

./scripts/install_deps.sh

build_dir=build
jobs=${FAISS_CCD_JOBS:-$(nproc)}

# Same configuration as scripts/test.sh, so the two share one build tree.
cmake -S . -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DFAISS_CCD_BUILD_TESTS=ON \
    -DFAISS_CCD_BUILD_BENCHS=ON
cmake --build "$build_dir" -j "$jobs"

echo "bench: PYTHONPATH=$build_dir/python .venv/bin/python" \
     "benchs/python/bench_headline.py $*"
PYTHONPATH=$build_dir/python exec .venv/bin/python \
    benchs/python/bench_headline.py "$@"
