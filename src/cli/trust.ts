/**
 * `mcpctl trust [SERVER...]`: approves the stdio servers declared in project files
 * (found by walking up from the working directory); `--list` shows them and whether
 * they are approved; `--revoke` withdraws approvals.
 *
 * @module
 */

import {
  describeForTrust,
  isTrusted,
  needsTrust,
  recordTrust,
  trustFilePath,
} from "../config/trust.ts";
import { ConfigError, ExitCode, UsageError } from "../errors.ts";
import type { CommandContext } from "./commands.ts";
import { findServer, loadServers } from "./servers.ts";

/** Runs `trust`. */
export async function run(ctx: CommandContext): Promise<number> {
  const set = await loadServers(ctx);
  if (set.adhoc) throw new UsageError("trust applies to servers from project config files");
  const path = trustFilePath(ctx.env);
  if (!path) throw new ConfigError("no state directory: set MCPCTL_HOME or HOME");
  const candidates = ctx.positionals.length
    ? ctx.positionals.map((n) => findServer(set, n))
    : set.servers.filter(needsTrust);
  for (const e of candidates) {
    if (!needsTrust(e)) {
      throw new UsageError(
        `server '${e.name}' needs no approval: only stdio servers from project files do`,
      );
    }
  }
  if (ctx.values.list === true) {
    for (const e of candidates) {
      const ok = await isTrusted(path, e);
      await ctx.out.result(
        `${describeForTrust(e)}\n  status:  ${ok ? "approved" : "not approved"}\n`,
      );
    }
    if (candidates.length === 0) await ctx.out.error("No project servers need approval.\n");
    return ExitCode.ok;
  }
  if (candidates.length === 0) {
    await ctx.out.error("No project servers need approval.\n");
    return ExitCode.ok;
  }
  const revoke = ctx.values.revoke === true;
  await recordTrust(path, candidates, { revoke });
  for (const e of candidates) {
    await ctx.out.result(
      revoke ? `revoked: ${e.name} (${e.project!.file})\n` : `${describeForTrust(e)}\n  approved\n`,
    );
  }
  return ExitCode.ok;
}
