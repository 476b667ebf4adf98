"""Bad input against every Python entry point (issue 15, "Bad input"): one
table of cases, each (entry point, the bad call, the exception it must
raise, a regex its message must match: a clear message that names the
argument). None as the exception means the call must be answered, and the
callable itself checks the answer, mostly that the CCD path gives what
stock FAISS gives on the same input (NaN and infinite queries, dtypes
FAISS converts, k or nprobe beyond the data). IndexIVFCCD.search raises
the class stock IndexIVF.search raises for the same input, with a message
that names the argument.

After every case the pool must still serve: test_bad_input ends with a
search in the CCD mode, through the module's pool, through IndexIVFCCD and
through HNSWTables, each equal to stock FAISS's answers.

A few calls would take the process or the machine down if they went wrong
(thousands of threads, terabytes, a search that does not end); those run in
a child interpreter with a bounded address space (or, under ASan, RSS) and
a timeout, and the child's exception is raised again here, so the table
checks it like the others.

test_the_table_covers_every_entry_point fails when faiss.ccd gains a
public function, class, method or property without a case here. The table
is in bad_input_cases_ccd.py and bad_input_cases_ivf.py, the helpers its
rows call in bad_input_support.py.
"""

import re

import bad_input_cases_ccd
import bad_input_cases_ivf
import pytest
from bad_input_support import *  # noqa: F401,F403 (the tests' helpers)

CASES = bad_input_cases_ccd.CASES + bad_input_cases_ivf.CASES


@pytest.mark.parametrize("entry,call,error,match", CASES,
                         ids=[case[0] for case in CASES])
def test_bad_input(entry, call, error, match):
    """The call raises `error` with a message matching `match` (or, with
    error None, is answered and checks its answer itself); then the pool
    still serves as stock FAISS does."""
    if error is None:
        call()
    else:
        with pytest.raises(error) as info:
            call()
        message = str(info.value)
        assert re.search(match, message, re.S), \
            f"{entry}: unclear message {message!r} for {info.typename}"
    gc.collect()
    check_pool_serves()


def ccd_public_entry_points():
    """faiss.ccd's public functions and classes, and the public methods
    and properties of those classes, by introspection."""
    module = faiss.ccd
    names = set()
    for name, obj in vars(module).items():
        if name.startswith("_") or \
                getattr(obj, "__module__", None) != module.__name__:
            continue
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        names.add(f"faiss.ccd.{name}")
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if not attr.startswith("_") and (
                        inspect.isfunction(member) or
                        isinstance(member, (property, classmethod,
                                            staticmethod))):
                    names.add(f"faiss.ccd.{name}.{attr}")
    return names


def test_the_table_covers_every_entry_point():
    entries = collections.Counter(case[0] for case in CASES)
    assert len(CASES) >= 40
    public = ccd_public_entry_points()
    assert {"faiss.ccd.Pool", "faiss.ccd.HNSWTables.submit",
            "faiss.ccd.set_default_pool"} <= public
    missing = sorted(public - set(entries))
    assert not missing, f"entry points of faiss.ccd without a case: {missing}"
    # The faiss classes the CCD mode adds, and the contrib helpers.
    for name in ("faiss.IndexIVFCCD", "faiss.IndexIVFCCD.search",
                 "faiss.SearchParametersIVFCCD", "IndexIVF.parallel_mode",
                 "faiss.contrib.ccd.datasets.by_name",
                 "faiss.contrib.ccd.evaluation.recall_at",
                 "faiss.contrib.ccd.loadgen.open_loop",
                 "faiss.contrib.ccd.report.validate"):
        assert entries[name] >= 1, name
    # Every case is well formed.
    for entry, call, error, match in CASES:
        assert callable(call), entry
        assert (error is None) == (match is None), entry
        if match is not None:
            re.compile(match)
    print(f"{len(CASES)} bad-input cases over {len(entries)} entry points")


def test_child_reports_its_exception():
    """in_child raises the child's exception here, and says so when the
    child hangs; the table's children rely on it."""
    with pytest.raises(ValueError, match="from the child"):
        in_child("raise ValueError('from the child')")
    assert in_child("assert ivf.ntotal == 2000") is None
    with pytest.raises(AssertionError, match="hang"):
        in_child("import time\ntime.sleep(30)", timeout=5)
