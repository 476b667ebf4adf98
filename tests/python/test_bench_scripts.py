"""The benchmark scripts' command lines (benchs/python/): where their
results go by default, and what they refuse. Nothing here measures."""

import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchs" / "python"))

import bench_headline  # noqa: E402
import bench_parallel_mode  # noqa: E402

RESULTS = ROOT / "benchs" / "results"


OUT = ROOT / "benchs" / "out"


@pytest.mark.parametrize("argv, out, expected", [
    # A run writes under benchs/out/, which git ignores: a new user's
    # ./scripts/bench.sh leaves the checkout as it was.
    ([], OUT, OUT / "RESULTS.md"),
    (["--quick"], OUT, OUT / "RESULTS.md"),
    (["--skip", "drift"], OUT, OUT / "RESULTS.md"),
    (["--out", "/tmp/elsewhere"], pathlib.Path("/tmp/elsewhere"),
     pathlib.Path("/tmp/elsewhere/RESULTS.md")),
    (["--out", "/tmp/elsewhere", "--results-md", "/tmp/r.md"],
     pathlib.Path("/tmp/elsewhere"), pathlib.Path("/tmp/r.md")),
])
def test_headline_writes_outside_the_tree_by_default(argv, out, expected):
    args = bench_headline.parse_args(argv)
    assert pathlib.Path(args.out) == out.resolve()
    assert pathlib.Path(args.results_md) == expected


@pytest.mark.parametrize("argv, expected", [
    (["--record"], ROOT / "benchs" / "RESULTS.md"),
    (["--record", "--out", str(RESULTS) + "/"], ROOT / "benchs" / "RESULTS.md"),
    # A partial recorded run leaves the repository's RESULTS.md alone.
    (["--record", "--skip", "drift"], RESULTS / "RESULTS.md"),
])
def test_headline_record_writes_the_committed_results(argv, expected,
                                                       monkeypatch):
    monkeypatch.setattr(bench_headline.report, "git_commit",
                        lambda path=".": "15894df")
    args = bench_headline.parse_args(argv)
    assert pathlib.Path(args.out) == RESULTS.resolve()
    assert pathlib.Path(args.results_md) == expected


@pytest.mark.parametrize("commit, argv", [
    ("15894df-dirty", ["--record"]),      # figures not to be quoted
    ("unknown", ["--record"]),
    ("15894df", ["--record", "--out", "/tmp/elsewhere"]),
    ("15894df", ["--out", str(RESULTS)]),  # the committed files, unasked
    ("15894df", ["--results-md", str(ROOT / "benchs" / "RESULTS.md")]),
])
def test_headline_record_refuses(commit, argv, monkeypatch, capsys):
    monkeypatch.setattr(bench_headline.report, "git_commit",
                        lambda path=".": commit)
    with pytest.raises(SystemExit) as e:
        bench_headline.parse_args(argv)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["--skip", "nothing-like-a-step"],
    ["--skip", "ivf-synthetic,ivf-fmnist,hnsw,drift"],
    ["--rounds", "0"],
    ["--duration", "0"],
    ["--results-md", str(ROOT / "benchs")],
])
def test_headline_refuses(argv, capsys):
    with pytest.raises(SystemExit) as e:
        bench_headline.parse_args(argv)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err


@pytest.mark.parametrize("argv, steps", [
    ([], ["ivf-synthetic", "ivf-fmnist", "hnsw", "drift"]),
    (["--quick", "--skip", "hnsw"], ["ivf-synthetic", "ivf-fmnist", "drift"]),
    (["--full"], ["ivf-synthetic", "ivf-fmnist", "hnsw", "batch-matrix",
                  "drift"]),
    (["--full", "--skip", "ivf-synthetic,ivf-fmnist,hnsw,drift"],
     ["batch-matrix"]),
])
def test_headline_batch_matrix_in_full_run_only(argv, steps):
    assert bench_headline.runnable_steps(
        bench_headline.parse_args(argv)) == steps


@pytest.mark.parametrize("argv", [
    ["--rounds", "0"], ["--clients", "0"], ["--clients", "100000"],
    ["--clients", "x"],
])
def test_parallel_mode_refuses(argv, capsys):
    with pytest.raises(SystemExit) as e:
        bench_parallel_mode.parse_args(argv)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err


def test_parallel_mode_contenders_switch_as_a_user_does():
    """Each contender sets the mode and the OpenMP threads it names."""
    import faiss
    index = faiss.index_factory(8, "IVF4,Flat")
    for name, mode in (("faiss", 0), ("faiss-omp1", 0), ("faiss-pm1", 1),
                       ("ccd", faiss.PARALLEL_MODE_CCD)):
        c = bench_parallel_mode.Contender(name)
        c.use(index)
        assert index.parallel_mode == mode
        assert faiss.omp_get_max_threads() == c.threads
    assert bench_parallel_mode.Contender("faiss-omp1").threads == 1


import bench_batch_matrix  # noqa: E402


@pytest.mark.parametrize("argv", [
    ["--rounds", "0"], ["--batch", "0"], ["--batch", "5000"],
    ["--clients", "0"],
])
def test_batch_matrix_refuses(argv, capsys):
    with pytest.raises(SystemExit) as e:
        bench_batch_matrix.parse_args(argv)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err


def test_batch_matrix_covers_every_ivf_family():
    """Flat, the SQ family, PQ with and without precomputed tables and
    residuals, fast-scan, refine and IVFPQR."""
    labels = [t[0] for t in bench_batch_matrix.index_types(64)]
    for family in ("Flat", "SQ4", "SQ6", "SQ8", "SQfp16", "PQ16 precomputed",
                   "PQ16 no table", "PQ16 not residual", "PQ16x4fs",
                   "PQ16+RFlat", "IVFPQR 16+16"):
        assert family in labels
