/**
 * Reference (not a budget floor): the cheapest *Deno* client of the minimal HTTP server:
 * three `fetch` POSTs in order (initialize, notifications/initialized, tools/call), then
 * prints the tool's text. No imports. Run it the way mcpctl runs
 * (`deno run -q -P=mcpctl`): the difference to mcpctl is what mcpctl's own code costs,
 * the difference to `curl_client.sh` is what Deno start and its fetch stack cost.
 *
 * Usage: deno run -q -P=mcpctl bench/floors/deno_http_client.ts URL
 *
 * @module
 */

if (import.meta.main) {
  const url = Deno.args[0];
  if (url === undefined) throw new Error("usage: deno_http_client.ts URL");
  const post = async (body: string, extra: Record<string, string> = {}) => {
    const res = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...extra,
      },
      body,
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return await res.text();
  };
  await post(
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",' +
      '"capabilities":{},"clientInfo":{"name":"deno-raw","version":"0"}}}',
  );
  const pv = { "mcp-protocol-version": "2025-06-18" };
  await post('{"jsonrpc":"2.0","method":"notifications/initialized"}', pv);
  const answer = await post(
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo",' +
      '"arguments":{"message":"hi"}}}',
    pv,
  );
  console.log(JSON.parse(answer).result.content[0].text);
}
