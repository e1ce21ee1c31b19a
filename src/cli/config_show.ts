/**
 * `mcpctl config`: the resolved servers, each with the file it came from, the files
 * read, and where the tool cache lives. Header values, environment values, OAuth
 * secrets and URL passwords are shown as `<redacted>`. Nothing is started.
 *
 * @module
 */

import type { ServerEntry } from "../config/types.ts";
import { ExitCode } from "../errors.ts";
import { stripTerminal } from "../mcp/sanitize.ts";
import type { CommandContext } from "./commands.ts";
import { loadServers } from "./servers.ts";
import { commandCache } from "./tool_catalog.ts";

/** What replaces a secret value. */
export const REDACTED = "<redacted>";

/** One server in `config --json`. */
export interface ShownServer {
  name: string;
  source: string;
  type: string;
  enabled: boolean;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  maxMessageBytes?: number;
  oauth?: Record<string, unknown>;
  tokenCommand?: string[];
  error?: string;
}

/** Runs `config`. */
export async function run(ctx: CommandContext): Promise<number> {
  const set = await loadServers(ctx);
  const servers = set.servers.map(shownServer);
  const files = set.config?.files ?? [];
  const cache = commandCache(ctx);
  const cacheInfo = cache ? { dir: cache.dir, ttlSeconds: cache.ttlMs / 1000 } : undefined;
  if (ctx.values.json === true) {
    await ctx.out.json({
      files,
      servers,
      ...(set.config?.credentialHelper ? { credentialHelper: set.config.credentialHelper } : {}),
      ...(cacheInfo ? { cache: cacheInfo } : {}),
    });
    return ExitCode.ok;
  }
  const lines: string[] = [];
  if (files.length === 0) lines.push("No config file found.");
  else {
    lines.push("Config files (lowest precedence first):");
    for (const f of files) lines.push(`  ${clean(f.path)}  (${f.origin})`);
  }
  lines.push(servers.length ? "Servers:" : "No servers.");
  for (const s of servers) lines.push(...serverLines(s));
  if (set.config?.credentialHelper) {
    lines.push(`Credential helper: ${clean(set.config.credentialHelper)}`);
  }
  if (cacheInfo) {
    lines.push(
      `Tool cache: ${clean(cacheInfo.dir)} (entries kept ${ttlText(cacheInfo.ttlSeconds)})`,
    );
  }
  await ctx.out.result(lines.join("\n") + "\n");
  return ExitCode.ok;
}

/** A server with every secret value replaced by `<redacted>`. */
export function shownServer(entry: ServerEntry): ShownServer {
  const s: ShownServer = {
    name: entry.name,
    source: entry.source,
    type: entry.type,
    enabled: entry.enabled,
  };
  if (entry.command !== undefined) s.command = entry.command;
  if (entry.args.length > 0) s.args = entry.args;
  if (Object.keys(entry.env).length > 0) s.env = redactValues(entry.env);
  if (entry.cwd !== undefined) s.cwd = entry.cwd;
  if (entry.url !== undefined) s.url = redactUrl(entry.url);
  if (Object.keys(entry.headers).length > 0) s.headers = redactValues(entry.headers);
  if (entry.timeoutMs !== undefined) s.timeoutMs = entry.timeoutMs;
  if (entry.maxMessageBytes !== undefined) s.maxMessageBytes = entry.maxMessageBytes;
  if (entry.oauth !== undefined) {
    const oauth: Record<string, unknown> = { ...entry.oauth };
    for (const k of ["clientSecret", "privateKey"]) if (k in oauth) oauth[k] = REDACTED;
    s.oauth = oauth;
  }
  if (entry.tokenCommand !== undefined) s.tokenCommand = entry.tokenCommand;
  if (entry.error !== undefined) s.error = entry.error;
  return s;
}

function redactValues(map: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(map).map((k) => [k, REDACTED]));
}

/** Hides the password of a URL's user info (`https://user:<redacted>@host/`). */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password === "") return url;
    u.password = "REDACTED";
    return u.href.replace(":REDACTED@", `:${REDACTED}@`);
  } catch {
    return url;
  }
}

function serverLines(s: ShownServer): string[] {
  const state = s.enabled ? "" : "  disabled";
  const lines = [`  ${s.name}  ${s.type}${state}  from ${clean(s.source)}`];
  if (s.command !== undefined) {
    lines.push(`    command: ${[s.command, ...(s.args ?? [])].map(quote).join(" ")}`);
  }
  if (s.cwd !== undefined) lines.push(`    cwd: ${clean(s.cwd)}`);
  if (s.url !== undefined) lines.push(`    url: ${clean(s.url)}`);
  for (const [k, v] of Object.entries(s.env ?? {})) lines.push(`    env: ${clean(k)}=${v}`);
  for (const [k, v] of Object.entries(s.headers ?? {})) lines.push(`    header: ${clean(k)}: ${v}`);
  if (s.timeoutMs !== undefined) lines.push(`    timeout: ${s.timeoutMs} ms`);
  if (s.oauth !== undefined) {
    const parts = Object.entries(s.oauth).map(([k, v]) => `${k}=${clean(String(v))}`);
    lines.push(`    oauth: ${parts.join(", ")}`);
  }
  if (s.tokenCommand !== undefined) {
    lines.push(`    tokenCommand: ${s.tokenCommand.map(quote).join(" ")}`);
  }
  if (s.error !== undefined) lines.push(`    error: ${clean(s.error)}`);
  return lines;
}

function quote(word: string): string {
  const w = clean(word);
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`;
}

function clean(text: string): string {
  return stripTerminal(text).replace(/\s+/g, " ");
}

function ttlText(seconds: number): string {
  if (seconds === 0) return "never: caching is off";
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
