"""headline_drift.py: bench_headline.py's drift step. The CCD mode on an
emulated topology while the queries' hot set moves: what each CCD runs,
what the monitor sees and when it re-maps, sampled over time.

The emulated CCDs share this machine's caches: the step shows that the
monitor re-places keys, not what re-placing buys.
"""

import threading
import time

import numpy as np

import faiss
from faiss.contrib.ccd import datasets

import bench_serving

COLUMNS = ["phase", "s", "QPS", "tasks per CCD",
           "window traffic per CCD, MB", "imbalance", "re-maps"]


def run(sargs, m, args, say):
    """The IVF index bench_serving.py's arguments `sargs` name, searched
    in the CCD mode on the emulated topology args.drift_topology while the
    queries' hot set moves every phase (m: the headline mode's sizes);
    pool.stats() sampled every 0.25 s."""
    ds = datasets.by_name(sargs.db, nq=sargs.nq)
    index = bench_serving.load_index(sargs, ds)   # the cached index
    bench_serving.ivf_of(index)
    pool = faiss.ccd.Pool(topology=args.drift_topology, monitor=True,
                          monitor_period=0.25)
    params = faiss.SearchParametersIVFCCD(
        nprobe=m["nprobe"], runtime=pool.runtime, helpers=1)
    phases, per_phase, batch, clients = m["drift_phases"], 1000, 8, 2
    phase_s = m["drift_s"] / phases
    trace = ds.query_trace(phases * per_phase, hot_rotate_every=per_phase)
    stop, errors, served = threading.Event(), [], [0] * clients
    say(f"{pool.topology()}; the hot set moves every {phase_s:.1f} s, "
        f"{m['drift_s']:.0f} s")

    def client(c):
        i = c * batch
        try:
            while not stop.is_set():
                p = min(int((time.perf_counter() - t0) / phase_s),
                        phases - 1)
                j = p * per_phase + i % (per_phase - batch)
                index.search(trace[j:j + batch], sargs.k, params=params)
                served[c] += batch
                i += clients * batch
        except BaseException as e:          # re-raised below
            errors.append(e)
            stop.set()

    def sample():
        s = pool.stats()
        mon = s["monitor"] or {}
        return {"t": time.perf_counter() - t0, "queries": sum(served),
                "tasks_per_ccd": s["tasks_run_per_ccd"],
                "traffic_per_ccd": mon.get("ccd_traffic", []),
                "imbalance": mon.get("imbalance"),
                "remaps": mon.get("remaps", 0), "epoch": s["epoch"],
                "intra_ccd_steals": s["intra_ccd_steals"],
                "cross_ccd_steals": s["cross_ccd_steals"]}

    t0 = time.perf_counter()
    samples = [sample()]
    threads = [threading.Thread(target=client, args=(c,), daemon=True)
               for c in range(clients)]
    for th in threads:
        th.start()
    while not stop.is_set() and samples[-1]["t"] < m["drift_s"]:
        stop.wait(max(0.0, 0.25 * len(samples) -
                      (time.perf_counter() - t0)))
        samples.append(sample())
    stop.set()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    first, last = samples[0], samples[-1]
    intra = last["intra_ccd_steals"] - first["intra_ccd_steals"]
    cross = last["cross_ccd_steals"] - first["cross_ccd_steals"]
    return {"topology": pool.topology(), "nprobe": m["nprobe"], "k": sargs.k,
            "data": str(ds), "index": sargs.indexkey, "clients": clients,
            "batch": batch, "phases": phases, "phase_s": phase_s,
            "remaps": last["remaps"] - first["remaps"],
            "steals": intra + cross, "cross_ccd_steals": cross,
            "qps": last["queries"] / last["t"],
            "cross_ccd_steal_ratio": cross / (intra + cross)
            if intra + cross else None, "samples": samples}


def rows(d):
    """One row per phase of the drift step: its QPS, the share of tasks
    each CCD ran, the monitor's window traffic per CCD at its end, the
    imbalance and the re-maps so far."""
    rows, s = [], d["samples"]
    for p in range(d["phases"]):
        lo, hi = p * d["phase_s"], (p + 1) * d["phase_s"]
        inside = [x for x in s if lo <= x["t"] <= hi + 1e-9]
        a = max((x for x in s if x["t"] <= lo), key=lambda x: x["t"],
                default=s[0])
        b = inside[-1] if inside else a
        dt = b["t"] - a["t"]
        tasks = np.subtract(b["tasks_per_ccd"], a["tasks_per_ccd"])
        share = " / ".join(f"{t / tasks.sum():.0%}" for t in tasks) \
            if tasks.sum() else "-"
        rows.append([p, f"{a['t']:.1f}-{b['t']:.1f}",
                     round((b["queries"] - a["queries"]) / dt) if dt else 0,
                     share, " / ".join(f"{t / 1e6:.1f}"
                                       for t in b["traffic_per_ccd"]),
                     f"{b['imbalance']:.2f}" if b["imbalance"] else "-",
                     b["remaps"] - s[0]["remaps"]])
    return rows


def text(d):
    ratio = d["cross_ccd_steal_ratio"]
    top = max((x["imbalance"] or 1.0) for x in d["samples"])
    return (
        f"{d['data']}, {d['index']} nprobe {d['nprobe']}, searched in the "
        f"CCD mode by {d['clients']} client threads in batches of "
        f"{d['batch']} on a pool of topology {d['topology']}: emulated "
        "CCDs that share this machine's caches, so this shows what the "
        "monitor does, not what it buys. The hot set moves every "
        f"{d['phase_s']:.1f} s. {d['remaps']} re-maps, highest imbalance "
        f"{top:.2f} (max over mean per-CCD traffic in the monitor's fast "
        "window; MonitorConfig re-maps past 1.2, over 2 s, by default; "
        "faiss.ccd.Pool does not expose either), "
        f"{d['qps']:.0f} QPS; {d['cross_ccd_steals']} of "
        f"{d['steals']} steals crossed CCDs"
        + ("" if ratio is None else f" ({ratio:.0%})") + ".")


def plots(d):
    """The drift plots: tasks per CCD, the monitor's traffic per CCD and
    its imbalance and re-maps, over time."""
    s = d["samples"]
    t = [x["t"] for x in s[1:]]
    nccd = len(s[0]["tasks_per_ccd"])
    rate = [[(b["tasks_per_ccd"][c] - a["tasks_per_ccd"][c]) /
             (b["t"] - a["t"]) for a, b in zip(s, s[1:])]
            for c in range(nccd)]
    moves = f"hot set moves every {d['phase_s']:.1f} s"
    return [
        {"file": "drift", "title": f"tasks run per CCD ({moves})",
         "xlabel": "s", "ylabel": "tasks / s", "series": [
             {"label": f"ccd{c}", "marker": "", "x": t, "y": rate[c]}
             for c in range(nccd)]},
        {"file": "drift", "title": "monitor: traffic per CCD, "
         "fast window", "xlabel": "s", "ylabel": "MB", "series": [
             {"label": f"ccd{c}", "marker": "", "x": t,
              "y": [x["traffic_per_ccd"][c] / 1e6 if
                    x["traffic_per_ccd"] else 0 for x in s[1:]]}
             for c in range(nccd)]},
        {"file": "drift", "title": "monitor: imbalance and re-maps",
         "xlabel": "s", "series": [
             {"label": "imbalance (max / mean)", "marker": "", "x": t,
              "y": [x["imbalance"] or 1.0 for x in s[1:]]},
             {"label": "re-maps", "marker": "", "x": t,
              "y": [x["remaps"] - s[0]["remaps"] for x in s[1:]]}]}]
