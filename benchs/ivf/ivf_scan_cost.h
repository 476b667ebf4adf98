/**
 * ivf_scan_cost.h: what one query's scan costs on one thread when its
 * probed lists are scanned the way stock FAISS does it and the ways a
 * task-per-list search does it. No pool, no threads: only the scan, so the
 * difference is the price of the task decomposition itself.
 *
 * Variants, each over the same queries, run in turn query by query (so
 * machine noise hits them alike), with FAISS's public scanner API:
 *   one_heap        one top-k heap per query kept across its lists (stock
 *                   IndexIVF::search_preassigned)
 *   task_per_list   a fresh top-k heap per probed list, merged into the
 *                   query's heap
 *   task_per_chunk  the same per chunk of a split list (IndexIVFCCD up to
 *                   commit a5e9104..82d8746)
 *   seeded_chunk    task_per_chunk, each task's heap seeded with the
 *                   query's k-th distance so far, so the scanner rejects
 *                   what cannot enter the query's top k (IndexIVFCCD since
 *                   commit 7665db7)
 * L2 metric only (the data sets of bench_ivf).
 *
 * Also the coarse quantizer's CPU per query, one query per call for the
 * nq queries (what a client sending single queries pays) and batch_nq
 * queries in one call (what a batch pays: FAISS uses BLAS from 20 queries
 * on), as process CPU time (BLAS threads included).
 */

#pragma once

#include <faiss/IndexIVF.h>
#include <faiss/IndexIVFCCD.h>

#include <string>
#include <vector>

namespace bench {
namespace ivf {

struct ScanCost {
    size_t queries = 0;
    int k = 0;
    std::vector<std::string> variants;
    std::vector<double> ms_per_query;    ///< per variant, one thread
    std::vector<double> tasks_per_query; ///< heaps merged per query
    size_t distance_mismatches = 0;      ///< queries where a variant differs
    double coarse_ms_single = 0; ///< quantizer CPU per query, one per call
    double coarse_ms_batch = 0;  ///< quantizer CPU per query, one call
    size_t coarse_batch_nq = 0;  ///< queries in that call
};

ScanCost measure_scan_cost(
        const faiss::IndexIVF& index,
        const faiss::ccd::IndexIVFCCD& ccd,
        size_t nq,
        size_t batch_nq,
        const float* queries,
        int k);

} // namespace ivf
} // namespace bench
