/**
 * `mcpctl logout SERVER` / `--url URL`: removes that server's tokens (and with `--all`
 * its cached client registration).
 *
 * @module
 */

import { ExitCode, UsageError } from "../errors.ts";
import type { CommandContext } from "./commands.ts";
import { findServer, loadServers } from "./servers.ts";

/** Runs `logout`. */
export async function run(ctx: CommandContext): Promise<number> {
  const set = await loadServers(ctx);
  if (!set.adhoc && ctx.positionals.length !== 1) {
    throw new UsageError("name one server to sign out of", { hint: "mcpctl logout SERVER" });
  }
  const entry = set.adhoc ? set.servers[0]! : findServer(set, ctx.positionals[0]!);
  if (!entry.url) throw new UsageError(`server '${entry.name}' has no URL: nothing to sign out of`);
  const { openCredentialStore } = await import("../auth/store.ts");
  const store = openCredentialStore({
    ...(set.config?.credentialHelper ? { helper: set.config.credentialHelper } : {}),
    env: Deno.env.toObject(),
  });
  const key = { serverName: entry.name, serverUrl: entry.url };
  const all = ctx.values.all === true;
  let removed = false;
  await store.update(key, (current) => {
    if (!current) return undefined;
    if (all) {
      removed = true;
      return undefined;
    }
    const { tokens, ...rest } = current;
    removed = tokens !== undefined;
    return Object.keys(rest).length ? rest : undefined;
  });
  await ctx.out.error(
    removed
      ? `Signed out of ${entry.name}: ${
        all ? "tokens and client registration" : "tokens"
      } removed from ${store.description}.\n`
      : `Nothing stored for ${entry.name} in ${store.description}.\n`,
  );
  return ExitCode.ok;
}
