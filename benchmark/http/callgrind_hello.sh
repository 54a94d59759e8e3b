#!/bin/sh
# callgrind_hello.sh [h1|h2|h2compat] [measured-requests] [warm-up-requests]
#
# User-space instructions per response of the hello path, counted with
# callgrind (repeatable on a loaded machine, where CPU time is not):
#   h1: benchmark/http/hello_server.js (res.end('hello')), h2load --h1
#       -c $CONNS (default 4) -m $DEPTH (default 16 pipelined requests per
#       connection; DEPTH=1 with CONNS=16 is the one-request-per-read path
#       of wrk c100);
#   h2: benchmark/http2/file_server.js --mode memory --file-size 1024
#       (respond + end(1 KiB buffer)), h2load -c $CONNS (default 2) -m 100 (h2c);
#   h2compat: the same through the compat API (--mode compat: res.writeHead
#       + res.end(1 KiB buffer) in a 'request' listener).
# The server starts under callgrind with instrumentation off, serves the
# warm-up requests so (valgrind runs uninstrumented code several times
# faster, and the JIT settles: V8 still recompiles hot functions after
# tens of thousands of requests, which would otherwise be counted), then
# instrumentation is switched on (callgrind_control -i on; all code is
# retranslated, a stall of seconds), the measured requests run, and the
# counts are dumped (-d). Prints the total and the count per completed
# response (h2load's "done"); the profile stays in $OUT (default
# /tmp/callgrind_hello.<pid>) for callgrind_annotate.
# Under callgrind the server is ~50x slower and runs one thread at a time
# (V8's compiler and GC threads can stall the loop for seconds), so:
# the server gets a long keepAliveTimeout (an idle timer fired in
# such a stall closes a connection whose next requests already wait
# unread), and there are fewer connections than the runner's c100 / c10
# (h2load keeps every connection full, and libuv's up to 32 reads per
# connection per loop turn starve the others past the server's timeouts).
# Each read still carries 16 pipelined requests (h1) or up to 100 streams
# (h2). SLUICE_MODULE selects another sluice build, as for the runner;
# SERVER_ARGS adds hello_server.js options (h1: --access-log PATH).
# After the totals it prints the self cost split by component (nghttp2,
# libc malloc/free, sluice native, V8 + JIT code + the rest of the node
# binary (libuv included), other: libc, libstdc++ outside malloc),
# per response, and the top functions by self and inclusive cost
# (TOP, default 25).
set -eu
MODE=${1:-h1}
N=${2:-50000}
WARM=${3:-20000}
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/callgrind_hello.$$}
mkdir -p "$OUT"
CPU_SERVER=${CPU_SERVER:-0}
CPU_LOAD=${CPU_LOAD:-1}

case "$MODE" in
  h1) SERVER="$HERE/http/hello_server.js sluice --keep-alive-timeout 600000 ${SERVER_ARGS:-}"; LOAD="--h1 -c ${CONNS:-4} -m ${DEPTH:-16}" ;;
  h2) SERVER="$HERE/http2/file_server.js sluice --mode memory --file-size 1024 --keep-alive-timeout 600000"; LOAD="-c ${CONNS:-2} -m 100" ;;
  h2compat) SERVER="$HERE/http2/file_server.js sluice --mode compat --file-size 1024 --keep-alive-timeout 600000"; LOAD="-c ${CONNS:-2} -m 100" ;;
  *) echo "usage: $0 [h1|h2|h2compat] [measured] [warm-up]" >&2; exit 2 ;;
esac

. "$HERE/lib/callgrind_server.sh"
# shellcheck disable=SC2086
callgrind_server $SERVER
URL="http://127.0.0.1:$PORT/"

# shellcheck disable=SC2086
taskset -c "$CPU_LOAD" h2load $LOAD -n "$WARM" "$URL" > "$OUT/warm.log"
callgrind_control -i on "$VG" > /dev/null 2>&1
# shellcheck disable=SC2086
taskset -c "$CPU_LOAD" h2load $LOAD -n "$N" "$URL" > "$OUT/measured.log"
callgrind_control -i off "$VG" > /dev/null 2>&1
callgrind_control -d "$VG" > /dev/null 2>&1
sleep 1
grep -E 'requests: ' "$OUT/measured.log" | head -1
FILE=$(ls -t "$OUT"/callgrind.out* | head -1)
TOTAL=$(callgrind_annotate "$FILE" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
echo "profile: $FILE"
echo "instructions: $TOTAL"
DONE=$(sed -n 's/^requests: .* \([0-9]*\) done.*/\1/p' "$OUT/measured.log")
echo "per response: $((TOTAL / DONE))"

# Self cost by component. callgrind_annotate lists each function as
# "Ir file:function [object]"; nghttp2 is node's own copy (linked into the
# node binary, see src/core/http2/nghttp2_link.cc), so it is told apart by
# its symbol prefix before the object is looked at.
callgrind_annotate --threshold=100 "$FILE" 2>/dev/null | awk -v done="$DONE" '
  # A function inlined from another file shows as a further line with no
  # [object]; it counts with the object its name was seen with.
  $1 ~ /^[0-9,]+$/ && $0 ~ /%\)  / && $0 !~ /PROGRAM TOTALS/ {
    n = $1; gsub(",", "", n);
    line = $0; sub(/^[^)]*\)  /, "", line);
    obj = "";
    if (match(line, / \[[^]]*\]$/)) { obj = substr(line, RSTART + 2, RLENGTH - 3); line = substr(line, 1, RSTART - 1); }
    fn = line; sub(/^[^:]*:/, "", fn);
    cost[fn] += n; if (obj != "") objof[fn] = obj;
  }
  END {
    for (fn in cost) {
      o = objof[fn];
      if (fn ~ /^nghttp2_/) c = "nghttp2";
      else if (fn ~ /^(_int_malloc|_int_free|_int_realloc|malloc|free|calloc|realloc|malloc_consolidate|unlink_chunk|tcache_|operator new|operator delete)/ && o ~ /libc|vgpreload|libstdc/) c = "libc malloc/free";
      else if (o ~ /sluice[^\/]*\.node$/) c = "sluice native";
      else if (o ~ /\/node$/ || (fn ~ /^0x/ && o !~ /\.so|\/bin\//)) c = "V8 + JIT + node";
      else c = "other (libc, libstdc++, ...)";
      sum[c] += cost[fn]; all += cost[fn];
    }
    split("nghttp2|sluice native|libc malloc/free|V8 + JIT + node|other (libc, libstdc++, ...)", order, "|")
    for (i = 1; i <= 5; i++) { c = order[i]; printf "  %-26s %14d %6.1f%% %9d per response\n", c, sum[c], 100 * sum[c] / all, done ? sum[c] / done : 0 }
  }'
echo "top functions, self:"
callgrind_annotate "$FILE" 2>/dev/null | grep -E '^ *[0-9,]+ ' | sed -n "2,$(( ${TOP:-25} + 1 ))p"
echo "top functions, inclusive:"
callgrind_annotate --inclusive=yes "$FILE" 2>/dev/null | grep -E '^ *[0-9,]+ ' | sed -n "2,$(( ${TOP:-25} + 1 ))p"
