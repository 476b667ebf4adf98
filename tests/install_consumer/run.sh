#!/usr/bin/env bash
# run.sh CMAKE BUILD_DIR CONSUMER_SRC WORK_DIR
#
# Installs the faiss-ccd build in BUILD_DIR into WORK_DIR/prefix, then
# configures, builds and runs the consumer project CONSUMER_SRC against that
# prefix only. Called by ctest (test "install_consumer").
set -euo pipefail

if [[ $# -ne 4 ]]; then
    echo "usage: $0 CMAKE BUILD_DIR CONSUMER_SRC WORK_DIR" >&2
    exit 2
fi
cmake_bin=$1
build_dir=$2
consumer_src=$3
work_dir=$4

prefix=$work_dir/prefix
consumer_build=$work_dir/build

rm -rf "$prefix" "$consumer_build"
mkdir -p "$work_dir"

echo "== install $build_dir -> $prefix"
"$cmake_bin" --install "$build_dir" --prefix "$prefix"

echo "== configure consumer"
"$cmake_bin" -S "$consumer_src" -B "$consumer_build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON

echo "== build consumer"
"$cmake_bin" --build "$consumer_build"

echo "== run consumer"
"$consumer_build/consumer"
