#!/usr/bin/env bash
# sanitize_bindings.sh
#
# The fork under AddressSanitizer + UBSan: builds libfaiss, the C API and
# the Python module with FAISS_CCD_SANITIZE=address into
# build-asan-bindings/ (instrumented: our code inside them, the tests, and
# FAISS's IndexIVF.cpp, which our patch changes; FAISS's other files are
# built as in Release), then runs the glue's C++ tests (label faiss), the C
# API's tests and every pytest file. Python
# is not built with ASan, so its process gets the runtime by LD_PRELOAD,
# together with libstdc++ (else ASan's __cxa_throw interceptor finds no real
# one and the first C++ exception aborts). Leak detection is off for Python
# (the interpreter's own allocations at exit are not ours); the RSS test is
# skipped (ASan's quarantine grows the heap by design).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

./scripts/install_deps.sh

build_dir=build-asan-bindings
jobs=${FAISS_CCD_JOBS:-$(nproc)}
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

cmake -S . -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DFAISS_CCD_SANITIZE=address \
    -DFAISS_CCD_BUILD_BENCHS=OFF \
    -DFAISS_CCD_BUILD_TESTS=ON \
    -DFAISS_CCD_BUILD_C_API=ON \
    -DFAISS_CCD_ENABLE_PYTHON=ON
mapfile -t c_tests < <(cd tests/c_api && ls test_*_c.c | sed 's/\.c$//')
cmake --build "$build_dir" -j "$jobs" --target faiss_tests faiss_python \
    "${c_tests[@]}"

echo "sanitize_bindings: the glue's C++ tests and the C API's"
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}" \
    ctest --test-dir "$build_dir" -L "faiss|c_api" -LE examples \
    --output-on-failure

# allocator_may_return_null: a request too big for memory fails as malloc
# fails (numpy's MemoryError, C++'s bad_alloc), which the bad-input table
# checks, instead of ASan aborting the process.
echo "sanitize_bindings: pytest"
libasan=$(g++ -print-file-name=libasan.so)
libstdcxx=$(g++ -print-file-name=libstdc++.so.6)
LD_PRELOAD="$libasan $libstdcxx" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:allocator_may_return_null=1}" \
    FAISS_CCD_UNDER_ASAN=1 \
    PYTHONPATH="$build_dir/python" PYTHONDONTWRITEBYTECODE=1 \
    .venv/bin/python -m pytest -q -p no:cacheprovider tests/python
