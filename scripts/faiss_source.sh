#!/usr/bin/env bash
# faiss_source.sh: prints the directory of FAISS 1.7.3's source with
# Debian's patches and ours applied, making it first if needed.
#
#   1. Debian's source package faiss 1.7.3-2 (the .dsc, the upstream
#      tarball, Debian's patch tarball) is fetched with apt-get source
#      --download-only from the archive the machine's apt already uses,
#      through a deb-src entry in a private apt directory (the system's
#      sources are not touched), unless the files are in the cache.
#   2. The .dsc must have the SHA-256 pinned below, and the tarballs the
#      SHA-256 sums the .dsc lists.
#   3. The tarball is unpacked, Debian's patch series applied, then ours
#      (faiss/patches/series, in order), into $cache/src/faiss-1.7.3, with a
#      stamp holding a hash of the .dsc and of our patches: an unchanged set
#      reuses the tree, a changed one remakes it at the same path (so that
#      build trees and ccache, which see the same paths, recompile only
#      what changed). Builds that run at once must use the same patches.
#
# Cache: $FAISS_CCD_CACHE, else $XDG_CACHE_HOME/faiss-ccd, else
# ~/.cache/faiss-ccd. Progress goes to stderr; stdout is the path alone.
# Needs apt-get (as root, or with sudo, only when the files are not cached),
# sha256sum, tar, xz and patch.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${FAISS_CCD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/faiss-ccd}

package=faiss
version=1.7.3-2
upstream=1.7.3
dsc=${package}_${version}.dsc
# SHA-256 of Debian's faiss_1.7.3-2.dsc (bookworm), itself signed by the
# archive; the tarballs are checked against the sums it lists.
dsc_sha256=432937bbdfc7e14783685762e360b68f9ab74f1599319697d756b27585e83dbd

say() { echo "faiss_source: $*" >&2; }
die() { say "error: $*"; exit 1; }

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# dsc_sum FILE: the SHA-256 the .dsc lists for FILE.
dsc_sum() {
    awk -v f="$1" '
        /^Checksums-Sha256:/ { in_sums = 1; next }
        /^[^ ]/ { in_sums = 0 }
        in_sums && $3 == f { print $1 }' "$downloads/$dsc"
}

# archive_uri: the first archive apt uses for bookworm's main component.
archive_uri() {
    local uri
    uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' \
              2>/dev/null | awk '$2 == "bookworm" && $3 == "main" { print $1; exit }')
    echo "${uri:-http://deb.debian.org/debian/}"
}

downloads=$cache/debian-src
fetch() {
    command -v apt-get >/dev/null || die "apt-get not found (Debian needed)"
    local apt=$cache/apt uri sudo_cmd=()
    [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
    mkdir -p "$apt/sources.list.d" "$apt/lists/partial" \
             "$apt/archives/partial" "$downloads"
    uri=$(archive_uri)
    cat >"$apt/sources.list.d/faiss-src.sources" <<EOF
Types: deb-src
URIs: $uri
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    local opts=(-o "Dir::Etc::SourceList=/dev/null"
                -o "Dir::Etc::SourceParts=$apt/sources.list.d"
                -o "Dir::State::Lists=$apt/lists"
                -o "Dir::Cache::Archives=$apt/archives"
                -o "APT::Sandbox::User=root")
    say "apt-get update (deb-src $uri bookworm main, private list)"
    "${sudo_cmd[@]}" apt-get "${opts[@]}" -qq update >&2
    say "apt-get source --download-only $package=$version"
    (cd "$downloads" &&
        "${sudo_cmd[@]}" apt-get "${opts[@]}" -qq source --download-only \
            "$package=$version" >&2)
}

verified() {
    [[ -f $downloads/$dsc ]] || return 1
    [[ $(sha256_of "$downloads/$dsc") == "$dsc_sha256" ]] || return 1
    local f sum
    for f in "${package}_${upstream}.orig.tar.gz" \
             "${package}_${version}.debian.tar.xz"; do
        sum=$(dsc_sum "$f")
        [[ -n $sum && -f $downloads/$f ]] || return 1
        [[ $(sha256_of "$downloads/$f") == "$sum" ]] || return 1
    done
}

if ! verified; then
    fetch
    verified || die "$dsc or its tarballs do not match their SHA-256 " \
                    "(pinned: $dsc_sha256)"
fi

# Our patches, in order; the key covers their content and the .dsc.
series=$repo/faiss/patches/series
patches=()
while read -r line; do
    line=${line%%#*}
    [[ -n ${line// } ]] && patches+=("$repo/faiss/patches/$line")
done <"$series"
key=$( { echo "$dsc_sha256"; cat "${patches[@]}"; } | sha256sum | cut -c1-16)
tree=$cache/src/faiss-$upstream
if [[ -f $tree/.faiss_ccd_stamp && $(cat "$tree/.faiss_ccd_stamp") == "$key" ]]; then
    echo "$tree"
    exit 0
fi

say "unpacking into $tree"
work=$(mktemp -d "$cache/src/tmp.XXXXXX" 2>/dev/null ||
       { mkdir -p "$cache/src" && mktemp -d "$cache/src/tmp.XXXXXX"; })
trap 'rm -rf "$work"' EXIT
tar -xzf "$downloads/${package}_${upstream}.orig.tar.gz" -C "$work"
tar -xJf "$downloads/${package}_${version}.debian.tar.xz" -C "$work/faiss-$upstream"
(
    cd "$work/faiss-$upstream"
    while read -r p; do
        p=${p%%#*}
        [[ -n ${p// } ]] || continue
        patch -p1 -s --no-backup-if-mismatch <"debian/patches/$p" ||
            die "Debian's $p does not apply"
    done <debian/patches/series
    for p in "${patches[@]}"; do
        patch -p1 -s --no-backup-if-mismatch <"$p" ||
            die "$(basename "$p") does not apply"
    done
    rm -rf debian
    echo "$key" >.faiss_ccd_stamp
)
mkdir -p "$(dirname "$tree")"
rm -rf "$tree"
mv "$work/faiss-$upstream" "$tree"
say "FAISS $upstream + Debian $version + ${#patches[@]} patches of ours"
echo "$tree"
