/**
 * error_c.h: error codes and the per-thread last error message.
 */

#ifndef FAISS_CCD_ERROR_C_H
#define FAISS_CCD_ERROR_C_H

#include "faiss_ccd_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/// FaissCcdErrorCode: what a function of this API returns. 0 is success;
/// every error is negative.
typedef enum FaissCcdErrorCode {
    FAISS_CCD_OK = 0,
    /// A pointer argument was NULL; the message names it.
    FAISS_CCD_ERROR_NULL_ARGUMENT = -1,
    /// A value out of its domain: a count below zero, k <= 0, a bad
    /// topology spec or policy name, an index of the wrong type, a worker
    /// out of range, a duplicate table id...
    FAISS_CCD_ERROR_INVALID_ARGUMENT = -2,
    /// An id that names nothing (e.g. an unknown HNSW table id).
    FAISS_CCD_ERROR_NOT_FOUND = -3,
    /// FAISS (or the faiss-ccd glue) threw a faiss::FaissException: a bad
    /// factory string, an unreadable file, an untrained index...
    FAISS_CCD_ERROR_FAISS_EXCEPTION = -4,
    /// Another standard C++ exception.
    FAISS_CCD_ERROR_STD_EXCEPTION = -5,
    /// Memory allocation failed (std::bad_alloc).
    FAISS_CCD_ERROR_OUT_OF_MEMORY = -6,
    /// Anything else thrown.
    FAISS_CCD_ERROR_UNKNOWN = -7
} FaissCcdErrorCode;

/**
 * faiss_ccd_get_last_error: the message of the last call that failed on the
 * calling thread, naming the function that failed. Never NULL: "" while no
 * call has failed on this thread. Successful calls do not clear it. The
 * string stays valid until the next failing call on the same thread.
 */
const char* faiss_ccd_get_last_error(void);

/**
 * faiss_ccd_error_name: the constant's name for a code
 * ("FAISS_CCD_ERROR_NOT_FOUND"), or "unknown error code". Never NULL; a
 * static string.
 */
const char* faiss_ccd_error_name(int code);

#ifdef __cplusplus
}
#endif

#endif
