/**
 * Where output goes: results to stdout, everything else to stderr. A closed stdout
 * (piping into `head`) ends the command quietly instead of throwing.
 *
 * @module
 */

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
  #secrets = new Set<string>();
  constructor(stdout: Sink = Deno.stdout, stderr: Sink = Deno.stderr) {
    this.stdout = stdout;
    this.stderr = stderr;
  }

  /** Writes a result to stdout. Throws BrokenPipe when the reader went away. */
  async result(text: string): Promise<void> {
    try {
      await writeAll(this.stdout, encoder.encode(text));
    } catch (e) {
      if (isBrokenPipe(e)) throw new BrokenPipe();
      throw e;
    }
  }

  /**
   * Writes a JSON value to stdout, pretty-printed, with a final newline. Characters a
   * terminal could act on (C1 controls such as the one-byte CSI, bidi overrides) are
   * written as `\uXXXX` escapes: the same JSON value, safe to show. (C0 controls and
   * ESC are always escaped by JSON.stringify.)
   */
  json(value: unknown): Promise<void> {
    const text = JSON.stringify(value, null, 2).replace(
      UNSAFE_IN_JSON,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
    return this.result(text + "\n");
  }

  /**
   * Registers a secret (header value, token, client secret): it is replaced by
   * `<redacted>` in everything written to stderr.
   */
  addSecret(secret: string | undefined): void {
    if (secret && secret.length > 0) this.#secrets.add(secret);
  }

  /** Replaces every registered secret in `text` with `<redacted>`. */
  redact(text: string): string {
    let out = text;
    // Longest first, so a secret that contains another is replaced whole.
    for (const s of [...this.#secrets].sort((a, b) => b.length - a.length)) {
      out = out.replaceAll(s, "<redacted>");
    }
    return out;
  }

  /** Writes a diagnostic to stderr (redacted); failures to write are ignored. */
  async error(text: string): Promise<void> {
    try {
      await writeAll(this.stderr, encoder.encode(this.redact(text)));
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
