"""One report path for every benchmark: JSON in, markdown table and PNG
plots out.

A report is a dict (and its JSON file) of this shape; every key but
"benchmark" and "title" may be left out:

    {"benchmark": "serving_py",            # names the files: serving_py.*
     "title": "...",
     "run": run_info(...),                 # command, date, commit, machine
     "notes": ["...", ...],                # bullets under the run's facts
     "targets": [{"target": "...", "measured": "...", "met": true,
                  "why": "...", "next": "..."}],
     "tables": [{"title": "...", "text": "...", "columns": [...],
                 "rows": [[...], ...]}],
     "sections": [{"title": "...", "text": "..."}],   # prose, after tables
     "plots": [{"title": "...", "xlabel": "...", "ylabel": "...",
                "xscale": "linear" | "log" | "log2", "yscale": ...,
                "kind": "line" | "bar" | "heatmap",  # bar, heatmap: x
                                           # indexes "categories"; a heat
                                           # map has a row per series
                "categories": ["...", ...],  # bar or heat map x labels
                "vmin": 0.5, "vmax": 1.5, "reverse": false,  # heat map
                                           # colours (reverse: green low)
                "file": "NAME",            # optional: see below
                "series": [{"label": "...", "x": [...], "y": [...],
                            "marker": "o" | "", "width": 1.5}]}]}

    finish(report, out_dir)   writes <benchmark>.json, .md and .png (plots
                              with a "file" go to <benchmark>_<file>.png,
                              one PNG per name)
    run_script(name, fn, *args)   fn(*args), or None after printing why
                              on stderr: a benchmark's bad input
    print_targets(report)     every target, met or MISSED, one a line
    print_table(table, left)  one of a report's tables on the terminal
    judge(target, value, limit, ...)   a target judged (met, measured):
                              every benchmark judges its figures here
    best(results, names, key), fmt(x)   the best contender; a time cell
    add_output_arguments(parser), output_dir(args, root)   --out and
                              --record for a script: a run's files go to
                              benchs/out/ (ignored by git) unless --record
                              (the committed benchs/results/, clean tree)
    python3 -m faiss.contrib.ccd.report FILE.json...   the .md and .png of
                                                       existing JSON files

run_info records the commit (git_commit: "-dirty" when the tree differs
from it outside benchs/results/), and markdown() puts a warning at the top
of a report measured on a dirty tree: such figures are not to be quoted.
"""

import datetime
import json
import math
import os
import pathlib
import subprocess
import sys
import time


def changed_paths(path="."):
    """The paths outside benchs/results/ (the benchmarks' own output) that
    differ from HEAD in the repository holding path; None when git cannot
    say."""
    try:
        st = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--", ":/",
             ":!/benchs/results"], capture_output=True, text=True,
            timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return [ln[3:] for ln in st.stdout.splitlines()] \
        if st.returncode == 0 else None


def git_commit(path="."):
    """The short hash of HEAD in the repository holding path, "-dirty" when
    changed_paths finds any, as benchs/common/run_info.h says it;
    "unknown" outside a repository."""
    try:
        head = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if head.returncode != 0 or not head.stdout.strip():
        return "unknown"
    return head.stdout.strip() + ("" if changed_paths(path) == [] else
                                  "-dirty")


def quotable(commit):
    """Whether figures of this commit may be quoted: a clean tree of a
    known commit."""
    return not commit.endswith("-dirty") and commit != "unknown"


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def run_info(command, repo=".", **extra):
    """The facts every report starts with; call it before measuring (it
    takes the load average then) and give the result to finish(), which
    adds the load after and the wall time."""
    info = {"command": command,
            "date": datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%dT%H:%M:%SZ"),
            "git_commit": git_commit(repo),
            "cores": os.cpu_count(),
            "load_before": load_average(),
            "started": time.time()}
    info.update(extra)
    return info


def _cell(v):
    if isinstance(v, bool):
        return "yes" if v else "**no**"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
            return f"{v:.3g}"
        return f"{v:.4g}" if abs(v) < 100 else f"{v:.0f}"
    if v is None:
        return "-"
    return str(v).replace("|", "\\|").replace("\n", " ")


def _table(columns, rows):
    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |",
             "|" + "---|" * len(columns)]
    for r in rows:
        if len(r) != len(columns):
            raise ValueError(f"row {r!r} has {len(r)} cells for "
                             f"{len(columns)} columns")
        lines.append("| " + " | ".join(_cell(c) for c in r) + " |")
    return lines


def _items(report, key):
    """report[key], a list ([] when absent)."""
    items = report.get(key, [])
    if not isinstance(items, (list, tuple)):
        raise ValueError(f"{key!r} must be a list, got {items!r}")
    return items


def _has_lists(what, d, keys):
    """d is a dict, and its `keys` hold lists (or tuples)."""
    if not isinstance(d, dict):
        raise ValueError(f"{what} must be a dict, got {d!r}")
    for key in keys:
        if not isinstance(d.get(key), (list, tuple)):
            raise ValueError(f"{what} needs a list {key!r}, got "
                             f"{d.get(key)!r}")


def validate(report):
    """Raise ValueError naming the first thing wrong with a report."""
    if not isinstance(report, dict):
        raise ValueError("a report is a dict")
    for key in ("benchmark", "title"):
        if not isinstance(report.get(key), str) or not report[key]:
            raise ValueError(f"a report needs a non-empty string {key!r}")
    if not report["benchmark"].replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"benchmark {report['benchmark']!r} must be a "
                         "plain file name")
    for t in _items(report, "tables"):
        what = f"table {t.get('title') if isinstance(t, dict) else t!r}"
        _has_lists(what, t, ("columns", "rows"))
        for r in t["rows"]:
            if not isinstance(r, (list, tuple)):
                raise ValueError(f"{what}: row {r!r} is not a list")
        _table(t["columns"], t["rows"])
    for s in _items(report, "sections"):
        if not isinstance(s, dict) or not isinstance(s.get("title"), str):
            raise ValueError(f"section {s!r} needs a string 'title'")
    for p in _items(report, "plots"):
        if not isinstance(p, dict):
            raise ValueError(f"plot {p!r} must be a dict")
        name = p.get("file")
        if name is not None and (not isinstance(name, str) or not name
                                 or not name.replace("_", "").replace(
                                     "-", "").isalnum()):
            raise ValueError(f"plot {p.get('title')!r}: file {name!r} "
                             "must be a plain file name")
        if p.get("kind", "line") not in ("line", "bar", "heatmap"):
            raise ValueError(f"plot {p.get('title')!r}: kind must be "
                             "'line', 'bar' or 'heatmap'")
        if not isinstance(p.get("series", []), (list, tuple)):
            raise ValueError(f"plot {p.get('title')!r}: 'series' must be a "
                             "list")
        for s in p.get("series", []):
            _has_lists(f"plot {p.get('title')!r}, series "
                       f"{s.get('label') if isinstance(s, dict) else s!r}",
                       s, ("x", "y"))
            if p.get("kind") in ("bar", "heatmap") and not all(
                    isinstance(x, int) and
                    0 <= x < len(p.get("categories", [])) for x in s["x"]):
                raise ValueError(f"plot {p.get('title')!r}: a bar's or a "
                                 "heat map's x must index its 'categories'")
            if len(s["x"]) != len(s["y"]):
                raise ValueError(f"plot {p.get('title')!r}, series "
                                 f"{s.get('label')!r}: {len(s['x'])} x for "
                                 f"{len(s['y'])} y")
    for t in _items(report, "targets"):
        if not isinstance(t, dict) or "target" not in t or "met" not in t:
            raise ValueError(f"target {t!r} needs 'target' and 'met'")


def markdown(report):
    """The report as a markdown page."""
    validate(report)
    out = [f"# {report['title']}", ""]
    run = report.get("run", {})
    if run.get("git_commit", "").endswith("-dirty"):
        out += ["**Measured on a dirty tree: not a result to quote.**", ""]
    if run:
        facts = [("command", f"`{run['command']}`" if "command" in run
                  else None),
                 ("date", run.get("date")),
                 ("commit", run.get("git_commit")),
                 ("cores", run.get("cores")),
                 ("load average (1 min)",
                  f"{run['load_before']:.2f} before, "
                  f"{run.get('load_after', float('nan')):.2f} after"
                  if "load_before" in run else None),
                 ("wall", f"{run['wall_s']:.0f} s" if "wall_s" in run
                  else None)]
        skip = {"command", "date", "git_commit", "cores", "load_before",
                "load_after", "wall_s", "started"}
        facts += [(k, v) for k, v in run.items() if k not in skip]
        out += [f"- {k}: {v}" for k, v in facts if v is not None]
    out += [f"- {n}" for n in report.get("notes", [])]
    targets = report.get("targets", [])
    if targets:
        out += ["", "## Targets", ""]
        out += _table(["target", "measured", "met", "why, and the next step"],
                      [[t["target"], t.get("measured"), bool(t["met"]),
                        " ".join(x for x in (t.get("why"), t.get("next")
                                             and "Next: " + t["next"]) if x)
                        if not t["met"] else ""] for t in targets])
    for t in report.get("tables", []):
        out += ["", f"## {t.get('title', '')}", ""]
        if t.get("text"):
            out += [t["text"], ""]
        out += _table(t["columns"], t["rows"])
    for s in report.get("sections", []):
        out += ["", f"## {s['title']}", ""]
        if s.get("text"):
            out += [s["text"]]
    return "\n".join(out) + "\n"


def _heatmap(fig, ax, p):
    """A grid: one row per series (its label), one column per category;
    each cell's value written in it. Colours run from vmin to vmax (default
    0.5 to 1.5, a ratio around 1), green high unless "reverse"."""
    series = p.get("series", [])
    grid = [[math.nan] * len(p["categories"]) for _ in series]
    for row, s in zip(grid, series):
        for x, y in zip(s["x"], s["y"]):
            row[x] = math.nan if y is None else y
    im = ax.imshow(grid, cmap="RdYlGn_r" if p.get("reverse") else "RdYlGn",
                   vmin=p.get("vmin", 0.5), vmax=p.get("vmax", 1.5),
                   aspect="auto")
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if not math.isnan(v):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center",
                        fontsize=7)
    ax.set_xticks(range(len(p["categories"])))
    ax.set_xticklabels(p["categories"], fontsize=8)
    ax.set_yticks(range(len(series)))
    ax.set_yticklabels([s.get("label", "") for s in series], fontsize=7)
    fig.colorbar(im, ax=ax, shrink=0.8)


def plot(report, png, file=None):
    """The report's plots whose "file" is `file` (by default: those
    without one) in one PNG, up to 3 a row; False if there are none."""
    validate(report)
    plots = [p for p in report.get("plots", []) if p.get("file") == file]
    if not plots:
        return False
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plots need matplotlib (in the project's .venv: "
                          "scripts/install_deps.sh)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cols = min(3, len(plots))
    rows = -(-len(plots) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.8 * cols, 4.4 * rows),
                             squeeze=False)
    for ax, p in zip(axes.flat, plots):
        series = p.get("series", [])
        if p.get("kind") == "bar":
            # Grouped bars: series i's bar for x sits beside the others'.
            width = 0.8 / max(1, len(series))
            for i, s in enumerate(series):
                ax.bar([x + (i - (len(series) - 1) / 2) * width
                        for x in s["x"]],
                       [math.nan if y is None else y for y in s["y"]],
                       width, color=f"C{i % 10}", label=s.get("label"))
            ax.set_xticks(range(len(p["categories"])))
            ax.set_xticklabels(p["categories"], rotation=20, fontsize=8)
        if p.get("kind") == "heatmap":
            _heatmap(fig, ax, p)
        for i, s in enumerate(series if p.get("kind", "line") == "line"
                              else []):
            ax.plot(s["x"], [math.nan if y is None else y for y in s["y"]],
                    marker=s.get("marker", "o") or None,
                    color=f"C{i % 10}",
                    label=s.get("label"), linewidth=s.get("width", 1.5))
        for axis, scale in (("x", p.get("xscale")), ("y", p.get("yscale"))):
            if scale in ("log", "log2"):
                getattr(ax, f"set_{axis}scale")(
                    "log", base=2 if scale == "log2" else 10)
        ax.set_title(p.get("title", ""), fontsize=10)
        ax.set_xlabel(p.get("xlabel", ""))
        ax.set_ylabel(p.get("ylabel", ""))
        if p.get("kind") == "heatmap":
            continue  # its rows are labelled; no grid, no legend
        ax.grid(alpha=0.3)
        if any(s.get("label") for s in p.get("series", [])):
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(plots):]:
        ax.axis("off")
    commit = report.get("run", {}).get("git_commit", "?")
    fig.suptitle(f"{report['title']} (commit {commit})", fontsize=11)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return True


def finish(report, out_dir):
    """Complete the run facts (load after, wall time), then write
    <out_dir>/<benchmark>.json, .md and (if it has plots) .png. Returns the
    paths written."""
    validate(report)
    run = report.setdefault("run", {})
    if "started" in run:
        run["wall_s"] = time.time() - run.pop("started")
        run["load_after"] = load_average()
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / report["benchmark"]
    paths = [stem.with_suffix(".json"), stem.with_suffix(".md")]
    paths[0].write_text(json.dumps(report, indent=1) + "\n")
    paths[1].write_text(markdown(report))
    return paths + plot_files(report, stem)


def plot_files(report, stem):
    """Every PNG of the report: <stem>.png for the plots without a "file",
    <stem>_<file>.png for each file name, in order of first use. Returns
    the paths written."""
    stem = pathlib.Path(stem)
    names = []
    for p in report.get("plots", []):
        if p.get("file") not in names:
            names.append(p.get("file"))
    paths = []
    for name in names:
        png = stem.with_name(stem.name + (f"_{name}" if name else "") +
                             ".png")
        if plot(report, png, name):
            paths.append(png)
    return paths


def judge(target, value, limit, at_most=False, detail="", why="",
          next=""):
    """A target of the report, judged: the one place a benchmark's
    figures meet its goals. met: value >= limit (at_most: value <= limit);
    measured: the value as a ratio ("0.93x"), then `detail`. why and next
    say what a miss means and what to do (kept on a met target too, as
    the reason behind it)."""
    met = value <= limit if at_most else value >= limit
    return {"target": target,
            "measured": f"{value:.2f}x" + (f" ({detail})" if detail else ""),
            "met": bool(met), "why": why, "next": next}


def best(results, names=None, key="qps"):
    """The name in `results` (or among `names`) with the highest QPS, or
    the lowest value of another key (a percentile, ms per query)."""
    names = list(results if names is None else names)
    if key == "qps":
        return max(names, key=lambda n: results[n]["qps"])
    return min(names, key=lambda n: results[n][key])


def fmt(x):
    """A time in ms for a table: 3 decimals under 10, one above; "-" for
    None or NaN."""
    if x is None or x != x:
        return "-"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def add_output_arguments(parser):
    """--out and --record, resolved by output_dir()."""
    parser.add_argument(
        "--out", help="where the run's files go (default benchs/out/, "
        "which git ignores)")
    parser.add_argument(
        "--record", action="store_true", help="write the committed "
        "results, benchs/results/, from a clean tree only")


def output_dir(args, root):
    """The directory a run writes: benchs/results/ under `root` with
    --record (refused on a tree that differs from its commit, whose
    figures are not to be quoted), else --out, else benchs/out/. --out
    naming benchs/results/ without --record is refused: a run rewrites the
    committed files only when asked to. Raises ValueError."""
    root = pathlib.Path(root)
    committed = (root / "benchs" / "results").resolve()
    if args.record:
        if args.out is not None and \
                pathlib.Path(args.out).resolve() != committed:
            raise ValueError("--record writes benchs/results/: no other "
                             "--out with it")
        commit = git_commit(root)
        if not quotable(commit):
            raise ValueError(f"--record: the tree is not its commit's "
                             f"({commit}); commit first")
        return str(committed)
    out = pathlib.Path(args.out) if args.out else root / "benchs" / "out"
    if out.resolve() == committed:
        raise ValueError("--out benchs/results is the committed results: "
                         "use --record (clean tree) to rewrite them")
    return str(out.resolve())


def run_script(name, fn, *args):
    """fn(*args) for a benchmark script called `name`; on bad input
    (ValueError, a missing file or module, or FAISS's own RuntimeError,
    "C++ exception" stripped) prints "name: message" on stderr and returns
    None, for the script to exit with status 2."""
    try:
        return fn(*args)
    except (ValueError, FileNotFoundError, ImportError, RuntimeError) as e:
        print(f"{name}: {str(e).replace('C++ exception ', '')}",
              file=sys.stderr)
        return None


def print_table(table, left=2):
    """A report's table (title, columns, rows) as aligned text: the first
    `left` columns to the left, the others (numbers) to the right, floats
    with three decimals."""
    cells = [[f"{v:.3f}" if isinstance(v, float) else str(v) for v in row]
             for row in [table["columns"]] + table["rows"]]
    widths = [max(len(row[i]) for row in cells)
              for i in range(len(cells[0]))]
    print(f"\n{table['title']}")
    for row in cells:
        print("  ".join(c.ljust(w) if i < left else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))


def print_targets(report):
    for t in report.get("targets", []):
        print(("met   " if t["met"] else "MISSED") +
              f" {t['target']}: {t['measured']}")


def main(argv):
    if len(argv) < 2:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        print("usage: python3 -m faiss.contrib.ccd.report FILE.json...",
              file=sys.stderr)
        return 2
    status = 0
    for name in argv[1:]:
        path = pathlib.Path(name)
        try:
            report = json.loads(path.read_text())
            path.with_suffix(".md").write_text(markdown(report))
            plot_files(report, path.with_suffix(""))
            print(f"report: wrote {path.with_suffix('.md')}")
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"report: {path}: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
