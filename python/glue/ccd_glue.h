/**
 * ccd_glue.h: the C++ helpers behind faiss_ccd.swig's extensions (the
 * faiss Python module's CCD part). Nothing here touches a Python object;
 * SWIG calls them without the GIL.
 */

#pragma once

#include "Completions.h"

#include <faiss/HNSWTables.h>
#include <faiss/ccd_scheduler/Runtime.h>

#include <cstdint>
#include <string>

namespace faiss {
namespace ccd {
namespace python {

/// make_runtime: a new Runtime; topology "auto" or a spec, policy "ccd",
/// "flat" or "rr"; fifo_callers: PoolOptions::fifo_callers. Throws
/// std::invalid_argument on a bad spec, policy or period.
std::shared_ptr<Runtime> make_runtime(
        const std::string& topology,
        const std::string& policy,
        bool monitor,
        double monitor_period_s,
        bool fifo_callers);

/// stats_json: a JSON object with the pool's counters (per worker and
/// totals), steal ratios, tasks per CCD, the mapping epoch and, with a
/// monitor, its per-CCD traffic, imbalance and re-maps.
std::string stats_json(const Runtime& runtime);

/// submit_batch: tables.search_batch_async, reporting to `completions`
/// under `ticket` (ok, or the first error's message). Input errors throw
/// and withdraw the ticket.
void submit_batch(
        const HNSWTables& tables,
        uint32_t table_id,
        Index::idx_t n,
        const float* x,
        int d,
        Index::idx_t k,
        float* distances,
        Index::idx_t* labels,
        const SearchParametersHNSW* params,
        int64_t ticket,
        Completions& completions);

} // namespace python
} // namespace ccd
} // namespace faiss
