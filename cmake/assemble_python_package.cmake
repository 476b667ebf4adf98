# assemble_python_package.cmake (cmake -P): the importable package faiss
# from FAISS's Python build directory, laid out as its setup.py does, plus
# faiss-ccd's ccd.py and its contrib/ as the subpackage faiss.contrib.ccd.
#   -DFAISS_PY_BUILD=<build>/faiss/faiss/python  -DCCD_PY=python/ccd.py
#   -DCCD_CONTRIB=contrib  -DOUT=<build>/python/faiss

file(MAKE_DIRECTORY ${OUT})
foreach(_py __init__ loader class_wrappers gpu_wrappers extra_wrappers
        array_conversions)
  file(COPY_FILE ${FAISS_PY_BUILD}/${_py}.py ${OUT}/${_py}.py ONLY_IF_DIFFERENT)
endforeach()
foreach(_mod swigfaiss swigfaiss_avx2)
  if(EXISTS ${FAISS_PY_BUILD}/_${_mod}.so)
    file(COPY_FILE ${FAISS_PY_BUILD}/${_mod}.py ${OUT}/${_mod}.py
      ONLY_IF_DIFFERENT)
    file(COPY_FILE ${FAISS_PY_BUILD}/_${_mod}.so ${OUT}/_${_mod}.so
      ONLY_IF_DIFFERENT)
  endif()
endforeach()
file(COPY_FILE ${CCD_PY} ${OUT}/ccd.py ONLY_IF_DIFFERENT)
file(GLOB _contrib ${FAISS_PY_BUILD}/contrib/*.py)
file(MAKE_DIRECTORY ${OUT}/contrib)
foreach(_f ${_contrib})
  get_filename_component(_name ${_f} NAME)
  file(COPY_FILE ${_f} ${OUT}/contrib/${_name} ONLY_IF_DIFFERENT)
endforeach()
# faiss-ccd's contrib/: faiss.contrib.ccd. Files no longer in the source
# are removed, so a renamed module cannot linger in the package.
file(REMOVE_RECURSE ${OUT}/contrib/ccd)
file(MAKE_DIRECTORY ${OUT}/contrib/ccd)
file(GLOB _ccd_contrib ${CCD_CONTRIB}/*.py)
foreach(_f ${_ccd_contrib})
  get_filename_component(_name ${_f} NAME)
  file(COPY_FILE ${_f} ${OUT}/contrib/ccd/${_name})
endforeach()
