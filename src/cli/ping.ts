/**
 * `mcpctl ping SERVER`: connects, sends one `ping`, and prints its round-trip time.
 * A server that does not answer in time exits 5 (timeout), like every other wait.
 *
 * @module
 */

import { ExitCode, UsageError } from "../errors.ts";
import { connectServer } from "../mcp/manager.ts";
import type { CommandContext } from "./commands.ts";
import { nameServer, serverConnectOptions } from "./one_server.ts";

/** Runs `ping`. */
export async function run(ctx: CommandContext): Promise<number> {
  const { entry, set, rest } = await nameServer(ctx, "ping");
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'`);
  const client = await connectServer(entry, serverConnectOptions(ctx, set));
  try {
    const started = performance.now();
    await client.request("ping", {}, { signal: ctx.signal });
    const ms = Math.round((performance.now() - started) * 10) / 10;
    if (ctx.values.json === true) await ctx.out.json({ server: entry.name, ms });
    else await ctx.out.result(`${entry.name}: ${ms} ms\n`);
    return ExitCode.ok;
  } finally {
    await client.close();
  }
}
