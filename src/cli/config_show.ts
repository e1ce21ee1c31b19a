/**
 * `mcpctl config`: the servers, each with the file it came from, the files read, and
 * where the tool cache lives. Nothing is started.
 *
 * Fields are shown as written, variables unexpanded (`${CI_SECRET}`), so what a
 * variable holds is never printed: `url`, `args` (an mcp-remote style
 * `--header 'Authorization: Bearer ${X}'`), `command`, `cwd`, `tokenCommand`. Header
 * and environment values, OAuth client secrets and keys, URL passwords and query
 * values are `<redacted>` unless they are a variable reference (`Bearer ${TOKEN}`,
 * `?key=${KEY}`). The output goes through the one redactor as every output does.
 *
 * @module
 */

import type { ServerEntry } from "../config/types.ts";
import { PUBLIC_HEADERS, REDACTED } from "../util/redact.ts";
import { ExitCode } from "../errors.ts";
import { stripTerminal } from "../mcp/sanitize.ts";
import type { CommandContext } from "./commands.ts";
import { loadServers } from "./servers.ts";
import { commandCache } from "./tool_catalog.ts";

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

/**
 * A server as written (variables unexpanded), with every literal secret value replaced
 * by `<redacted>` (see the module documentation).
 */
export function shownServer(entry: ServerEntry): ShownServer {
  // An entry from `--url`/`--header` has nothing to expand: what was typed is written.
  const w = entry.written ?? entry;
  const s: ShownServer = {
    name: entry.name,
    source: entry.source,
    type: entry.type,
    enabled: entry.enabled,
  };
  if (w.command !== undefined) s.command = w.command;
  if (w.args.length > 0) s.args = w.args;
  if (Object.keys(w.env).length > 0) s.env = mapValues(w.env, (_, v) => shownSecret(v));
  if (w.cwd !== undefined) s.cwd = w.cwd;
  if (w.url !== undefined) s.url = shownUrl(w.url);
  if (Object.keys(w.headers).length > 0) {
    s.headers = mapValues(
      w.headers,
      (k, v) => PUBLIC_HEADERS.has(k.toLowerCase()) ? v : shownSecret(v),
    );
  }
  if (entry.timeoutMs !== undefined) s.timeoutMs = entry.timeoutMs;
  if (entry.maxMessageBytes !== undefined) s.maxMessageBytes = entry.maxMessageBytes;
  if (w.oauth !== undefined) {
    const oauth: Record<string, unknown> = { ...w.oauth };
    for (const k of ["clientSecret", "privateKey"] as const) {
      const v = w.oauth[k];
      if (v !== undefined) oauth[k] = shownSecret(v);
    }
    s.oauth = oauth;
  }
  if (w.tokenCommand !== undefined) s.tokenCommand = w.tokenCommand;
  if (entry.error !== undefined) s.error = entry.error;
  return s;
}

// One variable reference, alone or after an auth scheme: `${X}`, `{env:X}`, `Bearer ${X}`.
// A `${X:-default}` is shown with its default hidden.
const REFERENCE =
  /^(?:[A-Za-z]+ )?(?:\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}|\{env:[A-Za-z_][A-Za-z0-9_]*\})$/;

/** A secret value as shown: a variable reference as written, a literal value hidden. */
function shownSecret(value: string): string {
  if (!REFERENCE.test(value)) return REDACTED;
  return value.replace(/:-[^}]*\}$/, `:-${REDACTED}}`);
}

/**
 * A URL as shown: the password and every query value hidden unless it is a variable
 * reference. Worked on the text, as written: `${…}` is no valid URL.
 */
function shownUrl(url: string): string {
  const withPassword = url.replace(
    /^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@:]*:)([^/?#@]*)@/,
    (_, head: string, password: string) => `${head}${shownSecret(decodeSafe(password))}@`,
  );
  const query = withPassword.indexOf("?");
  if (query === -1) return withPassword;
  const hash = withPassword.indexOf("#", query);
  const end = hash === -1 ? withPassword.length : hash;
  const pairs = withPassword.slice(query + 1, end).split("&").map((pair) => {
    const eq = pair.indexOf("=");
    if (eq === -1) return pair;
    return `${pair.slice(0, eq + 1)}${shownSecret(decodeSafe(pair.slice(eq + 1)))}`;
  });
  return `${withPassword.slice(0, query + 1)}${pairs.join("&")}${withPassword.slice(end)}`;
}

function mapValues(
  map: Record<string, string>,
  fn: (key: string, value: string) => string,
): Record<string, string> {
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, fn(k, v)]));
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return text;
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
