/**
 * `mcpctl list [SERVER...]`: connects the selected servers in parallel and prints each
 * one's status and tools.
 *
 * @module
 */

import { approveHint } from "../config/trust.ts";
import type { ServerEntry } from "../config/types.ts";
import { AuthRequiredError, ExitCode, TimeoutError, UntrustedError } from "../errors.ts";
import type { Client } from "../mcp/client.ts";
import {
  connectServer,
  describeError,
  listTools,
  type ServerStatus,
  statusOf,
  type ToolInfo,
} from "../mcp/manager.ts";
import type { RejectedTool } from "../mcp/names.ts";
import { guardToolSchemas } from "../mcp/schema_guard.ts";
import { oneLine } from "../mcp/sanitize.ts";
import type { CommandContext } from "./commands.ts";
import { connectOptions, loadServers, selectServers } from "./servers.ts";
import { authResolver, signInFirst } from "./sign_in.ts";

/** One server in `list --json` (the documented shape). */
export interface ListedServer {
  name: string;
  status: ServerStatus;
  transport: "stdio" | "http" | "sse";
  error?: string;
  server?: { name: string; version?: string; title?: string; protocolVersion: string };
  tools: ListedTool[];
  rejectedTools?: RejectedTool[];
  warnings?: string[];
}

/** One tool in `list --json`. */
export interface ListedTool {
  name: string;
  route: string;
  title?: string;
  description?: string;
  /** Absent when the border guard dropped it (then `schemaNotes` says why). */
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  schemaNotes?: string[];
}

/** Runs `list`. */
export async function run(ctx: CommandContext): Promise<number> {
  if (ctx.values.schema === true) return await (await import("./describe.ts")).listSchemas(ctx);
  const set = await loadServers(ctx);
  const selected = selectServers(set, set.adhoc ? [] : ctx.positionals);
  const options = connectOptions(ctx);
  const login = ctx.values.login === true;
  options.auth = authResolver(ctx, set, { interactive: login });
  const failures: unknown[] = [];
  const listed = await Promise.all(selected.map(async (entry) => {
    const result = await listOne(entry, options, {
      signal: ctx.signal,
      login,
      schemas: ctx.values.json === true,
    });
    if (result.failure !== undefined) failures.push(result.failure);
    return result.listed;
  }));
  if (ctx.signal.aborted) throw ctx.signal.reason;
  if (ctx.values.json) await ctx.out.json(listed);
  else await ctx.out.result(renderHuman(listed));
  for (const s of listed) {
    for (const w of s.warnings ?? []) await ctx.out.error(`mcpctl: ${s.name}: ${w}\n`);
  }
  const blocked = listed.filter((s) => s.status === "blocked").map((s) => s.name);
  if (blocked.length > 0) {
    // The listing ran (exit 0): blocked servers are a state, like auth_required.
    await ctx.out.error(
      `hint: ${blocked.join(", ")} ${blocked.length === 1 ? "is" : "are"} declared in ` +
        `project files and not approved; ${approveHint(blocked)}\n`,
    );
  }
  if (ctx.values.strict && failures.length > 0) return strictExitCode(failures);
  return ExitCode.ok;
}

/**
 * With `--strict`: 5 when every failure was a timeout, 4 when every one needs sign-in,
 * 2 when every one is a project server not approved, else 3.
 */
export function strictExitCode(failures: unknown[]): number {
  if (failures.every((f) => f instanceof UntrustedError)) return ExitCode.usage;
  if (failures.every((f) => f instanceof TimeoutError)) return ExitCode.timeout;
  if (failures.every((f) => f instanceof AuthRequiredError)) return ExitCode.auth;
  return ExitCode.server;
}

async function listOne(
  entry: ServerEntry,
  options: ReturnType<typeof connectOptions>,
  how: { signal: AbortSignal; login: boolean; schemas: boolean },
): Promise<{ listed: ListedServer; failure?: unknown }> {
  const { signal, login } = how;
  const listed = (status: ServerStatus, extra: Partial<ListedServer> = {}): ListedServer => ({
    name: entry.name,
    status,
    transport: entry.type,
    ...extra,
    tools: extra.tools ?? [],
  });
  if (!entry.enabled) return { listed: listed("disabled") };
  let client: Client | undefined;
  try {
    // Trust first: nothing of a blocked entry (a tokenCommand, a sign-in) runs before.
    await options.beforeConnect?.(entry);
    if (login && entry.type !== "stdio") {
      const auth = await options.auth?.(entry);
      if (auth) await signInFirst(entry, auth, signal);
    }
    client = await connectServer(entry, options);
    const { tools, rejected, warnings } = await listTools(client, entry.name, { signal });
    const info = client.server!;
    return {
      listed: listed("connected", {
        transport: client.transport.kind,
        server: { ...info.serverInfo, protocolVersion: info.protocolVersion },
        tools: tools.map((t) => listedTool(entry.name, t, how.schemas)),
        ...(rejected.length ? { rejectedTools: rejected } : {}),
        ...(warnings.length ? { warnings } : {}),
      }),
    };
  } catch (error) {
    return {
      listed: listed(statusOf(error), { error: describeError(error) }),
      failure: error,
    };
  } finally {
    await client?.close();
  }
}

function listedTool(server: string, t: ToolInfo, schemas: boolean): ListedTool {
  const tool: ListedTool = { name: t.name, route: `mcp__${server}__${t.name}` };
  if (typeof t.title === "string") tool.title = t.title;
  if (typeof t.description === "string") tool.description = t.description;
  // The human listing shows no schema: guard them only when they are printed (--json),
  // with the same border guard as everywhere else schemas are shown.
  if (t.annotations && typeof t.annotations === "object") tool.annotations = t.annotations;
  if (!schemas) return tool;
  const guarded = guardToolSchemas(t);
  if (guarded.inputSchema) tool.inputSchema = guarded.inputSchema;
  if (guarded.outputSchema) tool.outputSchema = guarded.outputSchema;
  if (guarded.notes.length) tool.schemaNotes = guarded.notes;
  return tool;
}

function renderHuman(servers: ListedServer[]): string {
  if (servers.length === 0) return "No servers configured.\n";
  const lines: string[] = [];
  for (const s of servers) {
    let head = `${s.name}  ${s.status}  (${s.transport})`;
    if (s.status === "connected") {
      head += `  ${s.tools.length} tool${s.tools.length === 1 ? "" : "s"}`;
    }
    lines.push(head);
    if (s.error) {
      const [first, ...rest] = s.error.split("\n");
      lines.push(`  error: ${first}`);
      for (const r of rest) lines.push(`  ${r}`);
    }
    const width = Math.min(32, Math.max(0, ...s.tools.map((t) => t.name.length)));
    for (const t of s.tools) {
      const title = t.title ?? (t.annotations?.title as string | undefined);
      const text = [title, t.description].filter((x) => typeof x === "string" && x.length > 0)
        .map((x) => oneLine(x as string, 100));
      lines.push(`  ${oneLine(t.name, 64).padEnd(width)}  ${text.join(" — ")}`.trimEnd());
    }
    for (const r of s.rejectedTools ?? []) {
      lines.push(`  (not advertised: ${oneLine(r.name, 64)}: ${r.problem})`);
    }
  }
  return lines.join("\n") + "\n";
}
