/**
 * CountingDistanceComputer: a DistanceComputer that forwards to another one
 * and counts the stored vectors it was asked about.
 *
 * HNSWTables wraps every query's distance computer in one, so that a query
 * can report exactly how many graph nodes it touched. What is counted:
 *
 *  - `ndis`: calls to operator()(i), i.e. distances between the query and
 *    stored vector i. Each reads vector i's code from the storage, and the
 *    graph search then reads the neighbour list of the nodes it expands.
 *    On level 0 HNSW marks nodes visited, so each node is counted at most
 *    once there; the greedy descent of the upper levels has no visited
 *    table, so a node present on several levels may be counted once per
 *    level it was evaluated on (upper levels hold ~1/M of the nodes: a few
 *    per cent of the total).
 *  - `nsymmetric`: calls to symmetric_dis(i, j) (two stored vectors). HNSW
 *    search makes none; index construction does.
 *
 * `negate`: return minus the wrapped distances, as FAISS 1.7.3's
 * storage_distance_computer() does for METRIC_INNER_PRODUCT so that HNSW
 * can always search for the smallest value.
 *
 * Newer FAISS (>= 1.7.4) adds distances_batch_4(); a port to it must count
 * four there. FAISS 1.7.3, the version this project builds on, has no such
 * method: every distance goes through operator().
 *
 * Thread contract: like any DistanceComputer, one thread at a time; the
 * counters are plain integers.
 */

#pragma once

#include <faiss/impl/DistanceComputer.h>

#include <cstdint>

namespace faiss {
namespace ccd {

struct CountingDistanceComputer : DistanceComputer {
    DistanceComputer* base;  ///< the wrapped computer, not owned
    bool negate;             ///< return -distance
    uint64_t ndis = 0;       ///< operator() calls: query-to-vector distances
    uint64_t nsymmetric = 0; ///< symmetric_dis() calls

    explicit CountingDistanceComputer(
            DistanceComputer* base_in,
            bool negate_in = false)
            : base(base_in), negate(negate_in) {}

    void set_query(const float* x) override {
        base->set_query(x);
    }

    float operator()(idx_t i) override {
        ndis++;
        const float dis = (*base)(i);
        return negate ? -dis : dis;
    }

    float symmetric_dis(idx_t i, idx_t j) override {
        nsymmetric++;
        const float dis = base->symmetric_dis(i, j);
        return negate ? -dis : dis;
    }
};

} // namespace ccd
} // namespace faiss
