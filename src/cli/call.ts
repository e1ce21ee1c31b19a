/**
 * `mcpctl call SERVER TOOL [key=value...]`: calls one tool and prints its result.
 *
 * @module
 */

import { ArgumentError, ConfigError, ExitCode, RpcError, UsageError } from "../errors.ts";
import { type Client, isRecord } from "../mcp/client.ts";
import { connectServer, listTools } from "../mcp/manager.ts";
import { parseRoute } from "../mcp/names.ts";
import { intOption } from "./args.ts";
import { findTool } from "./find_tool.ts";
import type { CommandContext } from "./commands.ts";
import { createProgress } from "./progress.ts";
import { renderResult } from "./render_result.ts";
import { connectOptions, findServer, loadServers } from "./servers.ts";
import { parseToolArgs } from "./tool_args.ts";
import { authResolver, signInFirst } from "./sign_in.ts";

/** Log levels accepted by `--log-level` (RFC 5424 names, as MCP uses them). */
export const LOG_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

/** Splits the selector: `SERVER TOOL`, `SERVER.TOOL` or `mcp__SERVER__TOOL`. */
export function parseSelector(
  positionals: string[],
  adhoc: boolean,
): { server?: string; tool: string; pairs: string[] } {
  const [first, second, ...rest] = positionals;
  if (first === undefined) {
    throw new UsageError(adhoc ? "missing TOOL" : "missing SERVER and TOOL", {
      hint: "usage: mcpctl call SERVER TOOL [key=value...]",
    });
  }
  if (adhoc) return { tool: first, pairs: positionals.slice(1) };
  const route = parseRoute(first);
  if (route) return { ...route, pairs: positionals.slice(1) };
  const dot = first.indexOf(".");
  if (dot > 0 && !first.includes("=")) {
    return { server: first.slice(0, dot), tool: first.slice(dot + 1), pairs: positionals.slice(1) };
  }
  if (second === undefined || second.includes("=")) {
    throw new UsageError(`missing TOOL after server '${first}'`, {
      hint:
        `usage: mcpctl call ${first} TOOL [key=value...]; 'mcpctl list ${first}' shows its tools`,
    });
  }
  return { server: first, tool: second, pairs: rest };
}

async function readBaseArgs(ctx: CommandContext): Promise<Record<string, unknown> | undefined> {
  const given = ctx.values.args as string | undefined;
  if (given === undefined) return undefined;
  let text = given;
  if (given === "-") {
    text = await new Response(Deno.stdin.readable).text();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ArgumentError(`--args${given === "-" ? " (stdin)" : ""} is not valid JSON`);
  }
  if (!isRecord(parsed)) throw new ArgumentError("--args must be a JSON object");
  return parsed;
}

/** Runs `call`. */
export async function run(ctx: CommandContext): Promise<number> {
  const v = ctx.values;
  const set = await loadServers(ctx);
  const sel = parseSelector(ctx.positionals, set.adhoc);
  const entry = set.adhoc ? set.servers[0]! : findServer(set, sel.server!);
  if (!entry.enabled) {
    throw new UsageError(`server '${entry.name}' is disabled (in ${entry.source})`);
  }
  if (entry.error) throw new ConfigError(`server '${entry.name}': ${entry.error}`);
  const logLevel = v["log-level"] as string | undefined;
  if (logLevel !== undefined && !LOG_LEVELS.includes(logLevel)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
  }
  const maxTimeMs = intOption(v, "max-time");
  // Load the validator while the server starts; it is needed only after tools/list. (The
  // full, npm one loads later, and only for a schema outside the simple subset.)
  const validation = v["no-validate"] === true
    ? undefined
    : Promise.all([import("../mcp/schema_guard.ts"), import("../mcp/schema_validate.ts")]);
  const base = await readBaseArgs(ctx);
  const label = `${entry.name}.${sel.tool}`;
  const verbose = v.verbose === true;
  const quiet = v.quiet === true;

  const options = connectOptions(ctx);
  options.client = {
    ...options.client,
    onNotification: (method, params) => {
      if (method === "notifications/message" && verbose && params) {
        const level = typeof params.level === "string" ? params.level : "info";
        const logger = typeof params.logger === "string" ? ` ${params.logger}` : "";
        const data = typeof params.data === "string" ? params.data : JSON.stringify(params.data);
        void ctx.out.error(`[${entry.name} log ${level}${logger}] ${data ?? ""}\n`);
      }
    },
  };

  const login = v.login === true;
  options.auth = authResolver(ctx, set, { interactive: login });
  let client: Client | undefined;
  try {
    // Trust first: nothing of a blocked entry (a tokenCommand, a sign-in) runs before.
    await options.beforeConnect?.(entry);
    if (login && entry.type !== "stdio") {
      const auth = await options.auth(entry);
      if (auth) await signInFirst(entry, auth, ctx.signal);
    }
    client = await connectServer(entry, options);
    if (logLevel !== undefined) {
      if (client.server?.capabilities.logging !== undefined) {
        await client.request("logging/setLevel", { level: logLevel }, { signal: ctx.signal });
      } else if (!quiet) {
        await ctx.out.error(
          `mcpctl: ${entry.name} does not support logging; --log-level ignored\n`,
        );
      }
    }
    const { tools, rejected } = await listTools(client, entry.name, { signal: ctx.signal });
    const tool = findTool(entry.name, sel.tool, tools, rejected.map((r) => r.name));
    const args = await parseToolArgs(sel.pairs, tool.inputSchema, base ? { base } : {});
    if (validation) {
      const [{ guardSchema }, { validateArguments, formatProblems }] = await validation;
      const guarded = guardSchema(tool.inputSchema);
      if (guarded.dropped) {
        throw new ArgumentError(
          `cannot validate arguments for ${label}: its inputSchema was dropped (${guarded.dropped})`,
          { hint: "--no-validate sends the arguments as is" },
        );
      }
      const problems = await validateArguments(tool.inputSchema, args);
      if (problems.length > 0) {
        throw new ArgumentError(formatProblems(label, problems), {
          hint: `'mcpctl list ${entry.name} --json' shows the schema; nothing was sent`,
        });
      }
    }
    if (v["dry-run"] === true) {
      await ctx.out.json({
        jsonrpc: "2.0",
        method: "tools/call",
        params: { name: tool.name, arguments: args },
      });
      return ExitCode.ok;
    }
    await client.settle();
    const progress = createProgress(ctx.out, ctx.out.stderrIsTerminal && !quiet, label);
    let result: unknown;
    try {
      result = await client.request("tools/call", { name: tool.name, arguments: args }, {
        onProgress: (p) => progress.update(p),
        signal: ctx.signal,
        ...(maxTimeMs !== undefined ? { maxTimeMs } : {}),
      });
    } catch (e) {
      await progress.clear();
      if (e instanceof RpcError) {
        await ctx.out.error(`mcpctl: ${label} failed: ${e.message}\n`);
        return ExitCode.server;
      }
      throw e;
    }
    await progress.clear();
    const isError = isRecord(result) && result.isError === true;
    if (v.json === true) {
      await ctx.out.json(result);
    } else {
      const saveDir = v["save-dir"] as string | undefined;
      await ctx.out.result(
        await renderResult(result, { stem: tool.name, ...(saveDir ? { dir: saveDir } : {}) }),
      );
    }
    if (isError) {
      await ctx.out.error(`mcpctl: ${label} reported an error (isError)\n`);
      return ExitCode.toolError;
    }
    return ExitCode.ok;
  } finally {
    await client?.close();
  }
}
