#!/bin/sh
# Floor: the cheapest HTTP client sequence that gets a tool result from the minimal
# Streamable HTTP server: ONE curl process doing three POSTs in order over one kept-alive
# connection (`--next`): initialize, notifications/initialized, tools/call. One process
# instead of three is the cheapest form (each curl start costs a few ms); the
# session/protocol-version headers a real client sends after initialize are included.
#
# Usage: curl_client.sh URL
url=$1
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'
initialized='{"jsonrpc":"2.0","method":"notifications/initialized"}'
call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}'
ct='content-type: application/json'
accept='accept: application/json, text/event-stream'
pv='mcp-protocol-version: 2025-06-18'
exec curl -sS --fail -H "$ct" -H "$accept" --data-binary "$init" "$url" \
  --next -sS --fail -H "$ct" -H "$accept" -H "$pv" --data-binary "$initialized" "$url" \
  --next -sS --fail -H "$ct" -H "$accept" -H "$pv" --data-binary "$call" "$url"
