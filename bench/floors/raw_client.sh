#!/bin/sh
# Floor: the cheapest client that gets a tool result from the minimal stdio server.
# A POSIX sh script (dash on Debian: ~1 ms to start, printf is a builtin) pipes the three
# messages -- initialize, notifications/initialized, tools/call -- into the server and waits
# for it to answer and exit at end of input. No JSON parsing, no lockstep: the messages are
# written at once, which costs nothing a client could save (a pipe round trip is a few
# microseconds). A Deno raw client would add a second Deno start (~40 ms) and flatter mcpctl.
#
# Usage: raw_client.sh [N]   -- N clients in parallel (default 1), waits for all.
# Env:   DENO (default: deno) -- the deno binary that runs the server.
here=${0%/*}
n=${1:-1}
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}'
initialized='{"jsonrpc":"2.0","method":"notifications/initialized"}'
call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}'
if [ "$n" -eq 1 ]; then
  printf '%s\n%s\n%s\n' "$init" "$initialized" "$call" |
    "${DENO:-deno}" run -q --no-config "$here/min_server.ts"
  exit
fi
i=0
while [ "$i" -lt "$n" ]; do
  printf '%s\n%s\n%s\n' "$init" "$initialized" "$call" |
    "${DENO:-deno}" run -q --no-config "$here/min_server.ts" &
  i=$((i + 1))
done
wait
