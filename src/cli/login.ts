/**
 * `mcpctl login SERVER` / `mcpctl login --url URL`: signs in (discovery, client
 * registration, browser authorization with PKCE, token exchange) and stores the tokens.
 *
 * @module
 */

import { ExitCode, UsageError } from "../errors.ts";
import { connectServer, listTools } from "../mcp/manager.ts";
import type { CommandContext } from "./commands.ts";
import { connectOptions, findServer, loadServers, projectGate } from "./servers.ts";
import { authResolver, hasAuthorizationHeader, signInFirst } from "./sign_in.ts";
import { intOption } from "./args.ts";

/** Runs `login`. */
export async function run(ctx: CommandContext): Promise<number> {
  const set = await loadServers(ctx);
  if (!set.adhoc && ctx.positionals.length !== 1) {
    throw new UsageError("name one server to sign in to", { hint: "mcpctl login SERVER" });
  }
  if (set.adhoc && ctx.positionals.length > 0) {
    throw new UsageError("with --url, give no server name");
  }
  const entry = set.adhoc ? set.servers[0]! : findServer(set, ctx.positionals[0]!);
  if (entry.type === "stdio") {
    throw new UsageError(
      `server '${entry.name}' runs over stdio: its credentials come from its environment ("env"), not a sign-in`,
    );
  }
  if (hasAuthorizationHeader(entry)) {
    throw new UsageError(
      `server '${entry.name}' has an Authorization header in ${entry.source}; it always wins, so a sign-in would never be used`,
    );
  }
  // A project server's settings (oauth, variables) are used only once approved.
  await projectGate(ctx)(entry);
  const callbackTimeoutMs = intOption(ctx.values, "timeout");
  const resolve = authResolver(ctx, set, {
    interactive: true,
    force: true,
    ...(callbackTimeoutMs !== undefined ? { callbackTimeoutMs } : {}),
  });
  const auth = (await resolve(entry))!;
  const asked = await signInFirst(entry, auth, ctx.signal);
  if (!asked) {
    await ctx.out.error(`${entry.name} did not ask for a sign-in; nothing was stored.\n`);
    return ExitCode.ok;
  }
  // Prove the new credentials work: connect and list the tools.
  const options = connectOptions(ctx);
  options.auth = resolve;
  const client = await connectServer(entry, options);
  try {
    const { tools } = await listTools(client, entry.name, { signal: ctx.signal });
    const { openCredentialStore } = await import("../auth/store.ts");
    const where = openCredentialStore({
      ...(set.config?.credentialHelper ? { helper: set.config.credentialHelper } : {}),
      env: Deno.env.toObject(),
    }).description;
    await ctx.out.error(
      `Signed in to ${entry.name} (${tools.length} tool${tools.length === 1 ? "" : "s"}). ` +
        `Tokens stored in ${where}.\n`,
    );
  } finally {
    await client.close();
  }
  return ExitCode.ok;
}
