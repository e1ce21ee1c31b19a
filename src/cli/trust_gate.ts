/**
 * The gate before a blocked project entry (see `config/trust.ts`) is first started or
 * sent to: on a terminal the user is shown exactly what it runs and sends and asked;
 * a yes approves it in place (its variables are expanded only then) and is remembered.
 * Elsewhere, or after a no, the command is refused with the one way to approve.
 *
 * @module
 */

import { approveEntry } from "../config/load.ts";
import {
  blockedError,
  describeForTrust,
  isBlocked,
  recordTrust,
  trustFilePath,
} from "../config/trust.ts";
import type { ServerEntry } from "../config/types.ts";
import type { CommandContext } from "./commands.ts";

/** Whether the CI switch is on (`--trust-project` or `MCPCTL_TRUST_PROJECT=1`). */
export function trustSwitch(ctx: CommandContext): boolean {
  return ctx.values["trust-project"] === true || ctx.env("MCPCTL_TRUST_PROJECT") === "1";
}

/** How the gate talks to a person (injected in tests). */
export interface GateIo {
  /** Whether a person can answer (default: stdin and stderr are terminals). */
  interactive?: boolean;
  /** Reads one answer line. */
  readLine?: () => Promise<string | undefined>;
  /** Told about an entry approved at the prompt (its secrets are known only now). */
  onApproved?: (entry: ServerEntry) => void;
}

/**
 * Builds the gate for one command: resolves for entries that need nothing or are
 * approved, asks for blocked ones one at a time, throws UntrustedError when refused.
 */
export function trustGate(
  ctx: CommandContext,
  io: GateIo = {},
): (entry: ServerEntry) => Promise<void> {
  let queue: Promise<unknown> = Promise.resolve();
  return (entry) => {
    // A broken entry (say, an invalid name) fails on its own: nothing to ask about.
    if (!isBlocked(entry) || entry.error !== undefined) return Promise.resolve();
    const next = queue.then(() => check(ctx, entry, io));
    queue = next.catch(() => {});
    return next;
  };
}

async function check(ctx: CommandContext, entry: ServerEntry, io: GateIo): Promise<void> {
  // Asked and approved while this one waited its turn (the same entry, twice).
  if (!isBlocked(entry)) return;
  if (!(io.interactive ?? isInteractive(ctx))) throw blockedError(entry);
  await ctx.out.error(`${describeForTrust(entry)}\nApprove '${entry.name}'? [y/N] `);
  const answer = (await (io.readLine ?? readLine)())?.trim().toLowerCase();
  if (answer !== "y" && answer !== "yes") throw blockedError(entry, true);
  approveEntry(entry, ctx.env, "prompt");
  io.onApproved?.(entry);
  const path = trustFilePath(ctx.env);
  try {
    if (path) await recordTrust(path, [entry]);
  } catch (error) {
    // Approved for this run all the same: the person said yes.
    await ctx.out.error(`mcpctl: the approval is not remembered: ${(error as Error).message}\n`);
  }
}

/** Whether a person can answer a question: stdin and stderr are terminals. */
export function isInteractive(ctx: CommandContext): boolean {
  try {
    return Deno.stdin.isTerminal() && ctx.out.stderrIsTerminal;
  } catch {
    return false;
  }
}

/** Reads one line from stdin (without consuming more than needed for a terminal). */
export async function readLine(): Promise<string | undefined> {
  const buf = new Uint8Array(1024);
  let text = "";
  while (!text.includes("\n")) {
    const n = await Deno.stdin.read(buf);
    if (n === null) return text || undefined;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return text.slice(0, text.indexOf("\n"));
}
