/**
 * error_c.h: error codes and the per-thread last error message.
 */

#ifndef FAISS_CCD_ERROR_C_H
#define FAISS_CCD_ERROR_C_H

#include "faiss_ccd_c.h"

#include <faiss/c_api/error_c.h>

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
 * The message of a failed call is FAISS's last error on the calling
 * thread, faiss_get_last_error() (<faiss/c_api/error_c.h>): one channel
 * for this API's functions and FAISS's. It names the function that failed,
 * stays until the next failing call on the same thread (successful calls
 * leave it), and is NULL while no call has failed on this thread.
 *
 * faiss_ccd_get_last_error: the same message, "" instead of NULL.
 * Deprecated: kept for one release for code written against 0.x; use
 * faiss_get_last_error().
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
