/**
 * test_errors_c.c: faiss-ccd's C error conventions: the named codes, their
 * names, and the last error kept per thread (a successful call leaves it;
 * another thread has its own), in FAISS's one channel, which FAISS's own
 * functions write too; faiss_ccd_get_last_error is its alias.
 */

#include "c_test.h"

#include <pthread.h>

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

static void* other_thread(void* arg) {
    int* ok = arg;
    /* Nothing failed on this thread yet: "", not the main thread's. */
    CHECK(faiss_get_last_error() == NULL);
    FaissCcdPool* pool = NULL;
    CHECK(faiss_ccd_Pool_new(&pool, "1x1", "other-thread-policy") ==
          FAISS_CCD_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(last_error(), "other-thread-policy") != NULL);
    *ok = 1;
    return NULL;
}

static void test_last_error_per_thread(void) {
    FaissCcdPool* pool = NULL;
    CHECK(faiss_ccd_Pool_new(&pool, "main-thread-spec", NULL) ==
          FAISS_CCD_ERROR_INVALID_ARGUMENT);
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", last_error());
    CHECK(strstr(saved, "main-thread-spec") != NULL);

    /* A successful call leaves the message as it was. */
    CHECK_OK(faiss_ccd_Pool_new(&pool, "1x1", NULL));
    CHECK(strcmp(last_error(), saved) == 0);

    pthread_t thread;
    int ok = 0;
    CHECK(pthread_create(&thread, NULL, other_thread, &ok) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(ok == 1);
    CHECK(strcmp(last_error(), saved) == 0);
    faiss_ccd_Pool_free(pool);
}

/* One channel: FAISS's failure and ours land in faiss_get_last_error, and
 * the deprecated alias reads the same string. */
static void test_one_channel(void) {
    FaissIndex* index = NULL;
    CHECK(faiss_index_factory(&index, 8, "NoSuchIndexKey", METRIC_L2) != 0);
    CHECK(faiss_get_last_error() != NULL);
    CHECK(strstr(faiss_get_last_error(), "NoSuchIndexKey") != NULL);
    CHECK(strcmp(faiss_ccd_get_last_error(), faiss_get_last_error()) == 0);
    FaissCcdPool* pool = NULL;
    CHECK(faiss_ccd_Pool_new(&pool, "one-channel-spec", NULL) ==
          FAISS_CCD_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(faiss_get_last_error(), "faiss_ccd_Pool_new: ") ==
          faiss_get_last_error());
    CHECK(strstr(faiss_get_last_error(), "one-channel-spec") != NULL);
    CHECK(strcmp(faiss_ccd_get_last_error(), faiss_get_last_error()) == 0);
}

int main(void) {
    /* Before anything failed on this thread: FAISS's NULL, the alias's "". */
    CHECK(faiss_get_last_error() == NULL);
    CHECK(faiss_ccd_get_last_error() != NULL);
    CHECK(faiss_ccd_get_last_error()[0] == '\0');
    test_error_names();
    printf("error names: ok\n");
    test_last_error_per_thread();
    printf("per-thread last error: ok\n");
    test_one_channel();
    printf("one channel with FAISS's: ok\n");
    return 0;
}
