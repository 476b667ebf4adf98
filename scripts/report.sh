#!/usr/bin/env bash
# report.sh [FILE.json | DIR]...: the markdown table and PNG plots of
# benchmark results, through the one report module (contrib/report.py,
# installed as faiss.contrib.ccd.report). Every benchmark, C++ or Python,
# writes its JSON in that module's schema; the C++ ones write nothing else.
# A directory stands for every *.json in it (default: benchs/results).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
files=()
for arg in "${@:-$root/benchs/results}"; do
    if [[ -d $arg ]]; then
        files+=("$arg"/*.json)
    else
        files+=("$arg")
    fi
done
exec "$root/.venv/bin/python" "$root/contrib/report.py" "${files[@]}"
