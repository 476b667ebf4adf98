/**
 * test_HNSWTables_c.c: FaissCcdHNSWTables from C, for every policy: the
 * same answers as faiss_Index_search on each table's index, one index
 * under two ids, removal while others keep working, the pool handle freed
 * first, tables left at free; and every error path.
 */

#include "c_test.h"

#include <faiss_ccd/c_api/HNSWTables_c.h>

static float* xb;
static float* xq;

static FaissIndex* make_hnsw(const char* description, int ef_search) {
    FaissIndex* index = NULL;
    CHECK_OK(faiss_index_factory(&index, D, description, METRIC_L2));
    CHECK_OK(faiss_Index_add(index, NB, xb));
    set_parameter(index, "efSearch", ef_search);
    return index;
}

static void test_tables(void) {
    static const char* policies[] = {"ccd", "flat", "rr"};
    float d1[NQ * 10], d2[NQ * 10];
    faiss_ccd_idx_t l1[NQ * 10], l2[NQ * 10];

    for (int p = 0; p < 3; p++) {
        FaissIndex* h16 = make_hnsw("HNSW16", 24);
        FaissIndex* h8 = make_hnsw("HNSW8", 40);
        FaissCcdPool* pool = NULL;
        CHECK_OK(faiss_ccd_Pool_new(&pool, "2x2", policies[p]));
        FaissCcdHNSWTables* tables = NULL;
        CHECK_OK(faiss_ccd_HNSWTables_new(&tables, pool));
        /* One pool task per query, whatever the topology. */
        CHECK_INVALID(
                "hand_off",
                faiss_ccd_HNSWTables_set_hand_off,
                (tables, 2));
        CHECK_OK(faiss_ccd_HNSWTables_set_hand_off(tables, 1));
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

        CHECK_OK(faiss_Index_search(h16, NQ, xq, 10, d1, l1));
        uint64_t before = pool_tasks(pool);
        CHECK_OK(faiss_ccd_HNSWTables_search(tables, 1, NQ, xq, 10, d2, l2));
        check_same_results(NQ * 10, d1, l1, d2, l2);
        CHECK(pool_tasks(pool) == before + NQ); /* one task per query */
        CHECK_OK(faiss_Index_search(h8, NQ, xq, 5, d1, l1));
        CHECK_OK(faiss_ccd_HNSWTables_search(tables, 2, NQ, xq, 5, d2, l2));
        check_same_results(NQ * 5, d1, l1, d2, l2);

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

        /* Free the pool handle first: the tables keep the pool. */
        CHECK_OK(faiss_Index_search(h16, NQ, xq, 10, d1, l1));
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
        faiss_Index_free(h16);             /* after their tables */
        faiss_Index_free(h8);
    }
}

static void test_errors(void) {
    FaissIndex* ivf = make_index("IVF16,Flat", xb);
    FaissIndex* hnsw = NULL;
    CHECK_OK(faiss_index_factory(&hnsw, D, "HNSW8", METRIC_L2));
    FaissCcdPool* pool = NULL;
    CHECK_OK(faiss_ccd_Pool_new(&pool, "1x1", "ccd"));
    float dist[4];
    faiss_ccd_idx_t lab[4];
    int has = 0;
    size_t num = 0;

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
    faiss_Index_free(hnsw);
    faiss_Index_free(ivf);
}

int main(void) {
    xb = random_vectors(NB, 12345);
    xq = random_vectors(NQ, 777);
    test_tables();
    printf("HNSWTables, 3 policies: ok\n");
    test_errors();
    printf("HNSWTables errors: ok\n");
    free(xb);
    free(xq);
    report_bad_input_cases("test_HNSWTables_c");
    return 0;
}
