"""faiss.contrib.ccd.peer: the faiss-cpu wheel in a second process. Its
answers are checked against the fork's own (stock FAISS 1.15.1 against
the fork's mode 0 and CCD mode: an independent implementation), its turns
against the load generators' contract, its errors against what a caller
must see. Needs the stock venv (scripts/install_deps.sh makes it)."""

import os
import pathlib

import numpy as np
import pytest

import faiss
from faiss.contrib.ccd import loadgen, peer

ROOT = pathlib.Path(__file__).resolve().parents[2]
STOCK = ROOT / ".venv-stock" / "bin" / "python"

pytestmark = pytest.mark.skipif(
    not STOCK.exists(), reason=f"no stock venv at {STOCK}: run "
    "scripts/install_deps.sh")


@pytest.fixture(scope="module")
def wheel():
    with peer.Peer(STOCK) as p:
        yield p


@pytest.fixture(scope="module")
def data():
    rs = np.random.RandomState(7)
    xb = rs.rand(5000, 24).astype("float32")
    xq = rs.rand(200, 24).astype("float32")
    return xb, xq


def test_it_is_the_wheel_not_the_fork(wheel):
    assert wheel.info["faiss"] == "1.15.1"
    assert wheel.info["faiss"] != faiss.__version__
    assert ".venv-stock" in wheel.info["file"]
    assert "ccd" not in wheel.info["file"]


@pytest.mark.parametrize("key", ["IVF32,Flat", "IVF32,SQ8", "IVF32,PQ8"])
def test_ivf_answers_equal_the_fork_in_mode_0_and_ccd(wheel, data, key,
                                                       tmp_path):
    xb, xq = data
    index = faiss.index_factory(xb.shape[1], key)
    index.train(xb)
    index.add(xb)
    path = tmp_path / "index.faissindex"
    faiss.write_index(index, str(path))
    wheel.load_ivf(path, xq, 10, "nprobe=8")
    theirs = wheel.search(parallel_mode=0)
    ivf = faiss.extract_index_ivf(index)
    ivf.nprobe = 8
    for mode in (0, faiss.PARALLEL_MODE_CCD):
        ivf.parallel_mode = mode
        ours = index.search(xq, 10)[1]
        # Ties aside (PQ codes collide): the same lists, the same order.
        assert (ours == theirs).mean() > 0.99, (key, mode)


def test_searchparams_move_the_peer(wheel, data, tmp_path):
    xb, xq = data
    index = faiss.index_factory(xb.shape[1], "IVF32,Flat")
    index.train(xb)
    index.add(xb)
    path = tmp_path / "index.faissindex"
    faiss.write_index(index, str(path))
    wheel.load_ivf(path, xq, 5, "nprobe=1")
    one = wheel.search()
    wheel.set_searchparams("nprobe=32")
    every = wheel.search()
    index.nprobe = 32
    exact = index.search(xq, 5)[1]
    assert (every == exact).all()
    assert (one != exact).any()


def test_hnsw_answers_equal_the_fork_query_by_query(wheel, data, tmp_path):
    xb, xq = data
    tables, paths = [], []
    for t in range(3):
        index = faiss.IndexHNSWFlat(xb.shape[1], 16)
        index.add(xb[t * 1000:(t + 1) * 1000])
        index.hnsw.efSearch = 32
        path = tmp_path / f"t{t}.index"
        faiss.write_index(index, str(path))
        tables.append(index)
        paths.append(path)
    table_of = np.arange(len(xq)) % 3
    wheel.load_hnsw(paths, 32, xq, table_of, 4)
    theirs = wheel.search(threads=1)
    ours = np.vstack([tables[t].search(xq[i:i + 1], 4)[1]
                      for i, t in enumerate(table_of)])
    assert theirs.shape == ours.shape == (len(xq), 4)
    assert (ours == theirs).mean() > 0.99


def test_a_turn_is_a_loadgen_run(wheel, data, tmp_path):
    xb, xq = data
    index = faiss.index_factory(xb.shape[1], "IVF32,Flat")
    index.train(xb)
    index.add(xb)
    path = tmp_path / "index.faissindex"
    faiss.write_index(index, str(path))
    wheel.load_ivf(path, xq, 10, "nprobe=4")
    run = wheel.run("closed_loop", parallel_mode=0, threads=1, clients=3,
                    calls=20)
    assert isinstance(run, loadgen.Run)
    assert run.queries == 60 and run.latencies_s.shape == (60,)
    assert run.wall_s > 0 and (run.latencies_s > 0).all()
    run = wheel.run("batches", batch_size=50, calls=2)
    assert run.queries == 100 and run.latencies_s.shape == (2,)
    run = wheel.run("open_loop", rate_qps=2000, duration_s=0.05, senders=2)
    assert run.offered_qps == 2000 and run.queries > 0


def test_errors_name_the_request_and_the_peer_survives(wheel):
    with pytest.raises(peer.PeerError, match="'load_ivf' failed"):
        wheel.load_ivf("/nonexistent/index", np.zeros((2, 4), "float32"),
                       1)
    with pytest.raises(ValueError, match="load must be one of"):
        wheel.run("forever")
    with pytest.raises(peer.PeerError, match="'run' failed"):
        wheel.run("closed_loop", clients=0, calls=1)
    assert wheel.info["faiss"] == "1.15.1"      # still answering


def test_nothing_loaded_is_refused():
    with peer.Peer(STOCK) as p:
        with pytest.raises(peer.PeerError, match="nothing loaded"):
            p.search()


def test_the_wheel_can_be_held_to_avx2():
    with peer.Peer(STOCK, simd_level="AVX2") as p:
        assert p.info["simd"] == "AVX2"
    with pytest.raises(peer.PeerError, match="no SIMD level"):
        peer.Peer(STOCK, simd_level="MMX")


def test_a_dead_peer_is_an_error_not_a_hang():
    p = peer.Peer(STOCK)
    try:
        p._proc.kill()
        p._proc.wait()
        with pytest.raises(peer.PeerError, match="died"):
            p.search()
    finally:
        p.close()
    assert not os.path.exists(p.workdir)


def test_no_interpreter_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="install_deps"):
        peer.Peer(tmp_path / "no-python")
