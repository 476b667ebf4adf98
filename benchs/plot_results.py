#!/usr/bin/python3
"""plot_results.py: a PNG beside every benchmark results JSON.

    /usr/bin/python3 benchs/plot_results.py [DIR]     # default benchs/results

Reads every DIR/*.json and writes DIR/<name>.png next to it. Each JSON says
which benchmark wrote it in its "benchmark" field; files of a benchmark this
script has no plotter for (python_mode draws its own) are skipped with a
message. Uses matplotlib's Agg
backend (no display needed), Debian's python3-matplotlib.
"""

import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after use("Agg"))


def plot_pool(data, png):
    """bench_pool: (a) throughput per T, (a) latency, (b) tree tasks/s."""
    contenders = list(data["contenders"])
    colors = {c: f"C{i}" for i, c in enumerate(contenders + ["serial"])}
    fig, (ax_a, ax_lat, ax_b) = plt.subplots(1, 3, figsize=(17, 5.2))

    # (a) throughput: one line per contender over the number of submitters.
    for c in contenders:
        rows = [r for r in data["throughput"] if r["contender"] == c]
        if rows:
            ax_a.plot([r["submitters"] for r in rows],
                      [r["median_tasks_per_s"] / 1e6 for r in rows],
                      marker="o", color=colors[c], label=c)
    ax_a.set_title("(a) independent tiny tasks")
    ax_a.set_xlabel("submitting threads")
    ax_a.set_ylabel("Mtasks/s (median)")
    ax_a.set_xticks(range(1, data["plan"]["max_submitters"] + 1))
    ax_a.set_ylim(bottom=0)
    ax_a.grid(alpha=0.3)
    ax_a.legend(fontsize=8)

    # (a) latency: P50 bars with a P99 tick, parked and spinning side by side.
    lat = data["latency"]
    names = [c for c in contenders + data.get("latency_references", [])
             if any(r["contender"] == c for r in lat)]
    width = 0.38
    for k, mode in enumerate(["parked", "spinning"]):
        rows = {r["contender"]: r for r in lat if r["mode"] == mode}
        xs = [i + (k - 0.5) * width for i in range(len(names))]
        p50 = [rows[n]["p50_us"] for n in names]
        p99 = [rows[n]["p99_us"] for n in names]
        ax_lat.bar(xs, p50, width, label=f"{mode} P50",
                   color="C0" if mode == "parked" else "C1")
        ax_lat.scatter(xs, p99, marker="_", s=200, color="black",
                       label="P99" if k == 0 else None, zorder=3)
    ax_lat.axhline(2.0, color="red", linestyle="--", linewidth=1,
                   label="target: parked P50 2 us")
    ax_lat.set_yscale("log")
    top = max([r["p99_us"] for r in lat] + [2.0])
    ax_lat.set_ylim(top=top * 30)  # room for the legend above the bars
    ax_lat.set_xticks(range(len(names)))
    ax_lat.set_xticklabels(names, rotation=20)
    ax_lat.set_title("(a) submit-to-start latency")
    ax_lat.set_ylabel("us (log)")
    ax_lat.grid(alpha=0.3, axis="y")
    ax_lat.legend(fontsize=8, ncol=2)

    # (b) tree: grouped bars, one group per tree size.
    tree = data["tree"]
    sizes = sorted({r["tasks"] for r in tree})
    names_b = ["serial"] + [c for c in contenders
                            if any(r["contender"] == c for r in tree)]
    width = 0.8 / len(names_b)
    for j, name in enumerate(names_b):
        rows = {r["tasks"]: r for r in tree if r["contender"] == name}
        xs = [i + (j - (len(names_b) - 1) / 2) * width
              for i in range(len(sizes))]
        ax_b.bar(xs, [rows[s]["median_tasks_per_s"] / 1e6 if s in rows
                      else 0 for s in sizes],
                 width, label=name, color=colors[name],
                 hatch="//" if name == "serial" else None,
                 alpha=0.6 if name == "serial" else 1.0)
    best = max(r["median_tasks_per_s"] for r in tree) / 1e6
    ax_b.set_ylim(0, best * 1.45)  # room for the legend above the bars
    ax_b.set_xticks(range(len(sizes)))
    ax_b.set_xticklabels([f"{s:,} tasks" for s in sizes])
    ax_b.set_title("(b) uneven fork-join tree")
    ax_b.set_ylabel("Mtasks/s (median)")
    ax_b.grid(alpha=0.3, axis="y")
    ax_b.legend(fontsize=8, ncol=3)

    fig.suptitle(f"bench_pool: {data['topology']}\n"
                 f"{data['command']}  ({data['date_utc']}, "
                 f"commit {data['git_commit']})", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def _plot_hnsw(data, png):
    import plot_hnsw  # plot(path_json, path_png) reads the JSON itself
    plot_hnsw.plot(png.with_suffix(".json"), png)


def _plot_serving(data, png):
    import plot_serving  # also writes serving.md and serving_heatmap.png
    plot_serving.report(data, png)


def _plotters():
    """Each benchmark's plotter; the others live beside this file."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from plot_ivf import plot_ivf
    from plot_mapping import plot_mapping
    return {"pool": plot_pool, "ivf": plot_ivf, "mapping": plot_mapping,
            "bench_hnsw": _plot_hnsw, "serving": _plot_serving}


def main(argv):
    results = pathlib.Path(argv[1] if len(argv) > 1 else "benchs/results")
    paths = sorted(results.glob("*.json"))
    if not paths:
        print(f"plot_results: no *.json in {results}", file=sys.stderr)
        return 1
    status = 0
    plotters = _plotters()
    for path in paths:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            print(f"plot_results: {path}: {e}", file=sys.stderr)
            status = 1
            continue
        plotter = plotters.get(data.get("benchmark"))
        if plotter is None:
            print(f"plot_results: {path}: no plotter for benchmark "
                  f"{data.get('benchmark')!r}, skipped")
            continue
        png = path.with_suffix(".png")
        plotter(data, png)
        print(f"plot_results: wrote {png}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
