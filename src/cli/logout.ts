/**
 * `mcpctl logout SERVER` / `--url URL`: revokes that server's tokens at the
 * authorization server (RFC 7009) when it offers a revocation endpoint, then removes
 * them locally (and with `--all` the cached client registration). The local removal
 * happens whatever the server does; `--local` skips the server.
 *
 * @module
 */

import { ExitCode, UsageError } from "../errors.ts";
import type { RevocationOutcome } from "../auth/revocation.ts";
import type { CommandContext } from "./commands.ts";
import { findServer, loadServers, projectGate } from "./servers.ts";
import { signInSettings, storeLockOptions } from "./sign_in.ts";

/** Runs `logout`. */
export async function run(ctx: CommandContext): Promise<number> {
  const set = await loadServers(ctx);
  if (!set.adhoc && ctx.positionals.length !== 1) {
    throw new UsageError("name one server to sign out of", { hint: "mcpctl logout SERVER" });
  }
  const entry = set.adhoc ? set.servers[0]! : findServer(set, ctx.positionals[0]!);
  // A project server's settings (URL, oauth, variables) are used only once approved.
  await projectGate(ctx)(entry);
  if (!entry.url) throw new UsageError(`server '${entry.name}' has no URL: nothing to sign out of`);
  const { openCredentialStore } = await import("../auth/store.ts");
  const store = openCredentialStore({
    ...(set.config?.credentialHelper ? { helper: set.config.credentialHelper } : {}),
    env: Deno.env.toObject(),
    lock: storeLockOptions(ctx),
  });
  const key = { serverName: entry.name, serverUrl: entry.url };
  const all = ctx.values.all === true;
  // Revoke before removing: without the stored tokens there is nothing to revoke. Not
  // under the store's lock, so a slow server cannot hold up other mcpctl processes.
  const stored = await store.get(key);
  ctx.out.secrets.addAll([
    stored?.tokens?.accessToken,
    stored?.tokens?.refreshToken,
    stored?.registration?.clientSecret,
  ]);
  let revocation: RevocationOutcome | undefined;
  if (stored?.tokens && ctx.values.local !== true) {
    // The OAuth code loads only when there are tokens to revoke.
    const { revokeTokens } = await import("../auth/revocation.ts");
    revocation = await revokeTokens({
      serverUrl: entry.url,
      settings: signInSettings(ctx, entry),
      tokens: stored.tokens,
      registration: stored.registration,
      authServer: stored.authServer,
      fetch: (input, init) => fetch(input, init),
      signal: ctx.signal,
      onSecret: (secret) => ctx.out.addSecret(secret),
      ...(ctx.values.verbose === true
        ? { log: (line: string) => void ctx.out.error(`[${entry.name} auth] ${line}\n`) }
        : {}),
    });
  }
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
  if (!removed) {
    await ctx.out.error(`Nothing stored for ${entry.name} in ${store.description}.\n`);
    return ExitCode.ok;
  }
  let line = `${
    all ? "tokens and client registration" : "tokens"
  } removed from ${store.description}`;
  if (revocation?.revoked) {
    line += `; revoked at ${revocation.issuer}`;
    if (revocation.accessTokenKept) {
      line += " (refresh token only: the access token stays valid until it expires)";
    }
  } else if (revocation) {
    line += `; the server was not told: ${revocation.reason}`;
  } else if (stored?.tokens) {
    line += "; the server was not told (--local)";
  }
  await ctx.out.error(`Signed out of ${entry.name}: ${line}.\n`);
  // Interrupted while asking the server: the tokens are gone locally all the same.
  ctx.signal.throwIfAborted();
  return ExitCode.ok;
}
