#!/usr/bin/env bash
# npm run release [-- DIR]: the package as it would be published, before it
# is on the registry. Builds both prebuilt binaries (src/prebuild.sh:
# linux-x64 with g++, linux-arm64 cross-compiled), checks that each is
# there and is the right machine type, then `npm pack`s the tarball into DIR
# (default: the current folder) and lists what it carries. Install the
# tarball anywhere with `npm install /path/to/sluice-<version>.tgz`: on
# Linux x64 / arm64 with glibc it compiles nothing (docs/install.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$(cd "${1:-.}" && pwd)"

bash "$root/src/prebuild.sh" x64 arm64
declare -A machine=([x64]="x86-64" [arm64]="aarch64")
for arch in x64 arm64; do
  f="$root/prebuilds/linux-$arch/sluice.glibc.node"
  [ -f "$f" ] || { echo "release: $f missing" >&2; exit 1; }
  if command -v file >/dev/null; then
    file -b "$f" | grep -q "${machine[$arch]}" || { echo "release: $f is not ${machine[$arch]}: $(file -b "$f")" >&2; exit 1; }
  fi
done

tgz="$(cd "$root" && npm pack --silent --pack-destination "$dest" | tail -1)"
echo "release: $dest/$tgz"
tar tzf "$dest/$tgz" | grep '^package/prebuilds/' | sed 's/^/  /'
echo "install it with: npm install $dest/$tgz"
