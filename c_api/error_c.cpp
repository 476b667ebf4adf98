/**
 * error_c.cpp: the per-thread last error and the exception-to-code mapping
 * of the C API.
 */

#include "error_c.h"
#include "macros_impl.h"

#include <faiss/impl/FaissException.h>

#include <cstdarg>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

namespace {

thread_local std::string last_error;
/// Set instead of last_error when recording the message ran out of memory.
thread_local const char* last_error_static = nullptr;

} // namespace

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
        last_error.swap(msg);
        last_error_static = nullptr;
    } catch (...) {
        last_error_static = "faiss_ccd: out of memory recording an error";
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
    return last_error_static ? last_error_static : last_error.c_str();
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
