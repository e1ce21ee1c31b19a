/**
 * `mcpctl describe SERVER TOOL`: one tool in full, from the tool cache when fresh. Also
 * `mcpctl list [SERVER...] --schema`: every tool of the selected servers that way,
 * always asked live.
 *
 * @module
 */

import { approveHint } from "../config/trust.ts";
import { ExitCode, UntrustedError, UsageError } from "../errors.ts";
import { describeError } from "../mcp/manager.ts";
import { parseRoute } from "../mcp/names.ts";
import { findTool } from "./find_tool.ts";
import { strictExitCode } from "./list.ts";
import type { CommandContext } from "./commands.ts";
import { serverConnectOptions, usable } from "./one_server.ts";
import { findServer, loadServers, selectServers } from "./servers.ts";
import { cacheWarning, type CatalogEntry, commandCache, ToolCatalog } from "./tool_catalog.ts";
import { renderToolView, type ToolView, toolView } from "./tool_view.ts";

/**
 * Splits `SERVER TOOL`, `SERVER.TOOL` or `mcp__SERVER__TOOL` (just `TOOL` for an ad-hoc
 * server).
 */
export function parseToolSelector(
  positionals: string[],
  adhoc: boolean,
  command: string,
): { server?: string; tool: string } {
  const [first, second, ...rest] = positionals;
  const usage = `usage: mcpctl ${command} SERVER TOOL (or SERVER.TOOL)`;
  if (first === undefined) {
    throw new UsageError(adhoc ? "missing TOOL" : "missing SERVER and TOOL", { hint: usage });
  }
  if (adhoc) {
    if (second !== undefined) throw new UsageError(`unexpected argument '${second}'`);
    return { tool: first };
  }
  let selected: { server: string; tool: string } | undefined = parseRoute(first);
  let extra = [second, ...rest];
  if (!selected) {
    const dot = first.indexOf(".");
    if (dot > 0) selected = { server: first.slice(0, dot), tool: first.slice(dot + 1) };
  }
  if (!selected) {
    if (second === undefined) {
      throw new UsageError(`missing TOOL after server '${first}'`, {
        hint: `${usage}; 'mcpctl list ${first}' shows its tools`,
      });
    }
    selected = { server: first, tool: second };
    extra = rest;
  }
  const unexpected = extra.filter((x) => x !== undefined);
  if (unexpected.length > 0) {
    throw new UsageError(`unexpected argument '${unexpected[0]}'`, { hint: usage });
  }
  return selected;
}

/** Runs `describe`. */
export async function run(ctx: CommandContext): Promise<number> {
  const set = await loadServers(ctx);
  const sel = parseToolSelector(ctx.positionals, set.adhoc, "describe");
  const entry = set.adhoc ? set.servers[0]! : findServer(set, sel.server!);
  usable(entry);
  const catalog = new ToolCatalog({
    cache: set.adhoc ? undefined : commandCache(ctx),
    connect: serverConnectOptions(ctx, set),
    refresh: ctx.values.refresh === true,
    onCacheError: (server, error) => cacheWarning(ctx, server, error),
    secrets: ctx.out.secrets,
  });
  let found = await catalog.tools(entry);
  // A cached list may predate the tool: ask the server once before saying it is unknown.
  if (found.ok && found.cached && !found.tools.some((t) => t.name === sel.tool)) {
    found = await catalog.tools(entry, { fresh: true });
  }
  if (ctx.signal.aborted) throw ctx.signal.reason;
  if (!found.ok) throw found.error;
  const tool = findTool(entry.name, sel.tool, found.tools, found.rejected.map((r) => r.name));
  const view = toolView(entry.name, tool);
  if (ctx.values.json === true) await ctx.out.json(view);
  else await ctx.out.result(renderToolView(view));
  await printWarnings(ctx, found);
  return ExitCode.ok;
}

/**
 * `list [SERVER...] --schema`: every tool of the selected servers in full, asked live
 * (the answers refresh the cache).
 */
export async function listSchemas(ctx: CommandContext): Promise<number> {
  const set = await loadServers(ctx);
  const selected = selectServers(set, set.adhoc ? [] : ctx.positionals);
  const catalog = new ToolCatalog({
    cache: set.adhoc ? undefined : commandCache(ctx),
    connect: serverConnectOptions(ctx, set),
    refresh: true,
    onCacheError: (server, error) => cacheWarning(ctx, server, error),
    secrets: ctx.out.secrets,
  });
  const enabled = selected.filter((e) => e.enabled);
  const results = await Promise.all(enabled.map((e) => catalog.tools(e)));
  if (ctx.signal.aborted) throw ctx.signal.reason;
  const views: ToolView[] = [];
  for (const r of results) {
    if (r.ok) { for (const t of r.tools) views.push(toolView(r.entry.name, t)); }
  }
  if (ctx.values.json === true) await ctx.out.json(views);
  else await ctx.out.result(views.map(renderToolView).join("\n"));
  for (const e of selected.filter((e) => !e.enabled)) {
    await ctx.out.error(`mcpctl: ${e.name}: disabled (in ${e.source})\n`);
  }
  const failures: unknown[] = [];
  for (const r of results) {
    if (r.ok) await printWarnings(ctx, r);
    else {
      failures.push(r.error);
      await ctx.out.error(`mcpctl: ${r.entry.name}: ${describeError(r.error)}\n`);
    }
  }
  const blocked = results.filter((r) => !r.ok && r.error instanceof UntrustedError)
    .map((r) => r.entry.name);
  if (blocked.length > 0) await ctx.out.error(`hint: ${approveHint(blocked)}\n`);
  if (ctx.values.strict === true && failures.length > 0) return strictExitCode(failures);
  return ExitCode.ok;
}

async function printWarnings(ctx: CommandContext, found: CatalogEntry): Promise<void> {
  if (!found.ok || ctx.values.quiet === true) return;
  for (const w of found.warnings) {
    await ctx.out.error(`mcpctl: ${found.entry.name}: ${w}\n`);
  }
}
