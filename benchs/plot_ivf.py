#!/usr/bin/python3
"""plot_ivf.py: a PNG beside every bench_ivf results JSON.

    /usr/bin/python3 benchs/plot_ivf.py [DIR]     # default benchs/results

Reads DIR/ivf_*.json (written by build/benchs/bench_ivf, "benchmark": "ivf")
and writes DIR/ivf_<dataset>.png. `plot_ivf(data, png)` has the signature
of benchs/plot_results.py's plotters, and that script uses it for
"benchmark": "ivf". Uses matplotlib's Agg backend (Debian's python3-matplotlib).
"""

import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after use("Agg"))

STOCK = ("stock-pm0", "stock-pm1", "stock-pm0-t1")


def _rows(data, scenario):
    return [r for r in data["scenarios"] if r["scenario"] == scenario]


def _best_stock(rows, key, higher):
    vals = [r[key] for r in rows if r["contender"] in STOCK]
    if not vals:
        return None
    return max(vals) if higher else min(vals)


def _latency_panel(ax, rows, title, targets):
    """P50 / P99 / P999 bars per contender (log scale) and target lines."""
    names = [r["contender"] for r in rows]
    width = 0.27
    for k, (key, label) in enumerate(
            [("p50_ms", "P50"), ("p99_ms", "P99"), ("p999_ms", "P999")]):
        xs = [i + (k - 1) * width for i in range(len(names))]
        ax.bar(xs, [r[key] for r in rows], width, label=label, color=f"C{k}")
    for value, label, color in targets:
        if value:
            ax.axhline(value, color=color, linestyle="--", linewidth=1,
                       label=label)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=20, fontsize=8)
    ax.set_ylabel("ms (log), median of rounds")
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)


def plot_ivf(data, png):
    """bench_ivf: latency (single, clients), QPS (clients, batch), scan cost."""
    fig, axes = plt.subplots(1, 4, figsize=(21, 5.4))
    single, clients, batch = (_rows(data, s)
                              for s in ("single", "clients", "batch"))
    plan = data["plan"]

    p50 = _best_stock(single, "p50_ms", False)
    p999 = _best_stock(single, "p999_ms", False)
    _latency_panel(
        axes[0], single, f"one client ({plan['single_nq']} queries/round)",
        [(p50 and 0.9 * p50, "target P50: 0.9x best stock", "red"),
         (p999 and 0.5 * p999, "target P999: 0.5x best stock", "purple")])
    c50 = _best_stock(clients, "p50_ms", False)
    c999 = _best_stock(clients, "p999_ms", False)
    _latency_panel(
        axes[1], clients,
        f"{plan['nclients']} clients ({plan['clients_nq']} queries/round)",
        [(c50, "target P50: 1.0x best stock", "red"),
         (c999 and 0.5 * c999, "target P999: 0.5x best stock", "purple")])

    # QPS: 8 clients and one batch, side by side per contender.
    ax = axes[2]
    names = [r["contender"] for r in batch]
    by_name = {r["contender"]: r for r in clients}
    width = 0.38
    ax.bar([i - width / 2 for i in range(len(names))],
           [by_name[n]["qps"] if n in by_name else 0 for n in names], width,
           label=f"{plan['nclients']} clients", color="C0")
    ax.bar([i + width / 2 for i in range(len(names))],
           [r["qps"] for r in batch], width,
           label=f"batch of {plan['batch_nq']}", color="C1")
    best = _best_stock(batch, "qps", True)
    if best:
        ax.axhline(best, color="red", linestyle="--", linewidth=1,
                   label="best stock batch")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=20, fontsize=8)
    ax.set_ylabel("queries / s, median of rounds")
    ax.set_title("throughput")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)

    # Scan cost on one thread per task decomposition.
    ax = axes[3]
    cost = data.get("scan_cost")
    if cost:
        ax.bar(cost["variants"], cost["ms_per_query"],
               color=[f"C{i}" for i in range(len(cost["variants"]))])
        ax.set_xticks(range(len(cost["variants"])))
        ax.set_xticklabels(cost["variants"], rotation=20, fontsize=8)
        ax.set_ylabel("ms per query, one thread")
        ax.set_title(f"scan cost, k={cost['k']} ({cost['queries']} queries)")
        ax.grid(alpha=0.3, axis="y")
    else:
        ax.set_axis_off()

    d = data["data"]
    fig.suptitle(
        f"bench_ivf {data['dataset']}: {d['nb']} x {d['d']}, "
        f"IVF{d['nlist']},Flat nprobe {d['nprobe']} k {d['k']} -- "
        f"{data['topology']}\n{data['command']}  ({data['date_utc']}, "
        f"commit {data['git_commit']}, load {data['loadavg_before']:.1f}"
        f"->{data['loadavg_after']:.1f})", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def main(argv):
    results = pathlib.Path(argv[1] if len(argv) > 1 else "benchs/results")
    paths = sorted(results.glob("ivf_*.json"))
    if not paths:
        print(f"plot_ivf: no ivf_*.json in {results}", file=sys.stderr)
        return 1
    status = 0
    for path in paths:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            print(f"plot_ivf: {path}: {e}", file=sys.stderr)
            status = 1
            continue
        if data.get("benchmark") != "ivf":
            print(f"plot_ivf: {path}: not a bench_ivf file, skipped")
            continue
        png = path.with_suffix(".png")
        plot_ivf(data, png)
        print(f"plot_ivf: wrote {png}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
