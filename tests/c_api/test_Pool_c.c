/**
 * test_Pool_c.c: FaissCcdPool: every topology and policy, its description
 * and counters, the topology from FAISS_CCD_TOPOLOGY, the process's
 * default pool, and every error path (code, message, untouched output).
 */

#include "c_test.h"

#include <faiss_ccd/c_api/IndexIVFCCD_c.h>

static float* xb;
static float* xq;

static void check_stats(const FaissCcdPool* pool, int expected_workers) {
    /* A search returns once its tasks are done; the pool counts them a
     * moment later. Once idle, the counters are stable. */
    CHECK_OK(faiss_ccd_Pool_wait_idle(pool));
    FaissCcdPoolStats st;
    CHECK_OK(faiss_ccd_Pool_stats(pool, &st));
    CHECK(st.num_workers == expected_workers);
    CHECK(st.callers + st.tasks_run > 0);
    CHECK(st.uncaught_exceptions == 0);
    CHECK(st.cross_ccd_steal_ratio >= 0.0 && st.cross_ccd_steal_ratio <= 1.0);
    /* Parks may still grow as workers go to sleep. */
    uint64_t run = 0, local = 0, intra = 0, cross = 0;
    for (int w = 0; w < expected_workers; w++) {
        FaissCcdWorkerStats ws;
        CHECK_OK(faiss_ccd_Pool_worker_stats(pool, w, &ws));
        CHECK(ws.worker == w);
        CHECK(ws.ccd >= 0);
        run += ws.tasks_run;
        local += ws.local_pops;
        intra += ws.intra_ccd_steals;
        cross += ws.cross_ccd_steals;
    }
    CHECK(run == st.tasks_run);
    CHECK(local == st.local_pops);
    CHECK(intra == st.intra_ccd_steals);
    CHECK(cross == st.cross_ccd_steals);
    CHECK(st.tasks_run ==
          st.local_pops + st.intra_ccd_steals + st.cross_ccd_steals);
}

static void check_describe(const FaissCcdPool* pool, const char* policy) {
    int len = faiss_ccd_Pool_describe(pool, NULL, 0);
    CHECK(len > 0);
    char* full = malloc((size_t)len + 1);
    CHECK(full != NULL);
    CHECK(faiss_ccd_Pool_describe(pool, full, (size_t)len + 1) == len);
    CHECK((int)strlen(full) == len);
    CHECK(strstr(full, policy) != NULL);
    char small[5];
    CHECK(faiss_ccd_Pool_describe(pool, small, sizeof small) == len);
    CHECK(strlen(small) == 4 && strncmp(small, full, 4) == 0);
    free(full);
}

/* Every shape and policy runs an explicit IVF search, counted. */
static void test_shapes_and_policies(void) {
    static const char* topologies[] = {"1x1", "2x1", "2x2"};
    static const int workers[] = {1, 2, 4};
    static const int ccds[] = {1, 2, 2};
    static const char* policies[] = {"ccd", "flat", "rr"};
    FaissIndex* index = make_index("IVF16,Flat", xb);
    set_nprobe(index, 4);
    float d[NQ * 5];
    faiss_ccd_idx_t l[NQ * 5];
    for (int t = 0; t < 3; t++) {
        for (int p = 0; p < 3; p++) {
            FaissCcdPool* pool = NULL;
            CHECK_OK(faiss_ccd_Pool_new(&pool, topologies[t], policies[p]));
            int nw = 0, nc = 0;
            CHECK_OK(faiss_ccd_Pool_num_workers(pool, &nw));
            CHECK_OK(faiss_ccd_Pool_num_ccds(pool, &nc));
            CHECK(nw == workers[t] && nc == ccds[t]);
            check_describe(pool, policies[p]);
            FaissCcdIndexIVFCCD* ivfccd = NULL;
            CHECK_OK(faiss_ccd_IndexIVFCCD_new(&ivfccd, index, pool, 7));
            CHECK_OK(faiss_ccd_IndexIVFCCD_search(ivfccd, NQ, xq, 5, d, l));
            check_stats(pool, workers[t]);
            faiss_ccd_IndexIVFCCD_free(ivfccd);
            faiss_ccd_Pool_free(pool);
        }
    }
    faiss_Index_free(index);
}

/* The default pool is what IVF indexes in the CCD mode search through:
 * replacing it moves their searches to the new one (counted as served:
 * searches its callers ran, alone or with helper tasks, plus tasks). */
static void test_default_pool(void) {
    FaissIndex* index = make_index("IVF16,Flat", xb);
    set_nprobe(index, 4);
    FaissIndexIVF* ivf = faiss_IndexIVF_cast(index);
    faiss_IndexIVF_set_parallel_mode(ivf, FAISS_PARALLEL_MODE_CCD);
    float d[NQ * 5];
    faiss_ccd_idx_t l[NQ * 5];

    FaissCcdPool* mine = NULL;
    CHECK_OK(faiss_ccd_Pool_new(&mine, "2x1", "ccd"));
    CHECK_OK(faiss_ccd_set_default_pool(mine));
    const uint64_t before = pool_served(mine);
    CHECK_OK(faiss_Index_search(index, NQ, xq, 5, d, l));
    CHECK(pool_served(mine) > before);

    FaissCcdPool* dflt = NULL;
    CHECK_OK(faiss_ccd_get_default_pool(&dflt));
    int nw = 0;
    CHECK_OK(faiss_ccd_Pool_num_workers(dflt, &nw));
    CHECK(nw == 2);
    CHECK(pool_served(dflt) == pool_served(mine)); /* the same pool */
    faiss_ccd_Pool_free(dflt);

    /* Back to a fresh default: ours is no longer used. */
    CHECK_OK(faiss_ccd_set_default_pool(NULL));
    const uint64_t after = pool_served(mine);
    CHECK_OK(faiss_Index_search(index, NQ, xq, 5, d, l));
    CHECK(pool_served(mine) == after);
    CHECK_OK(faiss_ccd_get_default_pool(&dflt));
    CHECK(pool_served(dflt) > 0);
    faiss_ccd_Pool_free(dflt);
    faiss_ccd_Pool_free(mine);
    CHECK_NULL_ARG("p_pool", faiss_ccd_get_default_pool, (NULL));
    faiss_Index_free(index);
}

static void test_errors(void) {
    FaissCcdPool* pool = (FaissCcdPool*)&lcg_state; /* not NULL */
    CHECK_NULL_ARG("p_pool", faiss_ccd_Pool_new, (NULL, "1x1", "ccd"));
    CHECK_INVALID("bogus", faiss_ccd_Pool_new, (&pool, "bogus", "ccd"));
    CHECK(pool == NULL);
    pool = (FaissCcdPool*)&lcg_state;
    CHECK_INVALID("0x2", faiss_ccd_Pool_new, (&pool, "0x2", NULL));
    CHECK(pool == NULL);
    pool = (FaissCcdPool*)&lcg_state;
    CHECK_INVALID("fast", faiss_ccd_Pool_new, (&pool, "1x1", "fast"));
    CHECK(pool == NULL);

    CHECK_OK(faiss_ccd_Pool_new(&pool, "2x1", NULL));
    int n = 0;
    char buf[16];
    FaissCcdPoolStats st;
    FaissCcdWorkerStats ws;
    CHECK_NULL_ARG("pool", faiss_ccd_Pool_num_workers, (NULL, &n));
    CHECK_NULL_ARG("p_num_workers", faiss_ccd_Pool_num_workers, (pool, NULL));
    CHECK_NULL_ARG("pool", faiss_ccd_Pool_num_ccds, (NULL, &n));
    CHECK_NULL_ARG("p_num_ccds", faiss_ccd_Pool_num_ccds, (pool, NULL));
    CHECK_NULL_ARG("pool", faiss_ccd_Pool_describe, (NULL, buf, sizeof buf));
    CHECK_NULL_ARG("buf", faiss_ccd_Pool_describe, (pool, NULL, 10));
    CHECK_NULL_ARG("pool", faiss_ccd_Pool_stats, (NULL, &st));
    CHECK_NULL_ARG("stats", faiss_ccd_Pool_stats, (pool, NULL));
    CHECK_NULL_ARG("pool", faiss_ccd_Pool_worker_stats, (NULL, 0, &ws));
    CHECK_NULL_ARG("stats", faiss_ccd_Pool_worker_stats, (pool, 0, NULL));
    CHECK_NULL_ARG("pool", faiss_ccd_Pool_wait_idle, (NULL));
    CHECK_INVALID(
            "worker 2 out of range",
            faiss_ccd_Pool_worker_stats,
            (pool, 2, &ws));
    CHECK_INVALID(
            "worker -1 out of range",
            faiss_ccd_Pool_worker_stats,
            (pool, -1, &ws));
    CHECK_OK(faiss_ccd_Pool_worker_stats(pool, 1, &ws));
    CHECK(ws.worker == 1 && ws.ccd == 1);
    faiss_ccd_Pool_free(pool);
    faiss_ccd_Pool_free(NULL);

    /* topology NULL, "" and "auto" read FAISS_CCD_TOPOLOGY (as Python's
       Pool(topology="auto") does); a spec ignores it. */
    CHECK(setenv("FAISS_CCD_TOPOLOGY", "3x1", 1) == 0);
    const char* automatic[] = {NULL, "", "auto"};
    for (int a = 0; a < 3; a++) {
        CHECK_OK(faiss_ccd_Pool_new(&pool, automatic[a], "rr"));
        CHECK_OK(faiss_ccd_Pool_num_ccds(pool, &n));
        CHECK(n == 3);
        faiss_ccd_Pool_free(pool);
    }
    CHECK(setenv("FAISS_CCD_TOPOLOGY", "bogus", 1) == 0);
    CHECK_INVALID(
            "FAISS_CCD_TOPOLOGY",
            faiss_ccd_Pool_new,
            (&pool, NULL, NULL));
    CHECK_INVALID(
            "FAISS_CCD_TOPOLOGY",
            faiss_ccd_Pool_new,
            (&pool, "auto", NULL));
    CHECK_OK(faiss_ccd_Pool_new(&pool, "1x1", NULL));
    faiss_ccd_Pool_free(pool);
    CHECK(unsetenv("FAISS_CCD_TOPOLOGY") == 0);
}

int main(void) {
    xb = random_vectors(NB, 12345);
    xq = random_vectors(NQ, 777);
    test_shapes_and_policies();
    printf("3 topologies x 3 policies, stats, describe: ok\n");
    test_default_pool();
    printf("default pool: ok\n");
    test_errors();
    printf("pool errors: ok\n");
    free(xb);
    free(xq);
    report_bad_input_cases("test_Pool_c");
    return 0;
}
