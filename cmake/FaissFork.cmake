# FaissFork.cmake: the fork. FAISS 1.7.3's source from Debian's source
# package, with Debian's patches and ours (scripts/faiss_source.sh), built
# in this build tree with the CCD pool and the glue compiled into libfaiss.
#
# Targets it makes (FAISS's names, with our code inside):
#   faiss_avx2, faiss   libfaiss built with AVX2, and generic (the latter
#                       only for the generic Python module)
#   faiss_c             FAISS's C API, over faiss_avx2, plus faiss-ccd's
#                       (c_api/) when FAISS_CCD_BUILD_C_API
#   swigfaiss_avx2,     the Python module faiss (FAISS_CCD_ENABLE_PYTHON),
#   swigfaiss           assembled importable in <build>/python/faiss/
#   faiss_ccd           what our tests and benchmarks link: faiss_avx2
#
# FAISS's demos, benchmarks and tutorials are left out of the default
# build (its install rules stay: the whole directory cannot be excluded).

execute_process(
  COMMAND ${PROJECT_SOURCE_DIR}/scripts/faiss_source.sh
  OUTPUT_VARIABLE FAISS_CCD_FAISS_SOURCE_DIR
  OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _faiss_source_rc)
if(NOT _faiss_source_rc EQUAL 0 OR NOT EXISTS ${FAISS_CCD_FAISS_SOURCE_DIR})
  message(FATAL_ERROR
    "faiss_ccd: scripts/faiss_source.sh could not prepare FAISS's source")
endif()
message(STATUS "faiss_ccd: FAISS source ${FAISS_CCD_FAISS_SOURCE_DIR}")
# A changed patch (or script) makes a new source tree at the next build.
file(GLOB _faiss_ccd_patches ${PROJECT_SOURCE_DIR}/faiss/patches/*)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${_faiss_ccd_patches} ${PROJECT_SOURCE_DIR}/scripts/faiss_source.sh)

# FAISS's options, as normal variables (its option() calls then keep them).
set(FAISS_OPT_LEVEL avx2)
set(FAISS_ENABLE_GPU OFF)
set(FAISS_ENABLE_PYTHON ${FAISS_CCD_ENABLE_PYTHON})
set(FAISS_ENABLE_C_API ON)
set(FAISS_USE_SYSTEM_GTEST ON)
# FAISS's own tests are built below, as ours (tests/upstream/).
set(BUILD_TESTING OFF)
if(FAISS_CCD_ENABLE_PYTHON)
  set(Python_EXECUTABLE ${FAISS_CCD_PYTHON})
endif()

# A sanitizer instruments our code (below), not FAISS's: its SIMD kernels
# read through casts UBSan would stop on, and they are not what we test.
get_directory_property(_faiss_ccd_options COMPILE_OPTIONS)
set_directory_properties(PROPERTIES COMPILE_OPTIONS "")
add_subdirectory(${FAISS_CCD_FAISS_SOURCE_DIR} ${PROJECT_BINARY_DIR}/faiss)
set_directory_properties(PROPERTIES COMPILE_OPTIONS "${_faiss_ccd_options}")
foreach(_dir demos benchs tutorial/cpp)
  set_property(DIRECTORY ${FAISS_CCD_FAISS_SOURCE_DIR}/${_dir}
    PROPERTY EXCLUDE_FROM_ALL TRUE)
endforeach()

# ------------------------------------------------ our code inside libfaiss

# faiss/ivf_ccd/ and faiss/hnsw_ccd/: the CCD-mode IVF search and the
# HNSW tables' queries, one concept a file; their headers are the
# library's own, not installed (faiss/IVFSearchCCD.h and faiss/HNSWTables.h
# are the API).
file(GLOB FAISS_CCD_GLUE_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/faiss/*.cpp ${PROJECT_SOURCE_DIR}/faiss/ivf_ccd/*.cpp
  ${PROJECT_SOURCE_DIR}/faiss/hnsw_ccd/*.cpp)
file(GLOB FAISS_CCD_GLUE_HEADERS CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/faiss/*.h)

foreach(_lib faiss faiss_avx2)
  target_sources(${_lib} PRIVATE
    ${FAISS_CCD_SCHEDULER_SOURCES} ${FAISS_CCD_GLUE_SOURCES})
  # C++17 for our sources (FAISS 1.7.3 asks for 11 and builds as 17).
  set_target_properties(${_lib} PROPERTIES CXX_STANDARD 17)
  # Our headers in the build tree; and, installed, the include directory
  # (FAISS 1.7.3 gives faiss_avx2 none).
  target_include_directories(${_lib}
    PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${HWLOC_INCLUDE_DIRS})
  # hwloc by path: the installed package needs no pkg-config target.
  target_link_libraries(${_lib} PRIVATE ${HWLOC_LINK_LIBRARIES} Threads::Threads)
endforeach()

# faiss_ccd_sanitize_sources(<target> <sources...>): the sanitizer's flags
# on our sources inside one of FAISS's targets.
function(faiss_ccd_sanitize_sources target)
  if(FAISS_CCD_SANITIZE)
    set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target}
      PROPERTIES COMPILE_OPTIONS "${FAISS_CCD_SANITIZE_FLAGS}")
  endif()
endfunction()
# Ours, and FAISS's IndexIVF.cpp, which our patch changes.
faiss_ccd_sanitize_sources(faiss_avx2
  ${FAISS_CCD_SCHEDULER_SOURCES} ${FAISS_CCD_GLUE_SOURCES}
  ${FAISS_CCD_FAISS_SOURCE_DIR}/faiss/IndexIVF.cpp)
faiss_ccd_sanitize_sources(faiss
  ${FAISS_CCD_SCHEDULER_SOURCES} ${FAISS_CCD_GLUE_SOURCES}
  ${FAISS_CCD_FAISS_SOURCE_DIR}/faiss/IndexIVF.cpp)

# What our tests and benchmarks link.
add_library(faiss_ccd INTERFACE)
target_link_libraries(faiss_ccd INTERFACE faiss_avx2 OpenMP::OpenMP_CXX)

# -------------------------------------------------------------- the C API

# FAISS's, and ours beside it in the same library.
set_target_properties(faiss_c PROPERTIES CXX_STANDARD 17)

# ---------------------------------------------------------- Python module

if(FAISS_CCD_ENABLE_PYTHON)
  foreach(_mod swigfaiss swigfaiss_avx2)
    set_target_properties(${_mod} PROPERTIES CXX_STANDARD 17)
    # faiss_ccd.swig and its headers, for SWIG and the compiler alike.
    target_include_directories(${_mod} PRIVATE ${PROJECT_SOURCE_DIR}/python)
    target_sources(${_mod} PRIVATE
      ${PROJECT_SOURCE_DIR}/python/glue/Completions.cpp
      ${PROJECT_SOURCE_DIR}/python/glue/ccd_glue.cpp)
    faiss_ccd_sanitize_sources(${_mod}
      ${PROJECT_SOURCE_DIR}/python/glue/Completions.cpp
      ${PROJECT_SOURCE_DIR}/python/glue/ccd_glue.cpp)
    set_property(TARGET ${_mod} APPEND PROPERTY SWIG_DEPENDS
      ${PROJECT_SOURCE_DIR}/python/faiss_ccd.swig
      ${PROJECT_SOURCE_DIR}/python/glue/Completions.h
      ${PROJECT_SOURCE_DIR}/python/glue/ccd_glue.h
      ${FAISS_CCD_GLUE_HEADERS}
      ${FAISS_CCD_SCHEDULER_HEADERS})
  endforeach()

  # <build>/python/faiss: the package, importable with PYTHONPATH, as
  # FAISS's own setup.py lays it out, plus faiss/ccd.py and contrib/ as
  # faiss/contrib/ccd.
  set(FAISS_CCD_PYTHON_DIR ${PROJECT_BINARY_DIR}/python)
  file(GLOB FAISS_CCD_CONTRIB_PY CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/contrib/*.py)
  add_custom_target(faiss_python ALL
    COMMAND ${CMAKE_COMMAND}
      -DFAISS_PY_BUILD=${PROJECT_BINARY_DIR}/faiss/faiss/python
      -DCCD_PY=${PROJECT_SOURCE_DIR}/python/ccd.py
      -DCCD_CONTRIB=${PROJECT_SOURCE_DIR}/contrib
      -DOUT=${FAISS_CCD_PYTHON_DIR}/faiss
      -P ${PROJECT_SOURCE_DIR}/cmake/assemble_python_package.cmake
    DEPENDS swigfaiss swigfaiss_avx2 ${PROJECT_SOURCE_DIR}/python/ccd.py
      ${FAISS_CCD_CONTRIB_PY}
    COMMENT "faiss_ccd: assembling the faiss package in python/faiss")
endif()
