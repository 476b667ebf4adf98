#!/usr/bin/env bash
# run.sh cpp MODE FAISS_TEST_BINARY [GTEST_ARGS...]
# run.sh python MODE FAISS_TESTS_DIR PYTHON [all | FILE...]
#
# FAISS's own suites against the fork. MODE is "stock" (as FAISS ships
# them) or "ccd" (FAISS_CCD_PARALLEL_MODE=ccd: every IVF index made or
# loaded starts in PARALLEL_MODE_CCD; FAISS_CCD_TOPOLOGY=2x1 unless set).
# Both modes skip what Debian's package skips (its GTest filter); "ccd"
# skips, besides, the tests ccd_mode_exceptions.txt (beside this script)
# lists for that suite, and only those.
#
# Python: the IVF files below by default (IVF, search parameters, I/O,
# composite and meta indexes, range search, merging, refinement), "all"
# for every test_*.py (torch's aside), or the files named. The faiss
# imported is the build's (PYTHONPATH=<build>/python, set by ctest).
set -euo pipefail

suite=$1
mode=$2
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

case "$mode" in
    stock) unset FAISS_CCD_PARALLEL_MODE ;;
    ccd)
        export FAISS_CCD_PARALLEL_MODE=ccd
        export FAISS_CCD_TOPOLOGY=${FAISS_CCD_TOPOLOGY:-2x1}
        ;;
    *) echo "run.sh: mode must be stock or ccd" >&2; exit 2 ;;
esac

# OpenBLAS on one thread, in both modes. FAISS's TSEL.IVFFSQ compares
# IndexIVF::search (mode 0: one quantizer call per OpenMP slice, each
# inside the parallel region) with ivflib::search_with_parameters (one call
# for the batch, outside it) bit for bit. With OpenBLAS's own threads the
# two calls split the GEMM differently, and on an AMD EPYC host (Dec 4) a
# last-bit difference flipped a result: the stock run failed every time,
# and passed with OPENBLAS_NUM_THREADS=1 or OMP_NUM_THREADS=1. The CCD mode
# holds OpenBLAS to one thread anyway (hold_blas_to_one_thread).
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

# exceptions SUITE: the test ids ccd_mode_exceptions.txt lists for SUITE.
exceptions() {
    [[ $mode == ccd ]] || return 0
    awk -v s="$1" '!/^#/ && $1 == s { print $2 }' "$here/ccd_mode_exceptions.txt"
}

case "$suite" in
    cpp)
        binary=$1
        shift
        filter="-MEM_LEAK.*:TEST_CPPCONTRIB_*" # debian/rules' GTEST_FILTER
        while read -r id; do
            [[ -n $id ]] && filter="$filter:$id"
        done < <(exceptions cpp)
        echo "run.sh: $mode: $binary --gtest_filter=$filter"
        exec "$binary" --gtest_filter="$filter" "$@"
        ;;
    python)
        tests=$1
        python=$2
        shift 2
        files=(test_index.py test_index_accuracy.py test_ivflib.py
               test_search_params.py test_io.py test_meta_index.py
               test_index_composite.py test_merge_index.py test_refine.py)
        if [[ ${1:-} == all ]]; then
            mapfile -t files < <(cd "$tests" && ls test_*.py)
        elif [[ $# -gt 0 ]]; then
            files=("$@")
        fi
        deselect=()
        while read -r id; do
            [[ -n $id ]] && deselect+=(--deselect "$id")
        done < <(exceptions python)
        # PYTHONPATH entries are made absolute first: after the cd below, a
        # relative one (build/python) would let Debian's faiss be imported.
        abs_path=()
        IFS=: read -r -a entries <<<"${PYTHONPATH:-}"
        for entry in "${entries[@]}"; do
            [[ -n $entry ]] && abs_path+=("$(realpath -m "$entry")")
        done
        PYTHONPATH=$(IFS=:; echo "${abs_path[*]}")
        export PYTHONPATH
        cd "$tests"
        echo "run.sh: $mode: pytest ${files[*]} (${#deselect[@]} args to deselect)"
        # After the suite: the default pool's task count, which must not be
        # zero when the CCD mode was forced (proof the searches used it).
        exec "$python" - "$mode" -q -p no:cacheprovider "${deselect[@]}" \
            "${files[@]}" <<'PY'
import sys

import numpy as np
import pytest

import faiss


class SeedNumpy:
    """Seeds NumPy's global generator before each test.

    Several of FAISS's tests draw their data from np.random unseeded, so
    each run sees new data. TestIVFPQRead.test_reader then compares search
    with and without the precomputed table, two float sums of the same
    terms in another order, bit for bit: in about one run in 300 (measured
    here) two near ties swap (CI, Dec 4: 2 of 10000 ids, in stock mode).
    A fixed seed makes
    every run of every test see the same data; no test is skipped."""

    @staticmethod
    def pytest_runtest_setup(item):
        np.random.seed(1234)


mode, args = sys.argv[1], sys.argv[2:]
if not hasattr(faiss, "ccd"):
    sys.exit(f"run.sh: {faiss.__file__} is not the fork's faiss (no faiss.ccd);"
             " set PYTHONPATH to <build>/python")
print(f"run.sh: faiss from {faiss.__file__}")
status = pytest.main(args, plugins=[SeedNumpy()])
tasks = faiss.ccd.get_default_pool().stats()["tasks_run"]
print(f"run.sh: the default pool ran {tasks} tasks")
if mode == "ccd" and tasks == 0:
    print("run.sh: PARALLEL_MODE_CCD was forced, yet no search went "
          "through the pool")
    status = status or 1
sys.exit(int(status))
PY
        ;;
    *) echo "run.sh: suite must be cpp or python" >&2; exit 2 ;;
esac
