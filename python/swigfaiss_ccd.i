/*
 * swigfaiss_ccd: the low-level module under the faiss_ccd package.
 *
 * It wraps the small handle classes of python/glue/, which take FAISS
 * objects and numpy arrays by address; python/faiss_ccd/ checks types,
 * shapes and dtypes and keeps every object alive across a call. Nothing
 * here touches a Python object, so every call runs without the GIL
 * (-threads). C++ exceptions become Python ones with their message:
 * std::invalid_argument -> ValueError, std::bad_alloc -> MemoryError,
 * anything else -> RuntimeError (as the faiss module does for
 * faiss::FaissException).
 */

%module(threads="1") swigfaiss_ccd

%{
#include "glue/Completions.h"
#include "glue/HNSWTablesHandle.h"
#include "glue/IndexIVFCCDHandle.h"
#include "glue/PoolHandle.h"

#include <cxxabi.h>
#include <new>
#include <stdexcept>

using namespace faiss::ccd::python;
%}

/* Without SWIGWORDSIZE64, SWIG's stdint.i makes uintptr_t an unsigned int
   and rejects every address above 4 GiB (numpy buffers from mmap, objects
   made by other threads) with an OverflowError. We build for LP64 Linux. */
#define SWIGWORDSIZE64
%include <stdint.i>
%include <std_string.i>

%{
static_assert(sizeof(uintptr_t) == sizeof(unsigned long),
              "swigfaiss_ccd assumes an LP64 platform");
%}

/* abi::__forced_unwind: a thread that takes the GIL back while the
   interpreter finalizes is ended by pthread_exit, which unwinds the stack
   with this exception; swallowing it would abort the process. */
%exception {
    try {
        $action
    } catch (abi::__forced_unwind&) {
        throw;
    } catch (const std::invalid_argument& e) {
        SWIG_exception_fail(SWIG_ValueError, e.what());
    } catch (const std::bad_alloc& e) {
        SWIG_exception_fail(SWIG_MemoryError, e.what());
    } catch (const std::exception& e) {
        SWIG_exception_fail(SWIG_RuntimeError, e.what());
    } catch (...) {
        SWIG_exception_fail(SWIG_RuntimeError, "unknown C++ exception");
    }
}

%ignore faiss::ccd::python::PoolHandle::runtime;
%ignore faiss::ccd::python::Completions::State;
%ignore faiss::ccd::python::Completions::state;
%ignore faiss::ccd::python::RangeResult::get;

%newobject faiss::ccd::python::IndexIVFCCDHandle::range_search;

%include "glue/PoolHandle.h"
%include "glue/Completions.h"
%include "glue/IndexIVFCCDHandle.h"
%include "glue/HNSWTablesHandle.h"
