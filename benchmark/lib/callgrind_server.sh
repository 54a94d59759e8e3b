# Sourced by benchmark/http/callgrind_hello.sh and
# benchmark/websocket/callgrind_echo.sh (with OUT and CPU_SERVER set).
# callgrind_server ARGS...: starts `node ARGS...` under callgrind with
# instrumentation off, pinned to $CPU_SERVER, its stdin held open (the
# server harness exits on EOF) and both killed when the script exits;
# waits for the server's PORT line. Sets VG (valgrind's pid) and PORT.

callgrind_cleanup() { kill "$HOLD" 2>/dev/null || true; kill "$VG" 2>/dev/null || true; }

callgrind_server() {
  mkfifo "$OUT/stdin"
  sleep 100000 > "$OUT/stdin" &
  HOLD=$!
  taskset -c "$CPU_SERVER" valgrind --tool=callgrind --instr-atstart=no --fair-sched=yes --smc-check=all-non-file \
    --callgrind-out-file="$OUT/callgrind.out" node "$@" < "$OUT/stdin" > "$OUT/server.log" 2> "$OUT/valgrind.log" &
  VG=$!
  trap callgrind_cleanup EXIT
  trap 'callgrind_cleanup; exit 1' INT TERM
  i=0
  until grep -q '^PORT ' "$OUT/server.log" 2>/dev/null; do
    i=$((i + 1))
    if [ "$i" -gt 2400 ]; then echo "server did not start" >&2; cat "$OUT/valgrind.log" >&2; exit 1; fi
    sleep 0.5
  done
  PORT=$(sed -n 's/^PORT //p' "$OUT/server.log")
}
