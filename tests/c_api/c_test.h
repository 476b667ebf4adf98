/**
 * c_test.h: what the C API tests share: checks that report the last
 * error, error-path checks (code, message naming the function, a fresh
 * message), deterministic data, and indexes made with FAISS's own C API.
 * Each test program includes it once.
 */

#ifndef FAISS_CCD_C_TEST_H
#define FAISS_CCD_C_TEST_H

#define _POSIX_C_SOURCE 200809L

#include <faiss/c_api/AutoTune_c.h>
#include <faiss/c_api/IndexIVF_c.h>
#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/index_factory_c.h>
#include <faiss_ccd/c_api/Pool_c.h>
#include <faiss_ccd/c_api/error_c.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ checking */

/* last_error: the calling thread's last error (FAISS's channel, which
 * faiss-ccd's functions write too), "" while none. */
static inline const char* last_error(void) {
    const char* msg = faiss_get_last_error();
    return msg != NULL ? msg : "";
}

static inline void fail_at(const char* file, int line, const char* what) {
    fprintf(stderr,
            "%s:%d: CHECK failed: %s\n  last error: \"%s\"\n",
            file,
            line,
            what,
            last_error());
    exit(1);
}

#define CHECK(cond)                             \
    do {                                        \
        if (!(cond)) {                          \
            fail_at(__FILE__, __LINE__, #cond); \
        }                                       \
    } while (0)

/* Our functions return FAISS_CCD_OK (0); FAISS's return 0 too. */
#define CHECK_OK(call) CHECK((call) == 0)

/* A failure recorded before each checked call, so that a message left over
 * from an earlier call cannot pass for the new one. */
#define SENTINEL_SPEC "sentinel-spec"

static inline void plant_sentinel(void) {
    FaissCcdPool* pool = NULL;
    if (faiss_ccd_Pool_new(&pool, SENTINEL_SPEC, NULL) == FAISS_CCD_OK ||
        strstr(last_error(), SENTINEL_SPEC) == NULL) {
        fail_at(__FILE__, __LINE__, "planting the sentinel error");
    }
}

/* bad_input_cases: error paths checked so far by this program (each test
 * program prints its count at the end: report_bad_input_cases). */
static int bad_input_cases;

static inline void report_bad_input_cases(const char* program) {
    printf("%s: %d bad-input cases, each refused with its code and a "
           "message naming the function\n",
           program,
           bad_input_cases);
}

/* check_error: rc is `code`; the message is fresh, names `func` and
 * contains `needle`. */
static inline void check_error(
        const char* file,
        int line,
        int rc,
        int code,
        const char* func,
        const char* needle) {
    const char* msg = last_error();
    char what[512];
    bad_input_cases++;
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

static inline float lcg_float(void) {
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(lcg_state >> 40) / (double)(1ULL << 24));
}

static inline float* random_vectors(size_t n, uint64_t seed) {
    float* x = malloc(sizeof(float) * n * D);
    CHECK(x != NULL);
    lcg_state = seed;
    for (size_t i = 0; i < n * D; i++) {
        x[i] = lcg_float();
    }
    return x;
}

/* The results of two searches agree: same labels, distances within 1e-5
 * relative. */
static inline void check_same_results(
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

/* ---------------------------------------- indexes, by FAISS's C API */

/* make_index: index_factory(description), trained on and filled with xb. */
static inline FaissIndex* make_index(const char* description, const float* xb) {
    FaissIndex* index = NULL;
    CHECK_OK(faiss_index_factory(&index, D, description, METRIC_L2));
    CHECK_OK(faiss_Index_train(index, NB, xb));
    CHECK_OK(faiss_Index_add(index, NB, xb));
    return index;
}

static inline void set_nprobe(FaissIndex* index, size_t nprobe) {
    FaissIndexIVF* ivf = faiss_IndexIVF_cast(index);
    CHECK(ivf != NULL);
    faiss_IndexIVF_set_nprobe(ivf, nprobe);
}

/* set_parameter: FAISS's ParameterSpace ("nprobe", "efSearch", ...). */
static inline void
set_parameter(FaissIndex* index, const char* name, double value) {
    FaissParameterSpace* space = NULL;
    CHECK_OK(faiss_ParameterSpace_new(&space));
    CHECK_OK(faiss_ParameterSpace_set_index_parameter(
            space,
            index,
            name,
            value));
    faiss_ParameterSpace_free(space);
}

/* pool_tasks: tasks the pool has run so far, once it is idle (a search
 * returns when its tasks are done; the pool counts them a moment later). */
static inline uint64_t pool_tasks(const FaissCcdPool* pool) {
    CHECK_OK(faiss_ccd_Pool_wait_idle(pool));
    FaissCcdPoolStats st;
    CHECK_OK(faiss_ccd_Pool_stats(pool, &st));
    return st.tasks_run;
}

/* pool_served: searches the pool served (in their calling thread or with
 * helper tasks) plus the tasks it ran, once it is idle. */
static inline uint64_t pool_served(const FaissCcdPool* pool) {
    CHECK_OK(faiss_ccd_Pool_wait_idle(pool));
    FaissCcdPoolStats st;
    CHECK_OK(faiss_ccd_Pool_stats(pool, &st));
    return st.callers + st.tasks_run;
}

#endif
