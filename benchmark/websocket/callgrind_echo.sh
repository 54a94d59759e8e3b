#!/bin/sh
# callgrind_echo.sh [binary|text] [measured-seconds] [warm-up-seconds]
#
# User-space instructions per echoed WebSocket message, counted with
# callgrind (repeatable on a loaded machine, where CPU time is not):
# benchmark/websocket/ws_server.js sluice, /echo, driven by wsload (the
# runner's client, benchmark/lib/wsload.js builds it) with $CONNS
# connections (default 10) of $SIZE-byte messages (default 16), one in
# flight per connection. As callgrind_hello.sh: the server starts with
# instrumentation off, the warm-up runs (the JIT settles), instrumentation
# is switched on, and after $SETTLE seconds (default 10) of load the
# counts are dumped (and so zeroed), the measured run goes and the counts
# are dumped again. Prints
# the total and the count per echoed message (wsload's messages=); the
# profile stays in $OUT (default /tmp/callgrind_echo.<pid>).
# SLUICE_MODULE selects another sluice build, as for the runner.
set -eu
KIND=${1:-binary}
SECS=${2:-20}
WARM=${3:-20}
SETTLE=${SETTLE:-10}
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/callgrind_echo.$$}
mkdir -p "$OUT"
CPU_SERVER=${CPU_SERVER:-0}
CPU_LOAD=${CPU_LOAD:-1}
case "$KIND" in
  binary) TEXT="" ;;
  text) TEXT="text" ;;
  *) echo "usage: $0 [binary|text] [measured-seconds] [warm-up-seconds]" >&2; exit 2 ;;
esac
WSLOAD=$(node -e "process.stdout.write(require('$HERE/lib/wsload.js').wsloadBinary())")

. "$HERE/lib/callgrind_server.sh"
callgrind_server "$HERE/websocket/ws_server.js" sluice

# shellcheck disable=SC2086
taskset -c "$CPU_LOAD" "$WSLOAD" echo 127.0.0.1 "$PORT" /echo "${CONNS:-10}" "${SIZE:-16}" "$WARM" $TEXT > "$OUT/warm.log"
callgrind_control -i on "$VG" > /dev/null 2>&1
# The counts start after a further ${SETTLE}s of load: switching
# instrumentation on retranslates all code (seconds of it), and with a
# time-bounded client that fixed cost would be spread over however many
# messages a loaded machine let through. A dump zeroes the counts (-z
# alone leaves the dump's totals inconsistent); the measured run is the
# next dump.
# shellcheck disable=SC2086
taskset -c "$CPU_LOAD" "$WSLOAD" echo 127.0.0.1 "$PORT" /echo "${CONNS:-10}" "${SIZE:-16}" "$SETTLE" $TEXT > /dev/null
callgrind_control -d "$VG" > /dev/null 2>&1
# shellcheck disable=SC2086
taskset -c "$CPU_LOAD" "$WSLOAD" echo 127.0.0.1 "$PORT" /echo "${CONNS:-10}" "${SIZE:-16}" "$SECS" $TEXT > "$OUT/measured.log"
callgrind_control -i off "$VG" > /dev/null 2>&1
callgrind_control -d "$VG" > /dev/null 2>&1
sleep 1
grep RESULT "$OUT/measured.log"
FILE=$(ls -t "$OUT"/callgrind.out* | head -1)
# The dump's own totals: after an earlier dump its summary line (which
# callgrind_annotate reports) is garbage.
TOTAL=$(sed -n 's/^totals: //p' "$FILE")
MSGS=$(sed -n 's/^RESULT .*messages=\([0-9]*\).*/\1/p' "$OUT/measured.log")
echo "profile: $FILE"
echo "instructions: $TOTAL"
echo "messages: $MSGS"
echo "per message: $((TOTAL / MSGS))"
echo "top functions, self:"
callgrind_annotate "$FILE" 2>/dev/null | grep -E '^ *[0-9,]+ ' | sed -n "2,$(( ${TOP:-25} + 1 ))p"
