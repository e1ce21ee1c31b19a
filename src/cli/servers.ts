/**
 * Shared by every command that talks to servers: load the config (or build the ad-hoc
 * server from `--stdio`/`--url`), select servers by name, register secrets for
 * redaction, and build connect options from the global flags.
 *
 * @module
 */

import { loadConfig, type LoadedConfig, resolveEntry } from "../config/load.ts";
import { isBlocked } from "../config/trust.ts";
import type { ServerEntry } from "../config/types.ts";
import { UsageError } from "../errors.ts";
import type { RequestHandler } from "../mcp/client.ts";
import type { ConnectOptions } from "../mcp/manager.ts";
import { serverNameProblem } from "../mcp/names.ts";
import { closest, intOption, splitCommandLine } from "./args.ts";
import type { CommandContext } from "./commands.ts";
import { trustGate, trustSwitch } from "./trust_gate.ts";
import { listRoots, rootsClientOptions } from "./roots.ts";

/** The servers a command can use. */
export interface ServerSet {
  servers: ServerEntry[];
  /** True when the servers came from `--stdio`/`--url`. */
  adhoc: boolean;
  config?: LoadedConfig;
}

/** Loads config, or builds the ad-hoc server; registers every secret for redaction. */
export async function loadServers(ctx: CommandContext): Promise<ServerSet> {
  const v = ctx.values;
  const stdio = v.stdio as string | undefined;
  const url = v.url as string | undefined;
  if (stdio !== undefined || url !== undefined) {
    const set = { servers: [adhocEntry(ctx)], adhoc: true };
    registerSecrets(ctx, set.servers);
    return set;
  }
  for (const flag of ["env", "header", "name"]) {
    if (v[flag] !== undefined) {
      throw new UsageError(`--${flag} applies only to an ad-hoc server (--stdio or --url)`);
    }
  }
  const config = await loadConfig({
    ...(typeof v.config === "string" ? { configPath: v.config } : {}),
    env: ctx.env,
    cwd: ctx.cwd,
    trustProject: trustSwitch(ctx),
  });
  registerSecrets(ctx, config.servers);
  return { servers: config.servers, adhoc: false, config };
}

function adhocEntry(ctx: CommandContext): ServerEntry {
  const v = ctx.values;
  if (v.stdio !== undefined && v.url !== undefined) {
    throw new UsageError("give either --stdio or --url, not both");
  }
  const name = (v.name as string | undefined) ?? "adhoc";
  const problem = serverNameProblem(name);
  if (problem) throw new UsageError(`--name: a server name ${problem}`);
  const env: Record<string, string> = {};
  for (const pair of (v.env as string[] | undefined) ?? []) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--env needs K=V, not ${JSON.stringify(pair)}`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const headers: Record<string, string> = {};
  for (const h of (v.header as string[] | undefined) ?? []) {
    const colon = h.indexOf(":");
    if (colon <= 0) {
      // Never echo the value: it is usually a secret.
      throw new UsageError('--header needs "Name: value"');
    }
    headers[h.slice(0, colon).trim()] = h.slice(colon + 1).trim();
  }
  if (v.stdio !== undefined) {
    if (v.header !== undefined) throw new UsageError("--header applies to --url, not --stdio");
    const words = splitCommandLine(v.stdio as string);
    if (words.length === 0) throw new UsageError("--stdio needs a command");
    return resolveEntry({
      name,
      source: "command line",
      type: "stdio",
      enabled: true,
      command: words[0]!,
      args: words.slice(1),
      env,
      headers: {},
    }, ctx.env);
  }
  if (v.env !== undefined) throw new UsageError("--env applies to --stdio, not --url");
  const url = v.url as string;
  let protocol = "";
  try {
    protocol = new URL(url).protocol;
  } catch { /* reported below */ }
  if (protocol !== "http:" && protocol !== "https:") {
    throw new UsageError(`--url needs an http(s) URL, not ${JSON.stringify(url)}`);
  }
  // Values typed on the command line are literal: no variable expansion.
  return {
    name,
    source: "command line",
    type: "http",
    typeExplicit: false,
    enabled: true,
    args: [],
    env: {},
    url,
    headers,
  };
}

/**
 * Registers, as soon as the config is read, every secret an entry holds: header values
 * (but public ones such as `User-Agent`), values expanded from variables anywhere in
 * the entry, URL credentials and query values, OAuth client secrets and keys, and
 * `env` values whose names say they are credentials.
 */
function registerSecrets(ctx: CommandContext, servers: ServerEntry[]): void {
  const secrets = ctx.out.secrets;
  for (const s of servers) {
    // Nothing of a blocked entry is expanded: its text is the file's, shown at approval.
    if (isBlocked(s)) continue;
    secrets.addHeaders(s.headers);
    if (s.variables) secrets.addVariables(s.variables);
    if (s.url !== undefined) secrets.addUrl(s.url);
    secrets.addSecretEnv(s.env);
    secrets.addBasic(s.oauth?.clientId, s.oauth?.clientSecret);
    secrets.add(s.oauth?.privateKey);
  }
}

/**
 * The trust gate of `config/trust.ts` for this command: a blocked project entry is
 * approved at a terminal prompt (its secrets registered then) or refused with exit 2.
 * Commands that send something before connecting (`login`, `logout`, `--login`) pass
 * it first.
 */
export function projectGate(ctx: CommandContext): (entry: ServerEntry) => Promise<void> {
  return trustGate(ctx, { onApproved: (e) => registerSecrets(ctx, [e]) });
}

/**
 * Picks the servers named on the command line (all when none are named). An unknown
 * name is a usage error listing the known ones.
 */
export function selectServers(set: ServerSet, names: string[]): ServerEntry[] {
  if (names.length === 0) return set.servers;
  return names.map((n) => findServer(set, n));
}

/** Finds one server by name, or throws UsageError listing the known names. */
export function findServer(set: ServerSet, name: string): ServerEntry {
  const found = set.servers.find((s) => s.name === name);
  if (found) return found;
  const known = set.servers.map((s) => s.name);
  const close = closest(name, known);
  const where = set.config
    ? set.config.files.length
      ? `config files: ${set.config.files.map((f) => f.path).join(", ")}`
      : "no config file found"
    : "";
  throw new UsageError(
    `unknown server '${name}'${close.length ? `; did you mean '${close[0]}'?` : ""}`,
    {
      hint: known.length
        ? `known servers: ${known.join(", ")}${where ? ` (${where})` : ""}`
        : `no servers are configured${where ? ` (${where})` : ""}`,
    },
  );
}

/**
 * Connect options from the global flags: timeout, verbose logging, signal, and roots
 * (the working directory and every `--root`). Callers that set `client` keep the roots
 * by spreading the existing `options.client`.
 */
export function connectOptions(ctx: CommandContext): ConnectOptions {
  const timeoutMs = intOption(ctx.values, "timeout");
  const verbose = ctx.values.verbose === true;
  const roots = listRoots({ cwd: ctx.cwd, extra: (ctx.values.root as string[] | undefined) ?? [] });
  const options: ConnectOptions = {
    signal: ctx.signal,
    client: rootsClientOptions(roots),
    beforeConnect: projectGate(ctx),
  };
  addElicitation(ctx, options);
  if (timeoutMs !== undefined) {
    if (timeoutMs === 0) throw new UsageError("--timeout must be greater than 0");
    options.timeoutMs = timeoutMs;
  }
  if (verbose) {
    options.log = (server, line) => void ctx.out.error(`[${server}] ${line}\n`);
    options.onStderr = (server, line) => void ctx.out.error(`[${server} stderr] ${line}\n`);
  }
  return options;
}

/**
 * Declares elicitation and answers `elicitation/create` (combined with the capabilities
 * and handlers already in `options.client`). The prompt module is loaded only when a
 * server asks; URL mode is declared only when a person at a terminal can answer.
 */
function addElicitation(ctx: CommandContext, options: ConnectOptions): void {
  const policy = ctx.values.elicitation as string | undefined;
  if (policy !== undefined && !["decline", "cancel", "accept-defaults"].includes(policy)) {
    throw new UsageError("--elicitation must be decline, cancel or accept-defaults");
  }
  let interactive = false;
  try {
    interactive = Deno.stdin.isTerminal() && ctx.out.stderrIsTerminal;
  } catch { /* no stdin */ }
  // One form at a time, even when several servers ask at once.
  let turn: Promise<unknown> = Promise.resolve();
  const handler: RequestHandler = (params, request) => {
    const answer = turn.then(async () => {
      const { answerCliElicitation } = await import("./elicitation.ts");
      return await answerCliElicitation(ctx, request.server, params, interactive);
    });
    turn = answer.catch(() => {});
    return answer;
  };
  options.client = {
    ...options.client,
    capabilities: {
      ...options.client?.capabilities,
      elicitation: interactive ? { form: {}, url: {} } : { form: {} },
    },
    requestHandlers: { ...options.client?.requestHandlers, "elicitation/create": handler },
  };
}
