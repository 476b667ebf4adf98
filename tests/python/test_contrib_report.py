"""faiss.contrib.ccd.report: one JSON shape, its markdown and plots."""

import json
import subprocess
import sys

import pytest

from faiss.contrib.ccd import report


def sample(commit="abc1234"):
    return {
        "benchmark": "toy",
        "title": "toy benchmark",
        "run": {"command": "toy --x", "date": "2026-01-01T00:00:00Z",
                "git_commit": commit, "cores": 2, "load_before": 0.5,
                "load_after": 1.25, "topology": "1 CCD x 2 workers"},
        "notes": ["k = 10"],
        "targets": [
            {"target": "QPS >= 1.0x", "measured": "1.10x", "met": True},
            {"target": "P99 <= 0.7x", "measured": "0.90x", "met": False,
             "why": "tails are time slices", "next": "longer runs"}],
        "tables": [{"title": "closed loop", "columns": ["clients", "QPS"],
                    "rows": [[1, 1234.5], [8, 0.5]]}],
        "plots": [{"title": "QPS", "xscale": "log2", "xlabel": "clients",
                   "ylabel": "QPS", "series": [
                       {"label": "ccd", "x": [1, 8], "y": [1234.5, 2000]},
                       {"label": "stock", "x": [1, 8], "y": [1000, 1900]}]}]}


def test_markdown_holds_every_part():
    md = report.markdown(sample())
    assert md.startswith("# toy benchmark\n")
    assert "- command: `toy --x`" in md and "- commit: abc1234" in md
    assert "0.50 before, 1.25 after" in md
    assert "- topology: 1 CCD x 2 workers" in md and "- k = 10" in md
    assert "| QPS >= 1.0x | 1.10x | yes |  |" in md
    assert "| P99 <= 0.7x | 0.90x | **no** | tails are time slices " \
        "Next: longer runs |" in md
    assert "| 1 | 1234 |" in md and "| 8 | 0.5 |" in md
    assert "dirty" not in md
    assert "dirty tree" in report.markdown(sample("abc1234-dirty"))


def test_validate_names_the_fault():
    bad = sample()
    bad["tables"][0]["rows"].append([1, 2, 3])
    with pytest.raises(ValueError, match="3 cells for 2 columns"):
        report.markdown(bad)
    bad = sample()
    bad["plots"][0]["series"][0]["y"] = [1]
    with pytest.raises(ValueError, match="2 x for 1 y"):
        report.plot(bad, "/dev/null")
    for b in ({"title": "x"}, {"benchmark": "../x", "title": "x"},
              {"benchmark": "x", "title": "x", "targets": [{"met": 1}]}):
        with pytest.raises(ValueError):
            report.validate(b)


def test_finish_writes_json_md_png(tmp_path):
    r = sample()
    r["run"] = report.run_info("toy --x", topology="1x2")
    paths = report.finish(r, tmp_path)
    assert [p.name for p in paths] == ["toy.json", "toy.md", "toy.png"]
    data = json.loads((tmp_path / "toy.json").read_text())
    assert "started" not in data["run"] and data["run"]["wall_s"] >= 0
    assert data["run"]["topology"] == "1x2"
    assert (tmp_path / "toy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_command_line_regenerates(tmp_path):
    (tmp_path / "toy.json").write_text(json.dumps(sample()))
    (tmp_path / "broken.json").write_text("{")
    out = subprocess.run([sys.executable, "-m", "faiss.contrib.ccd.report",
                          str(tmp_path / "toy.json"),
                          str(tmp_path / "broken.json")],
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert "broken.json" in out.stderr
    assert (tmp_path / "toy.md").read_text() == report.markdown(sample())
    assert (tmp_path / "toy.png").exists()


def test_git_commit_outside_a_repository(tmp_path):
    assert report.git_commit(tmp_path) == "unknown"


def test_sections_follow_the_tables():
    r = sample()
    r["sections"] = [{"title": "Caveats", "text": "two cores, one L3"}]
    md = report.markdown(r)
    assert md.index("## closed loop") < md.index("## Caveats")
    assert md.endswith("## Caveats\n\ntwo cores, one L3\n")
    r["sections"] = [{"text": "no title"}]
    with pytest.raises(ValueError, match="needs a string 'title'"):
        report.validate(r)


def test_plots_with_a_file_get_their_own_png(tmp_path):
    r = sample()
    extra = dict(r["plots"][0], title="CDF", file="cdf", xscale="log")
    extra["series"] = [dict(s, marker="") for s in extra["series"]]
    r["plots"].append(extra)
    paths = report.finish(r, tmp_path)
    assert [p.name for p in paths] == ["toy.json", "toy.md", "toy.png",
                                       "toy_cdf.png"]
    for p in paths[2:]:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Only plots with a file: no <benchmark>.png.
    r["plots"] = [extra]
    assert [p.name for p in report.plot_files(r, tmp_path / "only")] == \
        ["only_cdf.png"]
    r["plots"][0] = dict(extra, file="../up")
    with pytest.raises(ValueError, match="plain file name"):
        report.validate(r)


def test_print_table_aligns_text_left_and_numbers_right(capsys):
    report.print_table({"title": "T", "columns": ["name", "QPS"],
                        "rows": [["ccd", 12.5], ["stock-pm1", 7]]}, left=1)
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["", "T", "name          QPS",
                     "ccd        12.500", "stock-pm1       7"]


def test_bar_plots_index_their_categories(tmp_path):
    r = sample()
    r["plots"] = [{"title": "latency", "kind": "bar",
                   "categories": ["pool", "tbb", "omp"],
                   "series": [{"label": "P50", "x": [0, 1, 2],
                               "y": [1.5, None, 3]},
                              {"label": "P99", "x": [0, 2], "y": [4, 9]}]}]
    paths = report.finish(r, tmp_path)
    assert (tmp_path / "toy.png") in paths
    r["plots"][0]["series"][1]["x"] = [0, 3]
    with pytest.raises(ValueError, match="index its 'categories'"):
        report.validate(r)
    r["plots"][0]["kind"] = "pie"
    with pytest.raises(ValueError, match="kind must be"):
        report.validate(r)


def test_cpp_nulls_render_as_dashes():
    r = sample()
    r["tables"][0]["rows"].append([32, None])
    r["plots"][0]["series"][0]["y"] = [None, 2000]
    assert "| 32 | - |" in report.markdown(r)
    report.plot(r, "/dev/null")


def test_heatmaps_have_a_row_per_series(tmp_path):
    r = sample()
    r["plots"] = [{"title": "QPS ratio", "kind": "heatmap", "file": "heat",
                   "categories": ["1", "16", "256"], "reverse": False,
                   "series": [{"label": "syn-d32-Flat", "x": [0, 1, 2],
                               "y": [0.9, 1.1, None]},
                              {"label": "fmnist-SQ8", "x": [2],
                               "y": [1.4]}]}]
    assert [p.name for p in report.finish(r, tmp_path)][-1] == "toy_heat.png"
    r["plots"][0]["series"][1]["x"] = [5]
    with pytest.raises(ValueError, match="heat map's x must index"):
        report.validate(r)
