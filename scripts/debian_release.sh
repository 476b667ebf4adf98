# debian_release.sh: sourced by the scripts that depend on the Debian
# release. Sets
#   debian_version_text  /etc/debian_version as it reads ("12.11", ...)
#   debian_major         12 (bookworm) or 13 (trixie)
#   fuzz_clang_version   the clang the fuzzers build with: the release's
#                        own (14 on 12, 19 on 13), named so that one CI
#                        judges the same code with the same compiler
# Another release stops the script that sourced it, saying so.
debian_version_text=$(cat /etc/debian_version 2>/dev/null || echo unknown)
case $debian_version_text in
    12.* | bookworm*) debian_major=12 fuzz_clang_version=14 ;;
    13.* | trixie*) debian_major=13 fuzz_clang_version=19 ;;
    *)
        echo "debian_release: /etc/debian_version reads" \
             "'$debian_version_text'; this project supports Debian 12" \
             "and 13" >&2
        exit 1
        ;;
esac
