/**
 * Finds, reads and layers config files, and resolves each entry into a
 * {@linkcode ServerEntry}. Reading config starts nothing: no process, no connection.
 *
 * Files: `--config PATH` or `MCPCTL_CONFIG` alone when given; otherwise the global file
 * layered under the project files found walking up from the working directory (nearer
 * files win; in one directory `mcpctl.json(c)` wins over `.mcp.json`).
 *
 * Project entries go through the trust rule (`trust.ts`) before anything else: one that
 * needs approval and has none is left unexpanded (its variables are never read) and
 * marked blocked. A project file may not set `credentials.helper`.
 *
 * @module
 */

import { ConfigError } from "../errors.ts";
import { serverNameProblem } from "../mcp/names.ts";
import { expandVariables, MissingVariableError } from "./expand.ts";
import { parseJsonc } from "./jsonc.ts";
import { normalizeConfig, type RawConfig, type RawEntry } from "./normalize.ts";
import {
  approvalDigest,
  approvalKey,
  approvalNeeds,
  type Approvals,
  parseApprovals,
  trustFilePath,
} from "./trust.ts";
import type { Approval, ServerEntry, WrittenFields } from "./types.ts";

/** Options for {@linkcode loadConfig}. */
export interface LoadConfigOptions {
  /** `--config PATH`: read this file alone. */
  configPath?: string;
  /** Environment lookup (variables and `MCPCTL_CONFIG`, `XDG_CONFIG_HOME`, `HOME`). */
  env: (name: string) => string | undefined;
  /** Working directory to walk up from. */
  cwd: string;
  /** Operating system, for config locations (default `Deno.build.os`). */
  os?: typeof Deno.build.os;
  /** Reads a file, or returns undefined when it does not exist (injected in tests). */
  readFile?: (path: string) => Promise<string | undefined>;
  /**
   * Approve every project entry for this run (`--trust-project`,
   * `MCPCTL_TRUST_PROJECT=1`); stored approvals are still read and told apart.
   */
  trustProject?: boolean;
}

/** How a config file was found. */
export type ConfigOrigin = "explicit" | "global" | "project";

/** The result of loading configuration. */
export interface LoadedConfig {
  /** Every server, in a stable order (by name). */
  servers: ServerEntry[];
  /** Files read, lowest precedence first. */
  files: { path: string; origin: ConfigOrigin }[];
  /**
   * `credentials.helper`, from the highest-precedence file that sets it: `--config`
   * or the global file (a project file may not).
   */
  credentialHelper?: string;
}

/**
 * Loads configuration as described in the module doc.
 *
 * @example
 * ```ts ignore
 * import { loadConfig } from "./load.ts";
 * const config = await loadConfig({ env: (n) => Deno.env.get(n), cwd: Deno.cwd() });
 * ```
 */
export async function loadConfig(options: LoadConfigOptions): Promise<LoadedConfig> {
  const read = options.readFile ?? readIfExists;
  const explicit = options.configPath ?? nonEmpty(options.env("MCPCTL_CONFIG"));
  const candidates: { path: string; origin: ConfigOrigin }[] = [];
  if (explicit !== undefined) {
    candidates.push({ path: explicit, origin: "explicit" });
  } else {
    for (const path of globalConfigPaths(options)) candidates.push({ path, origin: "global" });
    for (const path of projectConfigPaths(options.cwd)) {
      candidates.push({ path, origin: "project" });
    }
  }
  const configs: RawConfig[] = [];
  const files: LoadedConfig["files"] = [];
  const projectFiles = new Set<string>();
  for (const c of candidates) {
    const text = await read(c.path);
    if (text === undefined) {
      if (c.origin === "explicit") throw new ConfigError(`config file not found: ${c.path}`);
      continue;
    }
    configs.push(normalizeConfig(await parseJsonc(text, c.path), c.path));
    files.push(c);
    if (c.origin === "project") projectFiles.add(c.path);
  }
  const byName = new Map<string, RawEntry>();
  // Global servers a project entry replaced: name → global file.
  const replaced = new Map<string, string>();
  let credentialHelper: string | undefined;
  configs.forEach((config, i) => {
    const project = files[i]!.origin === "project";
    if (project && config.credentialHelper !== undefined) {
      throw new ConfigError(
        `${config.file}: "credentials.helper" is not allowed in a project file: it names a ` +
          "program that would receive every token; set it in the global config file, a file " +
          "named with --config/MCPCTL_CONFIG, or MCPCTL_CREDENTIAL_HELPER",
      );
    }
    for (const entry of config.entries) {
      const before = byName.get(entry.name);
      if (project && before && !projectFiles.has(before.source)) {
        replaced.set(entry.name, before.source);
      }
      byName.set(entry.name, entry);
    }
    if (config.credentialHelper !== undefined) credentialHelper = config.credentialHelper;
  });
  let approvals: Approvals | undefined;
  const stored = async () => {
    if (approvals) return approvals;
    const path = trustFilePath(options.env, options.os);
    let text: string | undefined;
    try {
      text = path === undefined ? undefined : await read(path);
    } catch { /* unreadable: nothing approved */ }
    return approvals = parseApprovals(text);
  };
  const servers: ServerEntry[] = [];
  for (
    const raw of [...byName.values()].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  ) {
    if (!projectFiles.has(raw.source)) {
      servers.push(resolveEntry(raw, options.env));
      continue;
    }
    const needs = approvalNeeds(raw, replaced.get(raw.name));
    const digest = await approvalDigest(raw);
    let approval: Approval | undefined;
    if (needs.length > 0) {
      if ((await stored())[approvalKey(raw.source, raw.name)]?.digest === digest) {
        approval = "stored";
      } else if (options.trustProject) approval = "switch";
    }
    const blocked = needs.length > 0 && approval === undefined;
    const entry = resolveEntry(raw, options.env, { expand: !blocked });
    entry.project = { file: raw.source, raw, needs, digest, ...(approval ? { approval } : {}) };
    servers.push(entry);
  }
  return { servers, files, ...(credentialHelper ? { credentialHelper } : {}) };
}

/**
 * Approves a blocked project entry in place (every holder of the object sees it): its
 * variables are expanded now, as for any approved entry.
 */
export function approveEntry(
  entry: ServerEntry,
  env: (name: string) => string | undefined,
  approval: Approval,
): void {
  const project = entry.project;
  if (!project) return;
  Object.assign(entry, resolveEntry(project.raw, env), { project: { ...project, approval } });
}

/**
 * Expands variables and infers the transport. Runtime fields of a disabled entry are
 * left unexpanded: a missing variable there blocks nothing. In an enabled entry it marks
 * that server failed, naming the variable; the other servers still work. With
 * `expand: false` (a blocked project entry) nothing is expanded.
 */
export function resolveEntry(
  raw: RawEntry,
  env: (name: string) => string | undefined,
  options: { expand?: boolean } = {},
): ServerEntry {
  const type = raw.type ?? (raw.command !== undefined ? "stdio" : "http");
  const entry: ServerEntry = {
    name: raw.name,
    source: raw.source,
    type,
    typeExplicit: raw.type !== undefined,
    enabled: raw.enabled,
    args: raw.args,
    env: raw.env,
    headers: raw.headers,
    ...(raw.command !== undefined ? { command: raw.command } : {}),
    ...(raw.cwd !== undefined ? { cwd: raw.cwd } : {}),
    ...(raw.url !== undefined ? { url: raw.url } : {}),
    ...(raw.timeoutMs !== undefined ? { timeoutMs: raw.timeoutMs } : {}),
    ...(raw.maxMessageBytes !== undefined ? { maxMessageBytes: raw.maxMessageBytes } : {}),
    ...(raw.oauth !== undefined ? { oauth: raw.oauth } : {}),
    ...(raw.tokenCommand !== undefined ? { tokenCommand: raw.tokenCommand } : {}),
  };
  const nameProblem = serverNameProblem(raw.name);
  if (nameProblem) {
    entry.error = `invalid server name: it ${nameProblem}`;
    return entry;
  }
  entry.written = written(raw);
  if (!raw.enabled || options.expand === false) return entry;
  let field = "";
  // Every value a variable supplies is recorded: the CLI registers it for redaction.
  const variables: Record<string, string> = {};
  const lookup = (name: string) => {
    const value = env(name);
    if (value) variables[name] = value;
    return value;
  };
  const x = (f: string, v: string) => {
    field = f;
    return expandVariables(v, lookup);
  };
  try {
    if (raw.command !== undefined) entry.command = x("command", raw.command);
    entry.args = raw.args.map((a, i) => x(`args[${i}]`, a));
    entry.env = mapValues(raw.env, (k, v) => x(`env.${k}`, v));
    if (raw.cwd !== undefined) entry.cwd = x("cwd", raw.cwd);
    if (raw.url !== undefined) entry.url = x("url", raw.url);
    entry.headers = mapValues(raw.headers, (k, v) => x(`headers.${k}`, v));
    if (raw.oauth) {
      entry.oauth = { ...raw.oauth };
      for (const k of ["clientId", "clientSecret", "privateKey", "clientMetadataUrl"] as const) {
        const v = raw.oauth[k];
        if (v !== undefined) entry.oauth[k] = x(`oauth.${k}`, v);
      }
    }
    if (raw.tokenCommand) entry.tokenCommand = raw.tokenCommand.map((a) => x("tokenCommand", a));
  } catch (e) {
    if (!(e instanceof MissingVariableError)) throw e;
    entry.error = `${e.message} (used in "${field}" of ${raw.source})`;
  }
  if (Object.keys(variables).length > 0) entry.variables = variables;
  if (entry.cwd !== undefined && !isAbsolute(entry.cwd) && raw.source !== "command line") {
    // A relative cwd is relative to the file that declares it.
    entry.cwd = join(dirname(raw.source), entry.cwd);
  }
  if (entry.url !== undefined && !entry.error) {
    try {
      const u = new URL(entry.url);
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
    } catch {
      entry.error = `"url" is not an http(s) URL (in ${raw.source})`;
    }
  }
  return entry;
}

/** The expandable fields as written (before expansion). */
function written(raw: RawEntry): WrittenFields {
  return {
    args: raw.args,
    env: raw.env,
    headers: raw.headers,
    ...(raw.command !== undefined ? { command: raw.command } : {}),
    ...(raw.cwd !== undefined ? { cwd: raw.cwd } : {}),
    ...(raw.url !== undefined ? { url: raw.url } : {}),
    ...(raw.oauth !== undefined ? { oauth: raw.oauth } : {}),
    ...(raw.tokenCommand !== undefined ? { tokenCommand: raw.tokenCommand } : {}),
  };
}

/** The global config file candidates (`config.json`, then `config.jsonc`). */
export function globalConfigPaths(options: LoadConfigOptions): string[] {
  const os = options.os ?? Deno.build.os;
  let dir: string | undefined;
  if (os === "windows") {
    const appData = options.env("APPDATA");
    if (appData) dir = `${appData}\\mcpctl`;
  } else {
    const xdg = nonEmpty(options.env("XDG_CONFIG_HOME"));
    const home = nonEmpty(options.env("HOME"));
    if (xdg) dir = `${xdg}/mcpctl`;
    else if (home) dir = `${home}/.config/mcpctl`;
  }
  if (!dir) return [];
  const sep = os === "windows" ? "\\" : "/";
  return [`${dir}${sep}config.json`, `${dir}${sep}config.jsonc`];
}

/** Project file candidates from the root down to `cwd` (lowest precedence first). */
export function projectConfigPaths(cwd: string): string[] {
  const dirs: string[] = [];
  let dir = cwd.replace(/[\\/]+$/, "") || "/";
  while (true) {
    dirs.push(dir);
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  const out: string[] = [];
  for (const d of dirs.reverse()) {
    for (const name of [".mcp.json", "mcpctl.jsonc", "mcpctl.json"]) out.push(join(d, name));
  }
  return out;
}

/** Largest config file read: far above any real one, far below trouble. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    // A file found walking up may be anything a repository holds: a FIFO would block
    // the read forever, /dev/zero would never end. Only regular files are read.
    const info = await Deno.stat(path);
    if (info.isDirectory) return undefined;
    if (!info.isFile) throw new ConfigError(`${path} is not a regular file`);
    if (info.size > MAX_CONFIG_BYTES) {
      throw new ConfigError(`${path} is over ${MAX_CONFIG_BYTES / 1024 / 1024} MiB`);
    }
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    if (e instanceof Deno.errors.NotFound) return undefined;
    if (e instanceof Deno.errors.IsADirectory) return undefined;
    throw new ConfigError(`cannot read ${path}: ${(e as Error).message}`);
  }
}

function mapValues(
  obj: Record<string, string>,
  fn: (k: string, v: string) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = fn(k, v);
  return out;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === "" ? undefined : v;
}

function isAbsolute(p: string): boolean {
  return p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith("\\\\");
}

function dirname(p: string): string {
  const i = Math.max(p.lastIndexOf("/"), p.lastIndexOf("\\"));
  if (i < 0) return ".";
  if (i === 0) return p.slice(0, 1);
  if (/^[A-Za-z]:$/.test(p.slice(0, i))) return p.slice(0, i + 1);
  return p.slice(0, i);
}

function join(dir: string, name: string): string {
  if (dir === ".") return name;
  return /[\\/]$/.test(dir) ? dir + name : `${dir}/${name}`;
}
