/* example.c: IVF search through a CCD-aware pool, from C. */
#include <faiss_ccd/c_api/IndexIVFCCD_c.h>
#include <faiss_ccd/c_api/Index_c.h>
#include <faiss_ccd/c_api/Pool_c.h>
#include <faiss_ccd/c_api/error_c.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* A call returns FAISS_CCD_OK (0), or a negative code when it fails. */
#define CHECK(call)                              \
    do {                                         \
        int rc_ = (call);                        \
        if (rc_ < 0) {                           \
            fprintf(stderr,                      \
                    "%s: %s\n",                  \
                    faiss_ccd_error_name(rc_),   \
                    faiss_ccd_get_last_error()); \
            exit(1);                             \
        }                                        \
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

    /* An IVF index, trained and filled. */
    FaissCcdIndex* index = NULL;
    const char* spec = "IVF64,Flat"; /* 64 inverted lists, no compression */
    CHECK(faiss_ccd_index_factory(&index, D, spec, FAISS_CCD_METRIC_L2));
    CHECK(faiss_ccd_Index_train(index, NB, xb));
    CHECK(faiss_ccd_Index_add(index, NB, xb));
    CHECK(faiss_ccd_Index_set_nprobe(index, 8));

    /* A pool: $FAISS_CCD_TOPOLOGY, else hwloc's CCDs; the "ccd" policy. */
    FaissCcdPool* pool = NULL;
    CHECK(faiss_ccd_Pool_new(&pool, NULL, NULL));
    char line[256];
    CHECK(faiss_ccd_Pool_describe(pool, line, sizeof line));
    printf("pool: %s\n", line);

    /* Search through the pool: one task per (query, probed list). */
    FaissCcdIndexIVFCCD* ivfccd = NULL;
    CHECK(faiss_ccd_IndexIVFCCD_new(&ivfccd, index, pool, 0));
    float dis[NQ * K];
    faiss_ccd_idx_t ids[NQ * K];
    CHECK(faiss_ccd_IndexIVFCCD_search(ivfccd, NQ, xq, K, dis, ids));
    for (int q = 0; q < NQ; q++) {
        printf("query %d:", q);
        for (int j = 0; j < K; j++) {
            printf(" %" PRId64 " (%.3f)", ids[q * K + j], dis[q * K + j]);
        }
        printf("\n");
    }

    FaissCcdPoolStats st;
    CHECK(faiss_ccd_Pool_stats(pool, &st));
    printf("%d workers ran %" PRIu64 " tasks, %.0f%% of steals cross-CCD\n",
           st.num_workers,
           st.tasks_run,
           100.0 * st.cross_ccd_steal_ratio);

    /* Any order: each handle keeps what it uses alive. */
    faiss_ccd_IndexIVFCCD_free(ivfccd);
    faiss_ccd_Pool_free(pool);
    faiss_ccd_Index_free(index);
    free(xb);
    return 0;
}
