#!/usr/bin/env python3
"""bench_headline.py: the headline comparison in one run: stock FAISS's
parallel modes against the CCD mode, side by side, on IVF and on many HNSW
tables, and the monitor following a drifting hot set.

    PYTHONPATH=build/python .venv/bin/python benchs/python/bench_headline.py
    ... --quick                   # about a minute on 2 cores
    ...                           # a few minutes
    ... --full                    # wider sweeps, more rounds, all tables
    ... --skip hnsw,drift --topology 2x1

Steps, each driven through the other scripts' own parse_args() and run()
(their options, checks and targets stay theirs):
  ivf-synthetic, ivf-fmnist  bench_serving.py on synthetic Zipf blobs and
      on Fashion-MNIST: contenders "0:1", "0", "1", "ccd" and "ccd-fifo"
      (the CCD mode on a pool with fifo_callers=True); closed loops
      of 1 and 8 client threads (--full: 1-32), open loops at 50% and 90%
      of stock's highest QPS, batches of 1 and 256.
  hnsw  bench_hnsw.py on Fashion-MNIST split into Zipf-popular tables:
      stock IndexHNSW.search against faiss.ccd.HNSWTables (--full: and
      hand_off 1, "ccd-task").
  batch-matrix  (--full only) bench_batch_matrix.py: every IVF type x
      batch 1-4,000 x nprobe x 1 and 8 clients, the CCD mode against the
      best stock mode; its own batch_matrix.{json,md,png} in --out, its
      targets among the headline's.
  drift  a pool of an emulated topology (--drift-topology, 2 CCDs of one
      worker) searches the synthetic IVF index in the CCD mode while the
      hot set of the queries moves; pool.stats() every 0.25 s gives the
      per-CCD work and traffic over time and the monitor's re-maps.
The emulated CCDs share this machine's caches: the drift step shows that
the monitor re-places keys, not what re-placing buys.

Writes to --out: headline.json (every number, each step's own output
under "data"), headline.md, headline_throughput.png (QPS against client
threads), headline_latency.png (latency distribution, 8 clients),
headline_load.png (P99 against offered load) and headline_drift.png; and
--results-md (OUT/RESULTS.md) with the commands, commit, machine and
targets, marked as such from a tree that differs from its commit. OUT is
benchs/out/, which git ignores; --record (a clean tree only) writes the
committed benchs/results/ and, for a run of every step,
benchs/RESULTS.md. Indexes are built once and kept beside the cached ground truth
($FAISS_CCD_CACHE, else ~/.cache/faiss-ccd).
"""

import argparse
import json
import os
import pathlib
import shlex
import sys
import textwrap
import time


HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import faiss                                             # noqa: E402
from faiss.contrib.ccd import datasets, evaluation, peer, report  # noqa: E402

import bench_batch_matrix                                # noqa: E402
import bench_hnsw                                        # noqa: E402
import bench_serving                                     # noqa: E402
import headline_drift                                    # noqa: E402

ROOT = HERE.parents[1]
# How the commands in the results run a script from the repository root.
PYTHON = "PYTHONPATH=build/python .venv/bin/python"
STEPS = ("ivf-synthetic", "ivf-fmnist", "hnsw", "batch-matrix", "drift")
FULL_ONLY = ("batch-matrix",)
K = 10

# Sizes per mode, tuned on 2 cores: --quick about a minute, the default a
# few minutes (both with a warm cache), --full longer.
MODES = {
    "quick": {"synthetic": "synthetic:20000x32", "nlist": 256, "nprobe": 8,
              "fmnist_maxtrain": 20000, "nq": 300, "clients": [1, 8],
              "duration": 0.5, "rounds": 1,
              "hnsw": {"nb": 6000, "tables": 12, "nq": 300,
                       "contenders": "stock,wheel,ccd"},
              "drift_s": 6.0, "drift_phases": 3},
    "default": {"synthetic": "synthetic:200000x64", "nlist": 1024,
                "nprobe": 16, "fmnist_maxtrain": 60000, "nq": 2000,
                "clients": [1, 8], "duration": 0.5, "rounds": 5,
                "hnsw": {"nb": 20000, "tables": 20, "nq": 1000,
                         "contenders": "stock,wheel,ccd"},
                "drift_s": 12.0, "drift_phases": 4},
    "full": {"synthetic": "synthetic:200000x64", "nlist": 1024,
             "nprobe": 16, "fmnist_maxtrain": 60000, "nq": 2000,
             "clients": [1, 2, 4, 8, 16, 32], "duration": 1.0, "rounds": 5,
             "hnsw": {"nb": None, "tables": 60, "nq": 2000,
                      "contenders": "stock,wheel,ccd,ccd-task"},
             "drift_s": 30.0, "drift_phases": 6},
}
LOADS, BATCHES = "0.5,0.9", "1,256"
# The fork's stock modes, the faiss-cpu wheel's (in its own process), ours.
IVF_CONTENDERS = "0:1,0,1,wheel-0:1,wheel-0,wheel-1,ccd,ccd-fifo"


# ------------------------------------------------------------- the steps
def join(xs):
    return ",".join(str(x) for x in xs)


def serving_argv(step, m, args):
    """bench_serving.py's command line for an IVF step."""
    if step == "ivf-synthetic":
        db, key = m["synthetic"], f"IVF{m['nlist']},Flat"
        sp, maxtrain = f"nprobe={m['nprobe']}", 200000
    else:
        db, key, sp = "fmnist", "IVF256,Flat", "nprobe=8"
        maxtrain = m["fmnist_maxtrain"]
    indexfile = datasets.cache_dir() / (
        f"index-{db.replace(':', '-')}-{key.replace(',', '_')}-"
        f"t{maxtrain}.faissindex")
    return ["--db", db, "--indexkey", key, "--searchparams", sp,
            "--k", str(K), "--nq", str(m["nq"]), "--maxtrain", str(maxtrain),
            "--indexfile", str(indexfile),
            "--parallel_mode", IVF_CONTENDERS,
            "--clients", join(m["clients"]), "--load", LOADS,
            "--batch", BATCHES, "--duration", str(args.duration),
            "--rounds", str(args.rounds), "--topology", args.topology
            ] + out_argv(args)


def out_argv(args):
    """A step's --out (and --record): the headline's own."""
    return ["--out", args.out] + (["--record"] if args.record else [])


def hnsw_argv(m, args):
    h = m["hnsw"]
    indexdir = datasets.cache_dir() / (
        f"hnsw-fmnist-nb{h['nb'] or 'all'}-t{h['tables']}-M16-efc40")
    return (["--db", "fmnist"] +
            (["--nb", str(h["nb"])] if h["nb"] else []) +
            ["--tables", str(h["tables"]), "--nq", str(h["nq"]),
             "--k", str(K), "--indexdir", str(indexdir),
             "--contenders", h["contenders"],
             "--clients", join(m["clients"]), "--load", LOADS,
             "--duration", str(args.duration), "--rounds", str(args.rounds),
             "--topology", args.topology] + out_argv(args))


def drive(module, script, argv):
    """One step through the script's own parse_args() and run(); its run
    facts name the command that repeats the step alone."""
    out = module.run(module.parse_args(argv))
    out["run"]["command"] = f"{PYTHON} benchs/python/{script} " \
        f"{shlex.join(argv)}"
    out["run"]["wall_s"] = time.time() - out["run"].pop("started")
    return out


# ---------------------------------------------------------------- tables
WORKLOAD = {"ivf-synthetic": "IVF synthetic", "ivf-fmnist": "IVF fmnist",
            "hnsw": "HNSW fmnist"}


def steal_cell(x):
    if "cross_ccd_steals" not in x:
        return "-"                     # not on the pool
    r = x.get("cross_ccd_steal_ratio")
    return "no steals" if r is None else f"{r:.0%}"


def serving_rows(name, out):
    """(workload, scenario, contender, QPS, P50, P99, P999, recall,
    cross-CCD, QPS / best stock, P50 / best stock, P999 / best stock) for
    each row of a step: QPS over the highest stock QPS, a percentile over
    the lowest stock value of it (as the targets judge)."""
    if "blocks" in out:
        blk = out["blocks"][0]
        scenarios, recall = blk["scenarios"], blk["recall"]
    else:
        scenarios, recall = out["scenarios"], out["recall"]
    rk = {r["contender"]: r[f"R@{K}"] for r in recall}
    fmt = report.fmt
    def ratio(res, x, key):
        best = bench_serving.best_stock(res, key) if "blocks" in out \
            else "stock"
        return f"{x[key] / res[best][key]:.2f}x"
    rows = []
    for s in scenarios:
        res = s["results"]
        for n, x in res.items():
            rows.append([WORKLOAD[name], s["scenario"], n,
                         str(round(x["qps"])), fmt(x["p50_ms"]),
                         fmt(x["p99_ms"]), fmt(x["p999_ms"]),
                         f"{rk[n]:.3f}", steal_cell(x),
                         ratio(res, x, "qps"), ratio(res, x, "p50_ms"),
                         ratio(res, x, "p999_ms")])
    return rows


def is_wheel(name):
    return name.startswith("wheel")


def headline_rows(name, out):
    """Per scenario of a step, three rows: ours (ccd), the fork's best
    stock mode, the faiss-cpu wheel's best mode (highest median QPS of
    each group), with ours over each as the median of the rounds' pairs
    [min, max] (each round ran both back to back)."""
    scenarios = out["blocks"][0]["scenarios"] if "blocks" in out else \
        out["scenarios"]
    fmt = report.fmt
    rows = []
    for s in scenarios:
        res = s["results"]
        ours = res.get("ccd")
        fork = [n for n in res if not n.startswith("ccd") and
                not is_wheel(n)]
        wheel = [n for n in res if is_wheel(n)]
        if ours is None:
            continue
        for label, names in (("ours", ["ccd"]), ("fork stock", fork),
                             ("faiss-cpu wheel", wheel)):
            if not names:
                continue
            n = max(names, key=lambda n: res[n]["qps"])
            x = res[n]
            if n == "ccd":
                pair = "-"
            else:
                r = evaluation.pair_ratios(ours, x)
                pair = (f"{r['median']:.2f}x [{r['min']:.2f}, "
                        f"{r['max']:.2f}] of {r['pairs']}")
            rows.append([WORKLOAD[name], s["scenario"], label, n,
                         str(round(x["qps"])), fmt(x["p50_ms"]),
                         fmt(x["p999_ms"]), pair])
    return rows


HEADLINE_COLUMNS = ["workload", "scenario", "row", "contender", "QPS",
                    "P50 ms", "P999 ms",
                    "ours / this: QPS, median of pairs [min, max]"]


def accuracy_rows(name, out):
    recall = out["blocks"][0]["recall"] if "blocks" in out else \
        out["recall"]
    return [[WORKLOAD[name], r["contender"], f"{r['R@1']:.3f}",
             f"{r[f'R@{K}']:.3f}", f"{r['same_labels']:.2%}"]
            for r in recall]


# ----------------------------------------------------------------- plots
def plots(results, d):
    """Throughput against clients, latency distributions at 8 clients (or
    the most clients below), P99 against offered load, drift over time."""
    out = []
    for name, o in results.items():
        sc = o["blocks"][0]["scenarios"] if "blocks" in o else \
            o["scenarios"]
        names = list(sc[0]["results"])
        width = {n: 2.5 if n.startswith("ccd") else 1.2 for n in names}
        closed = [s for s in sc if s["scenario"].startswith("closed")]
        opened = [s for s in sc if s["scenario"].startswith("open")]
        if closed:
            out.append({
                "file": "throughput", "title": WORKLOAD[name],
                "xlabel": "client threads (closed loop)", "ylabel": "QPS",
                "xscale": "log2", "series": [
                    {"label": n, "width": width[n],
                     "x": [int(s["scenario"].split()[1]) for s in closed],
                     "y": [s["results"][n]["qps"] for s in closed]}
                    for n in names]})
            at = [s for s in closed if int(s["scenario"].split()[1]) <= 8]
            s = (at or closed)[-1]
            out.append({
                "file": "latency", "title": f"{WORKLOAD[name]}, "
                f"{s['scenario']}", "xlabel": "latency, ms",
                "ylabel": "share of calls slower", "xscale": "log",
                "yscale": "log", "series": [
                    {"label": n, "width": width[n], "marker": "",
                     "x": s["results"][n]["latency_ccdf"]["ms"],
                     "y": s["results"][n]["latency_ccdf"]["slower"]}
                    for n in names]})
        if opened:
            out.append({
                "file": "load", "title": WORKLOAD[name],
                "xlabel": "offered load, % of stock's highest QPS",
                "ylabel": "P99 ms", "yscale": "log", "series": [
                    {"label": n, "width": width[n],
                     "x": [float(s["scenario"].split()[1][:-1])
                           for s in opened],
                     "y": [s["results"][n]["p99_ms"] for s in opened]}
                    for n in names]})
    if d:
        out += headline_drift.plots(d)
    return out


# ---------------------------------------------------------------- report
def cannot_show(cores, detected, ccds, drift_topology):
    where = (f"one L3 shared by all of them (hwloc: {detected})"
             if ccds == 1 else
             f"{ccds} L3 domains here (hwloc: {detected}), not 12")
    return "\n".join([
        f"This machine has {cores} cores and {where}. So:", "",
        "- Cross-CCD locality (each IVF list or HNSW table kept in one "
        "CCD's L3), the L3 miss reduction it buys, and cross-CCD steal "
        "ratios at 12-CCD scale (the paper's ~75-80% under topology-blind "
        "stealing, 5-10% with CCD-aware stealing) cannot be measured here.",
        "- The QPS and latency figures above measure what the CCD mode "
        "costs and saves on these cores (scheduling, hand-offs, tails "
        "with more client threads than cores), not the cache effects it "
        "exists for.",
        f"- Emulated topologies (`--topology NxM`, the drift step's "
        f"`{drift_topology}`) split these cores into pretend CCDs that "
        "share the real caches: they test placement, stealing and "
        "re-mapping for correctness only.",
        "- The scale model (`build/tools/scale_model/bench_sim`, "
        "docs/SIMULATION.md) stands in for them: a deterministic "
        "discrete-event simulator of a 96-core and a 48-core 12-CCD part, "
        "per-CCD L3 and shared DRAM, that runs the pool's own dispatch, "
        "steal, placement and re-map code. Its figures "
        "(benchs/results/sim.md) are a model's, not measurements, and no "
        "figure above comes from it. " + model_validation()])


def model_validation(path=ROOT / "benchs" / "results" /
                     "sim_validation.json"):
    """What the scale model's validation (tools/scale_model/validate.py) last
    found: how many of its cells came within the tolerance of the measured
    QPS of this machine, read from its results file."""
    try:
        v = json.loads(path.read_text())
        met = sum(1 for t in v["targets"] if t["met"])
        return (f"Its model of this machine came within 20% of the measured "
                f"QPS in {met} of {len(v['targets'])} cells "
                f"(benchs/results/sim_validation.md, at "
                f"{v['run'].get('git_commit', '?')}).")
    except (OSError, ValueError, KeyError, TypeError):
        return ("Its validation against this machine's measured QPS has "
                "no results file here (docs/SIMULATION.md, Validation).")


def wheel_text(results):
    """The wheel's faiss as its process reported it."""
    for o in results.values():
        if o.get("wheel"):
            return peer.describe(o["wheel"])
    return "not measured"


def to_report(info, results, d, argvs, detected, ccds, drift_topology):
    rep = {"benchmark": "headline",
           "title": "faiss-ccd headline: stock FAISS's parallel modes "
                    "against the CCD mode", "run": info, "notes": [],
           "targets": [], "tables": [], "sections": []}
    for name, o in results.items():
        rep["notes"].append(f"{WORKLOAD[name]}: {o['data']}; "
                            + (f"{o['index']}, "
                               f"{o['blocks'][0]['searchparams']}"
                               if "blocks" in o else
                               f"{o['nb']} vectors in {o['tables']} "
                               f"IndexHNSWFlat tables, Zipf {o['zipf']:g}, "
                               f"efSearch {o['efSearch']}") + f"; k {K}")
        tg = bench_serving.targets(o["blocks"][0]) if "blocks" in o \
            else bench_hnsw.targets(o)
        rep["targets"] += [dict(t, target=f"{WORKLOAD[name]}: "
                                f"{t['target']}") for t in tg]
    rep["notes"] += [
        "contenders: stock-pm0-t1 (parallel_mode 0, one OpenMP thread per "
        "client), stock-pm0 and stock-pm1 (all cores): the fork's own "
        "build; wheel-pm0-t1, wheel-pm0, wheel-pm1: the same modes of the "
        "faiss-cpu wheel (" + wheel_text(results) + "); ccd "
        "(faiss.PARALLEL_MODE_CCD), ccd-fifo (the same on a pool made with "
        "fifo_callers=True: callers first come, first served); for HNSW "
        "stock is IndexHNSW.search in "
        "the client thread (wheel: the wheel's, in its process), ccd "
        "faiss.ccd.HNSWTables",
        "each step's contenders take turns round by round; QPS is the "
        "median round's, percentiles pool every round's calls",
        "best stock: the best of the fork's stock modes and the wheel's; "
        "QPS / best stock: over the highest stock QPS in the same "
        "scenario; P50 and P999 / best stock: over the lowest stock P50 "
        "and P999 there (the targets judge the same ratios); cross-CCD: "
        "cross-CCD steals over all steals of the pool during the "
        "contender's turns (- where it does not run on the pool)"]
    rows = [r for name, o in results.items() for r in serving_rows(name, o)]
    if rows:
        rep["tables"].append({
            "title": "Headline: ours, the fork's stock modes, the "
                     "faiss-cpu wheel",
            "columns": HEADLINE_COLUMNS,
            "rows": [r for name, o in results.items()
                     for r in headline_rows(name, o)]})
        rep["tables"].append({
            "title": "Serving", "columns": COLUMNS, "rows": rows})
        rep["tables"].append({
            "title": "Accuracy (every query once)",
            "columns": ["workload", "contender", "R@1", f"R@{K}",
                        "labels equal to stock's"],
            "rows": [r for name, o in results.items()
                     for r in accuracy_rows(name, o)]})
    if d:
        rep["tables"].append({
            "title": "Drift: the monitor following a moving hot set",
            "text": headline_drift.text(d),
            "columns": headline_drift.COLUMNS,
            "rows": headline_drift.rows(d)})
    rep["sections"].append({"title": "Commands", "text": "\n".join(
        [f"This run: `{argvs[0]}`", "",
         "Each step alone, with the same data, index and load:", ""] +
        [f"- `{c}`" for c in argvs[1:]] +
        ([f"- the drift step: `{argvs[0]} --skip "
          f"{','.join(s for s in STEPS if s != 'drift')}`"] if d else []))})
    rep["sections"].append({
        "title": f"What a {info['cores']}-core machine cannot show",
        "text": cannot_show(info["cores"], detected, ccds, drift_topology)})
    rep["plots"] = plots(results, d)
    rep["data"] = {"steps": results, "drift": d}
    return rep


COLUMNS = ["workload", "scenario", "contender", "QPS", "P50 ms", "P99 ms",
           "P999 ms", f"R@{K}", "cross-CCD", "QPS / best stock",
           "P50 / best stock", "P999 / best stock"]



def results_md(rep, md_path, pngs):
    """RESULTS.md: the report with its plots linked from md_path's
    folder (report.markdown marks a dirty tree's at the top)."""
    rel = [os.path.relpath(p, md_path.parent) for p in pngs]
    r = dict(rep, sections=rep["sections"] + [{
        "title": "Plots", "text": "\n".join(
            f"![{pathlib.Path(p).stem}]({p})" for p in rel)}])
    return report.markdown(r)


# ------------------------------------------------------------------- main
def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    aa = p.add_argument
    size = p.add_mutually_exclusive_group().add_argument
    size("--quick", action="store_true", help="about a minute: small data, "
         "short turns, one round")
    size("--full", action="store_true", help="1-32 clients, three rounds, "
         "every HNSW table and contender")
    aa("--skip", default="", help=f"steps to leave out: {', '.join(STEPS)}")
    aa("--topology", default="auto", help="the CCD pool's topology for the "
       "IVF and HNSW steps: auto, NxM or CPU lists")
    aa("--drift-topology", default="2x1", help="the drift step's emulated "
       "topology (default 2 CCDs of one worker)")
    aa("--duration", type=float, help="seconds per contender per scenario "
       "per round (default by mode)")
    aa("--rounds", type=int, help="rounds (default by mode)")
    report.add_output_arguments(p)
    aa("--results-md", help="default: benchs/RESULTS.md for a --record "
       "run of every step, else OUT/RESULTS.md")
    args = p.parse_args(argv)
    args.mode = "quick" if args.quick else "full" if args.full \
        else "default"
    m = MODES[args.mode]
    args.duration = m["duration"] if args.duration is None \
        else args.duration
    args.rounds = m["rounds"] if args.rounds is None else args.rounds
    args.skip = [s for s in args.skip.split(",") if s]
    bad = [s for s in args.skip if s not in STEPS]
    if bad:
        p.error(f"--skip: {', '.join(bad)}: steps are {', '.join(STEPS)}")
    if not runnable_steps(args):
        p.error("--skip leaves nothing to run")
    if not args.duration > 0:
        p.error("--duration must be positive")
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    try:
        args.out = report.output_dir(args, ROOT)
    except ValueError as e:
        p.error(str(e))
    if args.results_md is None:
        whole = args.record and not args.skip
        args.results_md = str(ROOT / "benchs" / "RESULTS.md" if whole else
                              pathlib.Path(args.out) / "RESULTS.md")
    elif not args.record and pathlib.Path(args.results_md).resolve() == \
            (ROOT / "benchs" / "RESULTS.md").resolve():
        p.error("--results-md benchs/RESULTS.md is the committed one: use "
                "--record (clean tree) to rewrite it")
    if pathlib.Path(args.results_md).is_dir():
        p.error(f"--results-md {args.results_md} is a directory")
    return args


def runnable_steps(args):
    """The steps this run makes: not skipped, and the --full-only ones in
    --full."""
    return [s for s in STEPS if s not in args.skip and
            (s not in FULL_ONLY or args.mode == "full")]


def check_inputs(args):
    """What would fail late, found early: the topologies, Fashion-MNIST."""
    for t in {args.topology, args.drift_topology} - {"auto"}:
        faiss.ccd.Pool(topology=t, monitor=False)
    if {"ivf-fmnist", "hnsw"} - set(args.skip):
        root = pathlib.Path(os.environ.get("FAISS_CCD_FASHION_MNIST",
                                           datasets.FASHION_MNIST_DIR))
        if not (root / "train-images-idx3-ubyte.gz").exists():
            raise FileNotFoundError(
                f"Fashion-MNIST not found in {root}: install Debian's "
                "dataset-fashion-mnist (scripts/install_deps.sh does) or "
                "--skip ivf-fmnist,hnsw")


def run(args):
    check_inputs(args)
    m = MODES[args.mode]
    auto = faiss.ccd.Pool(monitor=False)      # what hwloc (or the env) says
    detected, ccds = auto.topology(), auto.num_ccds
    del auto
    if args.topology != "auto":
        faiss.ccd.set_default_pool(faiss.ccd.Pool(topology=args.topology))
    info = report.run_info(
        " ".join([PYTHON, "benchs/python/bench_headline.py"] +
                 sys.argv[1:]), ROOT,
        topology=faiss.ccd.get_default_pool().topology(),
        detected_topology=detected,
        drift_topology=f"{args.drift_topology} (emulated)",
        faiss=f"{faiss.__version__} from "
              f"{pathlib.Path(faiss.__file__).parent}")
    if not report.quotable(info["git_commit"]):
        changed = ", ".join((report.changed_paths(ROOT) or [])[:5])
        print(f"bench_headline.py: commit {info['git_commit']} "
              f"({changed or 'no repository'}): {args.results_md} will be "
              "marked as measured on a dirty tree", flush=True)
    print(f"bench_headline.py: results go to {args.out}"
          + ("" if args.record else " (--record: benchs/results)"),
          flush=True)
    steps = runnable_steps(args)
    t0, results, d, argvs = time.time(), {}, None, [info["command"]]
    matrix = None
    for i, step in enumerate(steps, 1):
        def say(s, i=i, step=step):
            print(f"[{i}/{len(steps)}] {step}: {s} (at "
                  f"{time.time() - t0:.0f} s)", flush=True)
        if step == "drift":
            say("emulated CCDs, the monitor under a moving hot set")
            d = headline_drift.run(bench_serving.parse_args(
                serving_argv("ivf-synthetic", m, args)), m, args, say)
            say(f"{d['remaps']} re-maps, {d['qps']:.0f} QPS")
            continue
        if step == "batch-matrix":
            say("every IVF type and batch size, stock against the CCD mode")
            margv = out_argv(args)
            margs = bench_batch_matrix.parse_args(margv)
            ds, cells, agree = bench_batch_matrix.measure(margs)
            matrix = bench_batch_matrix.result_of(
                margs, ds, cells, agree, report.run_info(
                    " ".join([PYTHON, "benchs/python/bench_batch_matrix.py"]
                             + margv), ROOT))
            report.finish(matrix, args.out)
            argvs.append(matrix["run"]["command"])
            continue
        if step == "hnsw":
            say("HNSW tables, stock against HNSWTables")
            o = drive(bench_hnsw, "bench_hnsw.py", hnsw_argv(m, args))
        else:
            say("IVF, stock parallel modes against the CCD mode")
            o = drive(bench_serving, "bench_serving.py",
                      serving_argv(step, m, args))
        argvs.append(o["run"]["command"])
        results[step] = o
    rep = to_report(info, results, d, argvs, detected, ccds,
                    args.drift_topology)
    if matrix is not None:
        rep["targets"] += [dict(t, target=f"IVF batch matrix: {t['target']}")
                           for t in matrix["targets"]]
    return rep


def main(argv):
    args = parse_args(argv)
    rep = report.run_script("bench_headline.py", run, args)
    if rep is None:
        return 2
    for t in rep["tables"]:
        report.print_table(t, left=3 if t["columns"] is COLUMNS else
                           4 if t["columns"] is HEADLINE_COLUMNS else 2)
        if t.get("text"):
            print(textwrap.fill(t["text"], 79))
    print()
    try:
        paths = report.finish(rep, args.out)
    except ImportError as e:
        print(f"bench_headline.py: {e}", file=sys.stderr)
        return 2
    for path in paths:
        print(f"wrote {path}")
    commit = rep["run"]["git_commit"]
    md = pathlib.Path(args.results_md)
    md.parent.mkdir(parents=True, exist_ok=True)
    md.write_text(results_md(rep, md,
                             [p for p in paths if p.suffix == ".png"]))
    print(f"wrote {md}")
    report.print_targets(rep)
    hnsw = [t for t in rep["targets"]
            if t["target"].startswith("HNSW") and "answers" in t["target"]]
    if hnsw and not hnsw[0]["met"]:
        print("bench_headline.py: FAILED: HNSWTables' labels differ from "
              "IndexHNSW.search's", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
