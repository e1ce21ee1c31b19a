/**
 * Answers `elicitation/create`: a server asking the user for input in the middle of a
 * request.
 *
 * - On a terminal (stdin and stderr are TTYs) a form is asked field by field on stderr,
 *   naming the server and showing its message; defaults are pre-filled (Enter keeps
 *   them), answers are checked and asked again when wrong; `:decline`, `:cancel` or
 *   Ctrl-D end it. A URL request shows the whole URL and opens it only when the user
 *   says yes; nothing is ever fetched by mcpctl.
 * - Otherwise, or when `--elicitation` is given, the policy answers: `decline`
 *   (default), `cancel`, or `accept-defaults` (every field's default; declined when a
 *   required field has none; URL requests are declined).
 *
 * Prompt I/O is injected ({@linkcode PromptIo}), so tests drive it without a terminal.
 *
 * @module
 */

import { RpcError } from "../errors.ts";
import { isRecord } from "../mcp/client.ts";
import { oneLine } from "../mcp/sanitize.ts";
import {
  defaultsContent,
  describeField,
  type Field,
  type FieldValue,
  parseInput,
  parseRequestedSchema,
  SchemaProblem,
} from "./elicitation_schema.ts";
import type { CommandContext } from "./commands.ts";
import type { Output } from "./output.ts";

/** What `--elicitation` may say. */
export type ElicitationPolicy = "decline" | "cancel" | "accept-defaults";

/** The reply to `elicitation/create`. */
export interface ElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, FieldValue>;
}

/** Line-based prompt I/O (a terminal in real use). */
export interface PromptIo {
  /** Reads one line without its line end; null at end of input (Ctrl-D) or when aborted. */
  readLine(): Promise<string | null>;
  /** Writes prompt text. */
  write(text: string): Promise<void>;
  /** Clears the current terminal line (a progress bar) before a prompt starts. */
  clearLine?(): Promise<void>;
}

/** How to answer one request. */
export interface ElicitationOptions {
  /** Name of the server that asks (shown to the user). */
  server: string;
  /** The `--elicitation` policy when given; it wins over prompting. */
  policy?: ElicitationPolicy | undefined;
  /** Prompt I/O when a person can answer; without it the policy (default decline) answers. */
  io?: PromptIo | undefined;
  /** Writes a one-line notice to stderr (left out with `--quiet`). */
  notice?: ((text: string) => Promise<void>) | undefined;
  /** Opens a URL in the browser; resolves whether it worked. */
  openUrl?: ((url: string) => Promise<boolean>) | undefined;
}

const COMMANDS_HINT = "Enter keeps [the default]; :decline declines, :cancel or Ctrl-D cancels";

/**
 * Answers one `elicitation/create` request.
 *
 * @throws {RpcError} -32602 when the request is malformed (no message, unknown mode,
 * URL mode without a URL).
 *
 * @example
 * ```ts
 * import { answerElicitation } from "./elicitation.ts";
 * const reply = await answerElicitation({
 *   message: "Your age?",
 *   requestedSchema: { type: "object", properties: { age: { type: "integer", default: 30 } } },
 * }, { server: "demo", policy: "accept-defaults" });
 * // { action: "accept", content: { age: 30 } }
 * ```
 */
export async function answerElicitation(
  params: Record<string, unknown> | undefined,
  options: ElicitationOptions,
): Promise<ElicitResult> {
  if (!isRecord(params) || typeof params.message !== "string") {
    throw new RpcError(-32602, "elicitation/create needs a message");
  }
  const mode = params.mode ?? "form";
  if (mode === "url") return await answerUrl(params, params.message, options);
  if (mode !== "form") {
    throw new RpcError(-32602, `unsupported elicitation mode ${JSON.stringify(mode)}`);
  }
  const asks = `server "${options.server}" asked for input (${oneLine(params.message, 100)})`;
  let fields: Field[];
  try {
    fields = parseRequestedSchema(params.requestedSchema);
  } catch (e) {
    if (!(e instanceof SchemaProblem)) throw e;
    await options.notice?.(`${asks}; declined: cannot show the form: ${oneLine(e.message)}`);
    return { action: "decline" };
  }
  if (options.policy === undefined && options.io !== undefined) {
    return await promptForm(params.message, fields, options.server, options.io);
  }
  const policy = options.policy ?? "decline";
  if (policy !== "accept-defaults") {
    const why = options.policy === undefined ? " (not a terminal; see --elicitation)" : "";
    await options.notice?.(`${asks}; ${policy === "cancel" ? "cancelled" : "declined"}${why}`);
    return { action: policy };
  }
  const defaults = defaultsContent(fields);
  if ("missing" in defaults) {
    await options.notice?.(
      `${asks}; declined: no default for required ${
        defaults.missing.map((m) => oneLine(m, 40)).join(", ")
      }`,
    );
    return { action: "decline" };
  }
  await options.notice?.(`${asks}; answered with the defaults`);
  return { action: "accept", content: defaults.content };
}

async function answerUrl(
  params: Record<string, unknown>,
  message: string,
  options: ElicitationOptions,
): Promise<ElicitResult> {
  if (typeof params.url !== "string") {
    throw new RpcError(-32602, "an elicitation in URL mode needs a url");
  }
  const asks = `server "${options.server}" asked to open a URL`;
  let url: URL;
  try {
    url = new URL(params.url);
  } catch {
    await options.notice?.(`${asks}; declined: not a valid URL`);
    return { action: "decline" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    await options.notice?.(`${asks}; declined: only http and https URLs are opened`);
    return { action: "decline" };
  }
  const href = url.href;
  const io = options.io;
  if (options.policy !== undefined || io === undefined) {
    const action = options.policy === "cancel" ? "cancel" : "decline";
    await options.notice?.(
      `${asks}; ${action === "cancel" ? "cancelled" : "declined"}${
        io === undefined ? " (needs a terminal)" : ""
      }`,
    );
    return { action };
  }
  // The whole URL (host in punycode, as the browser will see it), never shortened.
  await io.clearLine?.();
  await io.write(
    `\n${header(`${options.server} asks you to open a URL`)}\n${indent(message)}\n  URL: ${href}\n`,
  );
  for (;;) {
    await io.write("Open it in your browser? [y/N] (:cancel cancels) ");
    const line = await io.readLine();
    if (line === null) return cancelled(io);
    const answer = line.trim().toLowerCase();
    if (answer === ":cancel") return cancelled(io);
    if (answer === "" || answer === "n" || answer === "no" || answer === ":decline") {
      await io.write("Declined.\n");
      return { action: "decline" };
    }
    if (answer === "y" || answer === "yes") break;
  }
  const opened = await options.openUrl?.(href).catch(() => false) ?? false;
  if (!opened) await io.write("Could not start a browser; open the URL above yourself.\n");
  return { action: "accept" };
}

async function promptForm(
  message: string,
  fields: Field[],
  server: string,
  io: PromptIo,
): Promise<ElicitResult> {
  await io.clearLine?.();
  await io.write(
    `\n${header(`${server} asks for input`)}\n${indent(message)}\n(${COMMANDS_HINT})\n`,
  );
  const content: Record<string, FieldValue> = {};
  for (const [i, field] of fields.entries()) {
    await io.write(`\n${fieldHeading(field, i, fields.length)}\n`);
    for (const [n, choice] of (field.choices ?? []).entries()) {
      const label = choice.label !== undefined
        ? `${oneLine(choice.label, 80)} (${oneLine(choice.value, 40)})`
        : oneLine(choice.value, 80);
      await io.write(`  ${n + 1}) ${label}\n`);
    }
    const shown = field.default !== undefined ? `[${showValue(field, field.default)}] ` : "";
    for (;;) {
      await io.write(`  ${shown}> `);
      const line = await io.readLine();
      if (line === null) return cancelled(io);
      const text = line.trim();
      if (text === ":cancel") return cancelled(io);
      if (text === ":decline") {
        await io.write("Declined.\n");
        return { action: "decline" };
      }
      if (text === "" || text === ":none") {
        if (text === "" && field.default !== undefined) {
          content[field.name] = field.default;
          break;
        }
        if (!field.required) break;
        await io.write("  ! a value is required\n");
        continue;
      }
      const parsed = parseInput(field, text);
      if ("value" in parsed) {
        content[field.name] = parsed.value;
        break;
      }
      await io.write(`  ! ${parsed.problem}\n`);
    }
  }
  await io.write(`\nReply to ${server}: ${JSON.stringify(content)}\n`);
  for (;;) {
    await io.write("Send it? [Y/n] (n declines, :cancel cancels) ");
    const line = await io.readLine();
    if (line === null) return cancelled(io);
    const answer = line.trim().toLowerCase();
    if (answer === "" || answer === "y" || answer === "yes") return { action: "accept", content };
    if (answer === "n" || answer === "no" || answer === ":decline") {
      await io.write("Declined.\n");
      return { action: "decline" };
    }
    if (answer === ":cancel") return cancelled(io);
  }
}

async function cancelled(io: PromptIo): Promise<ElicitResult> {
  await io.write("\nCancelled.\n");
  return { action: "cancel" };
}

function header(text: string): string {
  return `── ${text} ──`;
}

function indent(message: string): string {
  return message.split("\n").map((l) => `  ${l}`.trimEnd()).join("\n");
}

function fieldHeading(field: Field, index: number, total: number): string {
  const title = field.title !== undefined && field.title !== field.name
    ? `${oneLine(field.title, 60)} (${oneLine(field.name, 40)})`
    : oneLine(field.name, 60);
  const description = field.description !== undefined
    ? ` — ${oneLine(field.description, 120)}`
    : "";
  return `[${index + 1}/${total}] ${title}${description}\n  ${describeField(field)}`;
}

function showValue(field: Field, value: FieldValue): string {
  const label = (v: string) => {
    const choice = field.choices?.find((c) => c.value === v);
    return oneLine(choice?.label ?? v, 60);
  };
  if (Array.isArray(value)) return value.map(label).join(", ");
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (field.kind === "enum" && typeof value === "string") return label(value);
  return oneLine(String(value), 80);
}

// One reader per command: input typed ahead for a later prompt is kept.
const terminals = new WeakMap<CommandContext, PromptIo>();

/**
 * Answers `elicitation/create` for a command: `--elicitation`, `--quiet` and the
 * terminal decide how (see the module documentation).
 */
export function answerCliElicitation(
  ctx: CommandContext,
  server: string,
  params: Record<string, unknown> | undefined,
  interactive: boolean,
): Promise<ElicitResult> {
  let io: PromptIo | undefined;
  if (interactive) {
    io = terminals.get(ctx) ?? terminalPromptIo(ctx.out, ctx.signal);
    terminals.set(ctx, io);
  }
  return answerElicitation(params, {
    server,
    policy: ctx.values.elicitation as ElicitationPolicy | undefined,
    io,
    notice: ctx.values.quiet === true ? undefined : (text) => ctx.out.error(`mcpctl: ${text}\n`),
    openUrl: async (url) => {
      const { openBrowser } = await import("../auth/browser.ts");
      return (await openBrowser(url, { stderr: () => {} })).opened;
    },
  });
}

/**
 * Prompt I/O on the terminal: lines from stdin, prompts to stderr through `out`. A
 * read ends with null at end of input (Ctrl-D) or when `signal` aborts (Ctrl-C).
 */
export function terminalPromptIo(
  out: Output,
  signal: AbortSignal,
  stdin: Pick<typeof Deno.stdin, "read"> = Deno.stdin,
): PromptIo {
  const decoder = new TextDecoder();
  let buffered = "";
  let ended = false;
  return {
    write: (text) => out.error(text),
    clearLine: () => out.status(""),
    async readLine() {
      for (;;) {
        const nl = buffered.indexOf("\n");
        if (nl !== -1) {
          const line = buffered.slice(0, nl).replace(/\r$/, "");
          buffered = buffered.slice(nl + 1);
          return line;
        }
        if (ended || signal.aborted) return null;
        const chunk = new Uint8Array(4096);
        const n = await new Promise<number | null>((resolve, reject) => {
          const onAbort = () => resolve(null);
          signal.addEventListener("abort", onAbort, { once: true });
          stdin.read(chunk).then(resolve, reject).finally(() =>
            signal.removeEventListener("abort", onAbort)
          );
        });
        if (n === null) {
          // Ctrl-D on an empty line (or the end of piped input): no more answers.
          ended = true;
          if (buffered === "") return null;
          const rest = buffered;
          buffered = "";
          return rest;
        }
        buffered += decoder.decode(chunk.subarray(0, n), { stream: true });
      }
    },
  };
}
