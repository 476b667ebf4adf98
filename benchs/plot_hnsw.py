#!/usr/bin/python3
"""plot_hnsw: benchs/results/hnsw.json -> hnsw.png (QPS and P999 per contender,
one panel per client count, bars grouped by topology).

Usage: /usr/bin/python3 benchs/plot_hnsw.py [RESULTS_DIR]
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot(path_json, path_png):
    with open(path_json) as f:
        d = json.load(f)
    runs = d["runs"]
    clients = sorted({r["clients"] for r in runs})
    topologies = [t for t in dict.fromkeys(r["topology"] for r in runs) if t != "-"]
    contenders = [c for c in dict.fromkeys(r["contender"] for r in runs) if c != "stock"]
    fig, axes = plt.subplots(2, len(clients), figsize=(6 * len(clients), 7), squeeze=False)
    width = 0.8 / max(1, len(contenders))
    for col, nc in enumerate(clients):
        for row, (key, label) in enumerate([("qps", "QPS"), ("p999_us", "P999 (us)")]):
            ax = axes[row][col]
            for i, c in enumerate(contenders):
                ys = []
                for t in topologies:
                    match = [r[key] for r in runs
                             if r["contender"] == c and r["topology"] == t and r["clients"] == nc]
                    ys.append(match[0] if match else 0)
                xs = [j + i * width for j in range(len(topologies))]
                ax.bar(xs, ys, width, label=c)
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(topologies))])
            ax.set_xticklabels(topologies)
            ax.set_title(f"{nc} clients: {label}")
            if row == 0 and col == 0:
                ax.legend(fontsize=8)
    fig.suptitle(f"bench_hnsw ({d.get('command', '')})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path_png, dpi=90)
    print(f"plot_hnsw: wrote {path_png}")


def main(argv):
    results = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
    path = os.path.join(results, "hnsw.json")
    if not os.path.exists(path):
        print(f"plot_hnsw: {path} not found", file=sys.stderr)
        return 1
    plot(path, os.path.join(results, "hnsw.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
