/**
 * test_IndexIVFCCD_c.c: IVF search through the pool from C: the CCD mode
 * of FAISS's own C API (faiss_IndexIVF_set_parallel_mode, the default
 * mode for indexes made or read later, through an IDMap2), the explicit
 * FaissCcdIndexIVFCCD (k-NN and range search against FAISS's own, many
 * client threads, the pool freed first), and every error path.
 */

#include "c_test.h"

#include <faiss/c_api/MetaIndexes_c.h>
#include <faiss/c_api/impl/AuxIndexStructures_c.h>
#include <faiss/c_api/index_io_c.h>
#include <faiss_ccd/c_api/IndexIVFCCD_c.h>

#include <pthread.h>
#include <unistd.h>

static float* xb;
static float* xq;

static uint64_t default_pool_served(void) {
    FaissCcdPool* pool = NULL;
    CHECK_OK(faiss_ccd_get_default_pool(&pool));
    const uint64_t tasks = pool_served(pool);
    faiss_ccd_Pool_free(pool);
    return tasks;
}

/* FAISS's C API with the CCD mode: same answers, and the pool ran them. */
static void test_parallel_mode(void) {
    FaissIndex* index = make_index("IVF16,Flat", xb);
    set_nprobe(index, 4);
    FaissIndexIVF* ivf = faiss_IndexIVF_cast(index);
    CHECK(faiss_IndexIVF_parallel_mode(ivf) == 0);
    float d1[NQ * 10], d2[NQ * 10];
    faiss_ccd_idx_t l1[NQ * 10], l2[NQ * 10];
    CHECK_OK(faiss_Index_search(index, NQ, xq, 10, d1, l1));

    faiss_IndexIVF_set_parallel_mode(ivf, FAISS_PARALLEL_MODE_CCD);
    CHECK(faiss_IndexIVF_parallel_mode(ivf) == FAISS_PARALLEL_MODE_CCD);
    uint64_t before = default_pool_served();
    CHECK_OK(faiss_Index_search(index, NQ, xq, 10, d2, l2));
    check_same_results(NQ * 10, d1, l1, d2, l2);
    CHECK(default_pool_served() > before);

    /* The mode is the IVF's own field: it holds under an IDMap2. */
    FaissIndexIDMap2* idmap = NULL;
    FaissIndex* inner = NULL;
    CHECK_OK(faiss_index_factory(&inner, D, "IVF16,Flat", METRIC_L2));
    CHECK_OK(faiss_Index_train(inner, NB, xb));
    set_nprobe(inner, 4);
    CHECK_OK(faiss_IndexIDMap2_new(&idmap, inner));
    faiss_ccd_idx_t* ids = malloc(sizeof(faiss_ccd_idx_t) * NB);
    CHECK(ids != NULL);
    for (int i = 0; i < NB; i++) {
        ids[i] = 1000 + i;
    }
    CHECK_OK(faiss_Index_add_with_ids(idmap, NB, xb, ids));
    CHECK_OK(faiss_Index_search(idmap, NQ, xq, 10, d1, l1));
    faiss_IndexIVF_set_parallel_mode(
            faiss_IndexIVF_cast(inner),
            FAISS_PARALLEL_MODE_CCD);
    before = default_pool_served();
    CHECK_OK(faiss_Index_search(idmap, NQ, xq, 10, d2, l2));
    CHECK(default_pool_served() > before);
    check_same_results(NQ * 10, d1, l1, d2, l2);
    CHECK(l2[0] >= 1000);
    free(ids);
    faiss_Index_free(idmap);
    faiss_Index_free(inner);

    /* A mode IndexIVF does not know: an error from the search, no abort
     * (FAISS 1.7.3 itself would abort inside an OpenMP region). */
    faiss_IndexIVF_set_parallel_mode(ivf, 7);
    CHECK(faiss_Index_search(index, NQ, xq, 10, d2, l2) != 0);
    CHECK(strstr(faiss_get_last_error(), "parallel_mode 7") != NULL);
    faiss_Index_free(index);
}

/* The default mode: indexes made or read afterwards start in it. */
static void test_default_mode(const char* path) {
    int mode = -1;
    CHECK_OK(faiss_ccd_get_default_parallel_mode(&mode));
    CHECK(mode == 0);
    FaissIndex* saved = make_index("IVF16,Flat", xb);
    CHECK_OK(faiss_write_index_fname(saved, path));

    CHECK_OK(faiss_ccd_set_default_parallel_mode(FAISS_PARALLEL_MODE_CCD));
    CHECK_OK(faiss_ccd_get_default_parallel_mode(&mode));
    CHECK(mode == FAISS_PARALLEL_MODE_CCD);
    FaissIndex* made = make_index("IVF16,Flat", xb);
    CHECK(faiss_IndexIVF_parallel_mode(faiss_IndexIVF_cast(made)) ==
          FAISS_PARALLEL_MODE_CCD);
    FaissIndex* read = NULL;
    CHECK_OK(faiss_read_index_fname(path, 0, &read));
    CHECK(faiss_IndexIVF_parallel_mode(faiss_IndexIVF_cast(read)) ==
          FAISS_PARALLEL_MODE_CCD);
    /* Indexes that existed keep theirs. */
    CHECK(faiss_IndexIVF_parallel_mode(faiss_IndexIVF_cast(saved)) == 0);

    float d1[NQ * 10], d2[NQ * 10];
    faiss_ccd_idx_t l1[NQ * 10], l2[NQ * 10];
    CHECK_OK(faiss_Index_search(saved, NQ, xq, 10, d1, l1));
    const uint64_t before = default_pool_served();
    CHECK_OK(faiss_Index_search(read, NQ, xq, 10, d2, l2));
    check_same_results(NQ * 10, d1, l1, d2, l2);
    CHECK(default_pool_served() > before);

    CHECK_ERR(
            FAISS_CCD_ERROR_FAISS_EXCEPTION,
            "parallel_mode 5 not supported",
            faiss_ccd_set_default_parallel_mode,
            (5));
    CHECK_OK(faiss_ccd_get_default_parallel_mode(&mode));
    CHECK(mode == FAISS_PARALLEL_MODE_CCD);
    CHECK_NULL_ARG("p_mode", faiss_ccd_get_default_parallel_mode, (NULL));
    CHECK_OK(faiss_ccd_set_default_parallel_mode(0));
    faiss_Index_free(read);
    faiss_Index_free(made);
    faiss_Index_free(saved);
    remove(path);
}

/* The explicit form: the same answers as FAISS, k-NN and range. */
static void test_explicit(void) {
    static const int nprobes[] = {1, 4};
    static const int ks[] = {1, 10};
    FaissIndex* index = make_index("IVF16,Flat", xb);
    FaissCcdPool* pool = NULL;
    CHECK_OK(faiss_ccd_Pool_new(&pool, "2x2", "ccd"));
    FaissCcdIndexIVFCCD* ivfccd = NULL;
    CHECK_OK(faiss_ccd_IndexIVFCCD_new(&ivfccd, index, pool, 7));
    float d1[NQ * 10], d2[NQ * 10];
    faiss_ccd_idx_t l1[NQ * 10], l2[NQ * 10];
    for (int a = 0; a < 2; a++) {
        set_nprobe(index, (size_t)nprobes[a]);
        for (int b = 0; b < 2; b++) {
            const int k = ks[b];
            CHECK_OK(faiss_Index_search(index, NQ, xq, k, d1, l1));
            const uint64_t before = pool_served(pool);
            CHECK_OK(faiss_ccd_IndexIVFCCD_search(ivfccd, NQ, xq, k, d2, l2));
            check_same_results((size_t)NQ * k, d1, l1, d2, l2);
            CHECK(pool_served(pool) > before);
        }
    }
    /* Range search: the same hits, in FAISS's order. */
    const float radius = d1[5]; /* query 0's 6th distance */
    FaissRangeSearchResult* ref = NULL;
    FaissRangeSearchResult* got = NULL;
    CHECK_OK(faiss_RangeSearchResult_new(&ref, NQ));
    CHECK_OK(faiss_RangeSearchResult_new(&got, NQ));
    CHECK_OK(faiss_Index_range_search(index, NQ, xq, radius, ref));
    CHECK_OK(faiss_ccd_IndexIVFCCD_range_search(ivfccd, NQ, xq, radius, got));
    size_t *lr, *lg;
    faiss_RangeSearchResult_lims(ref, &lr);
    faiss_RangeSearchResult_lims(got, &lg);
    faiss_ccd_idx_t *ir, *ig;
    float *dr, *dg;
    faiss_RangeSearchResult_labels(ref, &ir, &dr);
    faiss_RangeSearchResult_labels(got, &ig, &dg);
    CHECK(lr[NQ] > (size_t)NQ); /* a radius that finds something */
    for (int q = 0; q <= NQ; q++) {
        CHECK(lr[q] == lg[q]);
    }
    check_same_results(lr[NQ], dr, ir, dg, ig);
    faiss_RangeSearchResult_free(ref);
    faiss_RangeSearchResult_free(got);
    faiss_ccd_IndexIVFCCD_free(ivfccd);
    faiss_ccd_Pool_free(pool);
    faiss_Index_free(index);
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

/* Concurrent clients; the pool handle freed before the wrapper (which
 * keeps the pool). The index, FAISS's object, lives until the end. */
static void test_clients_and_lifetime(void) {
    FaissIndex* index = make_index("IVF16,Flat", xb);
    set_nprobe(index, 4);
    static float d[NQ * 10];
    static faiss_ccd_idx_t l[NQ * 10];
    CHECK_OK(faiss_Index_search(index, NQ, xq, 10, d, l));

    FaissCcdPool* pool = NULL;
    CHECK_OK(faiss_ccd_Pool_new(&pool, "2x2", "ccd"));
    FaissCcdIndexIVFCCD* ivfccd = NULL;
    CHECK_OK(faiss_ccd_IndexIVFCCD_new(&ivfccd, index, pool, 0));
    faiss_ccd_Pool_free(pool); /* the wrapper keeps it alive */

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
    faiss_Index_free(index);
}

static void test_errors(void) {
    FaissIndex* ivf = make_index("IVF16,Flat", xb);
    FaissIndex* hnsw = NULL;
    CHECK_OK(faiss_index_factory(&hnsw, D, "HNSW8", METRIC_L2));
    FaissIndex* pre = NULL;
    CHECK_OK(faiss_index_factory(&pre, D, "PCA8,IVF16,Flat", METRIC_L2));
    FaissIndex* untrained = NULL;
    CHECK_OK(faiss_index_factory(&untrained, D, "IVF16,Flat", METRIC_L2));
    FaissCcdPool* pool = NULL;
    CHECK_OK(faiss_ccd_Pool_new(&pool, "1x1", "ccd"));
    float dist[4];
    faiss_ccd_idx_t lab[4];

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

    CHECK_OK(faiss_ccd_IndexIVFCCD_new(&w, untrained, pool, 0));
    CHECK_INVALID(
            "not trained",
            faiss_ccd_IndexIVFCCD_search,
            (w, 1, xq, 4, dist, lab));
    faiss_ccd_IndexIVFCCD_free(w);

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
    FaissRangeSearchResult* res = NULL;
    CHECK_OK(faiss_RangeSearchResult_new(&res, 2));
    CHECK_NULL_ARG(
            "result",
            faiss_ccd_IndexIVFCCD_range_search,
            (w, 2, xq, 1.0f, NULL));
    CHECK_NULL_ARG(
            "x",
            faiss_ccd_IndexIVFCCD_range_search,
            (w, 2, NULL, 1.0f, res));
    CHECK_INVALID(
            "made for 2 queries, not 3",
            faiss_ccd_IndexIVFCCD_range_search,
            (w, 3, xq, 1.0f, res));
    CHECK_INVALID(
            "n must be >= 0",
            faiss_ccd_IndexIVFCCD_range_search,
            (w, -1, xq, 1.0f, res));
    faiss_RangeSearchResult_free(res);
    CHECK_OK(faiss_ccd_IndexIVFCCD_search(w, 1, xq, 4, dist, lab));
    faiss_ccd_IndexIVFCCD_free(w);
    faiss_ccd_IndexIVFCCD_free(NULL);

    faiss_ccd_Pool_free(pool);
    faiss_Index_free(untrained);
    faiss_Index_free(pre);
    faiss_Index_free(hnsw);
    faiss_Index_free(ivf);
}

int main(void) {
    xb = random_vectors(NB, 12345);
    xq = random_vectors(NQ, 777);
    char path[] = "/tmp/faiss_ccd_test_XXXXXX";
    const int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    test_parallel_mode();
    printf("FAISS's C API in the CCD mode, through an IDMap2: ok\n");
    test_default_mode(path);
    printf("default parallel mode, read_index: ok\n");
    test_explicit();
    printf("FaissCcdIndexIVFCCD search and range search: ok\n");
    test_clients_and_lifetime();
    printf("concurrent clients, pool freed first: ok\n");
    test_errors();
    printf("errors: ok\n");
    free(xb);
    free(xq);
    report_bad_input_cases("test_IndexIVFCCD_c");
    return 0;
}
