/**
 * `deno bench bench/sse_bench.ts`: our SSE decoder against `eventsource-parser` (the
 * baseline) on the same bytes, fed in 64 KiB chunks. `eventsource-parser` takes text,
 * so its side includes the streaming `TextDecoder` a byte-stream user of it needs.
 *
 * @module
 */

import { generateSseStream, runOracle, runOurs } from "./sse_throughput.ts";

const encoder = new TextEncoder();

/** Named inputs, a few MB each. */
const inputs: Record<string, Uint8Array> = {
  "MCP-like mix, 4 MB": generateSseStream(4e6).stream,
  "tiny events, 4 MB": encoder.encode('data: {"n":1}\n\n'.repeat(4e6 / 15)),
  "CRLF with id and event, 4 MB": encoder.encode(
    'id: 42\r\nevent: update\r\ndata: {"jsonrpc":"2.0","method":"x"}\r\n\r\n'.repeat(
      4e6 / 64,
    ),
  ),
  "one 512 KiB event per 8 chunks, 4 MB": encoder.encode(
    `data: ${"x".repeat(512 * 1024)}\n\n`.repeat(8),
  ),
};

for (const [group, stream] of Object.entries(inputs)) {
  Deno.bench({
    name: "eventsource-parser",
    group,
    baseline: true,
    fn() {
      runOracle(stream);
    },
  });
  Deno.bench({
    name: "SseDecoder",
    group,
    fn() {
      runOurs(stream);
    },
  });
}
