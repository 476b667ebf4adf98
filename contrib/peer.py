"""A faiss other than this process's, measured in turns with it: the stock
baseline a user would install instead of the fork (the faiss-cpu wheel,
in the venv scripts/install_deps.sh makes as .venv-stock). Two faiss
modules cannot share a process, so the peer is a second Python process
that serves one request at a time over a pipe; the benchmark drives it
inside its own round-robin (loadgen.turns), so that its turns alternate
with this process's contenders (A B A B ...).

    with peer.Peer(".venv-stock/bin/python") as wheel:
        print(wheel.info["faiss"])                     # "1.15.1"
        wheel.load_ivf("index.faissindex", xq, k=10, searchparams="nprobe=8")
        run = wheel.run("closed_loop", parallel_mode=0, threads=1,
                        clients=8, duration_s=1.0)     # a loadgen.Run
        I = wheel.search(parallel_mode=0)              # labels, all queries

The peer reads the index this process wrote (write_index), so both search
the same lists; the load generators are this package's own, loaded in the
peer from the same files, so both sides are timed by the same code. In the
peer, `threads` is faiss.omp_set_num_threads in every searching thread
(OpenMP's count is per thread: stock FAISS at its best).

Protocol: one JSON object per line on the peer's stdin ({"op": ...}), one
reply per line on its stdout ({"ok": true, ...} or {"ok": false, "error":
...}); arrays travel as .npy files in a private temporary directory. A
failed request raises PeerError naming it, with the peer's message; a peer
that died raises PeerError with the end of its stderr. close() (or the
with block) ends the peer and removes the directory.
"""

import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
LOADS = ("batches", "closed_loop", "open_loop")


def describe(info):
    """A peer's info as one line for a report's notes."""
    return (f"faiss {info['faiss']} ({info['compile_options'].strip()}, "
            f"dispatching {info.get('simd')}), numpy {info['numpy']}, from "
            f"{info['file']}, in its own process, its turns alternating "
            "with this process's")


class PeerError(RuntimeError):
    """A request the peer refused or could not serve, or a dead peer."""


class Peer:
    """The peer process (see the module docstring). python: the
    interpreter whose faiss is measured; env: its environment (default:
    this one's without PYTHONPATH and LD_PRELOAD, so it imports its own
    faiss)."""

    def __init__(self, python, env=None, simd_level=None):
        # simd_level: a FAISS >= 1.12 dynamic-dispatch build's SIMD level
        # ("AVX2", "AVX512", ...) the peer is held to; None: its own pick.
        if not os.access(python, os.X_OK):
            raise FileNotFoundError(f"peer: no Python at {python} (the "
                                    "stock venv: scripts/install_deps.sh)")
        self.python = str(python)
        self._dir = tempfile.TemporaryDirectory(prefix="faiss-ccd-peer-")
        self._stderr = open(os.path.join(self._dir.name, "stderr"), "w+")
        if env is None:
            # Its own faiss, not this one's; and no sanitizer runtime this
            # process may have been started with (the peer is not ours).
            env = {k: v for k, v in os.environ.items()
                   if k not in ("PYTHONPATH", "LD_PRELOAD")}
        self._proc = subprocess.Popen(
            [self.python, str(HERE / "peer.py"), "--serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, env=env, text=True, bufsize=1)
        self._files = 0
        try:
            if simd_level:
                self._call("set_simd_level", level=simd_level)
            self.info = self._call("info")
        except BaseException:
            self.close()
            raise

    @property
    def workdir(self):
        """A directory that lives as long as the peer: for files it is to
        read (an index written for it), removed by close()."""
        return self._dir.name

    # ------------------------------------------------------------ requests
    def load_ivf(self, index_path, xq, k, searchparams=""):
        """The IVF index at index_path, its queries xq ((nq, d) float32)
        and k; searchparams: a ParameterSpace string ("nprobe=8")."""
        self._call("load_ivf", index=str(index_path), queries=self._put(xq),
                   k=int(k), searchparams=searchparams)

    def load_hnsw(self, table_paths, ef_search, xq, table_of, k):
        """HNSW tables (one index file each), efSearch, the queries and the
        table each one goes to; a call searches one query in its table."""
        self._call("load_hnsw", tables=[str(p) for p in table_paths],
                   ef_search=int(ef_search), queries=self._put(xq),
                   table_of=self._put(np.asarray(table_of, dtype="int64")),
                   k=int(k))

    def set_searchparams(self, searchparams):
        """A ParameterSpace string ("nprobe=16") on the loaded IVF index."""
        self._call("set_searchparams", searchparams=searchparams)

    def search(self, parallel_mode=0, threads=None):
        """Labels of every query: IVF one batch, HNSW one call each."""
        return self._get(self._call("search", parallel_mode=parallel_mode,
                                    threads=threads)["labels"])

    def run(self, load, parallel_mode=0, threads=None, **kwargs):
        """One turn: loadgen.<load>(search, queries, **kwargs) in the peer,
        returned as this process's loadgen.Run."""
        from . import loadgen
        if load not in LOADS:
            raise ValueError(f"peer: load must be one of {LOADS}, not "
                             f"{load!r}")
        r = self._call("run", load=load, parallel_mode=parallel_mode,
                       threads=threads, kwargs=kwargs)
        return loadgen.Run(self._get(r["latencies"]), r["wall_s"],
                           r["queries"], r.get("offered_qps"))

    def close(self):
        if self._proc.poll() is None:
            try:
                self._send({"op": "quit"})
                self._proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        self._stderr.close()
        self._dir.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ----------------------------------------------------------- plumbing
    def _put(self, a):
        self._files += 1
        path = os.path.join(self._dir.name, f"in{self._files}.npy")
        np.save(path, np.ascontiguousarray(a))
        return path

    def _get(self, path):
        a = np.load(path)
        os.unlink(path)
        return a

    def _send(self, request):
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()

    def _call(self, op, **request):
        request["op"] = op
        request["dir"] = self._dir.name
        try:
            self._send(request)
            line = self._proc.stdout.readline()
        except OSError:
            line = ""
        if not line:
            self._proc.wait()
            self._stderr.seek(0)
            tail = self._stderr.read()[-3000:]
            raise PeerError(f"peer {self.python} died during {op!r} "
                            f"(exit {self._proc.returncode}): {tail}")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise PeerError(f"peer {self.python}: {op!r} failed: "
                            f"{reply.get('error')}")
        return reply


# --------------------------------------------------------------- the peer
def _package():
    """This directory's modules as a private package, so that the peer's
    `faiss` stays its own (installed, this directory is faiss/contrib/ccd
    of the fork; in the source tree, contrib/)."""
    spec = importlib.util.spec_from_file_location(
        "_faiss_ccd_contrib", HERE / "__init__.py",
        submodule_search_locations=[str(HERE)])
    pkg = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = pkg
    spec.loader.exec_module(pkg)
    return pkg


class _Server:
    def __init__(self):
        import faiss
        self.faiss = faiss
        self.loadgen = _package().loadgen
        self.kind = None
        self.out = 0

    def set_simd_level(self, r):
        config = getattr(self.faiss, "SIMDConfig", None)
        level = getattr(self.faiss, f"SIMDLevel_{r['level']}", None)
        if config is None or level is None:
            raise ValueError(f"this faiss has no SIMD level {r['level']!r}"
                             " to choose (dynamic dispatch: FAISS >= 1.12)")
        config.set_level(level)
        return {}

    def info(self, r):
        import numpy
        config = getattr(self.faiss, "SIMDConfig", None)
        return {"faiss": self.faiss.__version__,
                "compile_options": self.faiss.get_compile_options(),
                "simd": config.get_level_name() if config else None,
                "file": self.faiss.__file__, "numpy": numpy.__version__,
                "python": sys.version.split()[0]}

    def load_ivf(self, r):
        f = self.faiss
        self.index = f.read_index(r["index"])
        self.ivf = f.extract_index_ivf(self.index)
        self.set_searchparams(r)
        self.xq = np.load(r["queries"])
        self.k, self.kind = r["k"], "ivf"

        def search(x):
            self.index.search(x, self.k)
        self.search_fn, self.rows = search, self.xq
        return {}

    def set_searchparams(self, r):
        if r["searchparams"]:
            self.faiss.ParameterSpace().set_index_parameters(
                self.index, r["searchparams"])
        return {}

    def load_hnsw(self, r):
        f = self.faiss
        self.tables = [f.read_index(p) for p in r["tables"]]
        for t in self.tables:
            t.hnsw.efSearch = r["ef_search"]
        xq, table_of = np.load(r["queries"]), np.load(r["table_of"])
        self.calls = [(self.tables[int(t)], xq[i:i + 1])
                      for i, t in enumerate(table_of)]
        self.k, self.kind = r["k"], "hnsw"
        calls, k = self.calls, self.k

        def search(x):
            index, q = calls[int(x[0, 0])]
            index.search(q, k)
        # As bench_hnsw.py: the load generators hand out query numbers.
        self.search_fn = search
        self.rows = np.arange(len(calls), dtype="float32").reshape(-1, 1)
        return {}

    def _mode(self, r):
        if self.kind is None:
            raise ValueError("nothing loaded: load_ivf or load_hnsw first")
        if self.kind == "ivf":
            self.ivf.parallel_mode = int(r.get("parallel_mode") or 0)
        threads = r.get("threads") or os.cpu_count()
        return lambda: self.faiss.omp_set_num_threads(int(threads))

    def _save(self, r, a):
        self.out += 1
        path = os.path.join(r["dir"], f"out{self.out}.npy")
        np.save(path, a)
        return path

    def search(self, r):
        self._mode(r)()
        if self.kind == "ivf":
            labels = self.index.search(self.xq, self.k)[1]
        else:
            labels = np.vstack([index.search(q, self.k)[1]
                                for index, q in self.calls])
        return {"labels": self._save(r, labels)}

    def run(self, r):
        if r["load"] not in LOADS:
            raise ValueError(f"load must be one of {LOADS}")
        thread_init = self._mode(r)
        run = getattr(self.loadgen, r["load"])(
            self.search_fn, self.rows, thread_init=thread_init,
            **r["kwargs"])
        return {"latencies": self._save(r, run.latencies_s),
                "wall_s": run.wall_s, "queries": run.queries,
                "offered_qps": run.offered_qps}


def _serve():
    server = _Server()
    out = sys.stdout
    sys.stdout = sys.stderr          # a stray print must not break a reply
    for line in sys.stdin:
        r = json.loads(line)
        if r["op"] == "quit":
            break
        try:
            handler = getattr(server, r["op"], None)
            if handler is None or r["op"].startswith("_"):
                raise ValueError(f"unknown request {r['op']!r}")
            reply = dict(handler(r), ok=True)
        except Exception as e:                 # noqa: BLE001 (to the caller)
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    _serve()
