/**
 * Connects the one server a command names (`resources`, `prompts`, `ping`): the first
 * positional, or the ad-hoc `--stdio`/`--url` server. Stored sign-in credentials are
 * used; no interactive sign-in starts here.
 *
 * @module
 */

import type { ServerEntry } from "../config/types.ts";
import { ConfigError, UsageError } from "../errors.ts";
import type { Client } from "../mcp/client.ts";
import { type ConnectOptions, connectServer } from "../mcp/manager.ts";
import type { CommandContext } from "./commands.ts";
import { connectOptions, findServer, loadServers, type ServerSet } from "./servers.ts";
import { authResolver } from "./sign_in.ts";

/** The server a command works on, before connecting. */
export interface NamedServer {
  entry: ServerEntry;
  set: ServerSet;
  /** Positionals after the server name. */
  rest: string[];
}

/** Loads config and picks the server named first (or the ad-hoc one). */
export async function nameServer(ctx: CommandContext, command: string): Promise<NamedServer> {
  const set = await loadServers(ctx);
  if (set.adhoc) return { entry: set.servers[0]!, set, rest: ctx.positionals };
  const [name, ...rest] = ctx.positionals;
  if (name === undefined) {
    throw new UsageError("missing SERVER", {
      hint: `usage: mcpctl ${command} SERVER; 'mcpctl list' shows the servers`,
    });
  }
  const entry = findServer(set, name);
  usable(entry);
  return { entry, set, rest };
}

/** Throws when `entry` cannot be used: disabled, or broken in the config. */
export function usable(entry: ServerEntry): void {
  if (!entry.enabled) {
    throw new UsageError(`server '${entry.name}' is disabled (in ${entry.source})`);
  }
  if (entry.error) throw new ConfigError(`server '${entry.name}': ${entry.error}`);
}

/** Connect options with roots and stored credentials. */
export function serverConnectOptions(ctx: CommandContext, set: ServerSet): ConnectOptions {
  const options = connectOptions(ctx);
  options.auth = authResolver(ctx, set, { interactive: false });
  return options;
}

/**
 * Connects the named server, runs `work`, and always closes the connection.
 *
 * @example
 * ```ts ignore
 * return await withServer(ctx, "ping", async ({ client }) => 0);
 * ```
 */
export async function withServer<T>(
  ctx: CommandContext,
  command: string,
  work: (server: NamedServer & { client: Client }) => Promise<T>,
): Promise<T> {
  const named = await nameServer(ctx, command);
  const client = await connectServer(named.entry, serverConnectOptions(ctx, named.set));
  try {
    return await work({ ...named, client });
  } finally {
    await client.close();
  }
}
