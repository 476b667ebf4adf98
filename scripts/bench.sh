#!/usr/bin/env bash
# bench.sh: installs what is missing, builds build/ (Release) and runs the
# headline benchmark, writing into benchs/results/; then plots the results
# when benchs/plot_results.py exists. Extra arguments go to bench_pool.
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

bench=$build_dir/benchs/bench_pool
if [[ ! -x "$bench" ]]; then
    echo "bench: error: $bench was not built (is benchs/CMakeLists.txt" \
         "there, and does it define bench_pool?)" >&2
    exit 1
fi

mkdir -p benchs/results
echo "bench: $bench --out benchs/results $*"
"$bench" --out benchs/results "$@"

if [[ -f benchs/plot_results.py ]]; then
    echo "bench: /usr/bin/python3 benchs/plot_results.py benchs/results"
    /usr/bin/python3 benchs/plot_results.py benchs/results
fi
