#!/usr/bin/env bash
# check_format.sh [--fix]: every tracked C and C++ file against .clang-format
# (clang-format --dry-run --Werror); lists the files that differ and fails
# if any does. --fix rewrites them instead. clang-format is PyPI's 14.0.6
# in .venv (requirements/venv.in), so that Debian 12 and 13 judge alike.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

./scripts/install_deps.sh
clang_format=$repo/.venv/bin/clang-format

# Tracked files and new ones git does not ignore: a file not yet added is checked too.
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.h' '*.cpp' '*.c')
if [[ ${1:-} == --fix ]]; then
    "$clang_format" -i "${files[@]}"
    echo "check_format: formatted ${#files[@]} files"
    exit 0
fi
differ=()
for f in "${files[@]}"; do
    if ! "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1; then
        differ+=("$f")
    fi
done
if [[ ${#differ[@]} -gt 0 ]]; then
    echo "check_format: ${#differ[@]} of ${#files[@]} files differ from" \
         ".clang-format (fix: ./scripts/check_format.sh --fix):" >&2
    printf '  %s\n' "${differ[@]}" >&2
    exit 1
fi
echo "check_format: ${#files[@]} files match .clang-format" \
     "($("$clang_format" --version))"
