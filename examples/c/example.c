/* example.c: an IVF index searched through the CCD-aware pool, from C. */
#include <faiss/c_api/IndexIVF_c.h>
#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/index_factory_c.h>
#include <faiss_ccd/c_api/Pool_c.h>
#include <faiss_ccd/c_api/error_c.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* FAISS's functions return 0 or an error; ours return FAISS_CCD_OK (0) or
 * a negative FAISS_CCD_ERROR_* code. Both leave the message in
 * faiss_get_last_error(). */
#define FAISS_CHECK(call)                                           \
    do {                                                            \
        if ((call) != 0) {                                          \
            fprintf(stderr, "faiss: %s\n", faiss_get_last_error()); \
            exit(1);                                                \
        }                                                           \
    } while (0)
#define CCD_CHECK(call)                        \
    do {                                       \
        int rc_ = (call);                      \
        if (rc_ < 0) {                         \
            fprintf(stderr,                    \
                    "%s: %s\n",                \
                    faiss_ccd_error_name(rc_), \
                    faiss_get_last_error());   \
            exit(1);                           \
        }                                      \
    } while (0)

enum { D = 32, NB = 10000, NQ = 3, K = 4 };

int main(void) {
    float* xb = malloc(sizeof(float) * D * NB);
    if (xb == NULL) {
        return 1;
    }
    for (size_t i = 0; i < (size_t)D * NB; i++) {
        xb[i] = (float)rand() / (float)RAND_MAX;
    }
    const float* xq = xb; /* the first NQ database vectors as queries */

    /* An IVF index, made and filled with FAISS's own C API. */
    FaissIndex* index = NULL;
    FAISS_CHECK(faiss_index_factory(&index, D, "IVF64,Flat", METRIC_L2));
    FAISS_CHECK(faiss_Index_train(index, NB, xb));
    FAISS_CHECK(faiss_Index_add(index, NB, xb));
    FaissIndexIVF* ivf = faiss_IndexIVF_cast(index);
    faiss_IndexIVF_set_nprobe(ivf, 8);

    /* The pool its searches use: $FAISS_CCD_TOPOLOGY, else hwloc's CCDs;
     * the "ccd" policy. Without this, a default one is made on first use. */
    FaissCcdPool* pool = NULL;
    CCD_CHECK(faiss_ccd_Pool_new(&pool, NULL, NULL));
    CCD_CHECK(faiss_ccd_set_default_pool(pool));
    char line[256];
    CCD_CHECK(faiss_ccd_Pool_describe(pool, line, sizeof line));
    printf("pool: %s\n", line);

    /* The CCD mode: one task per (query, probed list), on the pool. */
    faiss_IndexIVF_set_parallel_mode(ivf, FAISS_PARALLEL_MODE_CCD);
    float dis[NQ * K];
    idx_t ids[NQ * K];
    FAISS_CHECK(faiss_Index_search(index, NQ, xq, K, dis, ids));
    for (int q = 0; q < NQ; q++) {
        printf("query %d:", q);
        for (int j = 0; j < K; j++) {
            printf(" %" PRId64 " (%.3f)", ids[q * K + j], dis[q * K + j]);
        }
        printf("\n");
    }

    FaissCcdPoolStats st;
    CCD_CHECK(faiss_ccd_Pool_stats(pool, &st));
    printf("%d workers ran %" PRIu64 " tasks, %.0f%% of steals cross-CCD\n",
           st.num_workers,
           st.tasks_run,
           100.0 * st.cross_ccd_steal_ratio);

    CCD_CHECK(faiss_ccd_set_default_pool(NULL));
    faiss_ccd_Pool_free(pool);
    faiss_Index_free(index);
    free(xb);
    return 0;
}
