#!/usr/bin/env python3
"""bench_hnsw.py: the HNSW tables benchmark's Python side. A data set's
base split into many faiss.IndexHNSWFlat tables, each query sent to one
table by a Zipf law, searched from Python client threads: stock
IndexHNSW.search in each client thread against faiss.ccd.HNSWTables on the
CCD pool, taking turns in one process.

    PYTHONPATH=build/python .venv/bin/python benchs/python/bench_hnsw.py
    ... --db synthetic:200000x64 --tables 60 --zipf 1.1
    ... --contenders stock,ccd --clients 1,8,32 --load .5,.9
    ... --quick                     # well under a minute (ctest -L bench)

Contenders (--contenders, comma-separated) search the same tables with the
same query sequence: "stock" calls the table's index.search (one query) in
the client thread, with faiss.omp_set_num_threads(1) in that thread
(stock at its best); "wheel" does the same with the
faiss-cpu wheel (FAISS 1.15.1, what a user would install instead) in its
own process (faiss.contrib.ccd.peer), its turns alternating with the
others; "ccd" is faiss.ccd.HNSWTables on
the pool (--topology) with its default hand_off -1 (the client thread runs
the query unless it sits on another CCD than the table's); "ccd-task" is
hand_off 1, every query a pool task on its table's CCD. Before timing,
every contender answers every query once; its labels are compared with
stock's and its recall taken against the exact k-NN within the query's
table. Labels that differ from stock's fail the run (exit 1), as in
bench_hnsw.cpp; a missed performance target does not. Built on
faiss.contrib.ccd (data sets, load generators, report). Writes
hnsw_py.{json,md,png} to --out.
"""

import argparse
import os
import pathlib
import sys
import time

import numpy as np

import faiss
from faiss.contrib.ccd import datasets, evaluation, loadgen, peer, report

ROOT = pathlib.Path(__file__).resolve().parents[2]
# name -> hand_off ("wheel": stock's search in the faiss-cpu wheel's process)
CONTENDERS = {"stock": None, "wheel": None, "ccd": -1, "ccd-task": 1}
STOCK_PYTHON = pathlib.Path(__file__).resolve().parents[2] / ".venv-stock" \
    / "bin" / "python"
QPS_TARGET = 0.97       # the issue's: pool QPS >= 0.97x stock's


# ------------------------------------------------------------- contenders
class Contender:
    """How a client thread searches one query of one table: spec "stock",
    "ccd" or "ccd-task" (see the module docstring)."""

    def __init__(self, spec):
        if spec not in CONTENDERS:
            raise ValueError(f"--contenders: {spec!r} is not one of "
                             f"{', '.join(CONTENDERS)}")
        self.name = spec
        self.on_pool = spec not in ("stock", "wheel")
        self.wheel = spec == "wheel"
        self.tables = None
        self.peer = None

    def attach(self, pool, indexes, ef_search):
        """Stock searches `indexes` itself; a pool contender adds them,
        as they are, to its own faiss.ccd.HNSWTables."""
        self.indexes = indexes
        if self.on_pool:
            self.tables = faiss.ccd.HNSWTables(pool)
            self.tables.hand_off = CONTENDERS[self.name]
            for t, index in enumerate(indexes):
                self.tables.add_table(t, index, ef_search)

    def search(self, t, x, k):
        if self.tables is None:
            return self.indexes[t].search(x, k)
        return self.tables.search(t, x, k)

    def thread_init(self):
        """Stock only: one OpenMP thread per client (the pool runs no
        OpenMP)."""
        if not self.on_pool:
            faiss.omp_set_num_threads(1)

    def run(self, load, search, rows, **kwargs):
        """One turn of loadgen.<load>: here, or the wheel's in its
        process (one OpenMP thread per client there too)."""
        if self.wheel:
            return self.peer.run(load, threads=1, **kwargs)
        return getattr(loadgen, load)(search, rows,
                                      thread_init=self.thread_init, **kwargs)

    def labels(self, w, k):
        """Every query once, one per call, in this thread."""
        if self.wheel:
            return self.peer.search(threads=1)
        self.thread_init()
        return np.vstack([self.search(t, x, k)[1] for t, x in w.calls])


def start_peer(contenders, args, w, indexes):
    """The wheel's process on the same tables (their files, written to
    the peer's directory when there is no --indexdir) and queries."""
    wheels = [c for c in contenders if c.wheel]
    if not wheels:
        return None
    try:
        p = peer.Peer(args.stock_python, simd_level=args.wheel_simd)
    except FileNotFoundError as e:
        raise ValueError(f"--stock-python: {e}") from None
    paths = []
    for t, index in enumerate(indexes):
        path = args.indexdir and os.path.join(args.indexdir,
                                              f"table{t:05d}.index")
        if not path or not os.path.exists(path):
            path = os.path.join(p.workdir, f"table{t:05d}.index")
            faiss.write_index(index, path)
        paths.append(path)
    p.load_hnsw(paths, args.efSearch, w.xq, w.table_of, args.k)
    for c in wheels:
        c.peer = p
    return p


# --------------------------------------------------------------- workload
class Workload:
    """The tables and the query sequence. Base rows [0, nb) are split into
    `ntables` contiguous parts, an IndexHNSWFlat each, whose labels are row
    numbers within the part. Query i goes to table table_of[i], drawn by a
    Zipf law of exponent `zipf` over a ranking of the tables shuffled by
    `seed` (so the hot tables are not the first ones)."""

    def __init__(self, ds, args):
        self.xb = np.ascontiguousarray(ds.get_database()[:args.nb],
                                       dtype="float32")
        self.xq = np.ascontiguousarray(ds.get_queries(), dtype="float32")
        self.metric = faiss.METRIC_INNER_PRODUCT if ds.metric == "IP" \
            else faiss.METRIC_L2
        self.nb, self.d, self.nq = len(self.xb), ds.d, len(self.xq)
        if args.tables > self.nb:
            raise ValueError(f"--tables {args.tables}: more tables than "
                             f"the {self.nb} base vectors")
        self.bounds = np.linspace(0, self.nb, args.tables + 1).astype(int)
        self.sizes = np.diff(self.bounds)
        if args.k > self.sizes.min():
            raise ValueError(f"--k {args.k} exceeds the smallest table's "
                             f"{self.sizes.min()} vectors")
        rs = np.random.RandomState(args.seed)
        rank = rs.permutation(args.tables)        # rank -> table
        w = 1.0 / np.arange(1, args.tables + 1) ** args.zipf
        self.share = np.empty(args.tables)
        self.share[rank] = w / w.sum()
        self.table_of = rs.choice(args.tables, self.nq, p=self.share)
        # Per query, what search(x) needs, so that every contender's
        # per-call Python work is the same two look-ups.
        self.calls = [(int(t), self.xq[i:i + 1])
                      for i, t in enumerate(self.table_of)]
        # The load generators hand out rows of this column: query numbers
        # (exact in float32 up to 2^24).
        self.ids = np.arange(self.nq, dtype="float32").reshape(-1, 1)
        if self.nq > 1 << 24:
            raise ValueError(f"--nq {self.nq}: at most {1 << 24} queries")

    def part(self, t):
        return self.xb[self.bounds[t]:self.bounds[t + 1]]

    def ground_truth(self, k):
        """Exact k-NN of each query within its own table: (nq, k)."""
        gt = np.empty((self.nq, k), dtype="int64")
        metric = "IP" if self.metric == faiss.METRIC_INNER_PRODUCT else "L2"
        for t in range(len(self.sizes)):
            rows = np.flatnonzero(self.table_of == t)
            if rows.size:
                gt[rows] = datasets.exact_knn(self.xq[rows], self.part(t), k,
                                              metric)[1]
        return gt


def load_tables(args, w):
    """One IndexHNSWFlat per table: read from --indexdir where there, else
    built (and written there if --indexdir was named)."""
    indexes, built, t0 = [], 0, time.time()
    print(f"{len(w.sizes)} tables of {w.sizes.min()}-{w.sizes.max()} x "
          f"{w.d}, M {args.M}", flush=True)
    for t in range(len(w.sizes)):
        path = args.indexdir and os.path.join(args.indexdir,
                                              f"table{t:05d}.index")
        if path and os.path.exists(path):
            # read_index returns the index downcast and owned;
            # downcast_index of that temporary would own nothing, and the
            # index would be freed under it.
            index = faiss.read_index(path)
            if not isinstance(index, faiss.IndexHNSW) or \
                    index.d != w.d or index.ntotal != w.sizes[t]:
                raise ValueError(f"{path}: d={index.d}, ntotal="
                                 f"{index.ntotal}, expected an IndexHNSW "
                                 f"of {w.sizes[t]} x {w.d}: another "
                                 "--indexdir for these options")
        else:
            index = faiss.IndexHNSWFlat(w.d, args.M, w.metric)
            index.hnsw.efConstruction = args.efConstruction
            index.add(w.part(t))
            built += 1
            if path:
                os.makedirs(args.indexdir, exist_ok=True)
                faiss.write_index(index, path)
        # FAISS 1.7.3 sizes the search from the index's own efSearch (see
        # faiss/HNSWTables.h), so it is set here for every contender.
        index.hnsw.efSearch = args.efSearch
        indexes.append(index)
    print(f"  {built} built, {len(indexes) - built} read, in "
          f"{time.time() - t0:.1f} s", flush=True)
    return indexes


# ------------------------------------------------------------ measurement
def scenario(name, contenders, rounds, run_one, pool):
    def measure(c):
        before = evaluation.pool_counters(pool) if c.on_pool else None
        run = run_one(c)
        return run, (None if before is None
                     else evaluation.pool_counters(pool) - before)
    return {"scenario": name,
            "results": {n: evaluation.combine_rounds(m) for n, m in
                        loadgen.turns(contenders, rounds, measure).items()}}


def recall_rows(w, contenders, gt, k):
    """Every query once, one per call, in this thread: R@1 and R@k (as
    FAISS's benchmarks count them), k-recall@k, and the share of labels
    equal to stock's."""
    rows, ref = [], None
    for c in contenders:
        I = c.labels(w, k)
        if c.name == "stock":
            ref = I
        row = {"contender": c.name}
        for r in sorted({1, k}):
            row[f"R@{r}"] = evaluation.recall_at(I, gt, r)
        row[f"{k}-recall@{k}"] = evaluation.intersection_recall(I, gt, k)
        row["labels"] = I
        rows.append(row)
    for row in rows:
        row["same_labels"] = float((row.pop("labels") == ref).mean())
    return rows


def run(args):
    contenders = [Contender(s) for s in args.contenders.split(",") if s]
    names = [c.name for c in contenders]
    if "stock" not in names or names == ["stock"] or \
            len(set(names)) != len(names):
        raise ValueError("--contenders needs stock and at least one of "
                         "ccd, ccd-task, each once")
    contenders.sort(key=lambda c: c.name != "stock")    # stock first
    if all(c.wheel or c.name == "stock" for c in contenders):
        raise ValueError("--contenders needs one of ccd, ccd-task")
    if args.topology != "auto":
        faiss.ccd.set_default_pool(faiss.ccd.Pool(topology=args.topology))
    pool = faiss.ccd.get_default_pool()
    info = report.run_info(" ".join(["benchs/python/bench_hnsw.py"] +
                                    sys.argv[1:]), ROOT,
                           topology=pool.topology(),
                           faiss=f"{faiss.__version__} from "
                                 f"{pathlib.Path(faiss.__file__).parent}")
    ds = datasets.by_name(args.db, nq=args.nq)
    w = Workload(ds, args)
    indexes = load_tables(args, w)
    for c in contenders:
        c.attach(pool, indexes, args.efSearch)
    wheel = start_peer(contenders, args, w, indexes)
    try:
        return measure(args, pool, info, ds, w, contenders, wheel)
    finally:
        if wheel is not None:
            wheel.close()


def measure(args, pool, info, ds, w, contenders, wheel):
    out = {"benchmark": "hnsw_py",
           "title": "bench_hnsw.py: many faiss.IndexHNSWFlat tables "
                    "searched from Python, stock against HNSWTables on "
                    "the CCD pool",
           "run": info, "data": str(ds), "nb": w.nb, "nq": w.nq,
           "tables": len(w.sizes), "table_sizes": w.sizes.tolist(),
           "table_share": w.share.tolist(), "zipf": args.zipf,
           "seed": args.seed, "M": args.M,
           "efConstruction": args.efConstruction,
           "efSearch": args.efSearch, "k": args.k,
           "contenders": [c.name for c in contenders], "scenarios": []}
    if wheel is not None:
        out["wheel"] = wheel.info
    print("ground truth and answers", flush=True)
    out["recall"] = recall_rows(w, contenders, w.ground_truth(args.k),
                                args.k)

    def searcher(c):
        calls, k = w.calls, args.k

        def search(x):
            t, q = calls[int(x[0, 0])]
            c.search(t, q, k)
        return search

    def add(name, run_one):
        print(f"  {name}", flush=True)
        out["scenarios"].append(scenario(name, contenders, args.rounds,
                                         run_one, pool))

    for n in args.clients:
        add(f"closed {n} client(s)", lambda c, n=n: c.run(
            "closed_loop", searcher(c), w.ids, clients=n,
            duration_s=args.duration))
    if args.load and args.clients:
        peak = max(s["results"][n]["qps"] for s in out["scenarios"]
                   for n in STOCK if n in s["results"])
        out["peak_stock_qps"] = peak
        for f in args.load:
            add(f"open {f:.0%} ({f * peak:.0f} q/s)",
                lambda c, f=f: c.run(
                    "open_loop", searcher(c), w.ids, rate_qps=f * peak,
                    duration_s=args.duration, senders=args.senders))
    out["pool_stats"] = {k: v for k, v in pool.stats().items()
                         if k not in ("workers", "monitor")}
    faiss.omp_set_num_threads(os.cpu_count())
    return out


# ---------------------------------------------------------------- report
STOCK = ("stock", "wheel")


def best_stock(res, key="qps"):
    """The stock contender (this faiss's, or the wheel's) with the
    highest QPS, or the lowest value of a percentile key."""
    return report.best(res, [n for n in res if n in STOCK], key)


def targets(out):
    """The issue's targets that this run measured, answers first."""
    pools = [n for n in out["contenders"] if n not in STOCK]
    same = {r["contender"]: r["same_labels"] for r in out["recall"]}
    res = [report.judge(
        "answers: labels equal stock IndexHNSW.search's",
        min(same[n] for n in pools), 1.0,
        detail=", ".join(f"{n} {same[n]:.2%}" for n in pools),
        why="HNSW search is deterministic given the index and efSearch: "
            "a difference is a bug")]
    by = {s["scenario"]: s["results"] for s in out["scenarios"]}
    for n in (1, 8, 32):
        r = by.get(f"closed {n} client(s)")
        if not r:
            continue
        st, bt = r[best_stock(r)], r[best_stock(r, "p999_ms")]
        for name in pools:
            task = name == "ccd-task"
            res.append(report.judge(
                f"{name}, {n} client thread(s): QPS >= {QPS_TARGET}x best "
                "stock", r[name]["qps"] / st["qps"], QPS_TARGET,
                detail=f"{r[name]['qps']:.0f} vs {st['qps']:.0f}, "
                       f"{best_stock(r)}",
                why=WHY_TASK if task else WHY_AUTO,
                next=NEXT_TASK if task else NEXT_AUTO))
            res.append(report.judge(
                f"{name}, {n} client thread(s): P999 <= best stock's",
                r[name]["p999_ms"] / bt["p999_ms"], 1.0, at_most=True,
                detail=f"{r[name]['p999_ms']:.3f} vs {bt['p999_ms']:.3f} "
                       "ms", why=WHY_TAIL, next=NEXT_TAIL))
    return res


WHY_AUTO = ("hand_off -1 runs the query in the client thread when the "
            "client is on the table's CCD or the machine has one CCD, as "
            "stock does; what differs is HNSWTables' per-call work (table "
            "look-up, traffic report, argument checks in faiss.ccd) and "
            "noise")
NEXT_AUTO = ("measure the per-call cost of faiss.ccd.HNSWTables.search "
             "against index.search on one thread and trim the Python "
             "checks")
WHY_TASK = ("every query a pool task: two thread hand-offs per query "
            "(client to worker and back, see faiss/HNSWTables.h), which "
            "buy no locality on a machine of one CCD")
NEXT_TASK = ("judge ccd-task on a machine of several CCDs, where the "
             "table's L3 is what the hand-off buys")
WHY_TAIL = ("a P999 of a short turn rests on a handful of calls: the "
            "kernel's time slices of the Python threads (more of them than "
            "cores), the GIL between calls and whatever else the machine "
            "runs, not only the contender")
NEXT_TAIL = "more rounds (--rounds) to tell the tail from noise"


def to_report(out):
    r = {k: out[k] for k in ("benchmark", "title", "run")}
    k = out["k"]
    hot = max(out["table_share"])
    r["notes"] = [
        f"data: {out['data']}; the first {out['nb']} base vectors in "
        f"{out['tables']} tables of {min(out['table_sizes'])}-"
        f"{max(out['table_sizes'])}, {out['nq']} queries",
        f"IndexHNSWFlat M {out['M']}, efConstruction "
        f"{out['efConstruction']}, efSearch {out['efSearch']}, k {k}",
        f"tables by Zipf {out['zipf']:g} (seed {out['seed']}): the hottest "
        f"gets {hot:.1%} of the queries",
        "contenders take turns round by round; QPS is the median round's, "
        "percentiles pool every round's calls",
        "ratios: over the best stock contender's (stock or wheel) in the "
        "same scenario; cross-CCD: cross-CCD "
        "steals over all steals of the pool during the contender's turns"]
    if out.get("wheel"):
        r["notes"].append("wheel: " + peer.describe(out["wheel"]))
    r["targets"] = targets(out)
    r["tables"] = [{
        "title": "accuracy (every query once, one per call)",
        "columns": ["contender"] + [c for c in out["recall"][0]
                                    if c != "contender"],
        "rows": [list(x.values()) for x in out["recall"]]}]
    rows = []
    for s in out["scenarios"]:
        res = s["results"]
        st = res[best_stock(res)]
        for n, x in res.items():
            cross = x.get("cross_ccd_steal_ratio")
            rows.append([s["scenario"], n, round(x["qps"]),
                         report.fmt(x["ms_per_query"]), report.fmt(x["p50_ms"]),
                         report.fmt(x["p99_ms"]), report.fmt(x["p999_ms"]),
                         f"{x['qps'] / st['qps']:.2f}x",
                         f"{x['p999_ms'] / st['p999_ms']:.2f}x",
                         "-" if cross is None else f"{cross:.0%}"])
    r["tables"].append({
        "title": "serving", "columns": [
            "scenario", "contender", "QPS", "ms per query", "P50 ms",
            "P99 ms", "P999 ms", "QPS / best stock", "P999 / best stock",
            "cross-CCD"], "rows": rows})
    r["plots"] = []
    for prefix, x_of, xlabel, y, yl, xs in (
            ("closed", lambda s: int(s.split()[1]), "client threads", "qps",
             "QPS", "log2"),
            ("open", lambda s: float(s.split()[1][:-1]),
             "offered load, % of stock's peak", "p99_ms", "P99 ms",
             "linear")):
        sc = [s for s in out["scenarios"] if s["scenario"].startswith(prefix)]
        if sc:
            r["plots"].append({
                "title": prefix, "xlabel": xlabel, "ylabel": yl,
                "xscale": xs, "yscale": "log" if y == "p99_ms" else "linear",
                "series": [{"label": n, "width": 1.2 if n == "stock" else 2.5,
                            "x": [x_of(s["scenario"]) for s in sc],
                            "y": [s["results"][n][y] for s in sc]}
                           for n in out["contenders"]]})
    r["data"] = out
    return r


# ------------------------------------------------------------------- main
def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    aa = p.add_argument_group("data").add_argument
    aa("--db", default="fmnist", help="fmnist, synthetic[:NBxD], "
       "sift1m:DIR, gist1m:DIR, deep1m:DIR or hdf5:FILE")
    aa("--nb", type=int, help="base vectors (the first nb; default all)")
    aa("--nq", type=int, default=2000, help="queries (the first nq)")
    aa = p.add_argument_group("tables").add_argument
    aa("--tables", type=int, default=60, help="tables the base is split "
       "into, an IndexHNSWFlat each")
    aa("--M", type=int, default=16)
    aa("--efConstruction", type=int, default=40)
    aa("--efSearch", type=int, default=64)
    aa("--indexdir", help="read the tables from here if there, else build "
       "and write them")
    aa = p.add_argument_group("search").add_argument
    aa("--k", type=int, default=10)
    aa("--zipf", type=float, default=1.0, help="skew of the tables' "
       "popularity (0: uniform)")
    aa("--seed", type=int, default=1234, help="the tables' ranking and "
       "the queries' tables")
    aa("--contenders", default="stock,wheel,ccd,ccd-task",
       help="stock, wheel (the faiss-cpu wheel's IndexHNSW.search, in "
       "its own process), ccd, ccd-task")
    aa("--stock-python", default=str(STOCK_PYTHON),
       help="the faiss-cpu wheel's Python, for the wheel contender "
       "(default: the repository's .venv-stock)")
    aa("--wheel-simd", help="hold the wheel to this SIMD level (AVX2, "
       "AVX512, ...; default: its own pick for this CPU)")
    aa("--topology", default="auto", help="the CCD pool's topology: auto, "
       "NxM or CPU lists")
    loadgen.add_arguments(p, clients=[1, 8, 32], load=[0.5, 0.9])
    aa = p.add_argument_group("output").add_argument
    report.add_output_arguments(p)
    aa("--quick", action="store_true", help="smoke run: 12 tables of 6000 "
       "vectors, 300 queries, short turns, one round")
    args = p.parse_args(argv)
    if args.quick:
        args.nb = min(args.nb or 6000, 6000)
        args.tables, args.nq = min(args.tables, 12), min(args.nq, 300)
        args.load, args.senders = [0.5], min(args.senders, 32)
        args.duration, args.rounds = 0.2, 1
    for name in ("nq", "k", "tables", "M", "efConstruction", "efSearch"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1")
    if args.nb is not None and args.nb < 1:
        p.error("--nb must be at least 1")
    if not 0 <= args.zipf < float("inf"):
        p.error("--zipf must be finite and >= 0")
    loadgen.check_arguments(p, args)
    try:
        args.out = report.output_dir(args, ROOT)
    except ValueError as e:
        p.error(str(e))
    return args


def main(argv):
    args = parse_args(argv)
    out = report.run_script("bench_hnsw.py", run, args)
    if out is None:
        return 2
    rep = to_report(out)
    for t in rep["tables"]:
        report.print_table(t)
    print()
    for path in report.finish(rep, args.out):
        print(f"wrote {path}")
    report.print_targets(rep)
    if not rep["targets"][0]["met"]:
        print("bench_hnsw.py: FAILED: labels differ from "
              "IndexHNSW.search's", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
