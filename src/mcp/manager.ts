/**
 * Connects servers on demand. Each transport module is imported only once a server of
 * that kind is used, so commands that touch no server load no transport code.
 *
 * @module
 */

import { assertApproved } from "../config/trust.ts";
import type { ServerEntry } from "../config/types.ts";
import {
  AuthRequiredError,
  McpctlError,
  ServerError,
  TimeoutError,
  UntrustedError,
} from "../errors.ts";
import { Client, type ClientOptions, formatMs, isRecord } from "./client.ts";
import { partitionTools, type RejectedTool } from "./names.ts";
import type { AuthProvider, Transport } from "./transport/types.ts";

/** Options for {@linkcode connectServer}. */
export interface ConnectOptions {
  /** Request timeout in ms (a server's own `timeout` wins when set). */
  timeoutMs?: number;
  /** Diagnostic sink for `--verbose`; lines are prefixed with the server name by the caller. */
  log?: (server: string, line: string) => void;
  /** Live stderr lines of stdio servers (`--verbose`). */
  onStderr?: (server: string, line: string) => void;
  /** Credentials for HTTP servers, built per server. */
  auth?: (entry: ServerEntry) => Promise<AuthProvider | undefined>;
  /** Extra client options: capabilities and handlers for server requests. */
  client?: Pick<ClientOptions, "capabilities" | "requestHandlers" | "onNotification">;
  /** Aborts connecting (Ctrl-C). */
  signal?: AbortSignal;
  /** Injected fetch for HTTP transports (tests). */
  fetch?: typeof fetch;
  /**
   * Runs before a server is started: the project trust gate, which may approve a blocked
   * entry in place (a prompt) or throw. A blocked entry is refused after it whatever.
   */
  beforeConnect?: (entry: ServerEntry) => Promise<void>;
}

/**
 * Starts or connects one server and runs `initialize`. The returned client must be
 * closed by the caller; on failure everything started is already closed.
 */
export async function connectServer(
  entry: ServerEntry,
  options: ConnectOptions = {},
): Promise<Client> {
  if (entry.error) throw new ServerError(entry.error);
  await options.beforeConnect?.(entry);
  // Whatever the caller did: a blocked project entry is never started or sent to.
  assertApproved(entry);
  const timeoutMs = entry.timeoutMs ?? options.timeoutMs;
  const log = options.log ? (line: string) => options.log!(entry.name, line) : undefined;
  const make = (transport: Transport) =>
    new Client(transport, {
      name: entry.name,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(log ? { log } : {}),
      ...options.client,
    });
  const transport = await createTransport(entry, options, false);
  let client = make(transport);
  try {
    await client.connect(options.signal ? { signal: options.signal } : {});
    return client;
  } catch (error) {
    await client.close();
    if (entry.type !== "http" || entry.typeExplicit) throw error;
    const { shouldFallBackToSse } = await import("./transport/legacy_sse.ts");
    if (!shouldFallBackToSse(error)) throw error;
    log?.("Streamable HTTP initialize refused; trying the legacy HTTP+SSE transport");
  }
  client = make(await createTransport(entry, options, true));
  try {
    await client.connect(options.signal ? { signal: options.signal } : {});
    return client;
  } catch (error) {
    await client.close();
    throw error;
  }
}

async function createTransport(
  entry: ServerEntry,
  options: ConnectOptions,
  legacy: boolean,
): Promise<Transport> {
  if (entry.type === "stdio") {
    const { StdioTransport } = await import("./transport/stdio.ts");
    const { command, args } = platformCommand(entry.command!, entry.args);
    return new StdioTransport({
      name: entry.name,
      command,
      args,
      env: entry.env,
      ...(entry.cwd !== undefined ? { cwd: entry.cwd } : {}),
      ...(entry.maxMessageBytes !== undefined ? { maxMessageBytes: entry.maxMessageBytes } : {}),
      ...(options.onStderr ? { onStderr: (l: string) => options.onStderr!(entry.name, l) } : {}),
    });
  }
  const auth = await options.auth?.(entry);
  const common = {
    url: entry.url!,
    headers: entry.headers,
    ...(auth ? { auth } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(entry.maxMessageBytes !== undefined ? { maxMessageBytes: entry.maxMessageBytes } : {}),
    ...(options.log ? { log: (l: string) => options.log!(entry.name, l) } : {}),
  };
  if (entry.type === "sse" || legacy) {
    const { LegacySseTransport } = await import("./transport/legacy_sse.ts");
    return new LegacySseTransport(common);
  }
  const { HttpTransport } = await import("./transport/http.ts");
  return new HttpTransport(common);
}

/**
 * On Windows, `npx` and other `.cmd`/`.bat` shims cannot be spawned directly: run them
 * through `cmd /c`. Elsewhere the command is used as is.
 */
export function platformCommand(
  command: string,
  args: string[],
  os: typeof Deno.build.os = Deno.build.os,
): { command: string; args: string[] } {
  if (os !== "windows") return { command, args };
  if (/\.(exe|com)$/i.test(command)) return { command, args };
  return { command: "cmd.exe", args: ["/d", "/s", "/c", command, ...args] };
}

/** A tool as mcpctl keeps it after the border guard. */
export interface ToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Most pages of a list mcpctl follows before giving up on a server that pages forever. */
export const MAX_PAGES = 100;

/**
 * Fetches every page of `tools/list`, keeps tools that are well formed and can form a
 * route, and reports the rest.
 */
export async function listTools(
  client: Client,
  server: string,
  options: { signal?: AbortSignal } = {},
): Promise<{ tools: ToolInfo[]; rejected: RejectedTool[]; warnings: string[] }> {
  const { items, warnings } = await listAll(client, "tools/list", "tools", options);
  const wellFormed: ToolInfo[] = [];
  const rejected: RejectedTool[] = [];
  for (const t of items) {
    if (!isRecord(t) || typeof t.name !== "string") {
      rejected.push({ name: "?", problem: "tool entry without a name" });
    } else if (!isRecord(t.inputSchema)) {
      rejected.push({ name: t.name, problem: "inputSchema is missing or not an object" });
    } else {
      wellFormed.push(t as ToolInfo);
    }
  }
  const { accepted, rejected: badNames } = partitionTools(server, wellFormed);
  return { tools: accepted, rejected: [...rejected, ...badNames], warnings };
}

/** Follows `nextCursor` for any list method, with a cap against endless paging. */
export async function listAll(
  client: Client,
  method: string,
  key: string,
  options: { signal?: AbortSignal } = {},
): Promise<{ items: unknown[]; warnings: string[] }> {
  const items: unknown[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0;; page++) {
    if (page >= MAX_PAGES) {
      warnings.push(`stopped after ${MAX_PAGES} pages of ${method}: the server kept paging`);
      break;
    }
    const result = await client.request(
      method,
      cursor !== undefined ? { cursor } : {},
      options.signal ? { signal: options.signal } : {},
    );
    if (!isRecord(result) || !Array.isArray(result[key])) {
      throw new ServerError(`server answered ${method} without a "${key}" array`);
    }
    items.push(...result[key] as unknown[]);
    const next = result.nextCursor;
    if (typeof next !== "string" || next === "") break;
    if (seen.has(next)) {
      warnings.push(`stopped ${method}: the server repeated a cursor`);
      break;
    }
    seen.add(next);
    cursor = next;
  }
  return { items, warnings };
}

/** The state of one server in a listing. */
export type ServerStatus = "connected" | "failed" | "auth_required" | "blocked" | "disabled";

/** Maps a connection failure to a listing status. */
export function statusOf(error: unknown): ServerStatus {
  if (error instanceof UntrustedError) return "blocked";
  return error instanceof AuthRequiredError ? "auth_required" : "failed";
}

/** One-line text for an error in a listing or on stderr. */
export function describeError(error: unknown): string {
  if (error instanceof McpctlError) return error.message;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** Whether an error was a timeout (for exit code selection). */
export function isTimeout(error: unknown): boolean {
  return error instanceof TimeoutError;
}

export { formatMs };
