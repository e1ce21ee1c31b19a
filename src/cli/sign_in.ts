/**
 * Wires sign-in into commands: which servers get a credential provider, the sign-in
 * options (`--scope`, `--client-id`, …), the browser and loopback listener for an
 * interactive sign-in, and a probe that signs in before any request timer runs.
 *
 * @module
 */

import type { AuthProvider } from "../mcp/transport/types.ts";
import { assertApproved } from "../config/trust.ts";
import type { OAuthSettings, ServerEntry } from "../config/types.ts";
import { UsageError } from "../errors.ts";
import type { LockOptions } from "../auth/lock.ts";
import type { ServerAuth } from "../auth/provider.ts";
import { intOption, type OptionSpec } from "./args.ts";
import type { CommandContext } from "./commands.ts";
import type { ServerSet } from "./servers.ts";

/** Options shared by `login` and by `call`/`list` with `--login`. */
export const SIGN_IN_OPTIONS: OptionSpec[] = [
  { name: "scope", type: "string", arg: "SCOPE", description: "scope to ask for" },
  { name: "client-id", type: "string", arg: "ID", description: "a pre-registered OAuth client id" },
  {
    name: "client-metadata-url",
    type: "string",
    arg: "URL",
    description: "a Client ID Metadata Document URL to use as client id",
  },
  {
    name: "callback-port",
    type: "string",
    arg: "N",
    description: "fixed port of the loopback callback (default: any free port)",
  },
  {
    name: "no-browser",
    type: "boolean",
    description: "print the sign-in URL instead of opening a browser",
  },
];

/** Whether a configured header already carries credentials (it always wins). */
export function hasAuthorizationHeader(entry: ServerEntry): boolean {
  return Object.keys(entry.headers).some((h) => h.toLowerCase() === "authorization");
}

/** The exact command that signs in to `entry`. */
export function loginCommand(entry: ServerEntry, adhoc: boolean): string {
  return adhoc ? `mcpctl login --url ${entry.url}` : `mcpctl login ${entry.name}`;
}

/** OAuth settings: the config entry's, overridden by command-line options. */
export function signInSettings(ctx: CommandContext, entry: ServerEntry): OAuthSettings {
  const v = ctx.values;
  const settings: OAuthSettings = { ...entry.oauth };
  if (typeof v.scope === "string") settings.scope = v.scope;
  if (typeof v["client-id"] === "string") settings.clientId = v["client-id"];
  if (typeof v["client-metadata-url"] === "string") {
    settings.clientMetadataUrl = v["client-metadata-url"];
  }
  const port = intOption(v, "callback-port");
  if (port !== undefined) {
    if (port > 65535) throw new UsageError("--callback-port must be at most 65535");
    settings.callbackPort = port;
  }
  // A client secret never comes from a command-line value: config or environment only.
  const envSecret = ctx.env("MCPCTL_OAUTH_CLIENT_SECRET");
  if (settings.clientSecret === undefined && envSecret) settings.clientSecret = envSecret;
  ctx.out.secrets.addBasic(settings.clientId, settings.clientSecret);
  ctx.out.secrets.add(settings.privateKey);
  return settings;
}

/**
 * How this command waits for the credential store's lock: Ctrl-C stops the wait, and
 * with `--verbose` the wait is announced at once (naming the lock and its holder).
 */
export function storeLockOptions(ctx: CommandContext): LockOptions {
  return {
    signal: ctx.signal,
    ...(ctx.values.verbose === true
      ? { onWait: (message: string) => void ctx.out.error(`mcpctl: ${message}\n`) }
      : {}),
  };
}

/** Options of {@linkcode authResolver}. */
export interface AuthResolverOptions {
  /** Allow a browser sign-in (`login`, `--login`). */
  interactive: boolean;
  /** Ignore stored tokens (`login`). */
  force?: boolean;
  /** How long to wait for the browser callback, in ms (default 5 minutes). */
  callbackTimeoutMs?: number;
}

/**
 * Builds `ConnectOptions.auth`: a provider per HTTP server that has no configured
 * `Authorization` header. Auth modules load only when an HTTP server connects.
 */
export function authResolver(
  ctx: CommandContext,
  set: ServerSet,
  options: AuthResolverOptions,
): (entry: ServerEntry) => Promise<ServerAuth | undefined> {
  const cache = new Map<string, Promise<ServerAuth | undefined>>();
  return (entry) => {
    let p = cache.get(entry.name);
    if (!p) {
      p = makeProvider(ctx, set, entry, options);
      cache.set(entry.name, p);
    }
    return p;
  };
}

async function makeProvider(
  ctx: CommandContext,
  set: ServerSet,
  entry: ServerEntry,
  options: AuthResolverOptions,
): Promise<ServerAuth | undefined> {
  // A blocked project entry gets no credentials: no tokenCommand, no grant, no store.
  assertApproved(entry);
  if (entry.type === "stdio" || !entry.url || hasAuthorizationHeader(entry)) return undefined;
  const [{ createAuthProvider }, { openCredentialStore }] = await Promise.all([
    import("../auth/provider.ts"),
    import("../auth/store.ts"),
  ]);
  const store = openCredentialStore({
    ...(set.config?.credentialHelper ? { helper: set.config.credentialHelper } : {}),
    env: Deno.env.toObject(),
    lock: storeLockOptions(ctx),
  });
  const log = ctx.values.verbose === true
    ? (line: string) => void ctx.out.error(`[${entry.name} auth] ${line}\n`)
    : undefined;
  let interactive;
  if (options.interactive) {
    const [{ openBrowser }, { startLoopback }] = await Promise.all([
      import("../auth/browser.ts"),
      import("../auth/loopback.ts"),
    ]);
    const port = signInSettings(ctx, entry).callbackPort;
    interactive = {
      openBrowser: async (url: string) => {
        await ctx.out.error(`Signing in to ${entry.name}…\n`);
        await openBrowser(url, {
          noBrowser: ctx.values["no-browser"] === true,
          stderr: (line) => void ctx.out.error(`${line}\n`),
        });
      },
      listen: (expectedState: string) =>
        startLoopback({
          expectedState,
          ...(port !== undefined ? { port } : {}),
          ...(options.callbackTimeoutMs !== undefined
            ? { timeoutMs: options.callbackTimeoutMs }
            : {}),
          signal: ctx.signal,
          ...(log ? { log } : {}),
        }),
    };
  }
  return createAuthProvider({
    serverName: entry.name,
    serverUrl: entry.url,
    settings: signInSettings(ctx, entry),
    tokenCommand: entry.tokenCommand,
    store,
    interactive,
    forceSignIn: options.force === true,
    loginHint: loginCommand(entry, set.adhoc),
    signal: ctx.signal,
    onSecret: (s) => ctx.out.addSecret(s),
    ...(log ? { log } : {}),
  });
}

/**
 * Signs in before connecting when no credentials are at hand: a bare `initialize`
 * POST fetches the server's challenge, and the sign-in runs outside every request
 * timer (a person in a browser takes longer than a request timeout). Returns false
 * when the server did not ask for credentials.
 */
export async function signInFirst(
  entry: ServerEntry,
  auth: AuthProvider,
  signal: AbortSignal,
): Promise<boolean> {
  if (await auth.authorization()) return true;
  const { parseBearerChallenge } = await import("../mcp/transport/headers.ts");
  const response = await fetch(entry.url!, {
    method: "POST",
    headers: {
      ...entry.headers,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: "mcpctl-probe",
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "mcpctl", version: "probe" },
      },
    }),
    redirect: "manual",
    signal,
  });
  await response.body?.cancel();
  const session = response.headers.get("mcp-session-id");
  if (session && response.ok) {
    // Do not leave the probe's session behind.
    await fetch(entry.url!, {
      method: "DELETE",
      headers: { ...entry.headers, "mcp-session-id": session },
      signal,
    })
      .then((r) => r.body?.cancel()).catch(() => {});
  }
  if (response.status !== 401 && response.status !== 403) return false;
  const params = parseBearerChallenge(response.headers.get("www-authenticate") ?? "");
  return await auth.unauthorized({ status: response.status, params });
}
