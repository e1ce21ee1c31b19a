/**
 * A bounded newline splitter for the stdio transport: bytes in, lines out.
 *
 * Lines end at LF; one trailing CR is stripped. Bytes that are not UTF-8 are decoded as
 * U+FFFD and the line says so: a server's answer is never lost to one bad byte (the
 * JSON around it still parses when the bytes sat inside a string, which is the only
 * place JSON allows non-ASCII). A line longer than the frame limit fails
 * with {@linkcode FrameTooLargeError} as soon as the limit is crossed, so memory stays
 * bounded even when a server never sends a newline.
 *
 * @module
 */

import { ProtocolError } from "../../errors.ts";

/** A line (frame) exceeded the configured limit. */
export class FrameTooLargeError extends ProtocolError {
  override name = "FrameTooLargeError";
}

/** A line after decoding. */
export interface DecodedLine {
  /** The text, with U+FFFD for each sequence of bytes that is not UTF-8. */
  text: string;
  /** True when the line held bytes that are not UTF-8. */
  replaced: boolean;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits a byte stream into lines of at most `maxBytes` bytes.
 *
 * @example
 * ```ts
 * import { LineSplitter } from "./lines.ts";
 * const lines: string[] = [];
 * const s = new LineSplitter((l) => lines.push(l.text), 1024);
 * s.push(new TextEncoder().encode('{"a":1}\r\n{"b"'));
 * s.push(new TextEncoder().encode(":2}\n"));
 * // lines: ['{"a":1}', '{"b":2}']
 * ```
 */
export class LineSplitter {
  #parts: Uint8Array[] = [];
  #pending = 0;
  #onLine: (line: DecodedLine) => void;
  #maxBytes: number;
  #strict = new TextDecoder("utf-8", { fatal: true });
  #lenient = new TextDecoder("utf-8");

  constructor(onLine: (line: DecodedLine) => void, maxBytes: number) {
    this.#onLine = onLine;
    this.#maxBytes = maxBytes;
  }

  /** Feeds a chunk; emits every complete line synchronously. */
  push(chunk: Uint8Array): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(LF, start);
      if (nl === -1) {
        const rest = chunk.subarray(start);
        this.#pending += rest.length;
        if (this.#pending > this.#maxBytes) this.#tooLarge();
        // Copy: the caller may reuse its buffer.
        this.#parts.push(rest.slice());
        return;
      }
      const piece = chunk.subarray(start, nl);
      if (this.#pending + piece.length > this.#maxBytes) this.#tooLarge();
      this.#emit(piece);
      start = nl + 1;
    }
  }

  /** End of input: a final line without LF is still delivered. */
  end(): void {
    if (this.#pending > 0) this.#emit(new Uint8Array(0));
  }

  #tooLarge(): never {
    this.#parts = [];
    this.#pending = 0;
    throw new FrameTooLargeError(
      `message larger than the frame limit of ${this.#maxBytes} bytes`,
    );
  }

  #emit(last: Uint8Array): void {
    let bytes = last;
    if (this.#parts.length > 0) {
      bytes = new Uint8Array(this.#pending + last.length);
      let off = 0;
      for (const p of this.#parts) {
        bytes.set(p, off);
        off += p.length;
      }
      bytes.set(last, off);
      this.#parts = [];
      this.#pending = 0;
    }
    if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, -1);
    if (bytes.length === 0) return;
    let text: string;
    try {
      text = this.#strict.decode(bytes);
    } catch {
      this.#onLine({ text: this.#lenient.decode(bytes), replaced: true });
      return;
    }
    this.#onLine({ text, replaced: false });
  }
}
