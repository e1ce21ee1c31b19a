/**
 * Credentials for one HTTP server, in a fixed order: a configured `Authorization`
 * header always wins (the caller creates no provider then), then a stored sign-in
 * (refreshed 60 s before expiry, and once, forcibly, on a 401), then the
 * `client_credentials` grant when configured, then a `tokenCommand`. A browser opens
 * only when the caller made the provider interactive (`login`, or `--login`).
 *
 * @module
 */

import type { OAuthSettings } from "../config/types.ts";
import { AuthRequiredError } from "../errors.ts";
import type { AuthProvider, BearerChallenge } from "../mcp/transport/types.ts";
import type { SignIn } from "./flow.ts";
import type { CredentialStore, StoredCredential, StoreKey } from "./store.ts";
import { needsRefresh } from "./expiry.ts";
import type { CallbackListener, ClientRegistration, FetchLike, TokenSet } from "./types.ts";

/** How an interactive sign-in shows the authorization URL and receives the code. */
export interface InteractiveSignIn {
  /** Shows the URL (opens a browser and/or prints it). */
  openBrowser(url: string): Promise<void>;
  /** Starts the loopback listener for one `state`. */
  listen(expectedState: string): Promise<CallbackListener>;
}

/** Options of {@linkcode createAuthProvider}. */
export interface AuthProviderOptions {
  /** Server name and URL: the store key. */
  serverName: string;
  serverUrl: string;
  /** OAuth settings (config entry merged with command-line options). */
  settings: OAuthSettings;
  /** A command that prints a bearer token (last in the order). */
  tokenCommand?: string[] | undefined;
  /** Where tokens are kept. */
  store: CredentialStore;
  /** Set to allow a browser sign-in. */
  interactive?: InteractiveSignIn | undefined;
  /** Ignore stored tokens and sign in again (`mcpctl login`). */
  forceSignIn?: boolean;
  /** The `mcpctl login …` command to suggest when a sign-in is needed. */
  loginHint: string;
  fetch?: FetchLike;
  log?: (line: string) => void;
  now?: () => number;
  signal?: AbortSignal;
  /** Receives every token obtained, so output paths can redact it. */
  onSecret?: (secret: string) => void;
  /** Runs `tokenCommand` (injected in tests). */
  runCommand?: (argv: string[]) => Promise<string>;
}

/** The provider plus what happened, for `login` to report. */
export interface ServerAuth extends AuthProvider {
  /** True once a sign-in (browser or client credentials) stored new tokens. */
  readonly signedIn: boolean;
}

/**
 * Creates the credential source for one server.
 *
 * @example
 * ```ts ignore
 * const auth = createAuthProvider({ serverName: "gh", serverUrl: url, settings: {}, store, loginHint: "mcpctl login gh" });
 * const header = await auth.authorization();
 * ```
 */
export function createAuthProvider(options: AuthProviderOptions): ServerAuth {
  const key: StoreKey = { serverName: options.serverName, serverUrl: options.serverUrl };
  const now = options.now ?? Date.now;
  const fetchFn: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  let loaded = false;
  let current: TokenSet | undefined;
  const remember = (t: TokenSet | undefined) => {
    if (t) {
      options.onSecret?.(t.accessToken);
      if (t.refreshToken) options.onSecret?.(t.refreshToken);
    }
    current = t;
  };
  let fromStore = false;
  // When this process obtained `current` (sign-in, refresh, or another process's refresh
  // adopted under the lock); undefined for a token read from the store.
  let obtainedAt: number | undefined;
  let forced = false;
  let signedIn = false;
  let signIn: SignIn | undefined;
  // One sign-in or refresh at a time, shared by requests that got 401 together.
  let pending: Promise<boolean> | undefined;
  const base = {
    serverUrl: options.serverUrl,
    serverName: options.serverName,
    settings: options.settings,
    fetch: fetchFn,
    clock: now,
    ...(options.log ? { log: options.log } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onSecret ? { onSecret: options.onSecret } : {}),
  };

  async function load(): Promise<void> {
    loaded = true;
    if (!options.forceSignIn) {
      const stored = await options.store.get(key);
      if (stored?.tokens) {
        remember(stored.tokens);
        fromStore = true;
        return;
      }
    }
    if (options.settings.grant === "client_credentials") {
      await signInNow(undefined);
      return;
    }
    if (options.tokenCommand && !options.forceSignIn) {
      const run = options.runCommand ?? runTokenCommand;
      const token = (await run(options.tokenCommand)).trim();
      if (token) remember({ accessToken: token, tokenType: "Bearer" });
    }
  }

  /**
   * Whether the current token should be refreshed before use: 60 s before expiry. A
   * token this process has just obtained is kept until half its lifetime has passed,
   * so a server that issues tokens shorter-lived than the margin does not get a
   * refresh before every request.
   */
  function due(tokens: TokenSet): boolean {
    if (!needsRefresh(tokens, now())) return false;
    if (obtainedAt === undefined || tokens.expiresAt === undefined) return true;
    return now() >= obtainedAt + (tokens.expiresAt - obtainedAt) / 2;
  }

  /** Refreshes the stored token under the store's lock; one refresh between processes. */
  async function refresh(force: boolean): Promise<boolean> {
    const before = current?.accessToken;
    let refused: unknown;
    let fresh = false;
    const entry = await options.store.update(key, async (current) => {
      const cur = current?.tokens;
      if (!current || !cur) return current;
      // Another process refreshed while we waited for the lock: use its token, which is
      // as new as any we could get (even when the server's tokens live less than 60 s).
      if (cur.accessToken !== before && (cur.expiresAt === undefined || now() < cur.expiresAt)) {
        fresh = true;
        return current;
      }
      if (!cur.refreshToken) {
        if (!force && !needsRefresh(cur, now())) return current;
        return withoutTokens(current);
      }
      try {
        // The OAuth flows load only when a refresh or sign-in really happens.
        const { refreshFlow } = await import("./flow.ts");
        const result = await refreshFlow({
          ...base,
          refreshToken: cur.refreshToken,
          ...(current.registration ? { client: current.registration } : {}),
          // Registration is never needed to refresh; a no-op store avoids re-entering
          // the lock we hold.
          store: {
            getRegistration: () => Promise.resolve(current.registration),
            putRegistration: () => Promise.resolve(),
          },
        });
        fresh = true;
        return { ...current, tokens: result.tokens, registration: storable(result.client) };
      } catch (e) {
        if (!(e instanceof AuthRequiredError)) throw e;
        // A refused refresh deletes the tokens: back to auth_required, never a loop.
        refused = e;
        return withoutTokens(current);
      }
    });
    remember(entry?.tokens);
    if (fresh) obtainedAt = now();
    if (refused) options.log?.(`refresh refused; stored tokens for ${options.serverName} removed`);
    return current !== undefined && current.accessToken !== before;
  }

  async function signInNow(challenge: BearerChallenge | undefined): Promise<boolean> {
    const [{ createSignIn }, { registrationStoreFor }] = await Promise.all([
      import("./flow.ts"),
      import("./store.ts"),
    ]);
    signIn ??= createSignIn({
      ...base,
      store: registrationStoreFor(options.store, options.serverUrl),
      ...(options.interactive
        ? { openBrowser: options.interactive.openBrowser, listen: options.interactive.listen }
        : {}),
    });
    const result = await signIn.run(challenge);
    remember(result.tokens);
    obtainedAt = now();
    fromStore = true;
    signedIn = true;
    await options.store.update(key, (current) => ({
      ...current,
      tokens: result.tokens,
      registration: storable(result.client),
      authServer: result.context.as.issuer,
    }));
    return true;
  }

  function needed(challenge: BearerChallenge): AuthRequiredError {
    const scope = challenge.params.scope;
    const what = challenge.status === 403
      ? `server "${options.serverName}" refused the token: it needs more permissions${
        scope ? ` (scope "${scope.slice(0, 200)}")` : ""
      }`
      : `server "${options.serverName}" needs sign-in`;
    return new AuthRequiredError(what, { hint: `run: ${options.loginHint}` });
  }

  async function handle(challenge: BearerChallenge): Promise<boolean> {
    const stepUp = challenge.status === 403;
    if (!stepUp && fromStore && current?.refreshToken && !forced) {
      forced = true;
      if (await refresh(true)) return true;
    }
    if (options.settings.grant === "client_credentials" || options.interactive) {
      return await signInNow(challenge);
    }
    throw needed(challenge);
  }

  return {
    get signedIn() {
      return signedIn;
    },
    async authorization() {
      if (!loaded) await load();
      if (current && fromStore && current.refreshToken && due(current)) {
        pending ??= refresh(false).finally(() => pending = undefined);
        await pending;
      }
      return current ? `Bearer ${current.accessToken}` : undefined;
    },
    unauthorized(challenge) {
      pending ??= handle(challenge).finally(() => pending = undefined);
      return pending;
    },
  };
}

/**
 * The registration as stored: a pre-registered client's secret belongs to the
 * configuration (or the environment) and is read from there each time, never copied.
 */
function storable(client: ClientRegistration): ClientRegistration {
  if (client.source !== "preregistered" || client.clientSecret === undefined) return client;
  const { clientSecret: _, ...rest } = client;
  return rest;
}

function withoutTokens(entry: StoredCredential): StoredCredential {
  const { tokens: _, ...rest } = entry;
  return rest;
}

async function runTokenCommand(argv: string[]): Promise<string> {
  const [cmd, ...args] = argv;
  if (!cmd) return "";
  let out;
  try {
    out = await new Deno.Command(cmd, { args, stdin: "null", stdout: "piped", stderr: "piped" })
      .output();
  } catch (e) {
    throw new AuthRequiredError(`tokenCommand ${cmd} cannot run: ${(e as Error).message}`);
  }
  if (!out.success) {
    throw new AuthRequiredError(`tokenCommand ${cmd} failed with exit code ${out.code}`);
  }
  return new TextDecoder().decode(out.stdout);
}
