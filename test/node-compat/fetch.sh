#!/usr/bin/env bash
# Fetches node's own tests (test/parallel/test-http-*.js, test/common,
# test/fixtures) from Debian's nodejs source package, reproducibly: a private
# apt configuration with one deb-src line (the system's sources are not
# touched), `apt-get source --download-only` (apt checks the tarball's
# SHA256 against the signed Sources index), then only the test tree is
# extracted. Output: test/node-compat/cache/extract/node-v<version>/test (git-ignored).
# usage: fetch.sh [suite]   (default trixie: Node 20.19.x)
set -euo pipefail
SUITE="${1:-trixie}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="$ROOT/test/node-compat/cache"
APT="$OUT/apt-$SUITE"
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/etc" "$OUT/src"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $SUITE main" > "$APT/etc/sources.list"
APTOPTS=(-o "Dir::Etc::SourceList=$APT/etc/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache" -o Debug::NoLocking=1)
apt-get "${APTOPTS[@]}" -qq update
cd "$OUT/src"
# The .dsc / .debian.tar.xz of a point release can be missing from a mirror
# while the orig tarball (all we need) is there: tolerate that.
apt-get "${APTOPTS[@]}" -qq source --download-only nodejs || true
ORIG="$(ls -1 nodejs_*+dfsg.orig.tar.xz | sort -V | tail -1)"
[ -f "$ORIG" ] || { echo "no nodejs orig tarball fetched" >&2; exit 1; }
rm -rf "$OUT/extract"
mkdir -p "$OUT/extract"
tar -xJf "$ORIG" -C "$OUT/extract" --wildcards \
  '*/test/parallel/test-http-*' '*/test/parallel/test-http2-*' '*/test/common/*' '*/test/fixtures/*'
DIR="$(ls -d "$OUT"/extract/node-v* | head -1)"
echo "$DIR/test"
