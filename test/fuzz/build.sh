#!/usr/bin/env bash
# Builds the libFuzzer harnesses into test/fuzz/out/ (or $FUZZ_OUT):
# plain executables (no Node, no N-API) over src/core, Debian's llhttp
# (strict mode, as the addon), Debian's libuv and libnghttp2, with
# -fsanitize=fuzzer,address,undefined. Installs the toolchain from Debian
# when it is missing.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${FUZZ_OUT:-$ROOT/test/fuzz/out}"
JOBS="${FUZZ_JOBS:-2}"

need=()
command -v clang++ >/dev/null || need+=(clang)
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || need+=(libclang-rt-14-dev)
[ -f /usr/include/uv.h ] || need+=(libuv1-dev)
[ -f /usr/include/nghttp2/nghttp2.h ] || need+=(libnghttp2-dev)
[ -f /usr/share/llhttp/llhttp.c ] || need+=(node-llhttp)
[ -f /usr/include/brotli/encode.h ] || need+=(libbrotli-dev)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
[ -f /usr/include/openssl/ssl.h ] || need+=(libssl-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "fuzz: installing ${need[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y "${need[@]}" >/dev/null || {
    $SUDO apt-get update >/dev/null && $SUDO apt-get install -y "${need[@]}" >/dev/null; }
fi

mkdir -p "$OUT/obj"
SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
CFLAGS_COMMON="-g -O1 -fno-omit-frame-pointer -Wall -Wextra -DLLHTTP_STRICT_MODE=1 -I/usr/share/include/llhttp -I$ROOT/src"
CXX="clang++ -std=c++17 $CFLAGS_COMMON $SAN"
CC="clang -std=c11 $CFLAGS_COMMON -Wno-unused-parameter $SAN"

objs=()
compile() {  # src obj compiler...
  local src="$1" obj="$2"; shift 2
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find "$ROOT/src/core" "$ROOT/test/fuzz" -name '*.h' -newer "$obj" -print -quit)" ]; then
    "$@" -c "$src" -o "$obj" &
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  fi
  objs+=("$obj")
}
for f in api http llhttp; do
  compile "/usr/share/llhttp/$f.c" "$OUT/obj/llhttp_$f.o" $CC
done
# The core sources and libraries the addon builds with (binding.gyp), so a
# file in progress that the addon does not build yet does not break this.
mapfile -t gyp < <(python3 -c '
import ast, sys
g = ast.literal_eval(open(sys.argv[1]).read())
t = g["targets"][0]
for s in t["sources"]:
    if s.startswith("src/core/") and s.endswith(".cc"): print("src " + s)
for l in t.get("libraries", []): print("lib " + l)
' "$ROOT/binding.gyp")
libs=()
core_srcs=()
for line in "${gyp[@]}"; do
  case "$line" in
    "src "*) core_srcs+=("$ROOT/${line#src }") ;;
    "lib "*) libs+=("${line#lib }") ;;
  esac
done
# What the addon takes from the node binary (which exports its zlib,
# brotli, nghttp2 and OpenSSL), a standalone binary takes from Debian
# (zlib1g-dev, libbrotli-dev, libnghttp2-dev, libssl-dev: the core's TLS
# layer, docs/tls.md); the harnesses also decode compressed bodies with
# them (body_decoder.h: inflate, libbrotlidec).
node_libs=(-lz -lbrotlienc -lbrotlidec -lnghttp2 -lssl -lcrypto)
core=()
for f in "${core_srcs[@]}"; do
  o="$OUT/obj/core_$(basename "${f%.cc}").o"
  compile "$f" "$o" $CXX
  core+=("$o")
done
wait
llhttp_objs=("$OUT/obj/llhttp_api.o" "$OUT/obj/llhttp_http.o" "$OUT/obj/llhttp_llhttp.o")

for h in "${@:-http1 http2 prescan http1_parser http3 ws_frame_parser quic_packet}"; do
  for name in $h; do
    src="$ROOT/test/fuzz/fuzz_$name.cc"
    [ -f "$src" ] || continue
    # Pieces fuzzed alone (no connection, loop or library): the WebSocket
    # frame parser, the QUIC header reader.
    case "$name" in
      ws_frame_parser | quic_packet)
        clang++ -std=c++17 $CFLAGS_COMMON -fsanitize=fuzzer,address,undefined \
          -fno-sanitize-recover=undefined "$src" "$OUT/obj/core_$name.o" \
          -o "$OUT/fuzz_$name"
        echo "fuzz: built $OUT/fuzz_$name" >&2
        continue
        ;;
    esac
    if [ "$name" = http1_parser ]; then
      # The parser alone: no connection, loop or delegate to link.
      clang++ -std=c++17 $CFLAGS_COMMON -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined "$src" "$OUT/obj/core_http1_parser.o" \
        "$OUT/obj/core_line_fold_scanner.o" "${llhttp_objs[@]}" -o "$OUT/fuzz_$name"
      echo "fuzz: built $OUT/fuzz_$name" >&2
      continue
    fi
    if [ "$name" = http3 ]; then
      # The HTTP/3 framing and QPACK core alone: no QUIC, loop or library.
      clang++ -std=c++17 $CFLAGS_COMMON -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined "$src" "$OUT/obj/core_varint.o" \
        "$OUT/obj/core_frames.o" "$OUT/obj/core_huffman.o" "$OUT/obj/core_qpack.o" \
        "$OUT/obj/core_qpack_decoder.o" "$OUT/obj/core_request_rules.o" \
        -o "$OUT/fuzz_$name"
      echo "fuzz: built $OUT/fuzz_$name" >&2
      continue
    fi
    clang++ -std=c++17 $CFLAGS_COMMON -fsanitize=fuzzer,address,undefined \
      -fno-sanitize-recover=undefined "$src" "${core[@]}" "${llhttp_objs[@]}" \
      -Wl,--wrap=uv_queue_work,--wrap=uv_shutdown \
      -o "$OUT/fuzz_$name" -l:libuv.so.1 "${libs[@]}" "${node_libs[@]}" -lpthread
    echo "fuzz: built $OUT/fuzz_$name" >&2
  done
done
