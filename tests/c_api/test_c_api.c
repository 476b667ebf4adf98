/**
 * test_c_api.c: the faiss-ccd C API from a plain C11 program.
 *
 * Happy paths (IVF through IndexIVFCCD, HNSW through HNSWTables, pools of
 * every policy, stats) compared with FAISS's own search; every error path
 * (NULL arguments, bad values, FAISS errors) checked for its code, its
 * message and untouched output handles; the per-thread last error; handles
 * freed in any order. Usage: test_c_api [directory for a temporary file].
 * Exits non-zero at the first failed check.
 */

#define _POSIX_C_SOURCE 200809L

#include <faiss_ccd/c_api/HNSWTables_c.h>
#include <faiss_ccd/c_api/IndexIVFCCD_c.h>
#include <faiss_ccd/c_api/Index_c.h>
#include <faiss_ccd/c_api/Pool_c.h>
#include <faiss_ccd/c_api/error_c.h>

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ checking */

static void fail_at(const char* file, int line, const char* what) {
    fprintf(stderr,
            "%s:%d: CHECK failed: %s\n  last error: \"%s\"\n",
            file,
            line,
            what,
            faiss_ccd_get_last_error());
    exit(1);
}

#define CHECK(cond)                             \
    do {                                        \
        if (!(cond)) {                          \
            fail_at(__FILE__, __LINE__, #cond); \
        }                                       \
    } while (0)

#define CHECK_OK(call) CHECK((call) == FAISS_CCD_OK)

/* A failure recorded before each checked call, so that a message left over
 * from an earlier call cannot pass for the new one. */
#define SENTINEL_SPEC "sentinel-spec"

static void plant_sentinel(void) {
    FaissCcdPool* pool = NULL;
    if (faiss_ccd_Pool_new(&pool, SENTINEL_SPEC, NULL) == FAISS_CCD_OK ||
        strstr(faiss_ccd_get_last_error(), SENTINEL_SPEC) == NULL) {
        fail_at(__FILE__, __LINE__, "planting the sentinel error");
    }
}

/* check_error: rc is `code`; the message is fresh, names `func` and
 * contains `needle`. */
static void check_error(
        const char* file,
        int line,
        int rc,
        int code,
        const char* func,
        const char* needle) {
    const char* msg = faiss_ccd_get_last_error();
    char what[512];
    if (rc != code) {
        snprintf(
                what,
                sizeof what,
                "%s returned %d (%s), expected %s",
                func,
                rc,
                faiss_ccd_error_name(rc),
                faiss_ccd_error_name(code));
        fail_at(file, line, what);
    }
    if (msg == NULL || msg[0] == '\0' || strstr(msg, SENTINEL_SPEC) ||
        strstr(msg, func) == NULL || strstr(msg, needle) == NULL) {
        snprintf(
                what,
                sizeof what,
                "%s: message should name it and contain \"%s\"",
                func,
                needle);
        fail_at(file, line, what);
    }
}

/* CHECK_ERR(code, needle, func, (args)): func(args) fails with `code`. */
#define CHECK_ERR(code, needle, func, args)                        \
    do {                                                           \
        plant_sentinel();                                          \
        int rc_ = func args;                                       \
        check_error(__FILE__, __LINE__, rc_, code, #func, needle); \
    } while (0)

#define CHECK_NULL_ARG(name, func, args) \
    CHECK_ERR(FAISS_CCD_ERROR_NULL_ARGUMENT, "'" name "'", func, args)
#define CHECK_INVALID(needle, func, args) \
    CHECK_ERR(FAISS_CCD_ERROR_INVALID_ARGUMENT, needle, func, args)
#define CHECK_NOT_FOUND(needle, func, args) \
    CHECK_ERR(FAISS_CCD_ERROR_NOT_FOUND, needle, func, args)

/* ----------------------------------------------------------------- data */

enum { D = 16, NB = 2000, NQ = 50 };

static uint64_t lcg_state;

static float lcg_float(void) {
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(lcg_state >> 40) / (double)(1ULL << 24));
}

static float* random_vectors(size_t n, uint64_t seed) {
    float* x = malloc(sizeof(float) * n * D);
    CHECK(x != NULL);
    lcg_state = seed;
    for (size_t i = 0; i < n * D; i++) {
        x[i] = lcg_float();
    }
    return x;
}

static float* xb;
static float* xq;

/* The results of two searches agree: same labels, distances within 1e-5
 * relative. */
static void check_same_results(
        size_t n,
        const float* d1,
        const faiss_ccd_idx_t* l1,
        const float* d2,
        const faiss_ccd_idx_t* l2) {
    for (size_t i = 0; i < n; i++) {
        CHECK(l1[i] == l2[i]);
        CHECK(fabsf(d1[i] - d2[i]) <= 1e-5f * fmaxf(1.0f, fabsf(d1[i])));
    }
}

static FaissCcdIndex* make_trained_ivf(void) {
    FaissCcdIndex* index = NULL;
    CHECK_OK(faiss_ccd_index_factory(
            &index,
            D,
            "IVF16,Flat",
            FAISS_CCD_METRIC_L2));
    CHECK_OK(faiss_ccd_Index_train(index, NB, xb));
    CHECK_OK(faiss_ccd_Index_add(index, NB, xb));
    return index;
}

static FaissCcdIndex* make_hnsw(const char* description, int ef_search) {
    FaissCcdIndex* index = NULL;
    CHECK_OK(faiss_ccd_index_factory(
            &index,
            D,
            description,
            FAISS_CCD_METRIC_L2));
    CHECK_OK(faiss_ccd_Index_add(index, NB, xb));
    CHECK_OK(faiss_ccd_Index_set_ef_search(index, ef_search));
    return index;
}

/* ------------------------------------------------------------ happy paths */

static void test_error_names(void) {
    const int codes[] = {
            FAISS_CCD_OK,
            FAISS_CCD_ERROR_NULL_ARGUMENT,
            FAISS_CCD_ERROR_INVALID_ARGUMENT,
            FAISS_CCD_ERROR_NOT_FOUND,
            FAISS_CCD_ERROR_FAISS_EXCEPTION,
            FAISS_CCD_ERROR_STD_EXCEPTION,
            FAISS_CCD_ERROR_OUT_OF_MEMORY,
            FAISS_CCD_ERROR_UNKNOWN};
    const size_t n = sizeof codes / sizeof codes[0];
    CHECK(codes[0] == 0);
    for (size_t i = 0; i < n; i++) {
        CHECK(i == 0 || codes[i] < 0);
        const char* name = faiss_ccd_error_name(codes[i]);
        CHECK(strncmp(name, "FAISS_CCD_", 10) == 0);
        for (size_t j = 0; j < i; j++) {
            CHECK(codes[i] != codes[j]);
            CHECK(strcmp(name, faiss_ccd_error_name(codes[j])) != 0);
        }
    }
    CHECK(strcmp(faiss_ccd_error_name(12345), "unknown error code") == 0);
    CHECK(strcmp(faiss_ccd_error_name(FAISS_CCD_ERROR_NOT_FOUND),
                 "FAISS_CCD_ERROR_NOT_FOUND") == 0);
}

static void test_index_basics(const char* tmp_dir) {
    FaissCcdIndex* index = NULL;
    CHECK_OK(faiss_ccd_index_factory(
            &index,
            D,
            "IVF16,Flat",
            FAISS_CCD_METRIC_L2));
    int d = 0, trained = -1;
    faiss_ccd_idx_t ntotal = -1;
    CHECK_OK(faiss_ccd_Index_d(index, &d));
    CHECK(d == D);
    CHECK_OK(faiss_ccd_Index_is_trained(index, &trained));
    CHECK(trained == 0);

    /* Searching an untrained IVF, directly or through a pool. */
    float dist[10];
    faiss_ccd_idx_t lab[10];
    CHECK_INVALID(
            "not trained",
            faiss_ccd_Index_search,
            (index, 1, xq, 10, dist, lab));
    FaissCcdPool* pool = NULL;
    CHECK_OK(faiss_ccd_Pool_new(&pool, "1x1", NULL));
    FaissCcdIndexIVFCCD* ivfccd = NULL;
    CHECK_OK(faiss_ccd_IndexIVFCCD_new(&ivfccd, index, pool, 0));
    CHECK_INVALID(
            "not trained",
            faiss_ccd_IndexIVFCCD_search,
            (ivfccd, 1, xq, 10, dist, lab));

    CHECK_OK(faiss_ccd_Index_train(index, NB, xb));
    CHECK_OK(faiss_ccd_Index_add(index, NB, xb));
    CHECK_OK(faiss_ccd_Index_is_trained(index, &trained));
    CHECK(trained == 1);
    CHECK_OK(faiss_ccd_Index_ntotal(index, &ntotal));
    CHECK(ntotal == NB);
    size_t nprobe = 0;
    CHECK_OK(faiss_ccd_Index_get_nprobe(index, &nprobe));
    CHECK(nprobe == 1);
    CHECK_OK(faiss_ccd_Index_set_nprobe(index, 4));
    CHECK_OK(faiss_ccd_Index_get_nprobe(index, &nprobe));
    CHECK(nprobe == 4);
    /* Trained after the wrapper was made: the wrapper sees it. */
    CHECK_OK(faiss_ccd_IndexIVFCCD_search(ivfccd, 1, xq, 10, dist, lab));
    faiss_ccd_IndexIVFCCD_free(ivfccd);
    faiss_ccd_Pool_free(pool);

    /* Write, read back, same results. */
    char path[1024];
    snprintf(path, sizeof path, "%s/test_c_api_XXXXXX", tmp_dir);
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK_OK(faiss_ccd_write_index(index, path));
    FaissCcdIndex* back = NULL;
    CHECK_OK(faiss_ccd_read_index(&back, path));
    CHECK(unlink(path) == 0);
    CHECK_OK(faiss_ccd_Index_ntotal(back, &ntotal));
    CHECK(ntotal == NB);
    CHECK_OK(faiss_ccd_Index_set_nprobe(back, 4));
    float* d1 = malloc(sizeof(float) * NQ * 10);
    float* d2 = malloc(sizeof(float) * NQ * 10);
    faiss_ccd_idx_t* l1 = malloc(sizeof(faiss_ccd_idx_t) * NQ * 10);
    faiss_ccd_idx_t* l2 = malloc(sizeof(faiss_ccd_idx_t) * NQ * 10);
    CHECK(d1 && d2 && l1 && l2);
    CHECK_OK(faiss_ccd_Index_search(index, NQ, xq, 10, d1, l1));
    CHECK_OK(faiss_ccd_Index_search(back, NQ, xq, 10, d2, l2));
    check_same_results(NQ * 10, d1, l1, d2, l2);
    faiss_ccd_Index_free(back);
    faiss_ccd_Index_free(index);

    /* add_with_ids: the ids come back from a search. */
    CHECK_OK(faiss_ccd_index_factory(
            &index,
            D,
            "IVF4,Flat",
            FAISS_CCD_METRIC_INNER_PRODUCT));
    CHECK_OK(faiss_ccd_Index_train(index, NB, xb));
    faiss_ccd_idx_t ids[NQ];
    for (int i = 0; i < NQ; i++) {
        ids[i] = 1000000 + i;
    }
    CHECK_OK(faiss_ccd_Index_add_with_ids(index, NQ, xb, ids));
    CHECK_OK(faiss_ccd_Index_set_nprobe(index, 4));
    CHECK_OK(faiss_ccd_Index_search(index, NQ, xq, 10, d1, l1));
    for (int i = 0; i < NQ * 10; i++) {
        CHECK(l1[i] >= 1000000 && l1[i] < 1000000 + NQ);
    }
    faiss_ccd_Index_free(index);

    /* nprobe reaches an IVF behind a transform. */
    CHECK_OK(faiss_ccd_index_factory(
            &index,
            D,
            "PCA8,IVF16,Flat",
            FAISS_CCD_METRIC_L2));
    CHECK_OK(faiss_ccd_Index_set_nprobe(index, 3));
    CHECK_OK(faiss_ccd_Index_get_nprobe(index, &nprobe));
    CHECK(nprobe == 3);
    faiss_ccd_Index_free(index);

    free(d1);
    free(d2);
    free(l1);
    free(l2);
}

static void check_stats(const FaissCcdPool* pool, int expected_workers) {
    FaissCcdPoolStats st;
    CHECK_OK(faiss_ccd_Pool_stats(pool, &st));
    CHECK(st.num_workers == expected_workers);
    CHECK(st.tasks_run > 0);
    CHECK(st.uncaught_exceptions == 0);
    CHECK(st.cross_ccd_steal_ratio >= 0.0 && st.cross_ccd_steal_ratio <= 1.0);
    /* The pool is idle after a synchronous search: task counters are
     * stable (parks may still grow as workers go to sleep). */
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

static void test_ivfccd(void) {
    static const char* topologies[] = {"1x1", "2x1", "2x2"};
    static const int workers[] = {1, 2, 4};
    static const int ccds[] = {1, 2, 2};
    static const char* policies[] = {"ccd", "flat", "rr"};
    static const int nprobes[] = {1, 4};
    static const int ks[] = {1, 10};

    FaissCcdIndex* index = make_trained_ivf();
    float* d1 = malloc(sizeof(float) * NQ * 10);
    float* d2 = malloc(sizeof(float) * NQ * 10);
    faiss_ccd_idx_t* l1 = malloc(sizeof(faiss_ccd_idx_t) * NQ * 10);
    faiss_ccd_idx_t* l2 = malloc(sizeof(faiss_ccd_idx_t) * NQ * 10);
    CHECK(d1 && d2 && l1 && l2);

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
            for (int a = 0; a < 2; a++) {
                CHECK_OK(faiss_ccd_Index_set_nprobe(index, nprobes[a]));
                for (int b = 0; b < 2; b++) {
                    const int k = ks[b];
                    CHECK_OK(faiss_ccd_Index_search(index, NQ, xq, k, d1, l1));
                    CHECK_OK(faiss_ccd_IndexIVFCCD_search(
                            ivfccd,
                            NQ,
                            xq,
                            k,
                            d2,
                            l2));
                    check_same_results((size_t)NQ * k, d1, l1, d2, l2);
                }
            }
            check_stats(pool, workers[t]);
            faiss_ccd_IndexIVFCCD_free(ivfccd);
            faiss_ccd_Pool_free(pool);
        }
    }
    free(d1);
    free(d2);
    free(l1);
    free(l2);
    faiss_ccd_Index_free(index);
}

struct search_job {
    const FaissCcdIndexIVFCCD* ivfccd;
    const float* expected_d;
    const faiss_ccd_idx_t* expected_l;
};

static void* search_thread(void* arg) {
    const struct search_job* job = arg;
    float d[NQ * 10];
    faiss_ccd_idx_t l[NQ * 10];
    for (int rep = 0; rep < 5; rep++) {
        CHECK_OK(faiss_ccd_IndexIVFCCD_search(job->ivfccd, NQ, xq, 10, d, l));
        check_same_results(NQ * 10, job->expected_d, job->expected_l, d, l);
    }
    return NULL;
}

/* Concurrent clients, and handles freed before the handles built on them. */
static void test_ivfccd_lifetime(void) {
    FaissCcdIndex* index = make_trained_ivf();
    CHECK_OK(faiss_ccd_Index_set_nprobe(index, 4));
    static float d[NQ * 10];
    static faiss_ccd_idx_t l[NQ * 10];
    CHECK_OK(faiss_ccd_Index_search(index, NQ, xq, 10, d, l));

    FaissCcdPool* pool = NULL;
    CHECK_OK(faiss_ccd_Pool_new(&pool, "2x2", "ccd"));
    FaissCcdIndexIVFCCD* ivfccd = NULL;
    CHECK_OK(faiss_ccd_IndexIVFCCD_new(&ivfccd, index, pool, 0));
    faiss_ccd_Pool_free(pool);   /* the IVFCCD handle keeps it alive */
    faiss_ccd_Index_free(index); /* and the index */

    struct search_job job = {ivfccd, d, l};
    pthread_t threads[3];
    for (int i = 0; i < 3; i++) {
        CHECK(pthread_create(&threads[i], NULL, search_thread, &job) == 0);
    }
    search_thread(&job);
    for (int i = 0; i < 3; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
    }
    faiss_ccd_IndexIVFCCD_free(ivfccd);
}

static void test_hnsw_tables(void) {
    static const char* policies[] = {"ccd", "flat", "rr"};
    float* d1 = malloc(sizeof(float) * NQ * 10);
    float* d2 = malloc(sizeof(float) * NQ * 10);
    faiss_ccd_idx_t* l1 = malloc(sizeof(faiss_ccd_idx_t) * NQ * 10);
    faiss_ccd_idx_t* l2 = malloc(sizeof(faiss_ccd_idx_t) * NQ * 10);
    CHECK(d1 && d2 && l1 && l2);

    for (int p = 0; p < 3; p++) {
        FaissCcdIndex* h16 = make_hnsw("HNSW16", 24);
        FaissCcdIndex* h8 = make_hnsw("HNSW8", 40);
        int ef = 0;
        CHECK_OK(faiss_ccd_Index_get_ef_search(h8, &ef));
        CHECK(ef == 40);
        FaissCcdPool* pool = NULL;
        CHECK_OK(faiss_ccd_Pool_new(&pool, "2x2", policies[p]));
        FaissCcdHNSWTables* tables = NULL;
        CHECK_OK(faiss_ccd_HNSWTables_new(&tables, pool));
        CHECK_OK(faiss_ccd_HNSWTables_add_table(tables, 1, h16));
        CHECK_OK(faiss_ccd_HNSWTables_add_table(tables, 2, h8));
        CHECK_OK(faiss_ccd_HNSWTables_add_table(tables, 3, h8)); /* shared */
        size_t num = 0;
        int has = -1;
        CHECK_OK(faiss_ccd_HNSWTables_num_tables(tables, &num));
        CHECK(num == 3);
        CHECK_OK(faiss_ccd_HNSWTables_has_table(tables, 2, &has));
        CHECK(has == 1);
        CHECK_OK(faiss_ccd_HNSWTables_has_table(tables, 4, &has));
        CHECK(has == 0);

        CHECK_OK(faiss_ccd_Index_search(h16, NQ, xq, 10, d1, l1));
        CHECK_OK(faiss_ccd_HNSWTables_search(tables, 1, NQ, xq, 10, d2, l2));
        check_same_results(NQ * 10, d1, l1, d2, l2);
        CHECK_OK(faiss_ccd_Index_search(h8, NQ, xq, 5, d1, l1));
        CHECK_OK(faiss_ccd_HNSWTables_search(tables, 2, NQ, xq, 5, d2, l2));
        check_same_results(NQ * 5, d1, l1, d2, l2);
        check_stats(pool, 4);

        /* Table errors. */
        CHECK_INVALID(
                "already taken",
                faiss_ccd_HNSWTables_add_table,
                (tables, 1, h8));
        CHECK_NOT_FOUND(
                "unknown table id 9",
                faiss_ccd_HNSWTables_search,
                (tables, 9, NQ, xq, 10, d2, l2));
        CHECK_NOT_FOUND(
                "unknown table id 9",
                faiss_ccd_HNSWTables_remove_table,
                (tables, 9));
        CHECK_INVALID(
                "k must be > 0",
                faiss_ccd_HNSWTables_search,
                (tables, 1, NQ, xq, 0, d2, l2));
        CHECK_INVALID(
                "n must be >= 0",
                faiss_ccd_HNSWTables_search,
                (tables, 1, -1, xq, 10, d2, l2));

        /* Remove one id of the shared index; the other keeps working. */
        CHECK_OK(faiss_ccd_HNSWTables_remove_table(tables, 2));
        CHECK_OK(faiss_ccd_HNSWTables_has_table(tables, 2, &has));
        CHECK(has == 0);
        CHECK_NOT_FOUND(
                "unknown table id 2",
                faiss_ccd_HNSWTables_search,
                (tables, 2, NQ, xq, 5, d2, l2));
        CHECK_NOT_FOUND(
                "unknown table id 2",
                faiss_ccd_HNSWTables_remove_table,
                (tables, 2));
        CHECK_OK(faiss_ccd_HNSWTables_search(tables, 3, NQ, xq, 5, d2, l2));
        check_same_results(NQ * 5, d1, l1, d2, l2);

        /* Free the index and pool handles first: the tables keep both. */
        CHECK_OK(faiss_ccd_Index_search(h16, NQ, xq, 10, d1, l1));
        faiss_ccd_Index_free(h16);
        faiss_ccd_Index_free(h8);
        faiss_ccd_Pool_free(pool);
        CHECK_OK(faiss_ccd_HNSWTables_search(tables, 1, NQ, xq, 10, d2, l2));
        check_same_results(NQ * 10, d1, l1, d2, l2);
        CHECK_OK(faiss_ccd_HNSWTables_num_tables(tables, &num));
        CHECK(num == 2);
        if (p == 0) {
            CHECK_OK(faiss_ccd_HNSWTables_remove_table(tables, 1));
            CHECK_OK(faiss_ccd_HNSWTables_remove_table(tables, 3));
        }
        faiss_ccd_HNSWTables_free(tables); /* p > 0: with tables left */
    }
    free(d1);
    free(d2);
    free(l1);
    free(l2);
}

/* ------------------------------------------------------------ error paths */

static void test_pool_errors(void) {
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

static void test_index_errors(void) {
    FaissCcdIndex* index = (FaissCcdIndex*)&lcg_state;
    CHECK_NULL_ARG(
            "p_index",
            faiss_ccd_index_factory,
            (NULL, D, "Flat", FAISS_CCD_METRIC_L2));
    CHECK_NULL_ARG(
            "description",
            faiss_ccd_index_factory,
            (&index, D, NULL, FAISS_CCD_METRIC_L2));
    CHECK(index == NULL);
    index = (FaissCcdIndex*)&lcg_state;
    CHECK_INVALID(
            "d must be > 0",
            faiss_ccd_index_factory,
            (&index, 0, "Flat", FAISS_CCD_METRIC_L2));
    CHECK(index == NULL);
    CHECK_INVALID(
            "metric",
            faiss_ccd_index_factory,
            (&index, D, "Flat", (FaissCcdMetricType)7));
    index = (FaissCcdIndex*)&lcg_state;
    CHECK_ERR(
            FAISS_CCD_ERROR_FAISS_EXCEPTION,
            "IVF16,Bogus",
            faiss_ccd_index_factory,
            (&index, D, "IVF16,Bogus", FAISS_CCD_METRIC_L2));
    CHECK(index == NULL);

    index = (FaissCcdIndex*)&lcg_state;
    CHECK_NULL_ARG("p_index", faiss_ccd_read_index, (NULL, "x.index"));
    CHECK_NULL_ARG("fname", faiss_ccd_read_index, (&index, NULL));
    CHECK(index == NULL);
    index = (FaissCcdIndex*)&lcg_state;
    CHECK_ERR(
            FAISS_CCD_ERROR_FAISS_EXCEPTION,
            "/nonexistent-dir/missing.index",
            faiss_ccd_read_index,
            (&index, "/nonexistent-dir/missing.index"));
    CHECK(index == NULL);

    CHECK_OK(faiss_ccd_index_factory(
            &index,
            D,
            "IVF16,Flat",
            FAISS_CCD_METRIC_L2));
    CHECK_NULL_ARG("index", faiss_ccd_write_index, (NULL, "x.index"));
    CHECK_NULL_ARG("fname", faiss_ccd_write_index, (index, NULL));
    CHECK_ERR(
            FAISS_CCD_ERROR_FAISS_EXCEPTION,
            "/nonexistent-dir/out.index",
            faiss_ccd_write_index,
            (index, "/nonexistent-dir/out.index"));

    float dist[4];
    faiss_ccd_idx_t lab[4], ids[1] = {0};
    int i = 0;
    size_t s = 0;
    faiss_ccd_idx_t nt = 0;
    CHECK_NULL_ARG("index", faiss_ccd_Index_train, (NULL, 1, xb));
    CHECK_NULL_ARG("x", faiss_ccd_Index_train, (index, 1, NULL));
    CHECK_INVALID(
            "n must be >= 0 (got -1)",
            faiss_ccd_Index_train,
            (index, -1, xb));
    CHECK_INVALID("not trained", faiss_ccd_Index_add, (index, 1, xb));
    CHECK_INVALID(
            "not trained",
            faiss_ccd_Index_add_with_ids,
            (index, 1, xb, ids));
    CHECK_NULL_ARG("index", faiss_ccd_Index_add, (NULL, 1, xb));
    CHECK_NULL_ARG("x", faiss_ccd_Index_add, (index, 1, NULL));
    CHECK_INVALID("n must be >= 0", faiss_ccd_Index_add, (index, -5, xb));
    CHECK_NULL_ARG("index", faiss_ccd_Index_add_with_ids, (NULL, 1, xb, ids));
    CHECK_NULL_ARG("x", faiss_ccd_Index_add_with_ids, (index, 1, NULL, ids));
    CHECK_NULL_ARG("xids", faiss_ccd_Index_add_with_ids, (index, 1, xb, NULL));
    CHECK_INVALID(
            "n must be >= 0",
            faiss_ccd_Index_add_with_ids,
            (index, -1, xb, ids));
    CHECK_NULL_ARG(
            "index",
            faiss_ccd_Index_search,
            (NULL, 1, xq, 4, dist, lab));
    CHECK_NULL_ARG("x", faiss_ccd_Index_search, (index, 1, NULL, 4, dist, lab));
    CHECK_NULL_ARG(
            "distances",
            faiss_ccd_Index_search,
            (index, 1, xq, 4, NULL, lab));
    CHECK_NULL_ARG(
            "labels",
            faiss_ccd_Index_search,
            (index, 1, xq, 4, dist, NULL));
    CHECK_INVALID(
            "n must be >= 0",
            faiss_ccd_Index_search,
            (index, -1, xq, 4, dist, lab));
    CHECK_INVALID(
            "k must be > 0 (got 0)",
            faiss_ccd_Index_search,
            (index, 1, xq, 0, dist, lab));
    CHECK_INVALID(
            "k must be > 0 (got -3)",
            faiss_ccd_Index_search,
            (index, 1, xq, -3, dist, lab));

    CHECK_NULL_ARG("index", faiss_ccd_Index_d, (NULL, &i));
    CHECK_NULL_ARG("p_d", faiss_ccd_Index_d, (index, NULL));
    CHECK_NULL_ARG("index", faiss_ccd_Index_ntotal, (NULL, &nt));
    CHECK_NULL_ARG("p_ntotal", faiss_ccd_Index_ntotal, (index, NULL));
    CHECK_NULL_ARG("index", faiss_ccd_Index_is_trained, (NULL, &i));
    CHECK_NULL_ARG("p_is_trained", faiss_ccd_Index_is_trained, (index, NULL));
    CHECK_NULL_ARG("index", faiss_ccd_Index_set_nprobe, (NULL, 1));
    CHECK_INVALID("nprobe must be > 0", faiss_ccd_Index_set_nprobe, (index, 0));
    CHECK_NULL_ARG("index", faiss_ccd_Index_get_nprobe, (NULL, &s));
    CHECK_NULL_ARG("p_nprobe", faiss_ccd_Index_get_nprobe, (index, NULL));
    CHECK_NULL_ARG("index", faiss_ccd_Index_set_ef_search, (NULL, 16));
    CHECK_INVALID(
            "not an IndexHNSW",
            faiss_ccd_Index_set_ef_search,
            (index, 16));
    CHECK_NULL_ARG("index", faiss_ccd_Index_get_ef_search, (NULL, &i));
    CHECK_NULL_ARG("p_ef_search", faiss_ccd_Index_get_ef_search, (index, NULL));
    CHECK_INVALID(
            "not an IndexHNSW",
            faiss_ccd_Index_get_ef_search,
            (index, &i));
    faiss_ccd_Index_free(index);

    FaissCcdIndex* hnsw = NULL;
    CHECK_OK(faiss_ccd_index_factory(&hnsw, D, "HNSW8", FAISS_CCD_METRIC_L2));
    CHECK_INVALID("not an IVF index", faiss_ccd_Index_set_nprobe, (hnsw, 2));
    CHECK_INVALID("not an IVF index", faiss_ccd_Index_get_nprobe, (hnsw, &s));
    CHECK_INVALID(
            "ef_search must be > 0",
            faiss_ccd_Index_set_ef_search,
            (hnsw, 0));
    faiss_ccd_Index_free(hnsw);
    faiss_ccd_Index_free(NULL);
}

static void test_wrapper_errors(void) {
    FaissCcdIndex* ivf = make_trained_ivf();
    FaissCcdIndex* hnsw = NULL;
    CHECK_OK(faiss_ccd_index_factory(&hnsw, D, "HNSW8", FAISS_CCD_METRIC_L2));
    FaissCcdIndex* pre = NULL;
    CHECK_OK(faiss_ccd_index_factory(
            &pre,
            D,
            "PCA8,IVF16,Flat",
            FAISS_CCD_METRIC_L2));
    FaissCcdPool* pool = NULL;
    CHECK_OK(faiss_ccd_Pool_new(&pool, "1x1", "ccd"));
    float dist[4];
    faiss_ccd_idx_t lab[4];
    int has = 0;
    size_t num = 0;

    /* IndexIVFCCD */
    FaissCcdIndexIVFCCD* w = (FaissCcdIndexIVFCCD*)&lcg_state;
    CHECK_NULL_ARG("p_ivfccd", faiss_ccd_IndexIVFCCD_new, (NULL, ivf, pool, 0));
    CHECK_NULL_ARG("index", faiss_ccd_IndexIVFCCD_new, (&w, NULL, pool, 0));
    CHECK(w == NULL);
    w = (FaissCcdIndexIVFCCD*)&lcg_state;
    CHECK_NULL_ARG("pool", faiss_ccd_IndexIVFCCD_new, (&w, ivf, NULL, 0));
    CHECK(w == NULL);
    w = (FaissCcdIndexIVFCCD*)&lcg_state;
    CHECK_INVALID(
            "not a faiss::IndexIVF",
            faiss_ccd_IndexIVFCCD_new,
            (&w, hnsw, pool, 0));
    CHECK(w == NULL);
    w = (FaissCcdIndexIVFCCD*)&lcg_state;
    CHECK_INVALID(
            "not a faiss::IndexIVF",
            faiss_ccd_IndexIVFCCD_new,
            (&w, pre, pool, 0));
    CHECK(w == NULL);
    w = (FaissCcdIndexIVFCCD*)&lcg_state;
    CHECK_INVALID(
            "reserved",
            faiss_ccd_IndexIVFCCD_new,
            (&w, ivf, pool, 0xffffffffu));
    CHECK(w == NULL);
    CHECK_OK(faiss_ccd_IndexIVFCCD_new(&w, ivf, pool, 0));
    CHECK_NULL_ARG(
            "ivfccd",
            faiss_ccd_IndexIVFCCD_search,
            (NULL, 1, xq, 4, dist, lab));
    CHECK_NULL_ARG(
            "x",
            faiss_ccd_IndexIVFCCD_search,
            (w, 1, NULL, 4, dist, lab));
    CHECK_NULL_ARG(
            "distances",
            faiss_ccd_IndexIVFCCD_search,
            (w, 1, xq, 4, NULL, lab));
    CHECK_NULL_ARG(
            "labels",
            faiss_ccd_IndexIVFCCD_search,
            (w, 1, xq, 4, dist, NULL));
    CHECK_INVALID(
            "n must be >= 0",
            faiss_ccd_IndexIVFCCD_search,
            (w, -1, xq, 4, dist, lab));
    CHECK_INVALID(
            "k must be > 0",
            faiss_ccd_IndexIVFCCD_search,
            (w, 1, xq, 0, dist, lab));
    CHECK_INVALID(
            "k must be > 0",
            faiss_ccd_IndexIVFCCD_search,
            (w, 1, xq, -1, dist, lab));
    CHECK_OK(faiss_ccd_IndexIVFCCD_search(w, 1, xq, 4, dist, lab));
    faiss_ccd_IndexIVFCCD_free(w);
    faiss_ccd_IndexIVFCCD_free(NULL);

    /* HNSWTables */
    FaissCcdHNSWTables* t = (FaissCcdHNSWTables*)&lcg_state;
    CHECK_NULL_ARG("p_tables", faiss_ccd_HNSWTables_new, (NULL, pool));
    CHECK_NULL_ARG("pool", faiss_ccd_HNSWTables_new, (&t, NULL));
    CHECK(t == NULL);
    CHECK_OK(faiss_ccd_HNSWTables_new(&t, pool));
    CHECK_NULL_ARG("tables", faiss_ccd_HNSWTables_add_table, (NULL, 1, hnsw));
    CHECK_NULL_ARG("index", faiss_ccd_HNSWTables_add_table, (t, 1, NULL));
    CHECK_INVALID(
            "not a faiss::IndexHNSW",
            faiss_ccd_HNSWTables_add_table,
            (t, 1, ivf));
    CHECK_INVALID(
            "reserved",
            faiss_ccd_HNSWTables_add_table,
            (t, 0xffffffffu, hnsw));
    CHECK_OK(faiss_ccd_HNSWTables_add_table(t, 1, hnsw));
    CHECK_INVALID(
            "table id 1 is already",
            faiss_ccd_HNSWTables_add_table,
            (t, 1, hnsw));
    CHECK_NULL_ARG("tables", faiss_ccd_HNSWTables_remove_table, (NULL, 1));
    CHECK_NULL_ARG("tables", faiss_ccd_HNSWTables_has_table, (NULL, 1, &has));
    CHECK_NULL_ARG("p_has", faiss_ccd_HNSWTables_has_table, (t, 1, NULL));
    CHECK_NULL_ARG("tables", faiss_ccd_HNSWTables_num_tables, (NULL, &num));
    CHECK_NULL_ARG("p_num_tables", faiss_ccd_HNSWTables_num_tables, (t, NULL));
    CHECK_NULL_ARG(
            "tables",
            faiss_ccd_HNSWTables_search,
            (NULL, 1, 1, xq, 4, dist, lab));
    CHECK_NULL_ARG(
            "x",
            faiss_ccd_HNSWTables_search,
            (t, 1, 1, NULL, 4, dist, lab));
    CHECK_NULL_ARG(
            "distances",
            faiss_ccd_HNSWTables_search,
            (t, 1, 1, xq, 4, NULL, lab));
    CHECK_NULL_ARG(
            "labels",
            faiss_ccd_HNSWTables_search,
            (t, 1, 1, xq, 4, dist, NULL));
    /* An empty HNSW table answers -1 labels, as FAISS does. */
    CHECK_OK(faiss_ccd_HNSWTables_search(t, 1, 1, xq, 4, dist, lab));
    CHECK(lab[0] == -1);
    faiss_ccd_HNSWTables_free(t);
    faiss_ccd_HNSWTables_free(NULL);

    faiss_ccd_Pool_free(pool);
    faiss_ccd_Index_free(pre);
    faiss_ccd_Index_free(hnsw);
    faiss_ccd_Index_free(ivf);
}

/* ------------------------------------------------- per-thread last error */

static void* other_thread(void* arg) {
    int* ok = arg;
    /* Nothing failed on this thread yet: "", not the main thread's. */
    const char* msg = faiss_ccd_get_last_error();
    CHECK(msg != NULL && msg[0] == '\0');
    FaissCcdPool* pool = NULL;
    CHECK(faiss_ccd_Pool_new(&pool, "1x1", "other-thread-policy") ==
          FAISS_CCD_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(faiss_ccd_get_last_error(), "other-thread-policy") != NULL);
    *ok = 1;
    return NULL;
}

static void test_last_error_per_thread(void) {
    FaissCcdPool* pool = NULL;
    CHECK(faiss_ccd_Pool_new(&pool, "main-thread-spec", NULL) ==
          FAISS_CCD_ERROR_INVALID_ARGUMENT);
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", faiss_ccd_get_last_error());
    CHECK(strstr(saved, "main-thread-spec") != NULL);

    /* A successful call leaves the message as it was. */
    CHECK_OK(faiss_ccd_Pool_new(&pool, "1x1", NULL));
    CHECK(strcmp(faiss_ccd_get_last_error(), saved) == 0);

    pthread_t thread;
    int ok = 0;
    CHECK(pthread_create(&thread, NULL, other_thread, &ok) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(ok == 1);
    CHECK(strcmp(faiss_ccd_get_last_error(), saved) == 0);
    faiss_ccd_Pool_free(pool);
}

int main(int argc, char** argv) {
    const char* tmp_dir = argc > 1 ? argv[1] : "/tmp";
    xb = random_vectors(NB, 12345);
    xq = random_vectors(NQ, 777);

    /* Before anything failed on this thread. */
    CHECK(faiss_ccd_get_last_error() != NULL);
    CHECK(faiss_ccd_get_last_error()[0] == '\0');

    test_error_names();
    printf("error names: ok\n");
    test_last_error_per_thread();
    printf("per-thread last error: ok\n");
    test_index_basics(tmp_dir);
    printf("index basics: ok\n");
    test_ivfccd();
    printf("IndexIVFCCD, 3 topologies x 3 policies: ok\n");
    test_ivfccd_lifetime();
    printf("IndexIVFCCD lifetime and concurrent clients: ok\n");
    test_hnsw_tables();
    printf("HNSWTables: ok\n");
    test_pool_errors();
    printf("pool errors: ok\n");
    test_index_errors();
    printf("index errors: ok\n");
    test_wrapper_errors();
    printf("IndexIVFCCD and HNSWTables errors: ok\n");

    free(xb);
    free(xq);
    printf("all C API tests passed\n");
    return 0;
}
