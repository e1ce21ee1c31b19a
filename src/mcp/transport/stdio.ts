/**
 * The stdio transport: a child process speaking newline-delimited JSON-RPC.
 *
 * stdout is split into bounded lines; stderr is drained on its own reader so a chatty
 * server never fills the pipe, and its last lines are kept for error reports. Closing
 * ends stdin, waits, sends SIGTERM, waits, then SIGKILL: the child is always reaped.
 *
 * On POSIX systems the child leads a process group of its own, so closing also ends
 * the helpers it started and left behind (a shell wrapper's program, a grandchild that
 * still holds stdout open). A process that left the group on purpose (`setsid`, a
 * daemon) is beyond reach: that is the server's doing.
 *
 * @module
 */

import { ConnectionClosedError, ProtocolError, ServerError } from "../../errors.ts";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../../config/types.ts";
import { LineSplitter } from "./lines.ts";
import { waitFor } from "../../util/async.ts";
import { trackChild } from "../../util/children.ts";
import type { JsonRpcMessage, Transport, TransportHandlers } from "./types.ts";

/** Options for {@linkcode StdioTransport}. */
export interface StdioTransportOptions {
  /** Server name, used to prefix stderr lines. */
  name: string;
  /** Program to run. */
  command: string;
  /** Its arguments. */
  args?: string[];
  /** Variables added to the inherited environment. */
  env?: Record<string, string>;
  /** Working directory. */
  cwd?: string;
  /** Largest accepted stdout line in bytes (default 1 MiB). */
  maxMessageBytes?: number;
  /** Number of stderr lines kept for error reports (default 20). */
  stderrTailLines?: number;
  /** Streams every stderr line as it arrives (`--verbose`). */
  onStderr?: (line: string) => void;
  /** Grace period of each shutdown step in ms (default 2000). */
  graceMs?: number;
}

const encoder = new TextEncoder();
const POSIX = Deno.build.os !== "windows";

/**
 * Runs a stdio MCP server as a child process.
 *
 * @example
 * ```ts ignore
 * import { StdioTransport } from "./stdio.ts";
 * const t = new StdioTransport({ name: "demo", command: "deno", args: ["run", "server.ts"] });
 * await t.start({ onMessage: console.log, onClose: () => {} });
 * await t.send({ jsonrpc: "2.0", id: 1, method: "ping" });
 * await t.close();
 * ```
 */
export class StdioTransport implements Transport {
  readonly kind = "stdio" as const;
  readonly description: string;
  #opts: StdioTransportOptions;
  #child: Deno.ChildProcess | undefined;
  #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #handlers: TransportHandlers | undefined;
  #stderrTail: string[] = [];
  #stdoutDone: Promise<void> = Promise.resolve();
  #stderrDone: Promise<void> = Promise.resolve();
  #stdoutReader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #stderrReader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #closing = false;
  #closed: Promise<void> | undefined;
  #reported = false;
  #resolveCloseReason: (e: Error) => void = () => {};
  #closeReason: Promise<Error> = new Promise((r) => this.#resolveCloseReason = r);
  #skippedLines = 0;

  constructor(options: StdioTransportOptions) {
    this.#opts = options;
    this.description = `stdio: ${[options.command, ...(options.args ?? [])].join(" ")}`;
  }

  /** Lines on stdout that were not JSON and were skipped. */
  get skippedLines(): number {
    return this.#skippedLines;
  }

  /** The last lines the server wrote to stderr. */
  get stderrTail(): string[] {
    return [...this.#stderrTail];
  }

  /** The stderr tail, for error reports (`; last stderr lines: …`, or `""`). */
  errorContext(): string {
    return this.#tailText();
  }

  /** Spawns the child and starts draining its stdout and stderr. */
  start(handlers: TransportHandlers): Promise<void> {
    this.#handlers = handlers;
    const o = this.#opts;
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(o.command, {
        args: o.args ?? [],
        ...(o.env ? { env: o.env } : {}),
        ...(o.cwd ? { cwd: o.cwd } : {}),
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        // Its own process group (setsid), so that close() can end what it started.
        ...(POSIX ? { detached: true } : {}),
      }).spawn();
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        throw new ServerError(`command not found: ${o.command}`, {
          hint: 'check the server\'s "command" in your config and that it is on PATH',
        });
      }
      if (e instanceof Deno.errors.PermissionDenied) {
        throw new ServerError(`cannot run ${o.command}: permission denied`);
      }
      throw new ServerError(`cannot start ${o.command}: ${(e as Error).message}`);
    }
    this.#child = child;
    trackChild(child);
    this.#writer = child.stdin.getWriter();
    this.#stdoutReader = child.stdout.getReader();
    this.#stderrReader = child.stderr.getReader();
    this.#stdoutDone = this.#readStdout(this.#stdoutReader);
    this.#stderrDone = this.#readStderr(this.#stderrReader);
    // Watch the process: exit fails everything pending, even if a grandchild keeps
    // stdout open.
    child.status.then(async (status) => {
      if (this.#closing) return;
      // Let stderr drain so the report carries the server's last words.
      await waitFor(this.#stderrDone, 500);
      this.#fail(
        new ConnectionClosedError(
          `server "${this.#opts.name}" exited (${describeStatus(status)})${this.#tailText()}`,
        ),
      );
    });
    return Promise.resolve();
  }

  /** Writes one message as a line on the child's stdin. */
  async send(message: JsonRpcMessage): Promise<void> {
    if (!this.#writer || this.#closing) {
      throw new ConnectionClosedError("connection is closed");
    }
    try {
      await this.#writer.write(encoder.encode(JSON.stringify(message) + "\n"));
    } catch {
      // The reader side usually knows why (exit status, stderr): prefer its report.
      const reason = await waitFor(this.#closeReason, 1000);
      throw reason ??
        new ConnectionClosedError(
          `cannot write to server "${this.#opts.name}"${this.#tailText()}`,
        );
    }
  }

  /** Ends stdin, waits, SIGTERM, waits, SIGKILL; always reaps the child. */
  close(): Promise<void> {
    this.#closed ??= this.#shutdown();
    return this.#closed;
  }

  async #shutdown(): Promise<void> {
    this.#closing = true;
    const child = this.#child;
    if (!child) return;
    const grace = this.#opts.graceMs ?? 2000;
    try {
      await this.#writer?.close();
    } catch { /* already gone */ }
    let exited = await waitFor(child.status, grace);
    if (!exited) {
      trySignal(child, "SIGTERM");
      exited = await waitFor(child.status, grace);
    }
    if (!exited) {
      trySignal(child, "SIGKILL");
      await child.status;
    }
    // What the server started and left in its process group goes with it.
    killGroup(child.pid);
    // A grandchild may still hold the pipes open: stop reading rather than wait on it.
    await this.#stdoutReader?.cancel().catch(() => {});
    await this.#stderrReader?.cancel().catch(() => {});
    await Promise.all([this.#stdoutDone, this.#stderrDone]);
    this.#report(undefined);
  }

  async #readStdout(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const splitter = new LineSplitter((line) => {
      let msg: unknown;
      try {
        msg = JSON.parse(line.text);
      } catch {
        if (line.replaced) {
          this.#undecodable(line.text);
          return;
        }
        this.#skip(`a line that is not JSON: ${line.text.slice(0, 80)}`);
        return;
      }
      if (line.replaced) {
        this.#handlers?.onLog?.("read a message with bytes that are not UTF-8 (shown as U+FFFD)");
      }
      if (msg === null || typeof msg !== "object") {
        this.#skip("a JSON value that is not a message");
        return;
      }
      this.#handlers?.onMessage(msg);
    }, this.#opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        splitter.push(value);
      }
      splitter.end();
    } catch (e) {
      if (this.#closing) return;
      if (e instanceof ProtocolError) {
        // Stop reading at once: a server blocked writing the rest of its huge line then
        // fails (EPIPE) instead of holding up the shutdown for a whole grace period.
        await reader.cancel().catch(() => {});
        this.#fail(
          new ProtocolError(
            `server "${this.#opts.name}" sent a ${e.message} (set maxMessageBytes to raise it)` +
              this.#tailText(),
          ),
        );
        void this.close();
        return;
      }
      this.#fail(
        new ConnectionClosedError(
          `reading from server "${this.#opts.name}" failed: ${String(e)}`,
        ),
      );
      return;
    }
    if (!this.#closing) {
      // EOF on stdout: the connection is over even if the process lives on.
      const status = await waitFor(this.#child!.status, 200);
      await waitFor(this.#stderrDone, 300);
      const who = `server "${this.#opts.name}"`;
      const why = status ? `${who} exited (${describeStatus(status)})` : `${who} closed stdout`;
      this.#fail(new ConnectionClosedError(`${why}${this.#tailText()}`));
    }
  }

  async #readStderr(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const keep = this.#opts.stderrTailLines ?? 20;
    const splitter = new LineSplitter((line) => {
      const text = line.text;
      this.#stderrTail.push(text.length > 500 ? text.slice(0, 500) + "…" : text);
      if (this.#stderrTail.length > keep) this.#stderrTail.shift();
      this.#opts.onStderr?.(text);
    }, 64 * 1024);
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        try {
          splitter.push(value);
        } catch {
          // An overlong stderr line is only logging: drop it and go on draining.
          splitter.end();
        }
      }
      splitter.end();
    } catch { /* cancelled on close */ }
  }

  /**
   * A line with bytes that are not UTF-8 which is not JSON even with them replaced. When
   * it starts (or ends) like the answer to a request, that request fails at once with a
   * parse error naming the problem, instead of waiting out its timeout.
   */
  #undecodable(text: string): void {
    const id = answerId(text);
    if (id === undefined) {
      this.#skip("a line that is not valid UTF-8 nor JSON");
      return;
    }
    this.#handlers?.onLog?.(`the answer to request ${JSON.stringify(id)} is not valid UTF-8`);
    this.#handlers?.onMessage({
      jsonrpc: "2.0",
      id,
      error: {
        code: -32700,
        message: `server "${this.#opts.name}" answered with bytes that are not valid UTF-8 ` +
          `and not JSON once decoded: ${text.slice(0, 80)}`,
      },
    });
  }

  #skip(what: string): void {
    this.#skippedLines++;
    this.#handlers?.onLog?.(`skipped ${what}`);
  }

  #tailText(): string {
    if (this.#stderrTail.length === 0) return "";
    return `; last stderr lines:\n  ${this.#stderrTail.join("\n  ")}`;
  }

  #fail(error: Error): void {
    this.#report(error);
  }

  #report(error: Error | undefined): void {
    if (this.#reported) return;
    this.#reported = true;
    if (error) this.#resolveCloseReason(error);
    this.#handlers?.onClose(error);
  }
}

function describeStatus(status: Deno.CommandStatus): string {
  return status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
}

function trySignal(child: Deno.ChildProcess, signal: Deno.Signal): void {
  try {
    child.kill(signal);
  } catch { /* already exited */ }
}

// Sends SIGKILL to the process group led by `pid`: whatever the server started and
// left behind (its own exit has been awaited by then). ESRCH means nobody is left.
function killGroup(pid: number): void {
  if (!POSIX) return;
  try {
    Deno.kill(-pid, "SIGKILL");
  } catch { /* the group is empty */ }
}

// The id of what looks like a JSON-RPC answer (`result` or `error`, not a request of the
// server's): from the first members (`{"jsonrpc":"2.0","id":7,"result"…`) or, when
// the answer starts with its result, from the last one (`…,"id":7}`). Never from inside
// a nested object.
const JSONRPC = String.raw`(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?`;
const ID = String.raw`"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")`;
const ID_FIRST = new RegExp(String.raw`^\s*\{\s*${JSONRPC}${ID}\s*,\s*"(?:result|error)"\s*:`);
const ANSWER_FIRST = new RegExp(String.raw`^\s*\{\s*${JSONRPC}"(?:result|error)"\s*:`);
const ID_LAST = new RegExp(String.raw`,\s*${ID}\s*\}\s*$`);

function answerId(text: string): string | number | undefined {
  const found = ID_FIRST.exec(text)?.[1] ??
    (ANSWER_FIRST.test(text) ? ID_LAST.exec(text)?.[1] : undefined);
  if (found === undefined) return undefined;
  return found.startsWith('"') ? found.slice(1, -1) : Number(found);
}
