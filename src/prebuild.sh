#!/usr/bin/env bash
# Builds the prebuilt binaries the package ships (docs/install.md):
#   prebuilds/linux-x64/sluice.glibc.node    with the host's g++
#   prebuilds/linux-arm64/sluice.glibc.node  cross-compiled with Debian's
#                                            g++-aarch64-linux-gnu
# One binary per platform serves every Node version (N-API, NAPI_VERSION in
# binding.gyp). prebuildify --napi --strip runs in a staging copy of the
# package (binding.gyp, package.json, src/) so the developer's build/ is left
# alone; the result is copied to prebuilds/ (generated, never committed;
# `files` in package.json puts it in the tarball). Needs what `npm run build`
# needs (node-llhttp, libnghttp2-dev, libbrotli-dev: compiled in here, so
# users need none of them) plus the cross toolchain for arm64.
# Usage: src/prebuild.sh [x64] [arm64]   (default: both)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(x64 arm64)

node "$root/src/check_deps.js"
stage="$(mktemp -d "${TMPDIR:-/tmp}/sluice-prebuild.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
cp -r "$root/binding.gyp" "$root/package.json" "$root/src" "$stage/"
# binding.gyp asks node for node-addon-api's include dir from the build dir.
ln -s "$root/node_modules" "$stage/node_modules"
prebuildify="$root/node_modules/.bin/prebuildify"
target="$(node -p 'process.versions.node')"

for arch in "${arches[@]}"; do
  start=$SECONDS
  case "$arch" in
    x64)
      [ "$(node -p process.arch)" = x64 ] || { echo "prebuild: x64 needs an x64 host" >&2; exit 1; }
      (cd "$stage" && "$prebuildify" --napi --strip --tag-libc --arch x64 --target "$target")
      ;;
    arm64)
      for t in aarch64-linux-gnu-gcc aarch64-linux-gnu-g++ aarch64-linux-gnu-strip; do
        command -v "$t" >/dev/null || { echo "prebuild: $t missing (apt-get install -y g++-aarch64-linux-gnu)" >&2; exit 1; }
      done
      # node-gyp's make generator takes the target toolchain from CC/CXX/LINK
      # (and the host one from *_host for host-side tools; there are none).
      (cd "$stage" && CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ LINK=aarch64-linux-gnu-g++ \
        AR=aarch64-linux-gnu-ar "$prebuildify" --napi --strip --strip-bin aarch64-linux-gnu-strip \
        --tag-libc --arch arm64 --target "$target")
      ;;
    *) echo "prebuild: unknown arch $arch (x64, arm64)" >&2; exit 1 ;;
  esac
  mkdir -p "$root/prebuilds/linux-$arch"
  cp "$stage/prebuilds/linux-$arch/sluice.glibc.node" "$root/prebuilds/linux-$arch/"
  echo "prebuild: prebuilds/linux-$arch/sluice.glibc.node ($(stat -c %s "$root/prebuilds/linux-$arch/sluice.glibc.node") bytes, $((SECONDS - start)) s)"
  rm -rf "$stage/build"
done
