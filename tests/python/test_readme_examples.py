"""The README quotes examples/{cpp,python,c}/ verbatim: each quoted block
follows a line `<!-- example: PATH -->`. ctest builds and runs the files
themselves (example_cpp, example_python, example_c), so the README's code
is code that runs."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ["examples/cpp/example.cpp", "examples/python/example.py",
            "examples/c/example.c"]


def quoted_blocks():
    readme = (ROOT / "README.md").read_text()
    pattern = re.compile(
        r"<!-- example: (\S+) -->\n```[a-z+]*\n(.*?)```\n", re.DOTALL)
    return {path: code for path, code in pattern.findall(readme)}


@pytest.mark.parametrize("path", EXAMPLES)
def test_readme_quotes_example(path):
    blocks = quoted_blocks()
    assert path in blocks, f"README.md does not quote {path}"
    assert blocks[path] == (ROOT / path).read_text(), \
        f"README.md's copy of {path} differs from the file"


def test_every_quoted_example_exists():
    for path in quoted_blocks():
        assert (ROOT / path).is_file(), path
