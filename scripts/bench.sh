#!/usr/bin/env bash
# bench.sh: installs what is missing, builds build/ (Release) and runs the
# headline benchmark, bench_ivf (IVF search: stock FAISS OpenMP against the
# pool, on embedded synthetic data and Debian's Fashion-MNIST), writing into
# benchs/results/; then plots the results. Extra arguments go to bench_ivf
# (e.g. --quick, --dataset synthetic). The other benchmarks (bench_pool,
# bench_hnsw, bench_mapping) run the same way from build/benchs/.
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

bench=$build_dir/benchs/bench_ivf
if [[ ! -x "$bench" ]]; then
    echo "bench: error: $bench was not built (is benchs/CMakeLists.txt" \
         "there, and does it define bench_ivf?)" >&2
    exit 1
fi

mkdir -p benchs/results
echo "bench: $bench --out benchs/results $*"
"$bench" --out benchs/results "$@"

echo "bench: /usr/bin/python3 benchs/plot_results.py benchs/results"
/usr/bin/python3 benchs/plot_results.py benchs/results
