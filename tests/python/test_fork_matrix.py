"""Issue 28, 1 and 2: fork() while other threads search, in every parallel
mode, and every child searches.

Each cell runs in a fresh interpreter with OMP_NUM_THREADS=4 (this
session's pytest runs OpenMP on one thread, which would hide libgomp's
team): the parent searches once on its own thread (so the forking thread
has used OpenMP, or the pool), starts `threads` threads that search in a
loop, then forks FORKS times while they run. Each child searches once
under an alarm and exits 0 when its answers equal the parent's mode-0
answers computed before any thread started (stock FAISS's own loop: the
reference). Python's interrupt callback stays installed (see CHILD). A child
that hangs is killed by its alarm (or by the parent
past its deadline); a cell stops at its first failed child.
"""

import json
import os
import subprocess
import sys

import pytest

FORKS = 8
CHILD = r"""
import json, os, signal, sys, threading, time
import numpy as np
import faiss

mode, threads, fifo = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
forks = int(sys.argv[4])
rs = np.random.RandomState(7)
xb = rs.rand(8000, 16).astype("float32")
xq = rs.rand(64, 16).astype("float32")
index = faiss.index_factory(16, "IVF32,Flat")
index.train(xb)
index.add(xb)
index.nprobe = 8
D_ref, I_ref = index.search(xq, 10)          # mode 0: the reference
if fifo:
    faiss.ccd.set_default_pool(faiss.ccd.Pool(fifo_callers=True))
index.parallel_mode = mode
# Python's faiss keeps its interrupt callback installed (as users run it):
# FAISS's OpenMP threads (modes 0-2) ask it, and when each ask made a CPython
# thread state a fork amid that hung about 1 child in 28 inside CPython's
# PyOS_AfterFork_Child (our patch 0005 asks it from Python's threads only).
index.search(xq, 10)          # the forking thread has used mode `mode`

stop = threading.Event()
def search_loop():
    while not stop.is_set():
        index.search(xq, 10)
workers = [threading.Thread(target=search_loop) for _ in range(threads)]
for t in workers:
    t.start()

outcomes = []
for i in range(forks):
    time.sleep(0.01 + 0.007 * i)       # fork at different points of a search
    pid = os.fork()
    if pid == 0:
        signal.alarm(10)
        try:
            D, I = index.search(xq, 10)
            same = np.allclose(D, D_ref, rtol=1e-5, atol=1e-5)
            os._exit(0 if same else 3)
        except BaseException:
            os._exit(4)
    deadline = time.time() + 20
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.time() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = signal.SIGKILL
            break
        time.sleep(0.01)
    if os.WIFEXITED(status):
        outcomes.append({0: "searched", 3: "wrong answers",
                         4: "raised"}.get(os.WEXITSTATUS(status), "exit %d"
                                          % os.WEXITSTATUS(status)))
    else:
        outcomes.append("hung" if os.WTERMSIG(status) in
                        (signal.SIGALRM, signal.SIGKILL) else
                        "killed by signal %d" % os.WTERMSIG(status))
    if outcomes[-1] != "searched":
        break          # one failure says it; more would only take time
stop.set()
for t in workers:
    t.join()
# The parent still searches, in its mode, with its threads gone.
D, I = index.search(xq, 10)
outcomes.append("parent searched" if np.allclose(D, D_ref, rtol=1e-5,
                                                  atol=1e-5) else
                "parent: wrong answers")
print(json.dumps(outcomes))
"""

CCD = "ccd"
CELLS = [(mode, threads, fifo)
         for mode, fifo in [(0, False), (1, False), (2, False), (CCD, False),
                            (CCD, True)]
         for threads in (1, 4)]


def run_cell(mode, threads, fifo):
    import faiss
    number = faiss.PARALLEL_MODE_CCD if mode == CCD else mode
    env = dict(os.environ, OMP_NUM_THREADS="4")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(number), str(threads),
         "1" if fifo else "0", str(FORKS)],
        env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(os.environ.get("FAISS_CCD_UNDER_ASAN") == "1",
                    reason="GCC 12's ASan does not take its allocator's "
                    "locks around fork() (docs/RELIABILITY.md)")
@pytest.mark.parametrize(
    "mode,threads,fifo", CELLS,
    ids=["mode%s-%dthreads%s" % (m, t, "-fifo" if f else "")
         for m, t, f in CELLS])
def test_every_child_searches(mode, threads, fifo):
    outcomes = run_cell(mode, threads, fifo)
    assert outcomes == ["searched"] * FORKS + ["parent searched"], outcomes
