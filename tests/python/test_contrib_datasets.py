"""faiss.contrib.ccd.datasets: readers checked on files written here in
each format, ground truth against a numpy brute force, the cache."""

import gzip
import struct

import numpy as np
import pytest

from faiss.contrib.ccd import datasets


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FAISS_CCD_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def brute_force(xq, xb, k):
    d = ((xq[:, None, :].astype(float) - xb[None, :, :]) ** 2).sum(-1)
    return np.argsort(d, axis=1, kind="stable")[:, :k]


def write_vecs(path, x, dtype):
    with open(path, "wb") as f:
        for row in x:
            f.write(struct.pack("<i", len(row)))
            f.write(np.asarray(row, dtype=dtype).tobytes())


def test_idx_images_read_as_written(tmp_path):
    pix = np.random.RandomState(0).randint(0, 256, (5, 3, 4)).astype("u1")
    path = tmp_path / "x-images-idx3-ubyte.gz"
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">IIII", 2051, 5, 3, 4) + pix.tobytes())
    x = datasets.read_idx_images(path)
    assert x.dtype == np.float32 and x.shape == (5, 12)
    np.testing.assert_array_equal(x, pix.reshape(5, 12))


def test_idx_bad_files_are_named(tmp_path):
    bad = tmp_path / "bad.gz"
    with gzip.open(bad, "wb") as f:
        f.write(struct.pack(">IIII", 2049, 5, 3, 4) + bytes(60))
    with pytest.raises(ValueError, match="magic"):
        datasets.read_idx_images(bad)
    short = tmp_path / "short"
    short.write_bytes(struct.pack(">IIII", 2051, 5, 3, 4) + bytes(7))
    with pytest.raises(ValueError, match="pixels"):
        datasets.read_idx_images(short)


def test_fashion_mnist_from_debian():
    ds = datasets.FashionMNIST(nq=20)
    xb, xq = ds.get_database(), ds.get_queries()
    assert xb.shape == (60000, 784) and xq.shape == (20, 784)
    assert xb.min() >= 0 and xb.max() <= 255 and xb.max() > 200
    with pytest.raises(ValueError, match="exceeds"):
        datasets.FashionMNIST(nq=10001)
    with pytest.raises(FileNotFoundError, match="dataset-fashion-mnist"):
        datasets.FashionMNIST(root="/nonexistent")


def test_groundtruth_is_exact_and_cached(cache, monkeypatch):
    ds = datasets.SkewedSynthetic(nb=3000, d=16, nq=40, nblobs=30)
    gt = ds.get_groundtruth(10)
    ref = brute_force(ds.get_queries(), ds.get_database(), 10)
    # Ties aside (none in continuous data), the same neighbors in order.
    np.testing.assert_array_equal(gt, ref)
    assert len(list(cache.glob("*.npz"))) == 1

    def no_compute(*a, **k):
        raise AssertionError("ground truth recomputed despite the cache")
    monkeypatch.setattr(datasets, "exact_knn", no_compute)
    np.testing.assert_array_equal(ds.get_groundtruth(5), ref[:, :5])
    # Another sample (other seed) must not hit the first one's file.
    other = datasets.SkewedSynthetic(nb=3000, d=16, nq=40, nblobs=30, seed=9)
    with pytest.raises(AssertionError, match="recomputed"):
        other.get_groundtruth(5)


def test_groundtruth_bad_k():
    ds = datasets.SkewedSynthetic(nb=100, d=4, nq=3, nblobs=5)
    for k in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            ds.get_groundtruth(k)
    with pytest.raises(ValueError, match="exceeds"):
        ds.get_groundtruth(101)


def test_vecs_formats(tmp_path):
    rs = np.random.RandomState(1)
    xb = rs.randint(0, 256, (500, 8))
    xq = rs.randint(0, 256, (7, 8))
    write_vecs(tmp_path / "b.bvecs", xb, "u1")
    write_vecs(tmp_path / "q.fvecs", xq, "<f4")
    ref = brute_force(xq.astype("f4"), xb.astype("f4"), 20)
    ds = datasets.Vecs(tmp_path / "b.bvecs", tmp_path / "q.fvecs")
    np.testing.assert_array_equal(ds.get_database(), xb)
    assert ds.get_queries().dtype == np.float32
    np.testing.assert_array_equal(ds.get_groundtruth(20), ref)
    # A ground-truth file is used as given (here deliberately not the true
    # one, to see it is read rather than recomputed).
    fake = np.arange(7 * 3).reshape(7, 3)
    write_vecs(tmp_path / "gt.ivecs", fake, "<i4")
    ds = datasets.Vecs(tmp_path / "b.bvecs", tmp_path / "q.fvecs",
                       groundtruth=tmp_path / "gt.ivecs")
    np.testing.assert_array_equal(ds.get_groundtruth(3), fake)
    # ... but not for a truncated base, nor deeper than it goes.
    ds = datasets.Vecs(tmp_path / "b.bvecs", tmp_path / "q.fvecs",
                       groundtruth=tmp_path / "gt.ivecs", nb=100)
    np.testing.assert_array_equal(
        ds.get_groundtruth(3),
        brute_force(xq.astype("f4"), xb[:100].astype("f4"), 3))
    with pytest.raises(FileNotFoundError, match="queries"):
        datasets.Vecs(tmp_path / "b.bvecs", tmp_path / "none.fvecs")
    with pytest.raises(ValueError, match="fvecs or .bvecs"):
        datasets.Vecs(tmp_path / "gt.ivecs", tmp_path / "q.fvecs")
    with pytest.raises(FileNotFoundError):
        datasets.sift1m(tmp_path)


def test_hdf5_ann_benchmarks_file(tmp_path):
    h5py = pytest.importorskip("h5py")
    rs = np.random.RandomState(2)
    xb, xq = rs.randn(300, 6), rs.randn(5, 6)
    path = tmp_path / "toy-6-angular.hdf5"
    with h5py.File(path, "w") as f:
        f.attrs["distance"] = "angular"
        f["train"], f["test"] = xb, xq
        f["neighbors"] = np.tile(np.arange(4), (5, 1))
    ds = datasets.HDF5(path)
    np.testing.assert_allclose(np.linalg.norm(ds.get_database(), axis=1), 1,
                               rtol=1e-5)
    np.testing.assert_array_equal(ds.get_groundtruth(4),
                                  np.tile(np.arange(4), (5, 1)))
    # Deeper than the file's neighbors: computed, cosine order.
    cos = (xq / np.linalg.norm(xq, axis=1, keepdims=True)) @ \
        (xb / np.linalg.norm(xb, axis=1, keepdims=True)).T
    np.testing.assert_array_equal(ds.get_groundtruth(8),
                                  np.argsort(-cos, axis=1)[:, :8])
    with h5py.File(tmp_path / "bad.hdf5", "w") as f:
        f["test"] = xq
    with pytest.raises(ValueError, match="'train'"):
        datasets.HDF5(tmp_path / "bad.hdf5")


def test_synthetic_is_seeded_skewed_and_drifts():
    a = datasets.SkewedSynthetic(nb=2000, d=8, nq=50, nblobs=40, seed=5)
    b = datasets.SkewedSynthetic(nb=2000, d=8, nq=50, nblobs=40, seed=5)
    np.testing.assert_array_equal(a.get_database(), b.get_database())
    np.testing.assert_array_equal(a.get_queries(), b.get_queries())
    # Zipf: the hottest blob draws far more than a uniform share; a trace
    # that rotates every 2000 queries has another hot blob in its second
    # half (nearest center as the independent judge of a query's blob).
    trace = a.query_trace(4000, hot_rotate_every=2000, seed=3)
    c = a._centers
    blob = ((trace[:, None, :] - c[None]) ** 2).sum(-1).argmin(1)
    first = np.bincount(blob[:2000], minlength=40)
    second = np.bincount(blob[2000:], minlength=40)
    assert first.max() > 4 * 2000 / 40
    assert first.argmax() != second.argmax()
    steady = a.query_trace(4000, seed=3)
    sblob = ((steady[:, None, :] - c[None]) ** 2).sum(-1).argmin(1)
    assert np.bincount(sblob[:2000], minlength=40).argmax() == \
        np.bincount(sblob[2000:], minlength=40).argmax()
    for bad in (dict(nb=0), dict(d=-1), dict(zipf=-1.0),
                dict(size_sigma=float("nan"))):
        with pytest.raises(ValueError):
            datasets.SkewedSynthetic(**bad)


def test_by_name():
    ds = datasets.by_name("synthetic:1000x8", nq=10)
    assert (ds.nb, ds.d, ds.nq) == (1000, 8, 10)
    assert datasets.by_name("fmnist", nq=5).nq == 5
    for bad, msg in (("nope", "unknown"), ("synthetic:12", "NBxD"),
                     ("sift1m", "directory"), ("hdf5", "file")):
        with pytest.raises(ValueError, match=msg):
            datasets.by_name(bad)
