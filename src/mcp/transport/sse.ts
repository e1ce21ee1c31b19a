/**
 * A streaming decoder for `text/event-stream` (Server-Sent Events), following the
 * WHATWG HTML "event stream interpretation" rules. It takes raw bytes in any chunking
 * and reports events synchronously, with memory bounded by `maxEventBytes`.
 *
 * Used by the Streamable HTTP and legacy SSE transports.
 *
 * @module
 */

import { ProtocolError } from "../../errors.ts";

/** One dispatched event. */
export interface SseEvent {
  /** The event type; `"message"` when the event had no (or an empty) `event` field. */
  event: string;
  /** The data lines joined with `\n` (may be `""` when the event had an empty `data` line). */
  data: string;
  /** The last event id in effect after this event (ids persist across events); `""` if none. */
  id: string;
  /** The reconnection time from a valid `retry` field inside this event, if it had one. */
  retry?: number;
}

/** Options of {@linkcode SseDecoder} and {@linkcode decodeSse}. */
export interface SseDecoderOptions {
  /**
   * Upper bound, in UTF-8 bytes, on any single line (field name included) and on the
   * data of one event. Exceeding it makes `push` throw {@linkcode SseTooLargeError}.
   * Defaults to 1 MiB; `Infinity` turns the limit off.
   */
  maxEventBytes?: number;
  /**
   * Called as soon as a valid `retry` field is parsed (it takes effect even when its
   * event is never dispatched), with the reconnection time in milliseconds.
   */
  onRetry?(ms: number): void;
  /**
   * Called when an event block that had a valid `id` field ends with a blank line,
   * before its event (if any) is reported. Blocks without data are not reported as
   * events, but their id still becomes the last event id: this is how callers see
   * id-only events such as MCP priming events.
   */
  onId?(id: string): void;
}

/** The default of {@linkcode SseDecoderOptions.maxEventBytes}: 1 MiB. */
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

/**
 * A line or an event's data exceeded `maxEventBytes`. The server broke the stream
 * (or is hostile), so this is a protocol failure: exit code 3.
 */
export class SseTooLargeError extends ProtocolError {
  /** Always `"SseTooLargeError"`. */
  override name = "SseTooLargeError";
}

const LF = 10;
const SPACE = 32;
const COLON = 58;
const EMPTY = new Uint8Array(0);
const ROPE_LINES = 16;

/**
 * Decodes an event stream incrementally: bytes in through {@linkcode SseDecoder.push},
 * events out through the `onEvent` callback, synchronously, in stream order.
 *
 * The decoder is not reentrant: callbacks must not call `push` or `end` on it. If a
 * callback throws, the error propagates out of `push` and the decoder stays failed
 * (later calls to `push` rethrow it), like after an {@linkcode SseTooLargeError}.
 *
 * @example
 * ```ts
 * import { SseDecoder } from "./sse.ts";
 * const events: string[] = [];
 * const decoder = new SseDecoder((e) => events.push(`${e.event}:${e.data}`));
 * const bytes = new TextEncoder().encode("event: ping\ndata: hi\n\ndata: x");
 * decoder.push(bytes.subarray(0, 7));
 * decoder.push(bytes.subarray(7));
 * decoder.end(); // the unterminated "data: x" event is dropped
 * console.log(events); // ["ping:hi"]
 * ```
 */
export class SseDecoder {
  readonly #parser: EventStreamParser;

  /**
   * Makes a decoder for one stream (and, after `end`, for the next).
   *
   * @param onEvent Receives each dispatched event, synchronously from `push`.
   * @param options Size limit and `id`/`retry` callbacks.
   * @throws {RangeError} when `maxEventBytes` is not a positive number.
   */
  constructor(onEvent: (e: SseEvent) => void, options: SseDecoderOptions = {}) {
    const max = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    if (!(max > 0)) {
      throw new RangeError(`maxEventBytes must be a positive number, got ${max}`);
    }
    this.#parser = new EventStreamParser(onEvent, options, max);
  }

  /** The last event id committed by a dispatch (blank line), `""` if none. */
  get lastEventId(): string {
    return this.#parser.lastId;
  }

  /** The last valid `retry` value seen, in milliseconds, or undefined. */
  get retry(): number | undefined {
    return this.#parser.retry;
  }

  /**
   * Feeds the next bytes of the stream. Events completed by them are reported before
   * this returns.
   *
   * @throws {SseTooLargeError} when a line or an event's data exceeds `maxEventBytes`.
   */
  push(chunk: Uint8Array): void {
    this.#parser.push(chunk);
  }

  /**
   * Ends the stream: an unterminated event (and any partial line) is dropped, as the
   * standard requires. `lastEventId` and `retry` keep their values, so the decoder can
   * be reused for the next connection (its first bytes may carry a BOM again).
   */
  end(): void {
    this.#parser.end();
  }
}

// The decoder proper, behind SseDecoder. Its state is in ordinary properties, not
// #private ones: V8 reaches those measurably faster in the per-line loop (up to 40% on
// streams of tiny events). Not exported, so the state is still out of reach.
class EventStreamParser {
  readonly onEvent: (e: SseEvent) => void;
  readonly onId: ((id: string) => void) | undefined;
  readonly onRetry: ((ms: number) => void) | undefined;
  readonly max: number;
  // Below this many UTF-16 code units a string is certainly within max bytes (a code
  // unit is at most 3 UTF-8 bytes), so the exact byte count is only ever computed for
  // strings near the limit.
  readonly quick: number;
  // UTF-8 is decoded one whole chunk at a time, not with `{ stream: true }`: the bytes of
  // a character split between chunks are carried over by hand. Deno's non-streaming
  // decode is several times faster on text that is not pure ASCII, and its streaming
  // one also drops a U+FEFF that merely starts a later chunk. The BOM is stripped here.
  utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
  // The start of a character cut off at the end of the previous chunk (at most 3 bytes).
  carry: Uint8Array = EMPTY;
  atStart = true;
  // The text being parsed is pure ASCII, so any slice of it has as many UTF-8 bytes as
  // code units and the size checks need not count.
  ascii = false;

  // Partial line carried over from earlier chunks, kept as fragments and joined once
  // its line end arrives, so a long line split into many chunks costs linear time.
  pending: string[] = [];
  pendingUnits = 0;
  // Exact UTF-8 size of pending, or -1 while pendingUnits is below quick.
  pendingBytes = -1;
  // Every fragment in pending came from ASCII text.
  pendingAscii = true;
  // The previous chunk ended with CR: an LF starting the next text completes a CRLF.
  skipLF = false;

  // The data lines joined with `+` (fast for the few lines events usually have), and
  // past ROPE_LINES lines an array of that and the later lines, joined at dispatch: a
  // rope costs two nodes per line, and a hostile stream of one-byte lines would make
  // that many times the size of the data itself.
  data = "";
  dataParts: string[] | undefined = undefined;
  dataLines = 0;
  // Size of the data so far (lines and the LFs between them) in code units, and its
  // exact UTF-8 size, or -1 while it is certainly small enough.
  dataUnits = 0;
  dataBytes = -1;
  type = "";
  // The WHATWG "last event ID buffer": set by `id` fields, committed on dispatch.
  idBuffer = "";
  idInBlock = false;
  blockRetry: number | undefined = undefined;

  lastId = "";
  retry: number | undefined = undefined;
  failure: unknown = undefined;
  failed = false;

  constructor(onEvent: (e: SseEvent) => void, options: SseDecoderOptions, max: number) {
    this.onEvent = onEvent;
    this.onId = options.onId;
    this.onRetry = options.onRetry;
    this.max = max;
    this.quick = Math.floor(max / 3);
  }

  push(chunk: Uint8Array): void {
    if (this.failed) throw this.failure;
    try {
      let bytes = chunk;
      if (this.carry.length !== 0) {
        const carry = this.carry;
        // Complete the cut character with the continuation bytes that start this chunk.
        // Decoding those few bytes apart gives what a streaming decoder would: after
        // them (or at the first byte that is no continuation) it is between characters.
        const need = sequenceLength(carry[0]!) - carry.length;
        let k = 0;
        while (k < need && k < chunk.length && (chunk[k]! & 0xc0) === 0x80) k++;
        const joined = new Uint8Array(carry.length + k);
        joined.set(carry);
        joined.set(chunk.subarray(0, k), carry.length);
        bytes = chunk.subarray(k);
        if (k < need && k === chunk.length && incompleteTail(joined) === 0) {
          this.carry = joined; // still unfinished but valid so far: wait for more
          return;
        }
        this.carry = EMPTY;
        this.ascii = false;
        this.decoded(this.utf8.decode(joined));
      }
      const cut = incompleteTail(bytes);
      if (cut < bytes.length) this.carry = bytes.slice(cut); // a copy: callers reuse buffers
      if (cut !== 0) {
        const text = this.utf8.decode(cut < bytes.length ? bytes.subarray(0, cut) : bytes);
        // One code unit per byte means ASCII, unless invalid bytes became U+FFFD. On
        // one-byte (Latin-1) strings V8 answers that indexOf without scanning.
        this.ascii = text.length === cut && text.indexOf("\uFFFD") === -1;
        this.decoded(text);
      }
    } catch (error) {
      this.failed = true;
      this.failure = error;
      throw error;
    }
  }

  decoded(text: string): void {
    if (text.length === 0) return;
    if (this.atStart) {
      this.atStart = false;
      if (text.charCodeAt(0) === 0xfeff) {
        if (text.length === 1) return;
        text = text.slice(1);
      }
    }
    this.feed(text);
  }

  end(): void {
    if (this.failed) return;
    this.carry = EMPTY; // part of a character, in a line that is dropped anyway
    this.atStart = true;
    this.pending = [];
    this.pendingUnits = 0;
    this.pendingBytes = -1;
    this.pendingAscii = true;
    this.skipLF = false;
    this.resetBlock();
    this.idBuffer = this.lastId;
  }

  feed(text: string): void {
    const n = text.length;
    let pos = 0;
    if (this.skipLF) {
      this.skipLF = false;
      if (text.charCodeAt(0) === LF) pos = 1;
    }
    if (this.pendingUnits !== 0) {
      pos = this.finishPending(text, pos);
      if (pos === -1) return;
    }

    const quick = this.quick;
    // Next CR and LF positions, rescanned only once passed; -1 means none left, so an
    // LF-only stream never rescans for CR.
    let cr = text.indexOf("\r", pos);
    let lf = text.indexOf("\n", pos);
    for (;;) {
      let end: number;
      if (cr === -1) {
        if (lf === -1) break;
        end = lf;
      } else end = lf === -1 || cr < lf ? cr : lf;

      if (end === pos) {
        this.dispatch();
      } else {
        // Exact UTF-8 size of a long line, kept so its data value is not measured again.
        const lineBytes = end - pos > quick ? this.checkLine(text, pos, end) : -1;
        const c = text.charCodeAt(pos);
        // `data:` is by far the most common line: handled inline. The five compared
        // code units cannot be CR/LF, so they all lie before `end`.
        if (
          c === 100 && text.charCodeAt(pos + 4) === COLON && text.charCodeAt(pos + 1) === 97 &&
          text.charCodeAt(pos + 2) === 116 && text.charCodeAt(pos + 3) === 97
        ) {
          let start = pos + 5;
          if (text.charCodeAt(start) === SPACE) start++;
          const value = text.slice(start, end);
          // The usual one-line event, `data: …\n\n`: dispatch it right away.
          if (this.dataLines === 0 && end === lf && text.charCodeAt(end + 1) === LF) {
            if (lineBytes !== -1) {
              this.checkData(value, lineBytes - (start - pos), value.length);
              this.dataBytes = -1;
            }
            this.dispatchOne(value);
            pos = end + 2;
            lf = text.indexOf("\n", pos);
            continue;
          }
          this.appendData(value, lineBytes === -1 ? -1 : lineBytes - (start - pos));
        } else if (
          c === 101 && text.charCodeAt(pos + 5) === COLON && text.charCodeAt(pos + 1) === 118 &&
          text.charCodeAt(pos + 2) === 101 && text.charCodeAt(pos + 3) === 110 &&
          text.charCodeAt(pos + 4) === 116
        ) {
          this.type = text.slice(text.charCodeAt(pos + 6) === SPACE ? pos + 7 : pos + 6, end);
        } else if (
          c === 105 && text.charCodeAt(pos + 2) === COLON && text.charCodeAt(pos + 1) === 100
        ) {
          const id = text.slice(text.charCodeAt(pos + 3) === SPACE ? pos + 4 : pos + 3, end);
          if (id.indexOf("\0") === -1) {
            this.idBuffer = id;
            this.idInBlock = true;
          }
        } else if (c !== COLON) {
          this.field(text, pos, end);
        }
      }

      if (end === cr) {
        pos = end + 1;
        if (pos === lf) {
          pos++;
          lf = text.indexOf("\n", pos);
        } else if (pos === n) {
          this.skipLF = true;
        }
        cr = text.indexOf("\r", pos);
      } else {
        pos = end + 1;
        lf = text.indexOf("\n", pos);
      }
    }

    if (pos < n) this.appendPending(pos === 0 ? text : text.slice(pos));
  }

  // Completes the carried-over partial line with the head of `text`. Returns where
  // parsing continues, or -1 when `text` holds no line end (it was all buffered).
  finishPending(text: string, pos: number): number {
    const cr = text.indexOf("\r", pos);
    const lf = text.indexOf("\n", pos);
    const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
    if (end === -1) {
      if (pos < text.length) this.appendPending(pos === 0 ? text : text.slice(pos));
      return -1;
    }
    const pendingBytes = this.pendingBytes;
    const pendingAscii = this.pendingAscii;
    const carriedUnits = this.pendingUnits;
    // One join gives a flat string: `a + b` would make a rope that slicing the value out
    // of it copies again.
    this.pending.push(text.slice(pos, end));
    const line = this.pending.join("");
    this.pending = [];
    this.pendingUnits = 0;
    this.pendingBytes = -1;
    this.pendingAscii = true;
    let lineBytes = -1;
    if (line.length > this.quick) {
      // The carried part was measured already if it was long; measure only the rest.
      if (line.length > this.max) throw this.tooLarge("line");
      let carriedBytes = pendingBytes;
      if (carriedBytes === -1) {
        carriedBytes = pendingAscii ? carriedUnits : utf8Length(line, 0, carriedUnits);
      }
      lineBytes = carriedBytes + (this.ascii ? end - pos : utf8Length(text, pos, end));
      if (lineBytes > this.max) throw this.tooLarge("line");
    }
    this.line(line, lineBytes);
    let next = end + 1;
    if (end === cr) {
      if (next === text.length) this.skipLF = true;
      else if (text.charCodeAt(next) === LF) next++;
    }
    return next;
  }

  appendPending(rest: string): void {
    const pending = this.pending;
    pending.push(rest);
    this.pendingUnits += rest.length;
    if (!this.ascii) this.pendingAscii = false;
    // Many tiny chunks would leave one small string per chunk (tens of bytes of overhead
    // each). Merging neighbours binary-counter style keeps the fragment count small while
    // copying each code unit only a few times; large fragments are left alone.
    let last = pending.length - 1;
    while (
      last > 0 && pending[last]!.length < 4096 && pending[last - 1]!.length <= pending[last]!.length
    ) {
      // join, not +: a concatenation tree would keep every tiny piece alive.
      pending[last - 1] = [pending[last - 1], pending[last]].join("");
      pending.length = last;
      last--;
    }
    if (this.pendingUnits > this.quick) this.checkPending(rest);
  }

  // A whole line (never empty: a carried-over partial line has at least one code unit).
  // `lineBytes` is its UTF-8 size when known (long lines), else -1.
  line(line: string, lineBytes: number): void {
    const c = line.charCodeAt(0);
    if (c === COLON) return;
    if (
      c === 100 && line.charCodeAt(4) === COLON && line.charCodeAt(1) === 97 &&
      line.charCodeAt(2) === 116 && line.charCodeAt(3) === 97
    ) {
      const start = line.charCodeAt(5) === SPACE ? 6 : 5;
      this.appendData(line.slice(start), lineBytes === -1 ? -1 : lineBytes - start);
      return;
    }
    this.field(line, 0, line.length);
  }

  // Any non-empty, non-comment line in text[pos, end), other than the inline `data:`.
  field(text: string, pos: number, end: number): void {
    // Find the colon by hand: indexOf could scan far past `end` on every line.
    let colon = pos;
    while (colon < end && text.charCodeAt(colon) !== COLON) colon++;
    const name = text.slice(pos, colon);
    let value = "";
    if (colon < end) {
      let start = colon + 1;
      if (start < end && text.charCodeAt(start) === SPACE) start++;
      value = text.slice(start, end);
    }
    switch (name) {
      case "event":
        this.type = value;
        break;
      case "data":
        this.appendData(value, -1);
        break;
      case "id":
        if (value.indexOf("\0") === -1) {
          this.idBuffer = value;
          this.idInBlock = true;
        }
        break;
      case "retry": {
        const ms = parseRetry(value);
        if (ms !== undefined) {
          this.retry = ms;
          this.blockRetry = ms;
          this.onRetry?.(ms);
        }
        break;
      }
        // Unknown fields are ignored.
    }
  }

  // `valueBytes` is the value's UTF-8 size when already known, else -1.
  appendData(value: string, valueBytes: number): void {
    const lines = this.dataLines;
    const units = lines === 0 ? value.length : this.dataUnits + 1 + value.length;
    if (units > this.quick) this.checkData(value, valueBytes, units);
    if (lines === 0) this.data = value;
    else if (lines < ROPE_LINES) this.data = this.data + "\n" + value;
    else if (lines === ROPE_LINES) this.dataParts = [this.data, value];
    else this.dataParts!.push(value);
    this.dataLines = lines + 1;
    this.dataUnits = units;
  }

  // Dispatch of a block whose only data line is `data` (nothing stored in data yet).
  dispatchOne(data: string): void {
    this.lastId = this.idBuffer;
    if (this.idInBlock) {
      this.idInBlock = false;
      this.onId?.(this.lastId);
    }
    const event: SseEvent = {
      event: this.type === "" ? "message" : this.type,
      data,
      id: this.lastId,
    };
    this.type = "";
    if (this.blockRetry !== undefined) {
      event.retry = this.blockRetry;
      this.blockRetry = undefined;
    }
    this.onEvent(event);
  }

  dispatch(): void {
    this.lastId = this.idBuffer;
    if (this.idInBlock) {
      this.idInBlock = false;
      this.onId?.(this.lastId);
    }
    if (this.dataLines === 0) {
      this.type = "";
      this.blockRetry = undefined;
      return;
    }
    const event: SseEvent = {
      event: this.type === "" ? "message" : this.type,
      data: this.dataParts === undefined ? this.data : this.dataParts.join("\n"),
      id: this.lastId,
    };
    if (this.blockRetry !== undefined) event.retry = this.blockRetry;
    this.resetBlock();
    this.onEvent(event);
  }

  resetBlock(): void {
    this.data = "";
    this.dataParts = undefined;
    this.dataLines = 0;
    this.dataUnits = 0;
    this.dataBytes = -1;
    this.type = "";
    this.idInBlock = false;
    this.blockRetry = undefined;
  }

  // The size checks below run only for strings of at least quick code units, so the
  // exact UTF-8 counting they do is rare and, per string, done once.

  // Returns the line's UTF-8 size.
  checkLine(text: string, start: number, end: number): number {
    if (end - start > this.max) throw this.tooLarge("line");
    const bytes = this.ascii ? end - start : utf8Length(text, start, end);
    if (bytes > this.max) throw this.tooLarge("line");
    return bytes;
  }

  // Checks the data with `value` appended (`units` code units in all). Once this has
  // run in a block it runs for every later line too, since `units` only grows, which
  // keeps dataBytes current.
  checkData(value: string, valueBytes: number, units: number): void {
    if (units > this.max) throw this.tooLarge("event");
    if (this.dataBytes === -1) {
      const parts = this.dataParts ?? [this.data];
      let bytes = parts.length - 1; // the LFs between parts
      for (const part of parts) bytes += utf8Length(part, 0, part.length);
      this.dataBytes = bytes;
    }
    const separator = this.dataLines === 0 ? 0 : 1;
    const bytes = this.dataBytes + separator +
      (valueBytes !== -1 ? valueBytes : utf8Length(value, 0, value.length));
    if (bytes > this.max) throw this.tooLarge("event");
    this.dataBytes = bytes;
  }

  // `added` is the fragment just appended to pending (and counted in pendingUnits).
  checkPending(added: string): void {
    if (this.pendingUnits > this.max) throw this.tooLarge("line");
    if (this.pendingBytes !== -1) {
      this.pendingBytes += this.ascii ? added.length : utf8Length(added, 0, added.length);
    } else if (this.pendingAscii) {
      this.pendingBytes = this.pendingUnits;
    } else {
      let bytes = 0;
      for (const fragment of this.pending) bytes += utf8Length(fragment, 0, fragment.length);
      this.pendingBytes = bytes;
    }
    if (this.pendingBytes > this.max) throw this.tooLarge("line");
  }

  tooLarge(what: "line" | "event"): SseTooLargeError {
    return new SseTooLargeError(
      `server-sent ${what === "line" ? "line" : "event data"} exceeds ${this.max} bytes`,
    );
  }
}

// Bytes in the UTF-8 sequence that the valid lead byte `lead` (C2..F4) starts.
function sequenceLength(lead: number): number {
  return lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
}

// Where an unfinished but so far valid UTF-8 sequence at the end of `bytes` starts, or
// `bytes.length` if there is none (only the last 3 bytes can hold one). Bytes already
// known to be invalid are left in, so they turn into U+FFFD now, as a streaming decoder
// would do.
function incompleteTail(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let i = n - 1; i >= 0 && i >= n - 3; i--) {
    const b = bytes[i]!;
    if (b < 0x80) return n;
    if (b < 0xc0) continue;
    if (b < 0xc2 || b > 0xf4 || n - i >= sequenceLength(b)) return n;
    if (i + 1 < n) {
      // The second byte of some sequences has a narrower range (no overlongs, no
      // surrogates, nothing above U+10FFFF).
      const second = bytes[i + 1]!;
      const low = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
      const high = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
      if (second < low || second > high) return n;
    }
    return i;
  }
  return n;
}

// A `retry` value counts only when it is all ASCII digits (at least one). Values beyond
// 2^53 cannot be represented exactly and no server means them, so they are ignored too.
function parseRetry(value: string): number | undefined {
  if (value.length === 0) return undefined;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  const ms = Number(value);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

// UTF-8 size of text[start, end). The text comes from TextDecoder, so surrogates are
// always paired: each half counts 2, a pair 4. Long strings go through encodeInto, which
// is native and about fifty times faster than a charCodeAt loop.
function utf8Length(text: string, start: number, end: number): number {
  if (end - start < 64) {
    let bytes = end - start;
    for (let i = start; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) bytes += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2;
    }
    return bytes;
  }
  scratch ??= new Uint8Array(3 * SCRATCH_UNITS);
  let bytes = 0;
  for (let i = start; i < end;) {
    let stop = i + SCRATCH_UNITS < end ? i + SCRATCH_UNITS : end;
    const last = text.charCodeAt(stop - 1);
    // Never cut a surrogate pair: each half alone would encode as U+FFFD (3 bytes).
    if (stop < end && last >= 0xd800 && last <= 0xdbff) stop--;
    bytes += utf8Encoder.encodeInto(text.slice(i, stop), scratch).written;
    i = stop;
  }
  return bytes;
}

// encodeInto works through a small shared buffer (3 bytes per code unit at most);
// decoding is synchronous, so one buffer serves every decoder.
const SCRATCH_UNITS = 16384;
let scratch: Uint8Array | undefined;
const utf8Encoder = new TextEncoder();

/**
 * Reads an event stream and yields its events. Ends when the stream ends (an
 * unterminated last event is dropped). When the consumer stops early, or decoding
 * fails, the stream is cancelled.
 *
 * @example
 * ```ts
 * import { decodeSse } from "./sse.ts";
 * const body = new Blob(["data: {\"jsonrpc\":\"2.0\"}\n\n"]).stream();
 * for await (const event of decodeSse(body)) console.log(event.data);
 * ```
 *
 * @param stream The response body.
 * @param options Size limit and `id`/`retry` callbacks.
 * @throws {SseTooLargeError} when a line or an event's data exceeds `maxEventBytes`.
 */
export async function* decodeSse(
  stream: ReadableStream<Uint8Array>,
  options?: SseDecoderOptions,
): AsyncGenerator<SseEvent> {
  let batch: SseEvent[] = [];
  const decoder = new SseDecoder((e) => batch.push(e), options);
  const reader = stream.getReader();
  let done = false;
  let failure: unknown = undefined;
  try {
    for (;;) {
      const result = await reader.read();
      if (result.done) {
        done = true;
        decoder.end();
        return;
      }
      decoder.push(result.value);
      // Swap before yielding: the consumer may stop at any yield, and a fresh array
      // keeps each batch O(1) to start instead of shifting.
      const events = batch;
      batch = [];
      for (const event of events) yield event;
    }
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    if (!done) {
      // The stream may already be errored (then cancel rejects): nothing left to free.
      await reader.cancel(failure).catch(() => {});
    }
    reader.releaseLock();
  }
}
