"""Data sets for the benchmarks, as faiss.contrib.datasets.Dataset objects
(get_database, get_queries, get_train, get_groundtruth), with exact ground
truth computed once and cached on disk.

    FashionMNIST()        Debian's dataset-fashion-mnist: 60000 train images
                          as the base, 10000 test images as queries, d 784
    Vecs(...)             fvecs/bvecs/ivecs files: sift1m(DIR), gist1m(DIR),
                          deep1m(DIR) for users who have those files
    HDF5(path)            an ann-benchmarks file (train/test/neighbors) read
                          with h5py (the project's .venv has it)
    SkewedSynthetic(...)  gaussian blobs of lognormal sizes; queries drawn
                          by a Zipf law over the blobs, whose hot set can
                          rotate over time (query_trace)
    by_name("fmnist" | "synthetic" | "sift1m:DIR" | "hdf5:FILE" | ...)

Ground truth is exact k-NN (faiss.knn on the whole base) for the data set's
own queries, stored as <cache>/<key>.npz, where <cache> is $FAISS_CCD_CACHE
or ~/.cache/faiss-ccd and <key> names the data set, its sizes and a stamp
of its queries and base, so another sample never reuses a stale file.
"""

import gzip
import hashlib
import math
import os
import pathlib

import numpy as np

import faiss
from faiss.contrib.datasets import Dataset
from faiss.contrib.vecs_io import bvecs_mmap, fvecs_mmap, ivecs_read

FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"

# The most a synthetic array (base, queries or blob centers) may take, as
# float32: a typo in "synthetic:NBxD" is an error, not a machine swapping.
MAX_SYNTHETIC_BYTES = 64 << 30


def cache_dir():
    """Where ground truth is cached: $FAISS_CCD_CACHE, else
    ~/.cache/faiss-ccd (created on first use)."""
    d = pathlib.Path(os.environ.get("FAISS_CCD_CACHE")
                     or pathlib.Path.home() / ".cache" / "faiss-ccd")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _stamp(*arrays):
    """A short digest of arrays' shapes and of up to 64 spread rows each:
    enough to tell two samples apart without hashing gigabytes."""
    h = hashlib.sha1()
    for a in arrays:
        a = np.asarray(a)
        h.update(repr(a.shape).encode())
        rows = np.linspace(0, len(a) - 1, num=min(64, len(a)), dtype=int)
        h.update(np.ascontiguousarray(a[rows]).tobytes())
    return h.hexdigest()[:16]


METRICS = {"L2": faiss.METRIC_L2, "IP": faiss.METRIC_INNER_PRODUCT}


def exact_knn(xq, xb, k, metric="L2"):
    """Exact k nearest neighbors of xq in xb: (D, I), float32 and int64.
    metric is "L2" or "IP" (a Dataset's metric)."""
    if not isinstance(metric, str) or metric not in METRICS:
        raise ValueError(f"metric must be 'L2' or 'IP', got {metric!r}")
    k = _positive("k", k)
    xq = np.ascontiguousarray(xq, dtype="float32")
    xb = np.ascontiguousarray(xb, dtype="float32")
    if xq.ndim != 2 or xb.ndim != 2:
        raise ValueError(f"xq and xb must be 2-d, got shapes {xq.shape} and "
                         f"{xb.shape}")
    if xq.shape[1] != xb.shape[1]:
        raise ValueError(f"xq has d={xq.shape[1]}, xb d={xb.shape[1]}: the "
                         "dimensions differ")
    return faiss.knn(xq, xb, k, metric=METRICS[metric])


class CachedGroundTruth(Dataset):
    """A Dataset whose get_groundtruth(k) is exact k-NN on its base,
    computed on first use and cached (see cache_dir). Subclasses set
    self.name, the sizes and the arrays self._xb (base) and self._xq
    (queries), float32 and contiguous."""

    name = "dataset"

    def get_database(self):
        return self._xb

    def get_queries(self):
        return self._xq

    def get_groundtruth(self, k=100):
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) \
                or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        if k > self.nb:
            raise ValueError(f"k={k} exceeds the base's {self.nb} vectors")
        xq, xb = self.get_queries(), self.get_database()
        key = f"{self.name}-nq{len(xq)}-nb{len(xb)}-{self.metric}-" \
              f"{_stamp(xq, xb)}"
        path = cache_dir() / f"{key}.npz"
        if path.exists():
            with np.load(path) as f:
                if f["I"].shape[1] >= k:
                    return f["I"][:, :k]
        D, I = exact_knn(xq, xb, k, self.metric)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
        np.savez(tmp, D=D, I=I)
        os.replace(tmp, path)      # atomic: a concurrent reader never sees
        return I                   # half a file

    def get_train(self, maxtrain=None):
        """The first maxtrain base vectors (all by default): the data sets
        here have no separate training set unless they say so."""
        xb = self.get_database()
        n = len(xb) if maxtrain is None else \
            min(_positive("maxtrain", maxtrain), len(xb))
        return xb[:n]

    def __str__(self):
        return f"{self.name}: {super().__str__()}"


# ------------------------------------------------------------ Fashion-MNIST
def read_idx_images(path):
    """The images of an IDX file (gzip or not) as float32 rows of pixels."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 16:
        raise ValueError(f"{path}: too short for an IDX image file")
    magic, n, rows, cols = np.frombuffer(data[:16], dtype=">u4")
    if magic != 2051:
        raise ValueError(f"{path}: magic {magic}, not an IDX image file "
                         "(2051)")
    pixels = np.frombuffer(data, dtype=np.uint8, offset=16)
    if pixels.size != n * rows * cols:
        raise ValueError(f"{path}: {pixels.size} pixels for {n} images of "
                         f"{rows}x{cols}")
    return pixels.reshape(int(n), int(rows * cols)).astype(np.float32)


class FashionMNIST(CachedGroundTruth):
    """Fashion-MNIST from Debian's dataset-fashion-mnist (or `root`): the
    60000 train images as the base, the test images (the first nq) as
    queries, raw pixels as 784-d float32 vectors, L2."""

    def __init__(self, root=None, nq=None):
        super().__init__()
        self.root = pathlib.Path(root or os.environ.get(
            "FAISS_CCD_FASHION_MNIST", FASHION_MNIST_DIR))
        base = self.root / "train-images-idx3-ubyte.gz"
        if not base.exists():
            raise FileNotFoundError(
                f"{base} not found: install Debian's dataset-fashion-mnist "
                "(scripts/install_deps.sh does) or pass root=")
        self.name = "fmnist"
        self._xb = read_idx_images(base)
        xq = read_idx_images(self.root / "t10k-images-idx3-ubyte.gz")
        self._xq = xq if nq is None else xq[:_positive("nq", nq, len(xq))]
        self.d = self._xb.shape[1]
        self.nb, self.nq, self.nt = len(self._xb), len(self._xq), len(self._xb)


# ------------------------------------------------------ fvecs, bvecs, ivecs
class Vecs(CachedGroundTruth):
    """Base, queries and (optionally) training vectors and ground truth in
    the fvecs/bvecs/ivecs formats of SIFT1M, GIST1M and Deep1B (format by
    extension; base and queries are held as float32 in memory, training
    vectors stay memory-mapped until asked for). With a ground-truth file its
    neighbors are used; without one they are computed and cached."""

    def __init__(self, base, queries, groundtruth=None, train=None,
                 name=None, nb=None, nq=None):
        super().__init__()
        self.paths = {"base": base, "queries": queries, "train": train,
                      "groundtruth": groundtruth}
        for what, p in self.paths.items():
            if p is not None and not pathlib.Path(p).exists():
                raise FileNotFoundError(f"{what} file {p} not found")
        self.name = name or pathlib.Path(base).stem
        self._xb = _read_vectors(base)
        if nb is not None:
            self._xb = self._xb[:_positive("nb", nb, len(self._xb))]
        self._xq = _read_vectors(queries)
        if nq is not None:
            self._xq = self._xq[:_positive("nq", nq, len(self._xq))]
        self.d = self._xb.shape[1]
        if self._xq.shape[1] != self.d:
            raise ValueError(f"queries have d={self._xq.shape[1]}, "
                             f"the base d={self.d}")
        self._xb = np.ascontiguousarray(self._xb, dtype="float32")
        self._xq = np.ascontiguousarray(self._xq, dtype="float32")
        self.nb, self.nq = len(self._xb), len(self._xq)
        self._xt = None if train is None else _read_vectors(train)
        self.nt = self.nb if self._xt is None else len(self._xt)
        # A given ground truth holds for the whole base only.
        self._gt = None
        if groundtruth is not None and nb is None:
            self._gt = ivecs_read(groundtruth)[:self.nq]

    def get_train(self, maxtrain=None):
        if self._xt is None:
            return super().get_train(maxtrain)
        n = self.nt if maxtrain is None else \
            min(_positive("maxtrain", maxtrain), self.nt)
        return np.ascontiguousarray(self._xt[:n], dtype="float32")

    def get_groundtruth(self, k=100):
        if self._gt is not None and self._gt.shape[1] >= k:
            return self._gt[:, :k]
        return super().get_groundtruth(k)


def _read_vectors(path):
    """A file's vectors as a memory map (rows not yet copied)."""
    path = str(path)
    if path.endswith(".fvecs"):
        return fvecs_mmap(path)
    if path.endswith(".bvecs"):
        return bvecs_mmap(path)
    raise ValueError(f"{path}: expected a .fvecs or .bvecs file")


def sift1m(root, **kw):
    """ANN_SIFT1M (http://corpus-texmex.irisa.fr/) unpacked in root."""
    r = pathlib.Path(root)
    return Vecs(r / "sift_base.fvecs", r / "sift_query.fvecs",
                r / "sift_groundtruth.ivecs", r / "sift_learn.fvecs",
                name="sift1m", **kw)


def gist1m(root, **kw):
    """ANN_GIST1M unpacked in root."""
    r = pathlib.Path(root)
    return Vecs(r / "gist_base.fvecs", r / "gist_query.fvecs",
                r / "gist_groundtruth.ivecs", r / "gist_learn.fvecs",
                name="gist1m", **kw)


def deep1m(root, **kw):
    """The first million of Deep1B's base (as FAISS's own benchmarks lay it
    out in root: base.fvecs, deep1B_queries.fvecs, learn.fvecs); ground
    truth computed, since Deep1B's holds for the whole billion."""
    r = pathlib.Path(root)
    kw.setdefault("nb", 10 ** 6)
    return Vecs(r / "base.fvecs", r / "deep1B_queries.fvecs", None,
                r / "learn.fvecs", name="deep1m", **kw)


# ------------------------------------------------------- ann-benchmarks HDF5
class HDF5(CachedGroundTruth):
    """An ann-benchmarks HDF5 file: 'train' is the base, 'test' the
    queries, 'neighbors' the ground truth. 'angular' data sets are
    normalized, so L2 on them ranks as cosine does."""

    def __init__(self, path, nq=None):
        super().__init__()
        try:
            import h5py
        except ImportError:
            raise ImportError("HDF5 data sets need h5py (in the project's "
                              ".venv: scripts/install_deps.sh)") \
                from None
        self.name = pathlib.Path(path).stem
        with h5py.File(path, "r") as f:
            for key in ("train", "test"):
                if key not in f:
                    raise ValueError(f"{path}: no '{key}' data set: not an "
                                     "ann-benchmarks file")
            distance = f.attrs.get("distance", "euclidean")
            if isinstance(distance, bytes):
                distance = distance.decode()
            self._xb = np.ascontiguousarray(f["train"][:], dtype="float32")
            self._xq = np.ascontiguousarray(f["test"][:], dtype="float32")
            self._gt = f["neighbors"][:] if "neighbors" in f else None
        if distance not in ("euclidean", "angular"):
            raise ValueError(f"{path}: distance {distance!r} is neither "
                             "'euclidean' nor 'angular'")
        if distance == "angular":
            faiss.normalize_L2(self._xb)
            faiss.normalize_L2(self._xq)
        if nq is not None:
            nq = _positive("nq", nq, len(self._xq))
            self._xq = self._xq[:nq]
            if self._gt is not None:
                self._gt = self._gt[:nq]
        self.distance = distance
        self.d = self._xb.shape[1]
        self.nb, self.nq, self.nt = len(self._xb), len(self._xq), len(self._xb)


    def get_groundtruth(self, k=100):
        if self._gt is not None and self._gt.shape[1] >= k:
            return self._gt[:, :k].astype("int64")
        return super().get_groundtruth(k)


# ----------------------------------------------------------------- synthetic
class SkewedSynthetic(CachedGroundTruth):
    """nb gaussian blobs points in d dimensions, blob sizes lognormal with
    `size_sigma` (0: equal), so IVF lists differ in size as in real data.
    Queries pick their blob by a Zipf law of exponent `zipf` (0: uniform)
    over a random order of the blobs, so a few blobs are hot.

    query_trace(n, hot_rotate_every) gives a drifting trace: every that many
    queries the blob popularity order shifts by a quarter of the blobs, so
    a new hot set replaces the old one (what the Monitor must follow)."""

    def __init__(self, nb=100000, d=64, nq=2000, nblobs=512, size_sigma=1.0,
                 zipf=1.1, spread=1.0, seed=1234):
        super().__init__()
        self.nb = _positive("nb", nb)
        self.d = _positive("d", d)
        self.nq = _positive("nq", nq)
        self.nblobs = _positive("nblobs", nblobs)
        for name, n in (("nb", self.nb), ("nq", self.nq),
                        ("nblobs", self.nblobs)):
            _fits(name, n, self.d)
        for name, v in (("size_sigma", size_sigma), ("zipf", zipf),
                        ("spread", spread)):
            if isinstance(v, bool) or not isinstance(
                    v, (int, float, np.integer, np.floating)):
                raise TypeError(f"{name} must be a number, got {v!r}")
            try:
                finite = math.isfinite(v)
            except OverflowError:          # an int beyond any float
                finite = False
            if not finite or v < 0:
                raise ValueError(f"{name} must be finite and >= 0, got {v!r}")
        self.size_sigma, self.zipf, self.spread = size_sigma, zipf, spread
        self.seed = seed
        self.nt = self.nb
        self.name = (f"synthetic-{self.nb}x{self.d}-b{self.nblobs}-"
                     f"s{size_sigma:g}-z{zipf:g}-seed{seed}")
        rs = np.random.RandomState(seed)
        self._centers = rs.randn(self.nblobs, self.d).astype("float32") * 4
        sizes = rs.lognormal(0, size_sigma, self.nblobs)
        self._blob_of = rs.choice(self.nblobs, self.nb, p=sizes / sizes.sum())
        self._xb = self._centers[self._blob_of] + \
            spread * rs.randn(self.nb, self.d).astype("float32")
        self._order = rs.permutation(self.nblobs)   # popularity rank -> blob
        self._xq = self.query_trace(self.nq, seed=seed + 1)

    def popularity(self):
        """Zipf weights by popularity rank (rank 0 the hottest)."""
        w = 1.0 / np.arange(1, self.nblobs + 1) ** self.zipf
        return w / w.sum()

    def query_trace(self, n, hot_rotate_every=None, seed=None):
        """n queries; with hot_rotate_every=m the hot set moves every m
        queries (see the class docstring)."""
        n = _fits("n", _positive("n", n), self.d)
        if hot_rotate_every is not None:
            hot_rotate_every = _positive("hot_rotate_every",
                                         hot_rotate_every)
        rs = np.random.RandomState(self.seed + 7 if seed is None else seed)
        ranks = rs.choice(self.nblobs, n, p=self.popularity())
        if hot_rotate_every:
            shift = (np.arange(n) // hot_rotate_every) * \
                max(1, self.nblobs // 4)
            ranks = (ranks + shift) % self.nblobs
        blobs = self._order[ranks]
        xq = self._centers[blobs] + \
            self.spread * rs.randn(n, self.d).astype("float32")
        return xq.astype("float32")


def _positive(name, v, maximum=None):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive int, got {v!r}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name}={v} exceeds the {maximum} available")
    return int(v)


def _fits(name, n, d):
    """n: n rows of d float32 stay under MAX_SYNTHETIC_BYTES."""
    if n * d * 4 > MAX_SYNTHETIC_BYTES:
        raise ValueError(f"{name}={n} vectors of d={d} would take "
                         f"{n * d * 4 / 2**30:.3g} GiB of float32, over the "
                         f"{MAX_SYNTHETIC_BYTES >> 30} GiB a synthetic "
                         "data set may take")
    return n


def by_name(spec, nq=None):
    """A data set from a command-line name:
        fmnist               Fashion-MNIST (Debian's package)
        synthetic            SkewedSynthetic(500000 x 128, 2048 blobs)
        synthetic:NBxD       another size, e.g. synthetic:100000x64
        sift1m:DIR, gist1m:DIR, deep1m:DIR   files in DIR
        hdf5:FILE            an ann-benchmarks file
    nq limits the queries (the first nq; None: all, or 2000 synthetic
    ones)."""
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a data set name such as 'fmnist' or "
                        f"'synthetic:100000x64', got {spec!r}")
    if nq is not None:
        nq = _positive("nq", nq)
    kind, _, arg = spec.partition(":")
    if kind == "fmnist":
        return FashionMNIST(arg or None, nq=nq)
    if kind == "synthetic":
        nb, d = 500000, 128
        if arg:
            try:
                nb, d = (int(x) for x in arg.lower().split("x"))
            except ValueError:
                raise ValueError(f"{spec!r}: expected synthetic:NBxD, e.g. "
                                 "synthetic:100000x64") from None
        return SkewedSynthetic(nb=nb, d=d, nq=2000 if nq is None else nq,
                               nblobs=2048, spread=0.5)
    presets = {"sift1m": sift1m, "gist1m": gist1m, "deep1m": deep1m}
    if kind in presets:
        if not arg:
            raise ValueError(f"{spec!r}: give the directory, {kind}:DIR")
        return presets[kind](arg, nq=nq)
    if kind == "hdf5":
        if not arg:
            raise ValueError(f"{spec!r}: give the file, hdf5:FILE")
        return HDF5(arg, nq=nq)
    raise ValueError(f"unknown data set {spec!r}: fmnist, synthetic[:NBxD], "
                     "sift1m:DIR, gist1m:DIR, deep1m:DIR or hdf5:FILE")
