"""Argument checks shared by the faiss_ccd classes.

Every public entry point checks its arguments here before anything reaches
C++, so bad input raises a TypeError or ValueError that names the argument,
and never a crash.
"""

import numbers

import faiss
import numpy as np

# MappingId's table half; 0xffffffff is reserved by the pool.
MAX_TABLE_ID = 0xFFFFFFFE


def check_int(name, value, minimum=None, maximum=None):
    """An int (not bool) within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_table_id(table_id):
    return check_int("table_id", table_id, 0, MAX_TABLE_ID)


def check_k(k):
    return check_int("k", k, 1)


def check_float32_matrix(name, x, d, allow_vector=False):
    """x: a C-contiguous float32 numpy array of shape (n, d), or (d,) when
    allow_vector. Returns it as a 2-D view (no copy)."""
    if not isinstance(x, np.ndarray):
        raise TypeError(
            f"{name} must be a numpy.ndarray of float32, "
            f"not {type(x).__name__}")
    if x.dtype != np.float32:
        raise TypeError(f"{name} must have dtype float32, not {x.dtype}")
    if x.ndim == 1 and allow_vector:
        x = x.reshape(1, -1)
    if x.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D of shape (n, {d}), got shape {x.shape}")
    if x.shape[1] != d:
        raise ValueError(
            f"{name} has {x.shape[1]} columns, the index has d={d}")
    if not x.flags.c_contiguous:
        raise ValueError(
            f"{name} must be C-contiguous (use numpy.ascontiguousarray)")
    return x


def check_output(name, out, shape, dtype):
    """A caller-given output array, or a new one when out is None."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray")
    if out.dtype != dtype:
        raise TypeError(f"{name} must have dtype {np.dtype(dtype)}, "
                        f"not {out.dtype}")
    if out.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {out.shape}")
    if not (out.flags.c_contiguous and out.flags.writeable):
        raise ValueError(f"{name} must be C-contiguous and writeable")
    return out


def address(array):
    """The data pointer of a numpy array."""
    return array.__array_interface__["data"][0]


def params_address(params, cls=faiss.SearchParameters):
    """0 for None, else the address of a faiss SearchParameters object."""
    if params is None:
        return 0
    if not isinstance(params, cls):
        raise TypeError(
            f"params must be a faiss.{cls.__name__}, "
            f"not {type(params).__name__}")
    return int(params.this)


def index_address(index, cls, what):
    """The address of a faiss index object of class cls."""
    if not isinstance(index, cls):
        raise TypeError(
            f"{what} must be a faiss.{cls.__name__}, "
            f"not {type(index).__name__}")
    return int(index.this)
