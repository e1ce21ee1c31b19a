/**
 * Throughput of the SSE decoder against `eventsource-parser`, for the benchmark
 * harness. Both get the same bytes in the same chunks; `eventsource-parser` parses
 * strings, so its side includes the streaming `TextDecoder` that any byte-stream user
 * of it needs (exactly what its own `EventSourceParserStream` does).
 *
 * @module
 */

import { createParser } from "eventsource-parser";
import { SseDecoder } from "../src/mcp/transport/sse.ts";

/** Chunk size of the simulated network reads. */
export const CHUNK_BYTES = 64 * 1024;

/** Options of {@linkcode measureSseThroughput}. */
export interface SseThroughputOptions {
  /** Size of the generated stream, in bytes. */
  bytes: number;
  /** Timed runs of each decoder, alternating; the median counts. Default 5. */
  rounds?: number;
}

/** Throughput of each decoder, in MB/s (10^6 bytes per second). */
export interface SseThroughput {
  /** Our {@linkcode SseDecoder}. */
  ours: number;
  /** `eventsource-parser` (with a streaming `TextDecoder` in front). */
  oracle: number;
}

/**
 * Generates about `bytes` bytes of an event stream shaped like MCP traffic: mostly
 * one-line JSON `data` events of varied size, some with `event` and `id` fields,
 * some multi-line data, comments and non-ASCII text. Deterministic.
 *
 * @param bytes Approximate size wanted; the result is cut at an event boundary.
 * @returns The encoded stream and the number of events it holds.
 */
export function generateSseStream(bytes: number): { stream: Uint8Array; events: number } {
  const blocks: string[] = [];
  const pad = "lorem ipsum dolor sit amet ";
  for (let i = 0; i < 64; i++) {
    const text = pad.repeat(1 + ((i * 7) % 40));
    const json =
      `{"jsonrpc":"2.0","id":${i},"result":{"content":[{"type":"text","text":"${text}"}]}}`;
    switch (i % 8) {
      case 0:
        blocks.push(`event: message\nid: ${i}-abc\ndata: ${json}\n\n`);
        break;
      case 1:
        blocks.push(
          `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":${i}}}\n\n`,
        );
        break;
      case 2:
        blocks.push(`: keep-alive\ndata: ${json}\n\n`);
        break;
      case 3:
        blocks.push(`data: ${text}\ndata: ${text}\ndata: ${text}\n\n`);
        break;
      case 4:
        blocks.push(`data: {"text":"héllo wörld ✓ ${"ünïcödé ".repeat(i)}"}\n\n`);
        break;
      default:
        blocks.push(`data: ${json}\n\n`);
    }
  }
  const unit = blocks.join("");
  const repeats = Math.max(1, Math.floor(bytes / new TextEncoder().encode(unit).length));
  const stream = new TextEncoder().encode(unit.repeat(repeats));
  return { stream, events: blocks.length * repeats };
}

/** Feeds `stream` to our decoder in {@linkcode CHUNK_BYTES} chunks; returns the event count. */
export function runOurs(stream: Uint8Array): number {
  let events = 0;
  let chars = 0;
  const decoder = new SseDecoder((e) => {
    events++;
    chars += e.data.length;
  });
  for (let i = 0; i < stream.length; i += CHUNK_BYTES) {
    decoder.push(stream.subarray(i, i + CHUNK_BYTES));
  }
  decoder.end();
  return chars >= 0 ? events : -1;
}

/** Feeds `stream` to `eventsource-parser` the same way; returns the event count. */
export function runOracle(stream: Uint8Array): number {
  let events = 0;
  let chars = 0;
  const text = new TextDecoder();
  const parser = createParser({
    onEvent(e) {
      events++;
      chars += e.data.length;
    },
  });
  for (let i = 0; i < stream.length; i += CHUNK_BYTES) {
    parser.feed(text.decode(stream.subarray(i, i + CHUNK_BYTES), { stream: true }));
  }
  parser.feed(text.decode());
  return chars >= 0 ? events : -1;
}

/**
 * Measures both decoders on a generated stream of `options.bytes` bytes, alternating
 * runs in this process, and returns the median MB/s of each. Throws if the two ever
 * disagree on the number of events.
 *
 * @example
 * ```ts
 * import { measureSseThroughput } from "./sse_throughput.ts";
 * const { ours, oracle } = await measureSseThroughput({ bytes: 8e6 });
 * console.log(`${(ours / oracle).toFixed(2)}x eventsource-parser`);
 * ```
 */
export async function measureSseThroughput(
  options: SseThroughputOptions,
): Promise<SseThroughput> {
  const { stream, events } = generateSseStream(options.bytes);
  const rounds = options.rounds ?? 5;
  // One untimed run each lets the JIT settle before timing.
  check(runOurs(stream), events, "SseDecoder");
  check(runOracle(stream), events, "eventsource-parser");
  const ours: number[] = [];
  const oracle: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first so drift (GC, thermal) does not favour one side.
    const order = round % 2 === 0 ? [true, false] : [false, true];
    for (const mine of order) {
      // Yield between runs so timers and GC tasks do not land inside a timed run.
      await new Promise((resolve) => setTimeout(resolve, 0));
      const start = performance.now();
      const count = mine ? runOurs(stream) : runOracle(stream);
      const seconds = (performance.now() - start) / 1000;
      check(count, events, mine ? "SseDecoder" : "eventsource-parser");
      (mine ? ours : oracle).push(stream.length / 1e6 / seconds);
    }
  }
  return { ours: median(ours), oracle: median(oracle) };
}

function check(actual: number, expected: number, who: string): void {
  if (actual !== expected) throw new Error(`${who} decoded ${actual} events, expected ${expected}`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

if (import.meta.main) {
  // deno run -A bench/sse_throughput.ts [bytes] [rounds]
  const options: SseThroughputOptions = { bytes: Number(Deno.args[0] ?? 100e6) };
  if (Deno.args[1] !== undefined) options.rounds = Number(Deno.args[1]);
  const { ours, oracle } = await measureSseThroughput(options);
  console.log(
    `SseDecoder ${ours.toFixed(0)} MB/s, eventsource-parser ${oracle.toFixed(0)} MB/s, ` +
      `ratio ${(ours / oracle).toFixed(2)}`,
  );
}
