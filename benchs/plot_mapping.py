#!/usr/bin/python3
"""plot_mapping.py: the figure of bench_mapping's results.

    /usr/bin/python3 benchs/plot_mapping.py [DIR]    # default benchs/results

Reads DIR/mapping.json (written by build/benchs/bench_mapping) and writes
DIR/mapping.png. plot_mapping(data, png) is the plotter, for a driver that
plots every results file. Uses matplotlib's Agg backend (no display
needed), Debian's python3-matplotlib.
"""

import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after use("Agg"))

STYLE = {
    "hash": dict(color="C7", linewidth=1),
    "round-robin": dict(color="C8", linewidth=1),
    "paper": dict(color="C0", linewidth=1.4),
    "migration-aware": dict(color="C1", linewidth=1.4),
    "paper (2 s)": dict(color="C0", linewidth=1, linestyle="--"),
    "migration-aware (2 s)": dict(color="C1", linewidth=1, linestyle="--"),
    "oracle": dict(color="C2", linewidth=1, linestyle=":"),
    "lower-bound": dict(color="black", linewidth=1, linestyle=":"),
}


def plot_imbalance(ax, drift, seconds=60):
    """Per-second imbalance of every placement over the first `seconds`
    simulated seconds (the tables cover them all), drifts as grey lines."""
    for s in drift["series"]:
        style = STYLE.get(s["name"], {})
        ys = s["imbalance"][:seconds]
        ax.plot(range(len(ys)), ys, label=s["name"], **style)
    for t in drift["drift_at_s"]:
        if t < seconds:
            ax.axvline(t, color="grey", alpha=0.25, linewidth=0.8)
    ax.set_title(f"(1) {drift['spec']}: per-CCD traffic imbalance, first "
                 f"{min(seconds, drift['seconds'])} s (grey: drift)",
                 fontsize=9)
    ax.set_xlabel("simulated second")
    ax.set_ylabel("max / mean CCD bytes")
    ax.set_ylim(bottom=0.95)
    ax.grid(alpha=0.3)


def plot_moved(ax, drifts):
    """Traffic each re-map moved, as a share of the fast window."""
    markers = {"4x2": "o", "12x8": "s"}
    for d in drifts:
        for m in d["monitors"]:
            rows = m["remaps"]
            if not rows:
                continue
            style = STYLE.get(m["name"], {})
            ax.scatter([r["time"] for r in rows],
                       [100 * r["traffic_moved"] / max(1, r["window_bytes"])
                        for r in rows],
                       s=14, color=style.get("color", "C3"),
                       marker=markers.get(d["spec"], "x"),
                       facecolors="none" if "(2 s)" in m["name"] else None,
                       label=f"{d['spec']} {m['name']} ({len(rows)})")
    ax.set_title("(1) traffic moved per re-map (count)", fontsize=9)
    ax.set_xlabel("simulated second")
    ax.set_ylabel("% of the fast window's bytes")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2)


def plot_build(ax, build, target_ms):
    """Map build time, wall and thread CPU, against the target."""
    names = ["hot_cold", "migration_aware", "snapshot"]
    labels = ["map_hot_cold", "map_migr._aware", "MappingSnapshot"]
    xs = list(range(len(names)))
    ax.bar([x - 0.2 for x in xs], [build[n]["wall_ms"] for n in names], 0.4,
           label="wall", color="C0")
    ax.bar([x + 0.2 for x in xs], [build[n]["cpu_ms"] for n in names], 0.4,
           label="thread CPU", color="C9")
    x = len(names)
    for k, key in enumerate(["monitor_build_first_ms",
                             "monitor_build_again_ms"]):
        ax.bar(x + k * 0.4 - 0.2, build[key], 0.4, color="C3",
               label="Monitor build_ms (first, again)" if k == 0 else None)
    labels.append("Monitor re-map")
    ax.axhline(target_ms, color="red", linestyle="--", linewidth=1,
               label=f"target {target_ms:g} ms (map + snapshot)")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=7, rotation=15)
    ax.set_title(f"(2) map build, {build['num_ids']} ids, "
                 f"{build['num_ccds']} CCDs (median of {build['runs']})",
                 fontsize=9)
    ax.set_ylabel("ms")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)


def plot_submit(ax, submit):
    """ns per task of every rep, per scenario, with the median overhead."""
    sc = submit["scenarios"]
    ax.boxplot([s["ns_per_task"] for s in sc], showfliers=False)
    ax.set_xticks(range(1, len(sc) + 1))
    ax.set_xticklabels(
        [s["name"] + ("" if s["name"] == "off"
                      else f"\n{s['overhead_pct']:+.1f}%") for s in sc],
        fontsize=7)
    ax.set_title(f"(3) submit path: ns/task per rep "
                 f"(task inline {submit['task_inline_ns']:.0f} ns)",
                 fontsize=9)
    ax.set_ylabel("wall ns / task")
    ax.grid(alpha=0.3, axis="y")


def plot_bare(ax, submit):
    """Bare costs: record, tick per record, lookups, set_mapping."""
    rows = [("record (worker)", submit["record_worker_ns"]),
            ("tick / record", submit["tick_ns_per_record"]),
            ("set_mapping", submit["set_mapping_ns"])]
    rows += [(l["name"].replace("::pick_ccd", ""), l["zipf_ns"])
             for l in submit["lookups"]]
    ax.barh(range(len(rows)), [v for _, v in rows], color="C4")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([n for n, _ in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    for i, (_, v) in enumerate(rows):
        ax.text(v, i, f" {v:.0f}", va="center", fontsize=7)
    ax.set_title("(3) bare costs, ns (lookups: Zipf ids)", fontsize=9)
    ax.grid(alpha=0.3, axis="x")


def plot_mapping(data, png):
    fig, axes = plt.subplots(2, 3, figsize=(18, 9.5))
    drifts = data["drift"]
    for ax, d in zip(axes[0][:2], drifts):
        plot_imbalance(ax, d)
    axes[0][0].legend(fontsize=7, ncol=2)
    plot_moved(axes[0][2], drifts)
    target = next((t["limit"] for t in data["targets"]
                   if t["unit"] == "ms"), 5)
    plot_build(axes[1][0], data["build"], target)
    plot_submit(axes[1][1], data["submit"])
    plot_bare(axes[1][2], data["submit"])
    fig.suptitle(f"bench_mapping: {data['topology']}\n"
                 f"{data['command']}  ({data['date_utc']}, commit "
                 f"{data['git_commit']}, loadavg {data['loadavg_before']:.2f})",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def main(argv):
    results = pathlib.Path(argv[1] if len(argv) > 1 else "benchs/results")
    path = results / "mapping.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        print(f"plot_mapping: {path}: {e}", file=sys.stderr)
        return 1
    png = path.with_suffix(".png")
    plot_mapping(data, png)
    print(f"plot_mapping: wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
