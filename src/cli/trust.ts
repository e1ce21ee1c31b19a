/**
 * `mcpctl trust [SERVER...]`: approves the project servers that need it (see the rule in
 * `config/trust.ts`), showing exactly what each one runs and sends first; on a terminal
 * it asks, elsewhere it needs `--yes`. `--list` shows every project server and whether
 * it is approved; `--revoke` withdraws approvals.
 *
 * @module
 */

import { describeForTrust, isBlocked, recordTrust, trustFilePath } from "../config/trust.ts";
import type { ServerEntry } from "../config/types.ts";
import { ConfigError, ExitCode, UsageError } from "../errors.ts";
import type { CommandContext } from "./commands.ts";
import { findServer, loadServers } from "./servers.ts";
import { isInteractive, readLine } from "./trust_gate.ts";

/** One project server in `trust --list --json`. */
export interface TrustListing {
  name: string;
  file: string;
  /** Why it needs approval; empty when it needs none. */
  needs: string[];
  /** True when an approval of this exact definition is stored. */
  approved: boolean;
  /** The entry as written (variables unexpanded). */
  definition: Record<string, unknown>;
}

/** Runs `trust`. */
export async function run(ctx: CommandContext): Promise<number> {
  const set = await loadServers(ctx);
  if (set.adhoc) throw new UsageError("trust applies to servers from project config files");
  const project = set.servers.filter((e) => e.project !== undefined);
  const named = ctx.positionals.map((n) => findServer(set, n));
  for (const e of named) {
    if (!e.project) {
      throw new UsageError(
        `server '${e.name}' is not from a project file (it is from ${e.source}): ` +
          "only project servers need approval",
      );
    }
  }
  if (ctx.values.list === true) return await list(ctx, named.length ? named : project);
  for (const e of named) {
    if (e.project!.needs.length === 0) {
      throw new UsageError(
        `server '${e.name}' needs no approval: it runs nothing and reads no variable`,
      );
    }
  }
  const path = trustFilePath(ctx.env);
  if (!path) throw new ConfigError("no state directory: set MCPCTL_HOME or HOME");
  const needing = project.filter((e) => e.project!.needs.length > 0);
  if (ctx.values.revoke === true) {
    const targets = named.length ? named : needing;
    await recordTrust(path, targets, { revoke: true });
    for (const e of targets) await ctx.out.result(`revoked: ${e.name} (${e.project!.file})\n`);
    if (targets.length === 0) await ctx.out.error("No project servers need approval.\n");
    return ExitCode.ok;
  }
  const targets = named.length ? named : needing.filter((e) => e.project!.approval !== "stored");
  if (targets.length === 0) {
    await ctx.out.error(
      needing.length
        ? "Every project server that needs approval is approved ('mcpctl trust --list').\n"
        : "No project servers need approval.\n",
    );
    return ExitCode.ok;
  }
  const shown = targets.map((e) => describeForTrust(e)).join("\n\n") + "\n";
  const which = targets.length === 1 ? `'${targets[0]!.name}'` : `these ${targets.length} servers`;
  if (ctx.values.yes !== true) {
    if (!isInteractive(ctx)) {
      await ctx.out.result(shown);
      throw new ConfigError(`nothing approved: off a terminal, approving needs --yes`, {
        hint: `review what is shown above, then run: mcpctl trust ${
          targets.map((e) => e.name).join(" ")
        } --yes`,
      });
    }
    await ctx.out.error(`${shown}\nApprove ${which}? [y/N] `);
    const answer = (await readLine())?.trim().toLowerCase();
    if (answer !== "y" && answer !== "yes") throw new ConfigError("nothing approved");
  } else {
    await ctx.out.result(shown + "\n");
  }
  await recordTrust(path, targets);
  for (const e of targets) await ctx.out.result(`approved: ${e.name} (${e.project!.file})\n`);
  return ExitCode.ok;
}

async function list(ctx: CommandContext, entries: ServerEntry[]): Promise<number> {
  if (ctx.values.json === true) {
    await ctx.out.json(entries.map(listing));
    return ExitCode.ok;
  }
  if (entries.length === 0) {
    await ctx.out.error("No project servers.\n");
    return ExitCode.ok;
  }
  const blocks = entries.map((e) => {
    const p = e.project!;
    const status = p.needs.length === 0
      ? "needs no approval"
      : p.approval === "stored"
      ? "approved"
      : "not approved";
    return `${describeForTrust(e)}\n  status: ${status}${
      isBlocked(e) || p.approval === "stored" || p.needs.length === 0
        ? ""
        : ` (approved for this run by ${p.approval === "switch" ? "the CI switch" : "you"})`
    }\n`;
  });
  await ctx.out.result(blocks.join("\n"));
  return ExitCode.ok;
}

function listing(e: ServerEntry): TrustListing {
  const p = e.project!;
  const { name: _, source: __, ...definition } = p.raw;
  return {
    name: e.name,
    file: p.file,
    needs: p.needs,
    approved: p.approval === "stored",
    definition,
  };
}
