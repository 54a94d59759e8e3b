#!/bin/sh
# callgrind_hello.sh [h1|h2] [measured-requests] [warm-up-requests]
#
# User-space instructions per response of the hello path, counted with
# callgrind (repeatable on a loaded machine, where CPU time is not):
#   h1: benchmark/http/hello_server.js (res.end('hello')), h2load --h1
#       -c $CONNS (default 20) -m 16 (16 pipelined requests per connection);
#   h2: benchmark/http2/file_server.js --mode memory --file-size 1024
#       (respond + end(1 KiB buffer)), h2load -c 10 -m 100 (h2c).
# The server runs under callgrind with instrumentation off; it is switched
# on (callgrind_control -i on) after the warm-up requests and off after the
# measured ones, so JIT warm-up and start-up are not counted. Prints the
# total and the count per completed response (h2load's "done"; under
# callgrind the server is ~50x slower, and with many connections some wait
# past the server's timeouts and are closed: fewer connections than the
# runner's c100 keep every request answered); the profile stays in $OUT (default
# /tmp/callgrind_hello.<pid>) for callgrind_annotate.
# SLUICE_MODULE selects another sluice build, as for the runner.
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
  h1) SERVER="$HERE/http/hello_server.js sluice"; LOAD="--h1 -c ${CONNS:-20} -m 16" ;;
  h2) SERVER="$HERE/http2/file_server.js sluice --mode memory --file-size 1024"; LOAD="-c 10 -m 100" ;;
  *) echo "usage: $0 [h1|h2] [measured] [warm-up]" >&2; exit 2 ;;
esac

# stdin stays open (the harness exits on EOF) until we kill the sleep.
mkfifo "$OUT/stdin"
sleep 100000 > "$OUT/stdin" &
HOLD=$!
# shellcheck disable=SC2086
taskset -c "$CPU_SERVER" valgrind --tool=callgrind --instr-atstart=no --smc-check=all-non-file \
  --callgrind-out-file="$OUT/callgrind.out" node $SERVER < "$OUT/stdin" > "$OUT/server.log" 2> "$OUT/valgrind.log" &
VG=$!
cleanup() { kill "$HOLD" 2>/dev/null || true; kill "$VG" 2>/dev/null || true; }
trap cleanup EXIT

i=0
until grep -q '^PORT ' "$OUT/server.log" 2>/dev/null; do
  i=$((i + 1))
  if [ "$i" -gt 600 ]; then echo "server did not start" >&2; cat "$OUT/valgrind.log" >&2; exit 1; fi
  sleep 0.5
done
PORT=$(sed -n 's/^PORT //p' "$OUT/server.log")
URL="http://127.0.0.1:$PORT/"

# shellcheck disable=SC2086
taskset -c "$CPU_LOAD" h2load $LOAD -n "$WARM" "$URL" > "$OUT/warm.log"
callgrind_control -z "$VG" > /dev/null
callgrind_control -i on "$VG" > /dev/null
# shellcheck disable=SC2086
taskset -c "$CPU_LOAD" h2load $LOAD -n "$N" "$URL" > "$OUT/measured.log"
callgrind_control -i off "$VG" > /dev/null
callgrind_control -d "$VG" > /dev/null
sleep 1
grep -E 'requests: ' "$OUT/measured.log" | head -1
FILE=$(ls -t "$OUT"/callgrind.out* | head -1)
TOTAL=$(callgrind_annotate "$FILE" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
echo "profile: $FILE"
echo "instructions: $TOTAL"
DONE=$(sed -n 's/^requests: .* \([0-9]*\) done.*/\1/p' "$OUT/measured.log")
echo "per response: $((TOTAL / DONE))"
