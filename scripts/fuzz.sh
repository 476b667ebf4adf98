#!/usr/bin/env bash
# fuzz.sh [SECONDS_PER_TARGET]
#
# Fuzzes with libFuzzer (the Debian release's own clang, named in
# scripts/debian_release.sh; ASan + UBSan) the topology spec
# parser, the scheduler's configuration checks, the search parameters and
# parallel modes, and the C API's argument checks: the targets in
# tests/fuzz/ (each file's header says what it checks). They are built with
# clang++ into build-fuzz/ from tests/fuzz/CMakeLists.txt, a project of its
# own (the main build stays GCC-only), and link FAISS from the main build's
# archives ($FAISS_CCD_BUILD_DIR, default build/), which are built first
# when missing.
#
# Each target runs SECONDS_PER_TARGET seconds (default 20; CI runs the
# default, a longer run is `scripts/fuzz.sh 600`) over a copy of its corpus
# tests/fuzz/corpus/<target>/, so that the repository's corpus is not
# flooded: new inputs and artifacts (crash-, leak-, timeout-, oom-) stay in
# build-fuzz/runs/<target>/. Prints each target's executions and findings;
# exits non-zero on any crash, leak, timeout or out-of-memory.
#
# Bugs found before and not fixed yet are kept in tests/fuzz/crashers/
# (README.md there), and the targets skip the inputs that reach them. Each
# is replayed here: skipped, it must pass; with FAISS_CCD_FUZZ_KNOWN=<name>
# it is reported as still reproducing, or as fixed (then remove its skip).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

seconds=${1:-20}
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 [SECONDS_PER_TARGET]" >&2
    exit 2
fi
jobs=${FAISS_CCD_JOBS:-$(nproc)}
main_build=${FAISS_CCD_BUILD_DIR:-build}
fuzz_build=build-fuzz
targets=(fuzz_topology_spec fuzz_scheduler_config fuzz_search_params fuzz_c_api)

# shellcheck source=scripts/debian_release.sh
source scripts/debian_release.sh
./scripts/install_deps.sh "clang-$fuzz_clang_version" \
    "libclang-rt-$fuzz_clang_version-dev" cmake pkg-config \
    libhwloc-dev libopenblas-dev liblapack-dev
echo "fuzz: clang++-$fuzz_clang_version (Debian $debian_version_text)"

if [[ ! -f "$main_build/faiss/faiss/libfaiss_avx2.a" ||
      ! -f "$main_build/faiss/c_api/libfaiss_c.a" ]]; then
    echo "fuzz: no FAISS archives in $main_build/; building them"
    ./scripts/install_deps.sh
    cmake -S . -B "$main_build" -DCMAKE_BUILD_TYPE=Release
    cmake --build "$main_build" -j "$jobs" --target faiss_avx2 faiss_c
fi

cmake -S tests/fuzz -B "$fuzz_build" -DCMAKE_CXX_COMPILER="clang++-$fuzz_clang_version" \
    -DFAISS_CCD_BUILD_DIR="$(cd "$main_build" && pwd)"
cmake --build "$fuzz_build" -j "$jobs"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
unset FAISS_CCD_FUZZ_KNOWN

failed=0
summary=()
start_all=$SECONDS
for t in "${targets[@]}"; do
    work=$fuzz_build/runs/$t
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp tests/fuzz/corpus/"$t"/* "$work/corpus/"
    dict=()
    if [[ -f tests/fuzz/$t.dict ]]; then
        dict=(-dict="tests/fuzz/$t.dict")
    fi
    echo
    echo "== $t: ${seconds}s"
    start=$SECONDS
    rc=0
    "$fuzz_build/$t" -max_total_time="$seconds" -timeout=25 \
        -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "${dict[@]}" "$work/corpus" \
        >"$work/log" 2>&1 || rc=$?
    execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$work/log")
    mapfile -t found < <(ls "$work/artifacts")
    if [[ $rc -eq 0 && ${#found[@]} -eq 0 ]]; then
        status="ok"
    else
        status="FAILED (exit $rc): ${found[*]:-no artifact}"
        failed=1
        grep -E "ERROR|runtime error|property failed|SUMMARY" "$work/log" |
            head -20 || true
        echo "   log: $work/log; artifacts: $work/artifacts/"
        echo "   reproduce: $fuzz_build/$t $work/artifacts/<file>"
    fi
    line=$(printf '%-24s %10s execs %5ds  %s' "$t" "${execs:-?}" \
        $((SECONDS - start)) "$status")
    echo "$line"
    summary+=("$line")
done

echo
echo "== known bugs (tests/fuzz/crashers/)"
shopt -s nullglob
for input in tests/fuzz/crashers/*/*; do
    t=$(basename "$(dirname "$input")")
    name=$(basename "$input")
    if ! "$fuzz_build/$t" "$input" >"$fuzz_build/runs/known.log" 2>&1; then
        echo "$t/$name: FAILED even with the bug skipped" \
             "(log: $fuzz_build/runs/known.log)"
        failed=1
    elif FAISS_CCD_FUZZ_KNOWN=$name "$fuzz_build/$t" "$input" \
            >/dev/null 2>&1; then
        echo "$t/$name: no longer reproduces; if fixed, remove its" \
             "skip_known() from tests/fuzz/$t.cpp and move the input to" \
             "tests/fuzz/corpus/$t/"
    else
        echo "$t/$name: still reproduces (skipped while fuzzing)"
    fi
done

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
if [[ $failed -ne 0 ]]; then
    echo "fuzz: FAILED ($((SECONDS - start_all))s)"
    exit 1
fi
echo "fuzz: ok, ${#targets[@]} targets, ${seconds}s each" \
     "($((SECONDS - start_all))s)"
