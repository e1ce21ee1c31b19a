/**
 * Trust for project configs. A project file found by walking up from the working
 * directory can declare stdio servers — commands mcpctl would run — the same trust
 * channel as a repository's scripts. Approvals are remembered per config file, server
 * name and a digest of the definition as written, so an edited command asks again.
 *
 * @module
 */

import type { ServerEntry } from "./types.ts";

/** Where approvals are kept: `trust.json` in the state directory. */
export function trustFilePath(env: (name: string) => string | undefined): string | undefined {
  const home = env("MCPCTL_HOME");
  if (home) return `${home}/trust.json`;
  if (Deno.build.os === "windows") {
    const local = env("LOCALAPPDATA");
    return local ? `${local}\\mcpctl\\trust.json` : undefined;
  }
  const state = env("XDG_STATE_HOME");
  if (state) return `${state}/mcpctl/trust.json`;
  const h = env("HOME");
  return h ? `${h}/.local/state/mcpctl/trust.json` : undefined;
}

/** Whether running `entry` needs an approval (a stdio server from a project file). */
export function needsTrust(entry: ServerEntry): boolean {
  return entry.type === "stdio" && entry.project !== undefined;
}

/** SHA-256 (hex) of the entry's definition. */
export async function definitionDigest(entry: ServerEntry): Promise<string> {
  const bytes = new TextEncoder().encode(entry.project?.definition ?? "");
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...hash].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function keyOf(entry: ServerEntry): string {
  return `${entry.project!.file}#${entry.name}`;
}

interface TrustFile {
  approved: Record<string, { digest: string; approvedAt: string }>;
}

async function read(path: string): Promise<TrustFile> {
  try {
    const parsed = JSON.parse(await Deno.readTextFile(path));
    if (parsed && typeof parsed === "object" && parsed.approved) return parsed as TrustFile;
  } catch { /* missing or unreadable: nothing approved */ }
  return { approved: {} };
}

/** Whether `entry`, as defined now, was approved. */
export async function isTrusted(path: string, entry: ServerEntry): Promise<boolean> {
  const file = await read(path);
  return file.approved[keyOf(entry)]?.digest === await definitionDigest(entry);
}

/** Records approvals (or with `revoke`, removes them). Written atomically, mode 0600. */
export async function recordTrust(
  path: string,
  entries: ServerEntry[],
  options: { revoke?: boolean } = {},
): Promise<void> {
  const file = await read(path);
  for (const e of entries) {
    if (options.revoke) delete file.approved[keyOf(e)];
    else {
      file.approved[keyOf(e)] = {
        digest: await definitionDigest(e),
        approvedAt: new Date().toISOString(),
      };
    }
  }
  const dir = path.slice(0, Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")));
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify(file, null, 2) + "\n", { mode: 0o600 });
  await Deno.rename(tmp, path);
}

/** What a person is shown before approving: the exact command, args, cwd and env names. */
export function describeForTrust(entry: ServerEntry): string {
  const lines = [
    `server "${entry.name}" from ${entry.project?.file ?? entry.source} wants to run:`,
    `  command: ${entry.command ?? ""}`,
    `  args:    ${JSON.stringify(entry.args)}`,
    `  cwd:     ${entry.cwd ?? "(current directory)"}`,
    `  env:     ${Object.keys(entry.env).join(", ") || "(none added)"}`,
  ];
  return lines.join("\n");
}
