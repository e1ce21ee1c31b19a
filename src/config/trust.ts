/**
 * The trust rule for project files, decided here and nowhere else.
 *
 * A project file (any config file found by walking up from the working directory,
 * editor files such as `.mcp.json` included) is hostile until approved: whatever an
 * entry in it asks for that runs a local program or sends local data needs approval
 * first —
 *
 * - a stdio `command` (with its args, env and cwd);
 * - a `tokenCommand`;
 * - any variable (`${VAR}`, `${VAR:-default}`, `{env:VAR}`) anywhere in the entry;
 * - `oauth` settings (they pick the grant, keys and client secrets mcpctl sends,
 *   `MCPCTL_OAUTH_CLIENT_SECRET` included);
 * - replacing a server of the same name from the global file (it would receive what
 *   you meant for that server).
 *
 * An entry that needs none of that (a plain `url` with literal headers) works unasked.
 * Until approved, an entry is *blocked*: its variables are not even expanded, and
 * every path that could start or send it refuses ({@linkcode assertApproved}).
 * `credentials.helper` is not a server setting: a project file may not set it at all
 * (`load.ts`).
 *
 * Approvals are remembered per project file (the path as found, so a symlink to an
 * approved file is a new file), server name and a digest of every field that can run
 * or send, as written: editing any of them asks again.
 *
 * @module
 */

import { ConfigError, UntrustedError } from "../errors.ts";
import { referencedVariables } from "./expand.ts";
import { quote } from "./quote.ts";
import type { RawEntry, ServerEntry } from "./types.ts";

/** Where approvals are kept: `trust.json` in the state directory. */
export function trustFilePath(
  env: (name: string) => string | undefined,
  os: typeof Deno.build.os = Deno.build.os,
): string | undefined {
  const home = env("MCPCTL_HOME");
  if (home) return `${home}${os === "windows" ? "\\" : "/"}trust.json`;
  if (os === "windows") {
    const local = env("LOCALAPPDATA");
    return local ? `${local}\\mcpctl\\trust.json` : undefined;
  }
  const state = env("XDG_STATE_HOME");
  if (state) return `${state}/mcpctl/trust.json`;
  const h = env("HOME");
  return h ? `${h}/.local/state/mcpctl/trust.json` : undefined;
}

/**
 * Why a project entry needs approval, one phrase each (empty: it needs none). This is
 * the trust rule of the module doc. `replaces` is the global file whose server of the
 * same name this entry replaces, if any.
 *
 * @example
 * ```ts
 * import { approvalNeeds } from "./trust.ts";
 * approvalNeeds({
 *   name: "svc", source: "/repo/.mcp.json", enabled: true, args: [], env: {},
 *   url: "https://h/mcp?k=${KEY}", headers: {},
 * }); // ['reads the environment variable KEY (in "url")']
 * ```
 */
export function approvalNeeds(raw: RawEntry, replaces?: string): string[] {
  const needs: string[] = [];
  if (raw.command !== undefined) needs.push(`runs the program ${quote(raw.command)}`);
  if (raw.tokenCommand !== undefined) {
    needs.push(`runs the tokenCommand ${quote(raw.tokenCommand[0] ?? "")}`);
  }
  const uses = new Map<string, Set<string>>();
  for (const [field, text] of strings(raw)) {
    for (const name of referencedVariables(text)) {
      const fields = uses.get(name) ?? new Set<string>();
      fields.add(field);
      uses.set(name, fields);
    }
  }
  if (uses.size > 0) {
    const names = [...uses.keys()].sort();
    const fields = [...new Set([...uses.values()].flatMap((s) => [...s]))];
    needs.push(
      `reads the environment variable${names.length === 1 ? "" : "s"} ${names.join(", ")} ` +
        `(in ${fields.map((f) => quote(f)).join(", ")})`,
    );
  }
  if (raw.oauth !== undefined) {
    needs.push(`has OAuth settings (${Object.keys(raw.oauth).map((k) => quote(k)).join(", ")})`);
  }
  if (replaces !== undefined) {
    needs.push(`replaces the server ${quote(raw.name)} of ${quote(replaces)}`);
  }
  return needs;
}

/**
 * Every string of an entry with the field it is in, keys of maps included: a variable
 * anywhere counts, whether or not that field is expanded today.
 */
function strings(raw: RawEntry): [string, string][] {
  const out: [string, string][] = [];
  const walk = (field: string, value: unknown): void => {
    if (typeof value === "string") out.push([field, value]);
    else if (Array.isArray(value)) value.forEach((v, i) => walk(`${field}[${i}]`, v));
    else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        out.push([field, k]);
        walk(`${field}.${k}`, v);
      }
    }
  };
  for (const [field, value] of Object.entries(raw)) {
    if (field !== "name" && field !== "source") walk(field, value);
  }
  return out;
}

/**
 * What an approval covers, in a stable form: every field that can run or send, as
 * written (type, command, args, env, cwd, url, headers, tokenCommand, oauth).
 */
export function approvalDefinition(raw: RawEntry): string {
  const sorted = (o: object | undefined) =>
    o === undefined
      ? null
      : Object.fromEntries(Object.entries(o).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify({
    type: raw.type ?? null,
    command: raw.command ?? null,
    args: raw.args,
    env: sorted(raw.env),
    cwd: raw.cwd ?? null,
    url: raw.url ?? null,
    headers: sorted(raw.headers),
    tokenCommand: raw.tokenCommand ?? null,
    oauth: sorted(raw.oauth),
  });
}

/** SHA-256 (hex) of {@linkcode approvalDefinition}. */
export async function approvalDigest(raw: RawEntry): Promise<string> {
  const bytes = new TextEncoder().encode(approvalDefinition(raw));
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...hash].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The key of an approval in the trust file: project file and server name. */
export function approvalKey(file: string, name: string): string {
  return `${file}#${name}`;
}

/** Stored approvals: key → digest. */
export type Approvals = Record<string, { digest: string; approvedAt?: string }>;

/** Reads the approvals in the trust file `text` (missing or unreadable: none). */
export function parseApprovals(text: string | undefined): Approvals {
  if (text === undefined) return {};
  try {
    const parsed = JSON.parse(text);
    const approved = parsed?.approved;
    if (approved && typeof approved === "object" && !Array.isArray(approved)) {
      const out: Approvals = {};
      for (const [k, v] of Object.entries(approved)) {
        if (v && typeof v === "object" && typeof (v as { digest: unknown }).digest === "string") {
          out[k] = v as Approvals[string];
        }
      }
      return out;
    }
  } catch { /* unreadable: nothing approved */ }
  return {};
}

async function readApprovals(path: string): Promise<Approvals> {
  try {
    return parseApprovals(await Deno.readTextFile(path));
  } catch {
    return {};
  }
}

/** Whether `entry` is a project entry that needs approval and has none. */
export function isBlocked(entry: ServerEntry): boolean {
  const p = entry.project;
  return p !== undefined && p.needs.length > 0 && p.approval === undefined;
}

/** Whether `entry`, as defined now, has a stored approval. */
export async function isTrusted(path: string, entry: ServerEntry): Promise<boolean> {
  const p = entry.project;
  if (!p) return false;
  return (await readApprovals(path))[approvalKey(p.file, entry.name)]?.digest === p.digest;
}

/**
 * Records approvals (or with `revoke`, removes them). Written atomically, mode 0600;
 * a failure is a ConfigError naming the file.
 */
export async function recordTrust(
  path: string,
  entries: ServerEntry[],
  options: { revoke?: boolean } = {},
): Promise<void> {
  const approved = await readApprovals(path);
  for (const e of entries) {
    if (!e.project) continue;
    const key = approvalKey(e.project.file, e.name);
    if (options.revoke) delete approved[key];
    else approved[key] = { digest: e.project.digest, approvedAt: new Date().toISOString() };
  }
  const dir = path.slice(0, Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")));
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(tmp, JSON.stringify({ approved }, null, 2) + "\n", {
      mode: 0o600,
      createNew: true,
    });
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw new ConfigError(`cannot write the approvals file ${path}: ${(e as Error).message}`);
  }
}

/**
 * The way to approve `names`: the one command, and the CI switch.
 *
 * @example
 * ```ts
 * import { approveHint } from "./trust.ts";
 * approveHint(["a", "b"]);
 * ```
 */
export function approveHint(names: string[]): string {
  const one = names.length === 1;
  return `'mcpctl trust ${names.join(" ")}' shows what ${
    one ? "it runs and sends" : "they run and send"
  } ` +
    `and approves ${one ? "it" : "them"}; in CI, --trust-project (MCPCTL_TRUST_PROJECT=1) ` +
    "approves project files for one run";
}

/** The error for a blocked entry: what it would do, that nothing was done, how to approve. */
export function blockedError(entry: ServerEntry, declined = false): UntrustedError {
  const p = entry.project!;
  return new UntrustedError(
    `server '${entry.name}' from the project file ${quote(p.file)} ` +
      `${declined ? "was not approved" : "is not approved"}: it ${p.needs.join("; ")}; ` +
      "nothing of it was run or sent",
    { hint: approveHint([entry.name]) },
  );
}

/** Throws {@linkcode blockedError} for a blocked entry: the check on every path that starts or sends. */
export function assertApproved(entry: ServerEntry): void {
  if (isBlocked(entry)) throw blockedError(entry);
}

/**
 * What a person is shown before approving: the file, why, and every field that can
 * run or send, as written (variables unexpanded), each JSON-quoted so no control
 * character reaches the terminal.
 */
export function describeForTrust(entry: ServerEntry): string {
  const p = entry.project;
  if (!p) return `server ${quote(entry.name)} from ${quote(entry.source)}`;
  const raw = p.raw;
  const rows: [string, string][] = [];
  if (raw.type !== undefined) rows.push(["type", quote(raw.type)]);
  if (raw.command !== undefined) {
    rows.push(["command", quote(raw.command)]);
    rows.push(["args", quote(raw.args)]);
    rows.push([
      "cwd",
      raw.cwd === undefined
        ? "(not set: the directory mcpctl runs in)"
        : `${quote(raw.cwd)} (relative paths: from the file's directory)`,
    ]);
  } else if (raw.args.length > 0) rows.push(["args", quote(raw.args)]);
  if (raw.command !== undefined || Object.keys(raw.env).length > 0) {
    rows.push(["env", Object.keys(raw.env).length ? quote(raw.env) : "(none added)"]);
  }
  if (raw.url !== undefined) rows.push(["url", quote(raw.url)]);
  if (Object.keys(raw.headers).length > 0) rows.push(["headers", quote(raw.headers)]);
  if (raw.tokenCommand !== undefined) rows.push(["tokenCommand", quote(raw.tokenCommand)]);
  if (raw.oauth !== undefined) rows.push(["oauth", quote(raw.oauth)]);
  const width = Math.max(...rows.map(([k]) => k.length)) + 1;
  const lines = [
    `server ${quote(entry.name)} from the project file ${quote(p.file)}`,
    ...(p.needs.length ? [`  needs approval: it ${p.needs.join("; ")}`] : []),
    ...rows.map(([k, v]) => `  ${`${k}:`.padEnd(width)} ${v}`),
  ];
  return lines.join("\n");
}
