"""faiss.contrib.ccd.loadgen with search functions that record what they
were asked: every call counted once, concurrency as promised, errors
raised in the caller without a hang, open-loop queues charged."""

import collections
import threading
import time

import numpy as np
import pytest

import faiss
from faiss.contrib.ccd import loadgen

XQ = np.arange(40 * 4, dtype="float32").reshape(40, 4)


class Recorder:
    """search(x): records (thread, first row's id, rows) and tracks how
    many calls are in flight at once."""

    def __init__(self, sleep=0.0):
        self.calls, self.lock = [], threading.Lock()
        self.active = self.max_active = 0
        self.sleep = sleep

    def __call__(self, x):
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            self.calls.append((threading.get_ident(), int(x[0, 0]) // 4,
                               len(x)))
        if self.sleep:
            time.sleep(self.sleep)
        with self.lock:
            self.active -= 1


def test_batches_counts_and_wraps():
    rec = Recorder()
    run = loadgen.batches(rec, XQ, 16, calls=5)
    assert run.queries == 80 and len(run.latencies_s) == 5
    assert [c[1] for c in rec.calls] == [0, 16, 32, 8, 24]
    assert all(c[2] == 16 for c in rec.calls)
    big = Recorder()
    loadgen.batches(big, XQ, 100, calls=2)      # larger than xq: repeated
    assert [c[2] for c in big.calls] == [100, 100]


def test_closed_loop_exactly_once_and_concurrent():
    rec = Recorder(sleep=0.005)
    inits = collections.Counter()
    run = loadgen.closed_loop(
        rec, XQ, clients=4, calls=10,
        thread_init=lambda: inits.update([threading.get_ident()]))
    # Each client made exactly its 10 calls, each recorded once, each
    # latency kept once; its queries walk on from its own start row.
    assert run.queries == 40 == len(rec.calls) == len(run.latencies_s)
    per = collections.defaultdict(list)
    for tid, row, _ in rec.calls:
        per[tid].append(row)
    assert sorted(len(v) for v in per.values()) == [10] * 4
    assert sorted(v[0] for v in per.values()) == [0, 10, 20, 30]
    assert set(inits) == set(per) and set(inits.values()) == {1}
    assert rec.max_active == 4
    assert (run.latencies_s >= 0.005).all()


def test_duration_bounds_the_run():
    run = loadgen.closed_loop(Recorder(sleep=0.001), XQ, 2, duration_s=0.3)
    assert 0.3 <= run.wall_s < 2.0 and run.queries > 10


def test_an_error_stops_every_thread_and_reaches_the_caller():
    calls = [0]
    lock = threading.Lock()

    def search(x):
        with lock:
            calls[0] += 1
            n = calls[0]
        if n == 25:
            raise RuntimeError("index gone")
        time.sleep(0.001)

    done = []
    t = threading.Thread(target=lambda: done.append(
        pytest.raises(RuntimeError, loadgen.closed_loop, search, XQ, 4,
                      duration_s=30)))
    t.start()
    t.join(10)
    assert not t.is_alive(), "closed_loop hung after a search raised"
    assert "index gone" in str(done[0].value)
    # A failing thread_init: raised too, nobody waits on the barrier.
    with pytest.raises(ZeroDivisionError):
        loadgen.closed_loop(Recorder(), XQ, 3, calls=1,
                            thread_init=lambda: 1 / 0)
    with pytest.raises(RuntimeError, match="late"):
        loadgen.open_loop(lambda x: (_ for _ in ()).throw(
            RuntimeError("late")), XQ, 100, 5.0, senders=4)


def test_open_loop_rate_and_queueing():
    arrivals = loadgen.poisson_arrivals(2000, 2.0, seed=1)
    # A Poisson count: 4000 expected, sd 63.
    assert abs(len(arrivals) - 4000) < 5 * 63
    gaps = np.diff(arrivals)
    assert gaps.mean() == pytest.approx(1 / 2000, rel=0.05)
    assert (gaps > 0).all() and arrivals[-1] < 2.0

    rec = Recorder()
    run = loadgen.open_loop(rec, XQ, 200, 1.0, senders=4, seed=2)
    assert run.queries == len(rec.calls) == \
        len(loadgen.poisson_arrivals(200, 1.0, seed=2))
    assert run.summary()["offered_qps"] == 200
    # One sender, 20 ms a query, 100 arrivals a second: the queue grows,
    # and latency counted from the scheduled arrival shows it.
    slow = loadgen.open_loop(Recorder(sleep=0.02), XQ, 100, 0.5, senders=1,
                             seed=3)
    assert np.percentile(slow.latencies_s, 99) > 0.1


def test_bad_arguments():
    for kw in (dict(clients=0, calls=1), dict(clients=2.5, calls=1),
               dict(clients=2), dict(clients=2, calls=1, duration_s=1)):
        with pytest.raises(ValueError):
            loadgen.closed_loop(Recorder(), XQ, **kw)
    with pytest.raises(ValueError, match="2-d"):
        loadgen.batches(Recorder(), XQ[0], 1, calls=1)
    with pytest.raises(ValueError, match="rate"):
        loadgen.open_loop(Recorder(), XQ, -1, 1.0)


def test_drives_a_real_index_from_threads():
    """The GIL is released in FAISS's search: 4 threads searching a flat
    index concurrently get the answers one thread gets."""
    rs = np.random.RandomState(0)
    xb = rs.rand(2000, 16).astype("float32")
    xq = rs.rand(64, 16).astype("float32")
    index = faiss.IndexFlatL2(16)
    index.add(xb)
    ref = index.search(xq, 5)[1]
    got, lock = {}, threading.Lock()

    def search(x):
        I = index.search(x, 5)[1]
        with lock:
            got.setdefault(x.tobytes(), []).append(I)

    run = loadgen.closed_loop(search, xq, clients=4, calls=16)
    assert run.queries == 64 and len(got) == 64
    for i, q in enumerate(xq):
        for I in got[q[None].tobytes()]:
            np.testing.assert_array_equal(I[0], ref[i])


def test_turns_rotates_the_order_and_measures_each_once_per_round():
    class C:
        def __init__(self, name):
            self.name = name
    order = []
    out = loadgen.turns([C("a"), C("b"), C("c")], 4,
                        lambda c: order.append(c.name) or len(order))
    assert "".join(order) == "abc" "bca" "cab" "abc"
    assert out == {"a": [1, 6, 8, 10], "b": [2, 4, 9, 11],
                   "c": [3, 5, 7, 12]}


def test_load_arguments_parse_and_refuse_bad_values():
    import argparse

    def parse(*argv, batch=None):
        p = argparse.ArgumentParser()
        loadgen.add_arguments(p, clients=[1, 8], load=[0.5], batch=batch)
        args = p.parse_args(list(argv))
        loadgen.check_arguments(p, args)
        return args

    a = parse("--clients", "2,4", "--load", ".3,.9", batch=[1])
    assert (a.clients, a.load, a.batch) == ([2, 4], [0.3, 0.9], [1])
    assert (a.senders, a.duration, a.rounds) == (64, 1.0, 3)
    assert not hasattr(parse(), "batch")
    for bad in (["--clients", "0"], ["--load", "3"], ["--load", "0"],
                ["--duration", "0"], ["--rounds", "0"],
                ["--senders", "-1"], ["--clients", "x"]):
        with pytest.raises(SystemExit) as e:
            parse(*bad)
        assert e.value.code == 2, bad
    with pytest.raises(SystemExit):
        parse("--batch", "0", batch=[1])

