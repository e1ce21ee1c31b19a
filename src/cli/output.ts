/**
 * Where output goes: results to stdout, everything else to stderr. A closed stdout
 * (piping into `head`) ends the command quietly instead of throwing.
 *
 * The border with the terminal: every write passes two guards here, so no command has
 * to remember them at each site.
 *
 * - Sanitizing: human text ({@linkcode Output.result}, {@linkcode Output.error}) is
 *   stripped of escape sequences and control characters (but newline and tab), so
 *   nothing a server supplied (names, descriptions, log fields, error messages) can
 *   move the cursor, retitle the window or reorder text. `--json` output is escaped
 *   instead ({@linkcode Output.json}): the exact value, written so no terminal acts on
 *   it. mcpctl's own line clearing (progress bars, prompts) goes through
 *   {@linkcode Output.status}.
 * - Redacting: every secret registered with {@linkcode Output.secrets} (see
 *   `src/util/redact.ts`) is replaced by `<redacted>` on every path: stdout and stderr,
 *   text and JSON, results, errors, hints and `--verbose` lines.
 *
 * @module
 */

import { stripTerminal } from "../mcp/sanitize.ts";
import { Redactor } from "../util/redact.ts";

/** mcpctl's own terminal control: back to the start of the line, and clear it. */
export const CLEAR_LINE = "\r\x1b[2K";

const encoder = new TextEncoder();
// Only ever inside JSON strings, where `\uXXXX` stands for the same character.
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** A writable sink (injected in tests). */
export interface Sink {
  write(p: Uint8Array): Promise<number>;
  isTerminal(): boolean;
}

/** Raised when stdout was closed by the reader; the CLI exits quietly. */
export class BrokenPipe extends Error {
  override name = "BrokenPipe";
}

/**
 * The two output streams of a command.
 *
 * @example
 * ```ts ignore
 * import { Output } from "./output.ts";
 * const out = new Output();
 * await out.result("hello\n");
 * await out.error("warning: something\n");
 * ```
 */
export class Output {
  readonly stdout: Sink;
  readonly stderr: Sink;
  /** The secrets of this run: register each as soon as it is known. */
  readonly secrets: Redactor;
  constructor(stdout: Sink = Deno.stdout, stderr: Sink = Deno.stderr, secrets = new Redactor()) {
    this.stdout = stdout;
    this.stderr = stderr;
    this.secrets = secrets;
  }

  /**
   * Writes human text to stdout, sanitized and redacted. Throws BrokenPipe when the
   * reader went away.
   */
  result(text: string): Promise<void> {
    return this.#stdout(this.clean(text));
  }

  /**
   * Writes a JSON value to stdout, pretty-printed, with a final newline. Characters a
   * terminal could act on (C1 controls such as the one-byte CSI, bidi overrides) are
   * written as `\uXXXX` escapes: the same JSON value, safe to show. (C0 controls and
   * ESC are always escaped by JSON.stringify.)
   */
  json(value: unknown): Promise<void> {
    // Strings are redacted before serializing, so the output stays exact JSON.
    const text = JSON.stringify(this.secrets.redactValue(value), null, 2).replace(
      UNSAFE_IN_JSON,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
    return this.#stdout(text + "\n");
  }

  /** Registers a secret (header value, token, client secret); see {@linkcode Redactor.add}. */
  addSecret(secret: string | undefined): void {
    this.secrets.add(secret);
  }

  /** Replaces every registered secret in `text` with `<redacted>`. */
  redact(text: string): string {
    return this.secrets.redact(text);
  }

  /**
   * What human text becomes on its way out: escape sequences and control characters
   * removed (newline and tab kept), then secrets redacted. Stripping comes first, so a
   * control character cannot split a secret and hide it from redaction.
   */
  clean(text: string): string {
    return this.secrets.redact(stripTerminal(text));
  }

  /** Writes a diagnostic to stderr, sanitized and redacted; failures to write are ignored. */
  async error(text: string): Promise<void> {
    await this.#stderr(this.clean(text));
  }

  /**
   * Redraws the current stderr line: {@linkcode CLEAR_LINE}, then `text` sanitized and
   * redacted (progress bars, prompts). The only way mcpctl's own control characters
   * reach the terminal.
   */
  async status(text: string): Promise<void> {
    await this.#stderr(CLEAR_LINE + this.clean(text));
  }

  async #stdout(text: string): Promise<void> {
    try {
      await writeAll(this.stdout, encoder.encode(text));
    } catch (e) {
      if (isBrokenPipe(e)) throw new BrokenPipe();
      throw e;
    }
  }

  async #stderr(text: string): Promise<void> {
    try {
      await writeAll(this.stderr, encoder.encode(text));
    } catch { /* nowhere left to report */ }
  }

  /** Whether stderr is a terminal (progress bars, prompts). */
  get stderrIsTerminal(): boolean {
    try {
      return this.stderr.isTerminal();
    } catch {
      return false;
    }
  }
}

async function writeAll(sink: Sink, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await sink.write(bytes.subarray(off));
}

function isBrokenPipe(e: unknown): boolean {
  return e instanceof Deno.errors.BrokenPipe ||
    (e instanceof Error && /broken pipe|EPIPE/i.test(e.message));
}
