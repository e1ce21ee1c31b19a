/**
 * `mcpctl __complete servers | tools SERVER`: completion candidates, one per line, for
 * the shell scripts of `mcpctl completions`. Reads the config and the tool cache only;
 * it never starts a server. A cached tool list is used even when expired (the digest of
 * the server's definition must still match): an old list beats none while typing.
 *
 * @module
 */

import { ExitCode } from "../errors.ts";
import { readCachedTools } from "../mcp/tool_cache.ts";
import type { CommandContext } from "./commands.ts";
import { loadServers } from "./servers.ts";
import { commandCache } from "./tool_catalog.ts";

/** Runs `__complete`. */
export async function run(ctx: CommandContext): Promise<number> {
  const [what, server] = ctx.positionals;
  const set = await loadServers(ctx);
  const enabled = set.servers.filter((s) => s.enabled);
  let words: string[] = [];
  if (what === "servers") {
    words = enabled.map((s) => s.name);
  } else if (what === "tools" && server !== undefined) {
    const entry = enabled.find((s) => s.name === server);
    const cache = commandCache(ctx);
    if (entry && cache) {
      const cached = await readCachedTools(cache, entry, { allowExpired: true });
      words = cached?.tools.map((t) => t.name) ?? [];
    }
  } else {
    return ExitCode.usage;
  }
  // Tool names are server-supplied: only plain names reach the shell.
  const safe = words.filter((w) => /^[A-Za-z0-9_.-]+$/.test(w));
  await ctx.out.result(safe.length ? safe.join("\n") + "\n" : "");
  return ExitCode.ok;
}
