#!/usr/bin/env bash
# lock_requirements.sh: requirements/*.in -> requirements/*.txt, every
# package pinned with the SHA-256 of each of its files on PyPI (pip-compile
# --generate-hashes), for `pip install --require-hashes`. A maintainer's
# tool: run it after editing a .in file and commit both. pip-tools runs
# from a throw-away venv; the lock is for the Python that runs this script
# (the project's: 3.11), with hashes of every platform's files.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools"
"$tools/bin/pip" install -q pip-tools
for in_file in "$repo"/requirements/*.in; do
    out=${in_file%.in}.txt
    echo "lock_requirements: $(basename "$in_file") -> $(basename "$out")"
    (cd "$repo/requirements" &&
        "$tools/bin/pip-compile" -q --generate-hashes --allow-unsafe \
            --strip-extras --no-emit-index-url --no-emit-find-links \
            --output-file "$(basename "$out")" "$(basename "$in_file")")
done
