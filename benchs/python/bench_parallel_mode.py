#!/usr/bin/python3
"""bench_parallel_mode.py: FAISS IVF search from Python, stock modes
against index.parallel_mode = faiss.PARALLEL_MODE_CCD, on the fork's AVX2
build.

    PYTHONPATH=build/python /usr/bin/python3 benchs/python/bench_parallel_mode.py
    ... --quick --out /tmp/x      # smoke run (ctest -L bench)

Contenders, one index, one process, taking turns block by block (each
round starts with another contender) so that noise hits all alike:
  faiss       parallel_mode 0, FAISS's OpenMP with all cores per call
  faiss-omp1  parallel_mode 0, one OpenMP thread per calling thread
  faiss-pm1   parallel_mode 1 (each query's lists shared), all cores
  ccd         PARALLEL_MODE_CCD on faiss.ccd's default Pool("auto")
and, as a reference row measured afterwards in a second process, Debian's
own python3-faiss (a generic x86-64 build of the same FAISS 1.7.3) in
parallel_mode 0: "debian-faiss". Scenarios: batch (one call of B queries),
single (one Python thread, one query per call), clients (T Python threads,
one query per call). Writes python_mode.{json,md,png} to --out (default
benchs/results).
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import faiss
import numpy as np

CONTENDERS = ("faiss", "faiss-omp1", "faiss-pm1", "ccd")
REFERENCE = "debian-faiss"
DEBIAN_FAISS = "/usr/lib/python3/dist-packages"
ROOT = pathlib.Path(__file__).resolve().parents[2]


def make_data(nb, d, nq, seed=1234):
    """Gaussian blobs of lognormal sizes; queries drawn like the data."""
    rs = np.random.RandomState(seed)
    nblobs = 512
    centers = rs.randn(nblobs, d).astype(np.float32) * 4
    weights = rs.lognormal(0, 1, nblobs)
    weights /= weights.sum()
    xb = centers[rs.choice(nblobs, nb, p=weights)]
    xb += rs.randn(nb, d).astype(np.float32)
    xq = centers[rs.choice(nblobs, nq, p=weights)]
    xq += rs.randn(nq, d).astype(np.float32)
    return xb.astype(np.float32), xq.astype(np.float32)


def use(index, contender):
    """Make `index` search like `contender` in the calling thread."""
    index.parallel_mode = {"ccd": getattr(faiss, "PARALLEL_MODE_CCD", 0),
                           "faiss-pm1": 1}.get(contender, 0)
    faiss.omp_set_num_threads(threads_of(contender))


def threads_of(contender):
    return 1 if contender == "faiss-omp1" else os.cpu_count()


def percentiles(lat_s):
    lat = np.sort(np.asarray(lat_s)) * 1e3
    return {f"p{p}_ms": float(np.percentile(lat, q)) for p, q in
            (("50", 50), ("99", 99), ("999", 99.9))}


def run_single(index, xq, k, contender, n):
    use(index, contender)
    lat = []
    t0 = time.perf_counter()
    for i in range(n):
        q = xq[i % len(xq): i % len(xq) + 1]
        s = time.perf_counter()
        index.search(q, k)
        lat.append(time.perf_counter() - s)
    return {"qps": n / (time.perf_counter() - t0), **percentiles(lat)}


def run_clients(index, xq, k, contender, threads, n):
    use(index, contender)  # the mode is on the index, for every thread
    lat = [[] for _ in range(threads)]
    barrier = threading.Barrier(threads + 1)

    def client(t):
        faiss.omp_set_num_threads(threads_of(contender))  # per thread
        barrier.wait()
        for i in range(n):
            j = (t * 7919 + i) % len(xq)
            s = time.perf_counter()
            index.search(xq[j:j + 1], k)
            lat[t].append(time.perf_counter() - s)

    workers = [threading.Thread(target=client, args=(t,))
               for t in range(threads)]
    for w in workers:
        w.start()
    barrier.wait()
    t0 = time.perf_counter()
    for w in workers:
        w.join()
    wall = time.perf_counter() - t0
    return {"qps": threads * n / wall, **percentiles(sum(lat, []))}


def run_batch(index, xq, k, contender):
    use(index, contender)
    t0 = time.perf_counter()
    index.search(xq, k)
    return {"qps": len(xq) / (time.perf_counter() - t0)}


def median_rows(samples):
    """{contender: [dict per round]} -> {contender: dict of medians}."""
    return {c: {key: float(np.median([r[key] for r in rounds]))
                for key in rounds[0]} for c, rounds in samples.items()}


def check_equal(index, xq, k, contenders):
    """Every contender answers the same (labels; ties aside)."""
    answers = {}
    for c in contenders:
        use(index, c)
        answers[c] = index.search(xq[:500], k)
    ref_D, ref_I = answers["faiss"]
    return {c: float((I == ref_I).mean()) for c, (D, I) in answers.items()}


def contenders_of(scenarios):
    """The contenders measured, the reference row last if it ran."""
    return [c for c in CONTENDERS + (REFERENCE,) if c in scenarios["batch"]]


SCENARIOS = (("batch", "Batch"), ("single", "Single client"),
             ("clients", "Python client threads"))


def tables_and_plots(scenarios, sizes):
    """A table per scenario (QPS against the best stock contender of the
    same build, P50/P99/P999) and the plots: QPS by scenario, latency of
    the single client and of the threads."""
    names = contenders_of(scenarios)
    tables = []
    for s, title in SCENARIOS:
        rows = scenarios[s]
        best = max(rows[c]["qps"] for c in CONTENDERS if c != "ccd")
        tables.append({
            "title": f"{title} ({sizes[s]})",
            "columns": ["contender", "QPS", "QPS / best stock (same build)",
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


def measure(args, contenders):
    """Build the data and the index, then `rounds` rounds of every scenario
    for every contender, the order rotating by round. Returns
    (samples, agree, sizes, data, index description)."""
    quick = args.quick
    nb, d, nlist, nprobe, k = ((20000, 32, 128, 8, 10) if quick
                               else (200000, 64, 1024, 16, 10))
    nbatch, nsingle, nclient = (200, 50, 20) if quick else (4000, 2000, 500)
    rounds = 1 if quick else args.rounds
    xb, xq = make_data(nb, d, max(nbatch, 1000))
    faiss.omp_set_num_threads(os.cpu_count())
    index = faiss.index_factory(d, f"IVF{nlist},Flat")
    index.train(xb[:max(50 * nlist, 20000)])
    index.add(xb)
    index.nprobe = nprobe
    agree = check_equal(index, xq, k, contenders)
    samples = {s: {c: [] for c in contenders}
               for s in ("batch", "single", "clients")}
    for r in range(rounds):
        shift = r % len(contenders)
        for c in contenders[shift:] + contenders[:shift]:
            samples["batch"][c].append(run_batch(index, xq[:nbatch], k, c))
            samples["single"][c].append(
                run_single(index, xq, k, c, nsingle))
            samples["clients"][c].append(
                run_clients(index, xq, k, c, args.clients, nclient))
    use(index, "faiss")
    sizes = {"batch": f"{nbatch} queries", "single": f"{nsingle} queries",
             "clients": f"{args.clients} threads x {nclient} queries"}
    return (samples, agree, sizes,
            f"{nb} x {d} gaussian blobs (512, lognormal sizes), seed 1234",
            f"IVF{nlist},Flat, nprobe {nprobe}, k {k}", rounds)


def reference_row(args):
    """Debian's python3-faiss (generic build) as contender "faiss", in a
    second process: {scenario: medians}, or None when it is missing."""
    if not os.path.isdir(os.path.join(DEBIAN_FAISS, "faiss")):
        return None
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cmd = [sys.executable, __file__, "--reference", "--rounds",
           str(args.rounds), "--clients", str(args.clients)]
    if args.quick:
        cmd.append("--quick")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        print("reference row failed:", out.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run")
    ap.add_argument("--out", default=str(ROOT / "benchs" / "results"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--reference", action="store_true",
                    help="internal: measure this process's faiss as 'faiss' "
                         "and print the medians as JSON")
    args = ap.parse_args()
    if args.reference:
        samples, *_ = measure(args, ("faiss",))
        print(json.dumps({s: median_rows(v)["faiss"]
                          for s, v in samples.items()}))
        return 0
    if not hasattr(faiss, "ccd"):
        print("this faiss is not the fork's (PYTHONPATH=build/python?)",
              file=sys.stderr)
        return 2
    # Here, not at the top: the reference row's process runs Debian's
    # faiss, which has no faiss.contrib.ccd.
    from faiss.contrib.ccd import report
    command = " ".join(["PYTHONPATH=build/python", "/usr/bin/python3",
                        "benchs/python/bench_parallel_mode.py"]
                       + sys.argv[1:])
    run = report.run_info(command, str(ROOT))
    samples, agree, sizes, data, index, rounds = measure(args, CONTENDERS)
    scenarios = {s: median_rows(v) for s, v in samples.items()}
    reference = reference_row(args)
    if reference is not None:
        for s in scenarios:
            scenarios[s][REFERENCE] = reference[s]
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
    if reference is not None:
        notes.append(f"`{REFERENCE}`: Debian's python3-faiss "
                     f"({DEBIAN_FAISS}), parallel_mode 0, all cores, "
                     f"measured after the others in a second process, same "
                     f"data and plan")
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
