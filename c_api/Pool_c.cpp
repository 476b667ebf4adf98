/**
 * Pool_c.cpp: FaissCcdPool, a faiss::ccd::Pool held by shared_ptr.
 */

#include "Pool_c.h"
#include "handles_impl.h"
#include "macros_impl.h"

#include <faiss/ccd_scheduler/PoolStats.h>
#include <faiss/ccd_scheduler/StealPolicy.h>
#include <faiss/ccd_scheduler/Topology.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

void copy_worker_stats(
        const faiss::ccd::WorkerStats& in,
        FaissCcdWorkerStats* out) {
    out->worker = in.worker;
    out->ccd = in.ccd;
    out->cpu = in.cpu;
    out->tasks_run = in.tasks_run;
    out->local_pops = in.local_pops;
    out->intra_ccd_steals = in.intra_ccd_steals;
    out->cross_ccd_steals = in.cross_ccd_steals;
    out->parks = in.parks;
    out->uncaught_exceptions = in.uncaught_exceptions;
    out->queued = in.queued;
}

} // namespace

extern "C" {

int faiss_ccd_Pool_new(
        FaissCcdPool** p_pool,
        const char* topology,
        const char* policy) {
    FAISS_CCD_C_CHECK_NOT_NULL(p_pool);
    *p_pool = nullptr;
    FAISS_CCD_C_TRY {
        faiss::ccd::RuntimeOptions options;
        options.topology = topology ? topology : "auto";
        if (policy) {
            options.policy = faiss::ccd::policy_from_name(policy);
        }
        *p_pool = new FaissCcdPool_H{faiss::ccd::Runtime::create(options)};
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_Pool_num_workers(const FaissCcdPool* pool, int* p_num_workers) {
    FAISS_CCD_C_CHECK_NOT_NULL(pool);
    FAISS_CCD_C_CHECK_NOT_NULL(p_num_workers);
    *p_num_workers = pool->runtime->pool().num_workers();
    return FAISS_CCD_OK;
}

int faiss_ccd_Pool_num_ccds(const FaissCcdPool* pool, int* p_num_ccds) {
    FAISS_CCD_C_CHECK_NOT_NULL(pool);
    FAISS_CCD_C_CHECK_NOT_NULL(p_num_ccds);
    *p_num_ccds = pool->runtime->pool().topology().num_ccds();
    return FAISS_CCD_OK;
}

int faiss_ccd_Pool_describe(
        const FaissCcdPool* pool,
        char* buf,
        size_t buf_size) {
    FAISS_CCD_C_CHECK_NOT_NULL(pool);
    if (buf_size > 0) {
        FAISS_CCD_C_CHECK_NOT_NULL(buf);
    }
    FAISS_CCD_C_TRY {
        std::string line = pool->runtime->pool().topology().describe() +
                ", policy " +
                faiss::ccd::policy_name(pool->runtime->pool().policy());
        if (line.size() > size_t(INT_MAX)) {
            line.resize(INT_MAX);
        }
        if (buf_size > 0) {
            std::snprintf(buf, buf_size, "%s", line.c_str());
        }
        return int(line.size());
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_Pool_stats(const FaissCcdPool* pool, FaissCcdPoolStats* stats) {
    FAISS_CCD_C_CHECK_NOT_NULL(pool);
    FAISS_CCD_C_CHECK_NOT_NULL(stats);
    FAISS_CCD_C_TRY {
        faiss::ccd::PoolStats s = pool->runtime->pool().stats();
        FaissCcdPoolStats out = {};
        out.tasks_run = s.tasks_run();
        out.local_pops = s.local_pops();
        out.intra_ccd_steals = s.intra_ccd_steals();
        out.cross_ccd_steals = s.cross_ccd_steals();
        out.parks = s.parks();
        for (const faiss::ccd::WorkerStats& w : s.workers) {
            out.uncaught_exceptions += w.uncaught_exceptions;
        }
        out.cross_ccd_steal_ratio = s.cross_ccd_steal_ratio();
        out.mapping_epoch = s.mapping_epoch;
        out.num_workers = int(s.workers.size());
        out.callers = s.callers;
        *stats = out;
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_Pool_worker_stats(
        const FaissCcdPool* pool,
        int worker,
        FaissCcdWorkerStats* stats) {
    FAISS_CCD_C_CHECK_NOT_NULL(pool);
    FAISS_CCD_C_CHECK_NOT_NULL(stats);
    const int nw = pool->runtime->pool().num_workers();
    FAISS_CCD_C_CHECK_ARG(
            worker >= 0 && worker < nw,
            "worker %d out of range [0, %d)",
            worker,
            nw);
    FAISS_CCD_C_TRY {
        faiss::ccd::PoolStats s = pool->runtime->pool().stats();
        copy_worker_stats(s.workers.at(worker), stats);
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_Pool_wait_idle(const FaissCcdPool* pool) {
    FAISS_CCD_C_CHECK_NOT_NULL(pool);
    FAISS_CCD_C_TRY {
        pool->runtime->pool().wait_idle();
    }
    FAISS_CCD_C_CATCH_ALL;
}

void faiss_ccd_Pool_free(FaissCcdPool* pool) {
    delete pool;
}

int faiss_ccd_get_default_pool(FaissCcdPool** p_pool) {
    FAISS_CCD_C_CHECK_NOT_NULL(p_pool);
    *p_pool = nullptr;
    FAISS_CCD_C_TRY {
        *p_pool = new FaissCcdPool_H{faiss::ccd::Runtime::get_default()};
    }
    FAISS_CCD_C_CATCH_ALL;
}

int faiss_ccd_set_default_pool(const FaissCcdPool* pool) {
    FAISS_CCD_C_TRY {
        faiss::ccd::Runtime::set_default(pool ? pool->runtime : nullptr);
    }
    FAISS_CCD_C_CATCH_ALL;
}

} // extern "C"
