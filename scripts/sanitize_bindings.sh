#!/usr/bin/env bash
# sanitize_bindings.sh
#
# The bindings under AddressSanitizer + UBSan: builds the FAISS glue, the C
# API and the Python module with FAISS_CCD_SANITIZE=address into
# build-asan-bindings/ (Debian's libfaiss.a itself is not instrumented),
# then runs the C API test program and every pytest file. Python is not
# built with ASan, so its process gets the runtime by LD_PRELOAD, together
# with libstdc++ (else ASan's __cxa_throw interceptor finds no real one and
# the first C++ exception aborts). Leak detection is off for Python (the
# interpreter's own allocations at exit are not ours); the RSS test is
# skipped (ASan's quarantine grows the heap by design).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

./scripts/install_deps.sh

build_dir=build-asan-bindings
jobs=${FAISS_CCD_JOBS:-$(nproc)}
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

cmake -S . -B "$build_dir" \
    -DFAISS_CCD_SANITIZE=address \
    -DFAISS_CCD_BUILD_BENCHS=OFF \
    -DFAISS_CCD_BUILD_C_API=ON \
    -DFAISS_CCD_ENABLE_PYTHON=ON
cmake --build "$build_dir" -j "$jobs" --target test_c_api faiss_ccd_python

echo "sanitize_bindings: C API test"
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}" \
    "$build_dir/c_api/test_c_api"

echo "sanitize_bindings: pytest"
libasan=$(g++ -print-file-name=libasan.so)
libstdcxx=$(g++ -print-file-name=libstdc++.so.6)
LD_PRELOAD="$libasan $libstdcxx" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}" \
    FAISS_CCD_UNDER_ASAN=1 \
    PYTHONPATH="$build_dir/python" PYTHONDONTWRITEBYTECODE=1 \
    /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python
