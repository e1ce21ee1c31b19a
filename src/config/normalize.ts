/**
 * Reads the three config formats into one shape, validating every field by hand (no
 * schema library on the start-up path). Errors name the file, the server and the field.
 *
 * - ours: `{"servers": {NAME: {...}}}`
 * - Claude Code / Claude Desktop / Cursor: `{"mcpServers": {NAME: {...}}}`
 * - opencode-style agents: `{"mcp": {NAME: {...}}}`
 *
 * @module
 */

import { ConfigError } from "../errors.ts";
import { hasControl, quote } from "./quote.ts";
import type { OAuthSettings, RawEntry, TransportKind } from "./types.ts";

export type { RawEntry };

/** What one file declares. */
export interface RawConfig {
  file: string;
  entries: RawEntry[];
  credentialHelper?: string;
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

class Fields {
  constructor(readonly file: string, readonly server: string, readonly obj: Obj) {}

  /** A string naming something shown to a person (a program, a directory). */
  name(field: string, v: string): string {
    if (hasControl(v)) this.fail(field, `contains a control character: ${quote(v)}`);
    return v;
  }
  fail(field: string, want: string): never {
    throw new ConfigError(`${this.file}: server "${this.server}": field "${field}" ${want}`);
  }
  str(field: string): string | undefined {
    const v = this.obj[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") this.fail(field, "must be a string");
    return v;
  }
  bool(field: string): boolean | undefined {
    const v = this.obj[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "boolean") this.fail(field, "must be true or false");
    return v;
  }
  num(field: string): number | undefined {
    const v = this.obj[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) {
      this.fail(field, "must be a positive number");
    }
    return v;
  }
  strList(field: string): string[] | undefined {
    const v = this.obj[field];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) {
      this.fail(field, "must be an array of strings");
    }
    return v as string[];
  }
  strMap(field: string): Record<string, string> | undefined {
    const v = this.obj[field];
    if (v === undefined || v === null) return undefined;
    if (!isObj(v)) this.fail(field, "must be an object of strings");
    const out: Record<string, string> = {};
    for (const [k, x] of Object.entries(v)) {
      // A name is shown in prompts and errors: no control character may hide in it.
      if (hasControl(k)) this.fail(field, `has a name with a control character: ${quote(k)}`);
      if (typeof x === "string") out[k] = x;
      else if (typeof x === "number" || typeof x === "boolean") out[k] = String(x);
      else this.fail(`${field}.${k}`, "must be a string");
    }
    return out;
  }
}

/**
 * Normalizes one parsed config document.
 *
 * @example
 * ```ts
 * import { normalizeConfig } from "./normalize.ts";
 * normalizeConfig({ servers: { demo: { command: ["deno", "run", "s.ts"] } } }, "mcpctl.json");
 * ```
 */
export function normalizeConfig(doc: unknown, file: string): RawConfig {
  if (!isObj(doc)) throw new ConfigError(`${file}: the top level must be a JSON object`);
  const entries: RawEntry[] = [];
  const sections: [string, (f: Fields) => RawEntry][] = [
    ["servers", ownEntry],
    ["mcpServers", claudeEntry],
    ["mcp", opencodeEntry],
  ];
  for (const [key, read] of sections) {
    const section = doc[key];
    if (section === undefined) continue;
    if (!isObj(section)) throw new ConfigError(`${file}: "${key}" must be an object`);
    for (const [name, value] of Object.entries(section)) {
      if (hasControl(name)) {
        throw new ConfigError(
          `${file}: "${key}": a server name contains a control character: ${quote(name)}`,
        );
      }
      if (!isObj(value)) {
        throw new ConfigError(`${file}: server "${name}" must be an object`);
      }
      entries.push(read(new Fields(file, name, value)));
    }
  }
  const config: RawConfig = { file, entries };
  const creds = doc.credentials;
  if (creds !== undefined) {
    if (!isObj(creds) || (creds.helper !== undefined && typeof creds.helper !== "string")) {
      throw new ConfigError(`${file}: "credentials.helper" must be a string`);
    }
    if (typeof creds.helper === "string") config.credentialHelper = creds.helper;
  }
  return config;
}

function base(f: Fields): RawEntry {
  return { name: f.server, source: f.file, enabled: true, args: [], env: {}, headers: {} };
}

function readType(f: Fields, field = "type"): TransportKind | undefined {
  const t = f.str(field);
  if (t === undefined) return undefined;
  switch (t) {
    case "stdio":
    case "local":
      return "stdio";
    case "http":
    case "streamable-http":
    case "streamableHttp":
    case "remote":
      return "http";
    case "sse":
      return "sse";
  }
  return f.fail(field, `must be "stdio", "http" or "sse", not ${JSON.stringify(t)}`);
}

function commandOf(f: Fields, e: RawEntry): void {
  const c = f.obj.command;
  if (typeof c === "string") e.command = f.name("command", c);
  else if (Array.isArray(c)) {
    const list = f.strList("command")!;
    if (list.length === 0) f.fail("command", "must not be empty");
    e.command = f.name("command", list[0]!);
    e.args = list.slice(1);
  } else if (c !== undefined && c !== null) f.fail("command", "must be a string or an array");
  const args = f.strList("args");
  if (args) e.args = [...e.args, ...args];
}

function common(f: Fields, e: RawEntry): RawEntry {
  const type = readType(f);
  if (type) e.type = type;
  const url = f.str("url");
  if (url !== undefined) e.url = url;
  const headers = f.strMap("headers");
  if (headers) e.headers = headers;
  const cwd = f.str("cwd");
  if (cwd !== undefined) e.cwd = f.name("cwd", cwd);
  const timeout = f.num("timeout");
  if (timeout !== undefined) e.timeoutMs = timeout;
  const max = f.num("maxMessageBytes");
  if (max !== undefined) e.maxMessageBytes = max;
  const tokenCommand = f.obj.tokenCommand;
  if (typeof tokenCommand === "string") e.tokenCommand = ["sh", "-c", tokenCommand];
  else {
    const list = f.strList("tokenCommand");
    if (list !== undefined) {
      if (list[0] !== undefined) f.name("tokenCommand", list[0]);
      e.tokenCommand = list;
    }
  }
  const oauth = f.obj.oauth;
  if (oauth !== undefined) e.oauth = readOAuth(new Fields(f.file, f.server, asObj(f, oauth)));
  if (e.type === undefined && e.command === undefined && e.url === undefined) {
    f.fail("command", 'or "url" is required');
  }
  if (e.type === "stdio" && e.command === undefined) f.fail("command", "is required for stdio");
  if ((e.type === "http" || e.type === "sse") && e.url === undefined) {
    f.fail("url", `is required for ${e.type}`);
  }
  return e;
}

function asObj(f: Fields, v: unknown): Obj {
  if (!isObj(v)) f.fail("oauth", "must be an object");
  return v;
}

function readOAuth(f: Fields): OAuthSettings {
  const o: OAuthSettings = {};
  const strings = [
    "clientId",
    "clientSecret",
    "clientMetadataUrl",
    "scope",
    "privateKey",
    "signingAlgorithm",
    "tokenEndpointAuthMethod",
  ] as const;
  for (const k of strings) {
    const v = f.str(k);
    if (v !== undefined) o[k] = v;
  }
  const port = f.num("callbackPort");
  if (port !== undefined) o.callbackPort = port;
  const grant = f.str("grant");
  if (grant !== undefined) {
    if (grant !== "authorization_code" && grant !== "client_credentials") {
      f.fail("oauth.grant", 'must be "authorization_code" or "client_credentials"');
    }
    o.grant = grant;
  }
  return o;
}

function ownEntry(f: Fields): RawEntry {
  const e = base(f);
  commandOf(f, e);
  const env = f.strMap("env");
  if (env) e.env = env;
  const enabled = f.bool("enabled");
  if (enabled !== undefined) e.enabled = enabled;
  return common(f, e);
}

function claudeEntry(f: Fields): RawEntry {
  const e = ownEntry(f);
  // Several editors write `"disabled": true` instead of `"enabled": false`.
  if (f.bool("disabled") === true) e.enabled = false;
  return e;
}

function opencodeEntry(f: Fields): RawEntry {
  const e = base(f);
  commandOf(f, e);
  const env = f.strMap("environment") ?? f.strMap("env");
  if (env) e.env = env;
  const enabled = f.bool("enabled");
  if (enabled !== undefined) e.enabled = enabled;
  return common(f, e);
}
