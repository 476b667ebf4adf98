#!/usr/bin/env python3
"""bench_parallel_mode.py: FAISS IVF search from Python, stock modes
against index.parallel_mode = faiss.PARALLEL_MODE_CCD, on the fork's AVX2
build.

    PYTHONPATH=build/python .venv/bin/python benchs/python/bench_parallel_mode.py
    ... --quick --out /tmp/x      # smoke run (ctest -L bench)

Contenders, one index, one process, taking turns (each round starts
with another contender: loadgen.turns) so that noise hits all alike:
  faiss       parallel_mode 0, FAISS's OpenMP with all cores per call
  faiss-omp1  parallel_mode 0, one OpenMP thread per calling thread
  faiss-pm1   parallel_mode 1 (each query's lists shared), all cores
  ccd         PARALLEL_MODE_CCD on faiss.ccd's default Pool("auto")
  wheel       the faiss-cpu wheel (FAISS 1.15.1, what a user would
              install instead), parallel_mode 0, all cores, in its own
              process (faiss.contrib.ccd.peer; .venv-stock), its turns
              alternating with the others
  wheel-omp1  the same with one OpenMP thread per calling thread
Scenarios: batch (one call of B queries), single (one Python thread, one
query per call), clients (T Python threads, one query per call). Data,
load generators and percentiles come from faiss.contrib.ccd (the wheel's
process loads the same modules). Writes python_mode.{json,md,png} to --out (default
benchs/out/; --record: the committed benchs/results/).
"""

import argparse
import os
import pathlib
import sys

import faiss
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
from faiss.contrib.ccd import datasets, loadgen, peer, report

CONTENDERS = ("faiss", "faiss-omp1", "faiss-pm1", "wheel", "wheel-omp1",
              "ccd")
STOCK_PYTHON = ROOT / ".venv-stock" / "bin" / "python"


class Contender:
    """A parallel mode as a user switches it: index.parallel_mode, and
    faiss.omp_set_num_threads in each thread that searches; a wheel-*
    contender does the same in the wheel's process (.peer)."""

    def __init__(self, name):
        self.name = name
        self.mode = {"ccd": faiss.PARALLEL_MODE_CCD,
                     "faiss-pm1": 1}.get(name, 0)
        self.threads = 1 if name.endswith("-omp1") else os.cpu_count()
        self.wheel = name.startswith("wheel")
        self.peer = None

    def use(self, index):
        if not self.wheel:
            index.parallel_mode = self.mode
            self.thread_init()

    def thread_init(self):
        faiss.omp_set_num_threads(self.threads)

    def run(self, load, search, xq, **kwargs):
        if self.wheel:
            return self.peer.run(load, parallel_mode=self.mode,
                                 threads=self.threads, **kwargs)
        return getattr(loadgen, load)(search, xq,
                                      thread_init=self.thread_init, **kwargs)


def measure_turn(index, xq, k, c, plan):
    """One contender's turn: batch, single client, client threads."""
    c.use(index)

    def search(q):
        index.search(q, k)
    runs = {"batch": c.run("batches", search, xq[:plan["batch"]],
                           batch_size=plan["batch"], calls=1),
            "single": c.run("closed_loop", search, xq, clients=1,
                            calls=plan["single"]),
            "clients": c.run("closed_loop", search, xq,
                             clients=plan["clients"],
                             calls=plan["client_calls"])}
    out = {s: r.summary() for s, r in runs.items()}
    out["batch"] = {"qps": out["batch"]["qps"]}   # one call: no percentiles
    return out


def median_rows(samples):
    """{contender: [dict per round]} -> {contender: dict of medians}."""
    return {c: {key: float(np.median([r[key] for r in rounds]))
                for key in rounds[0]} for c, rounds in samples.items()}


def check_equal(index, xq, k, contenders):
    """Every contender answers the same (labels; ties aside)."""
    answers = {}
    for c in contenders:
        if c.wheel:
            answers[c.name] = c.peer.search(parallel_mode=c.mode,
                                            threads=c.threads)[:500]
            continue
        c.use(index)
        answers[c.name] = index.search(xq[:500], k)[1]
    ref = answers[contenders[0].name]
    return {c: float((I == ref).mean()) for c, I in answers.items()}


def contenders_of(scenarios):
    """The contenders measured, in CONTENDERS' order."""
    return [c for c in CONTENDERS if c in scenarios["batch"]]


SCENARIOS = (("batch", "Batch"), ("single", "Single client"),
             ("clients", "Python client threads"))


def tables_and_plots(scenarios, sizes):
    """A table per scenario (QPS against the best stock contender, the
    fork's or the wheel's, P50/P99/P999) and the plots: QPS by scenario, latency of
    the single client and of the threads."""
    names = contenders_of(scenarios)
    tables = []
    for s, title in SCENARIOS:
        rows = scenarios[s]
        best = max(rows[c]["qps"] for c in CONTENDERS if c != "ccd")
        tables.append({
            "title": f"{title} ({sizes[s]})",
            "columns": ["contender", "QPS", "QPS / best stock",
                        "P50 ms", "P99 ms", "P999 ms"],
            "rows": [[c, rows[c]["qps"], rows[c]["qps"] / best]
                     + [rows[c].get(k) for k in ("p50_ms", "p99_ms",
                                                 "p999_ms")]
                     for c in names]})
    plots = [{"title": "Throughput", "kind": "bar",
              "ylabel": "QPS (median of rounds)",
              "categories": [f"{s} ({sizes[s]})" for s, _ in SCENARIOS],
              "series": [{"label": c, "x": [0, 1, 2],
                          "y": [scenarios[s][c]["qps"]
                                for s, _ in SCENARIOS]} for c in names]}]
    for s in ("single", "clients"):
        plots.append({
            "title": f"Latency, {s} ({sizes[s]})", "kind": "bar",
            "ylabel": "ms (log)", "yscale": "log",
            "categories": ["P50", "P99", "P999"],
            "series": [{"label": c, "x": [0, 1, 2],
                        "y": [scenarios[s][c][k] for k in
                              ("p50_ms", "p99_ms", "p999_ms")]}
                       for c in names]})
    return tables, plots


def measure(args, names):
    """Build the data and the index, then `rounds` rounds in which every
    contender takes its turn at every scenario, the order rotating by
    round (loadgen.turns). Returns (samples by scenario, agree, sizes,
    data, index description, rounds, the wheel's faiss)."""
    quick = args.quick
    nb, d, nlist, nprobe, k = ((20000, 32, 128, 8, 10) if quick
                               else (200000, 64, 1024, 16, 10))
    plan = ({"batch": 200, "single": 50, "clients": args.clients,
             "client_calls": 20} if quick else
            {"batch": 4000, "single": 2000, "clients": args.clients,
             "client_calls": 500})
    rounds = 1 if quick else args.rounds
    ds = datasets.SkewedSynthetic(nb=nb, d=d, nq=max(plan["batch"], 1000),
                                  nblobs=512)
    xb, xq = ds.get_database(), ds.get_queries()
    faiss.omp_set_num_threads(os.cpu_count())
    index = faiss.index_factory(d, f"IVF{nlist},Flat")
    index.train(xb[:max(50 * nlist, 20000)])
    index.add(xb)
    index.nprobe = nprobe
    contenders = [Contender(n) for n in names]
    with peer.Peer(args.stock_python) as wheel:
        path = os.path.join(wheel.workdir, "index.faissindex")
        faiss.write_index(index, path)
        wheel.load_ivf(path, xq, k, f"nprobe={nprobe}")
        for c in contenders:
            c.peer = wheel
        agree = check_equal(index, xq, k, contenders)
        turns = loadgen.turns(contenders, rounds,
                              lambda c: measure_turn(index, xq, k, c, plan))
        info = wheel.info
    samples = {s: {c: [t[s] for t in turns[c]] for c in names}
               for s in ("batch", "single", "clients")}
    Contender("faiss").use(index)
    sizes = {"batch": f"{plan['batch']} queries",
             "single": f"{plan['single']} queries",
             "clients": f"{args.clients} threads x {plan['client_calls']} "
                        f"queries"}
    return (samples, agree, sizes,
            f"{ds.name}: {nb} x {d} gaussian blobs (512, lognormal sizes), "
            f"queries Zipf {ds.zipf:g} over blobs",
            f"IVF{nlist},Flat, nprobe {nprobe}, k {k}", rounds, info)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    aa = ap.add_argument_group("load").add_argument
    aa("--quick", action="store_true", help="smoke run")
    aa("--rounds", type=int, default=5)
    aa("--clients", type=int, default=8, help="client threads")
    aa = ap.add_argument_group("output").add_argument
    report.add_output_arguments(ap)
    aa("--stock-python", default=str(STOCK_PYTHON),
       help="the faiss-cpu wheel's Python (default: the repository's "
       ".venv-stock)")
    args = ap.parse_args(argv)
    if args.rounds < 1 or not 1 <= args.clients <= loadgen.MAX_THREADS:
        ap.error(f"--rounds must be at least 1 and --clients in "
                 f"[1, {loadgen.MAX_THREADS}]")
    try:
        args.out = report.output_dir(args, ROOT)
    except ValueError as e:
        ap.error(str(e))
    return args


def main():
    args = parse_args(sys.argv[1:])
    if not hasattr(faiss, "ccd"):
        print("this faiss is not the fork's (PYTHONPATH=build/python?)",
              file=sys.stderr)
        return 2
    command = " ".join(["PYTHONPATH=build/python", ".venv/bin/python",
                        "benchs/python/bench_parallel_mode.py"]
                       + sys.argv[1:])
    run = report.run_info(command, str(ROOT))
    samples, agree, sizes, data, index, rounds, wheel = measure(
        args, CONTENDERS)
    scenarios = {s: median_rows(v) for s, v in samples.items()}
    pool = faiss.ccd.get_default_pool()
    run.update(
        faiss=f"the fork's faiss {faiss.__version__} from "
              f"{os.path.dirname(faiss.__file__)}, AVX2 module "
              f"{getattr(faiss.loader, 'has_AVX2', '?')}",
        topology=pool.topology())
    tables, plots = tables_and_plots(scenarios, sizes)
    notes = [f"data: {data}", f"index: {index}",
             f"plan: {rounds} rounds; in a round each contender runs every "
             f"scenario in turn, the order rotating by round; tables give "
             f"the median of the rounds",
             "same labels as `faiss` on 500 queries: "
             + ", ".join(f"{c} {v:.4f}" for c, v in agree.items())]
    notes.append("`wheel`, `wheel-omp1`: " + peer.describe(wheel) +
                 "; same index and plan")
    result = {"benchmark": "python_mode",
              "title": "bench_parallel_mode: faiss.IndexIVF from Python",
              "run": run, "notes": notes, "tables": tables, "plots": plots,
              "data": {"sizes": sizes, "agree": agree,
                       "scenarios": scenarios, "pool_stats": pool.stats()}}
    paths = report.finish(result, args.out)
    print(paths[1].read_text())
    if min(agree.values()) < 0.999:
        print("contenders disagree", agree, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
