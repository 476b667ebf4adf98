/**
 * error_c.cpp: the exception-to-code mapping of the C API; the message
 * goes to FAISS's per-thread last error (faiss_get_last_error).
 */

#include "error_c.h"
#include "macros_impl.h"

#include <faiss/c_api/error_c.h>
#include <faiss/c_api/error_impl.h>
#include <faiss/impl/FaissException.h>

#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

namespace faiss_ccd_c {

int fail(int code, const char* func, const char* fmt, ...) noexcept {
    va_list args;
    va_start(args, fmt);
    va_list args2;
    va_copy(args2, args);
    int len = std::vsnprintf(nullptr, 0, fmt, args);
    va_end(args);
    try {
        std::string msg = std::string(func) + ": ";
        size_t start = msg.size();
        msg.resize(start + (len > 0 ? len : 0) + 1);
        if (len > 0) {
            std::vsnprintf(&msg[start], len + 1, fmt, args2);
        }
        msg.resize(msg.size() - 1);
        // FAISS's own channel: faiss_get_last_error() reads it, for this
        // API's calls and FAISS's alike.
        faiss_last_exception = std::make_exception_ptr(std::runtime_error(msg));
    } catch (...) {
        faiss_last_exception = std::make_exception_ptr(std::bad_alloc());
    }
    va_end(args2);
    return code;
}

int fail_current_exception(const char* func) noexcept {
    try {
        throw;
    } catch (const faiss::FaissException& e) {
        return fail(FAISS_CCD_ERROR_FAISS_EXCEPTION, func, "%s", e.what());
    } catch (const std::bad_alloc&) {
        return fail(FAISS_CCD_ERROR_OUT_OF_MEMORY, func, "out of memory");
    } catch (const std::invalid_argument& e) {
        return fail(FAISS_CCD_ERROR_INVALID_ARGUMENT, func, "%s", e.what());
    } catch (const std::out_of_range& e) {
        return fail(FAISS_CCD_ERROR_INVALID_ARGUMENT, func, "%s", e.what());
    } catch (const std::domain_error& e) {
        return fail(FAISS_CCD_ERROR_INVALID_ARGUMENT, func, "%s", e.what());
    } catch (const std::exception& e) {
        return fail(FAISS_CCD_ERROR_STD_EXCEPTION, func, "%s", e.what());
    } catch (...) {
        return fail(FAISS_CCD_ERROR_UNKNOWN, func, "unknown exception");
    }
}

} // namespace faiss_ccd_c

extern "C" {

const char* faiss_ccd_get_last_error(void) {
    const char* msg = faiss_get_last_error();
    return msg != nullptr ? msg : "";
}

const char* faiss_ccd_error_name(int code) {
    switch (code) {
        case FAISS_CCD_OK:
            return "FAISS_CCD_OK";
        case FAISS_CCD_ERROR_NULL_ARGUMENT:
            return "FAISS_CCD_ERROR_NULL_ARGUMENT";
        case FAISS_CCD_ERROR_INVALID_ARGUMENT:
            return "FAISS_CCD_ERROR_INVALID_ARGUMENT";
        case FAISS_CCD_ERROR_NOT_FOUND:
            return "FAISS_CCD_ERROR_NOT_FOUND";
        case FAISS_CCD_ERROR_FAISS_EXCEPTION:
            return "FAISS_CCD_ERROR_FAISS_EXCEPTION";
        case FAISS_CCD_ERROR_STD_EXCEPTION:
            return "FAISS_CCD_ERROR_STD_EXCEPTION";
        case FAISS_CCD_ERROR_OUT_OF_MEMORY:
            return "FAISS_CCD_ERROR_OUT_OF_MEMORY";
        case FAISS_CCD_ERROR_UNKNOWN:
            return "FAISS_CCD_ERROR_UNKNOWN";
        default:
            return "unknown error code";
    }
}

} // extern "C"
