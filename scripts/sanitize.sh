#!/usr/bin/env bash
# sanitize.sh thread|address [--glue] [CTEST_ARGS...]
#
# Builds the scheduler alone (no FAISS, no benchmarks) with ThreadSanitizer
# into build-tsan/, or with AddressSanitizer + UBSan into build-asan/, and
# runs the "scheduler" tests under it. FAISS_CCD_STRESS_SCALE, if set, is
# passed through unchanged to the tests.
#
# --glue: the FAISS glue instead: the fork's libfaiss (our sources in it and
# FAISS's IndexIVF.cpp, which our patch changes, instrumented; FAISS's other
# files as in Release) and the glue's C++ tests (label "faiss": IndexIVFCCD,
# PARALLEL_MODE_CCD, HNSWTables, the Monitor wiring, faults, the soak) into
# build-tsan-glue/ or build-asan-glue/. OpenMP runs one thread
# (OMP_NUM_THREADS=1): libgomp is not instrumented, and its team would only
# give reports about itself; the stock reference searches need no team.
# The soak runs FAISS_CCD_SOAK_S seconds (default here: 2).
# (sanitize_bindings.sh runs these tests under ASan+UBSan in CI already.)
set -euo pipefail

usage() {
    echo "usage: $0 thread|address [--glue] [CTEST_ARGS...]" >&2
    exit 2
}
[[ $# -ge 1 ]] || usage
mode=$1
shift
glue=0
if [[ "${1:-}" == --glue ]]; then
    glue=1
    shift
fi

case "$mode" in
    thread)
        build_dir=build-tsan
        export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
        ;;
    address)
        build_dir=build-asan
        export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
        export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
        ;;
    *)
        usage
        ;;
esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

./scripts/install_deps.sh

if [[ -n "${FAISS_CCD_STRESS_SCALE+x}" ]]; then
    export FAISS_CCD_STRESS_SCALE
    echo "sanitize: FAISS_CCD_STRESS_SCALE=$FAISS_CCD_STRESS_SCALE"
fi

# ThreadSanitizer in GCC 12 cannot map its shadow memory when the kernel
# randomizes mmap with more than 28 bits ("unexpected memory mapping"). Run
# the build (test discovery runs the binary) and the tests with ASLR off
# there, when the system lets us.
run=()
if [[ "$mode" == thread ]]; then
    rnd_bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0)
    if [[ "$rnd_bits" -gt 28 ]]; then
        if setarch "$(uname -m)" -R true 2>/dev/null; then
            echo "sanitize: vm.mmap_rnd_bits=$rnd_bits; running with ASLR off"
            run=(setarch "$(uname -m)" -R)
        else
            echo "sanitize: warning: vm.mmap_rnd_bits=$rnd_bits and ASLR cannot" \
                 "be turned off here; TSan may fail to start" \
                 "(fix: sysctl vm.mmap_rnd_bits=28)" >&2
        fi
    fi
fi

jobs=${FAISS_CCD_JOBS:-$(nproc)}

if [[ $glue -eq 1 ]]; then
    if [[ "$mode" == thread ]]; then
        # What libstdc++ (not instrumented) and stock FAISS do that TSan
        # cannot see ordered; each entry says why.
        export TSAN_OPTIONS="$TSAN_OPTIONS suppressions=$repo/tests/tsan.supp"
    fi
    export OMP_NUM_THREADS=1
    export FAISS_CCD_SOAK_S="${FAISS_CCD_SOAK_S:-2}"
    cmake -S . -B "$build_dir-glue" \
        -DCMAKE_BUILD_TYPE=Release \
        -DFAISS_CCD_SANITIZE="$mode" \
        -DFAISS_CCD_BUILD_BENCHS=OFF \
        -DFAISS_CCD_BUILD_TESTS=ON \
        -DFAISS_CCD_BUILD_C_API=OFF \
        -DFAISS_CCD_ENABLE_PYTHON=OFF
    "${run[@]}" cmake --build "$build_dir-glue" -j "$jobs" --target faiss_tests
    # ModeCCD.ThroughPreTransformAndRefine trains OPQ, single-threaded
    # FAISS code that takes 4 minutes under TSan and runs nothing of ours
    # that the other ModeCCD tests do not (ASan+UBSan runs it).
    "${run[@]}" ctest --test-dir "$build_dir-glue" -L faiss \
        -E 'ModeCCD\.ThroughPreTransformAndRefine' --output-on-failure "$@"
    exit
fi

cmake -S . -B "$build_dir" \
    -DFAISS_CCD_SANITIZE="$mode" \
    -DFAISS_CCD_WITH_FAISS=OFF \
    -DFAISS_CCD_BUILD_BENCHS=OFF \
    -DFAISS_CCD_BUILD_TESTS=ON
"${run[@]}" cmake --build "$build_dir" -j "$jobs" --target scheduler_tests
"${run[@]}" ctest --test-dir "$build_dir" -L scheduler --output-on-failure "$@"
