/**
 * The gate before a project-declared stdio server is first spawned: approved
 * definitions pass; on a terminal the user is asked (seeing the exact command, args,
 * cwd and env names); elsewhere the command is refused with the way to approve.
 *
 * @module
 */

import type { ServerEntry } from "../config/types.ts";
import {
  describeForTrust,
  isTrusted,
  needsTrust,
  recordTrust,
  trustFilePath,
} from "../config/trust.ts";
import { ConfigError } from "../errors.ts";
import type { CommandContext } from "./commands.ts";

/** A project server that was not approved. Exit 2. */
export class UntrustedError extends ConfigError {
  override name = "UntrustedError";
}

/** Whether the CI switch is on (`--trust-project` or `MCPCTL_TRUST_PROJECT=1`). */
export function trustSwitch(ctx: CommandContext): boolean {
  return ctx.values["trust-project"] === true || ctx.env("MCPCTL_TRUST_PROJECT") === "1";
}

/** Builds the gate for one command; prompts are asked one at a time. */
export function trustGate(
  ctx: CommandContext,
  io: { interactive?: boolean; readLine?: () => Promise<string | undefined> } = {},
): (entry: ServerEntry) => Promise<void> {
  let queue: Promise<unknown> = Promise.resolve();
  return (entry) => {
    if (!needsTrust(entry) || trustSwitch(ctx)) return Promise.resolve();
    const next = queue.then(() => check(ctx, entry, io));
    queue = next.catch(() => {});
    return next;
  };
}

async function check(
  ctx: CommandContext,
  entry: ServerEntry,
  io: { interactive?: boolean; readLine?: () => Promise<string | undefined> },
): Promise<void> {
  const path = trustFilePath(ctx.env);
  if (path && await isTrusted(path, entry)) return;
  const interactive = io.interactive ?? (Deno.stdin.isTerminal() && ctx.out.stderrIsTerminal);
  if (!interactive) {
    throw new UntrustedError(
      `server '${entry.name}' is declared in the project file ${entry.project!.file} ` +
        "and has not been approved to run",
      {
        hint:
          `review it with 'mcpctl trust --list', approve it with 'mcpctl trust ${entry.name}', ` +
          "or pass --trust-project (MCPCTL_TRUST_PROJECT=1) in CI",
      },
    );
  }
  await ctx.out.error(`${describeForTrust(entry)}\nTrust and run it? [y/N] `);
  const answer = (await (io.readLine ?? readLine)())?.trim().toLowerCase();
  if (answer !== "y" && answer !== "yes") {
    throw new UntrustedError(`server '${entry.name}' was not approved; nothing was run`);
  }
  if (path) await recordTrust(path, [entry]);
}

/** Reads one line from stdin (without consuming more than needed for a terminal). */
async function readLine(): Promise<string | undefined> {
  const buf = new Uint8Array(1024);
  let text = "";
  while (!text.includes("\n")) {
    const n = await Deno.stdin.read(buf);
    if (n === null) return text || undefined;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return text.slice(0, text.indexOf("\n"));
}
