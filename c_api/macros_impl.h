/**
 * macros_impl.h (private, not installed): recording the last error, and
 * the macros that turn bad arguments and C++ exceptions into error codes.
 *
 * A function body of the C API reads:
 *
 *     FAISS_CCD_C_CHECK_NOT_NULL(index);
 *     FAISS_CCD_C_CHECK_ARG(n >= 0, "n must be >= 0 (got %" PRId64 ")", n);
 *     FAISS_CCD_C_TRY {
 *         ... C++ calls that may throw ...
 *     }
 *     FAISS_CCD_C_CATCH_ALL;
 *
 * Every message starts with the name of the C function (__func__).
 */

#pragma once

#include "error_c.h"

namespace faiss_ccd_c {

/// fail: record "<func>: <printf(fmt, ...)>" as the calling thread's last
/// error and return `code`. Never throws.
int fail(int code, const char* func, const char* fmt, ...) noexcept
        __attribute__((format(printf, 3, 4)));

/// fail_current_exception: from inside a catch block, map the exception in
/// flight to an error code, record "<func>: <what()>", return the code.
int fail_current_exception(const char* func) noexcept;

} // namespace faiss_ccd_c

/// FAISS_CCD_C_CHECK_NOT_NULL: return FAISS_CCD_ERROR_NULL_ARGUMENT, naming
/// the argument, when it is NULL.
#define FAISS_CCD_C_CHECK_NOT_NULL(arg)            \
    do {                                           \
        if ((arg) == nullptr) {                    \
            return ::faiss_ccd_c::fail(            \
                    FAISS_CCD_ERROR_NULL_ARGUMENT, \
                    __func__,                      \
                    "argument '%s' is NULL",       \
                    #arg);                         \
        }                                          \
    } while (false)

/// FAISS_CCD_C_CHECK_ARG: return FAISS_CCD_ERROR_INVALID_ARGUMENT with the
/// printf-style message when `cond` is false.
#define FAISS_CCD_C_CHECK_ARG(cond, ...)              \
    do {                                              \
        if (!(cond)) {                                \
            return ::faiss_ccd_c::fail(               \
                    FAISS_CCD_ERROR_INVALID_ARGUMENT, \
                    __func__,                         \
                    __VA_ARGS__);                     \
        }                                             \
    } while (false)

/// FAISS_CCD_C_TRY / FAISS_CCD_C_CATCH_ALL: run the block; an exception
/// becomes its error code, otherwise the function returns FAISS_CCD_OK.
#define FAISS_CCD_C_TRY try

#define FAISS_CCD_C_CATCH_ALL                                   \
    catch (...) {                                               \
        return ::faiss_ccd_c::fail_current_exception(__func__); \
    }                                                           \
    return FAISS_CCD_OK
