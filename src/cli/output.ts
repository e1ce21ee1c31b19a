/**
 * Where output goes: results to stdout, everything else to stderr. A closed stdout
 * (piping into `head`) ends the command quietly instead of throwing.
 *
 * @module
 */

const encoder = new TextEncoder();

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

  /** Writes a JSON value to stdout, pretty-printed, with a final newline. */
  json(value: unknown): Promise<void> {
    return this.result(JSON.stringify(value, null, 2) + "\n");
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
