/**
 * `mcpctl search QUERY`: ranks the tools of every enabled server (see
 * `rank_tools.ts`) and prints the best matches with their full schemas, as many as fit
 * a token budget. Tool lists come from the cache; only servers whose entry is missing
 * or stale are started.
 *
 * The budget covers the whole output, header and footer included, with tokens
 * estimated as ⌈characters / 4⌉.
 *
 * @module
 */

import { approveHint } from "../config/trust.ts";
import {
  AuthRequiredError,
  ExitCode,
  TimeoutError,
  UntrustedError,
  UsageError,
} from "../errors.ts";
import { describeError, type ToolInfo } from "../mcp/manager.ts";
import { oneLine } from "../mcp/sanitize.ts";
import { intOption } from "./args.ts";
import type { CommandContext } from "./commands.ts";
import { serverConnectOptions } from "./one_server.ts";
import { rankTools } from "./rank_tools.ts";
import { loadServers } from "./servers.ts";
import { cacheWarning, commandCache, ToolCatalog } from "./tool_catalog.ts";
import { displayTitle, renderCompact, type ToolView, toolView } from "./tool_view.ts";

/** Default budget in tokens. */
export const DEFAULT_BUDGET = 2000;

/** One match in `search --json`. */
export interface SearchMatch extends ToolView {
  score: number;
}

/** Estimated tokens of `text`: ⌈characters / 4⌉. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Runs `search`. */
export async function run(ctx: CommandContext): Promise<number> {
  const query = ctx.positionals.join(" ").trim();
  if (query === "") {
    throw new UsageError("missing QUERY", { hint: 'usage: mcpctl search "read file"' });
  }
  const budget = intOption(ctx.values, "budget") ?? DEFAULT_BUDGET;
  if (budget === 0) throw new UsageError("--budget must be greater than 0");
  const limit = intOption(ctx.values, "limit");
  if (limit === 0) throw new UsageError("--limit must be greater than 0");
  const set = await loadServers(ctx);
  const quiet = ctx.values.quiet === true;
  const catalog = new ToolCatalog({
    cache: commandCache(ctx),
    connect: serverConnectOptions(ctx, set),
    refresh: ctx.values.refresh === true,
    onCacheError: (server, error) => cacheWarning(ctx, server, error),
    secrets: ctx.out.secrets,
  });
  const enabled = set.servers.filter((s) => s.enabled);
  const results = await Promise.all(enabled.map((e) => catalog.tools(e)));
  if (ctx.signal.aborted) throw ctx.signal.reason;
  const failures: unknown[] = [];
  const candidates: {
    server: string;
    name: string;
    title?: string;
    description?: string;
    tool: ToolInfo;
  }[] = [];
  for (const r of results) {
    if (!r.ok) {
      failures.push(r.error);
      await ctx.out.error(
        `mcpctl: ${r.entry.name} not searched: ${describeError(r.error)}\n`,
      );
      continue;
    }
    for (const tool of r.tools) {
      const title = displayTitle(tool);
      candidates.push({
        server: r.entry.name,
        name: tool.name,
        ...(title !== undefined ? { title } : {}),
        ...(typeof tool.description === "string" ? { description: tool.description } : {}),
        tool,
      });
    }
  }
  const blocked = results.filter((r) => !r.ok && r.error instanceof UntrustedError)
    .map((r) => r.entry.name);
  if (blocked.length > 0) {
    await ctx.out.error(`hint: ${approveHint(blocked)}\n`);
  }
  let ranked = rankTools(query, candidates);
  if (limit !== undefined) ranked = ranked.slice(0, limit);
  const matches: SearchMatch[] = ranked.map((r) => ({
    ...toolView(r.item.server, r.item.tool),
    score: r.score,
  }));
  const maxChars = budget * 4;
  if (ctx.values.json === true) {
    const shown = fitJson(matches, maxChars);
    await ctx.out.json(shown);
    const left = matches.length - shown.length;
    if (left > 0 && !quiet) {
      await ctx.out.error(
        `mcpctl: ${left} more match${left === 1 ? "" : "es"} not shown: raise --budget\n`,
      );
    }
  } else {
    await ctx.out.result(
      fitText(query, matches, maxChars, { servers: enabled.length, tools: candidates.length }),
    );
  }
  if (failures.length > 0 && failures.length === enabled.length) return failureCode(failures);
  return ExitCode.ok;
}

/** The matches that fit `maxChars` as pretty JSON, best first. */
function fitJson(matches: SearchMatch[], maxChars: number): SearchMatch[] {
  const shown: SearchMatch[] = [];
  for (const m of matches) {
    shown.push(m);
    if (JSON.stringify(shown, null, 2).length + 1 > maxChars) {
      shown.pop();
      break;
    }
  }
  return shown;
}

/** The human output: header, blocks while they fit, footer. */
function fitText(
  query: string,
  matches: SearchMatch[],
  maxChars: number,
  searched: { servers: number; tools: number },
): string {
  const q = oneLine(query, 100);
  if (matches.length === 0) {
    return `No tool matches "${q}" (searched ${searched.tools} tools on ${searched.servers} servers).\n`;
  }
  const header =
    `Tools matching "${q}", best first. Call one with: mcpctl call SERVER TOOL key=value…\n`;
  const footer = (n: number) =>
    n === 0 ? "" : `\n(${n} more match${n === 1 ? "" : "es"} not shown: raise --budget)\n`;
  if (header.length + footer(matches.length).length > maxChars) {
    const need = estimateTokens(header + footer(matches.length));
    throw new UsageError(
      `--budget ${Math.floor(maxChars / 4)} is too small: the header alone needs ${need} tokens`,
    );
  }
  let text = header;
  let shown = 0;
  for (const m of matches) {
    const block = `\n${renderCompact(m, m.score)}`;
    if (text.length + block.length + footer(matches.length - shown - 1).length > maxChars) break;
    text += block;
    shown++;
  }
  // The rest, one line each while they fit: a name to `describe` beats nothing.
  const moreHeader = "\nMore matches (describe them for their schemas):\n";
  let more = "";
  for (const m of matches.slice(shown)) {
    const line = `  ${m.server}.${oneLine(m.signature, 200)} (score ${m.score})\n`;
    const head = more === "" ? moreHeader : "";
    const rest = footer(matches.length - shown - 1);
    if (text.length + more.length + head.length + line.length + rest.length > maxChars) break;
    more += head + line;
    shown++;
  }
  return text + more + footer(matches.length - shown);
}

function failureCode(failures: unknown[]): number {
  if (failures.every((f) => f instanceof UntrustedError)) return ExitCode.usage;
  if (failures.every((f) => f instanceof TimeoutError)) return ExitCode.timeout;
  if (failures.every((f) => f instanceof AuthRequiredError)) return ExitCode.auth;
  return ExitCode.server;
}
