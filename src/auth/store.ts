/**
 * Where sign-in results live between runs: the storage interface, the entry key, and
 * the choice between the credentials file and a docker-style credential helper.
 *
 * @module
 */

import { FileCredentialStore, mcpctlDataDir } from "./file_store.ts";
import { HelperCredentialStore, type HelperSpawn } from "./helper_store.ts";
import type { LockOptions } from "./lock.ts";
import type {
  ClientRegistration,
  ClientSource,
  RegistrationKey,
  RegistrationStore,
  TokenEndpointAuthMethod,
  TokenSet,
} from "./types.ts";

/**
 * Identifies one stored entry. Both parts count: the same server name at a new URL
 * gets a new entry, so tokens are never sent to a URL they were not issued for.
 */
export interface StoreKey {
  /** Server name from the configuration. */
  serverName: string;
  /** Server URL; compared after URL normalization (case of scheme and host, default port). */
  serverUrl: string;
}

/** What is stored for one server. Every field is optional so that parts can be kept alone. */
export interface StoredCredential {
  /** Current tokens. */
  tokens?: TokenSet;
  /** Client registration used to get them. */
  registration?: ClientRegistration;
  /** Issuer URL of the authorization server that issued them. */
  authServer?: string;
}

/**
 * Persistent credential storage.
 *
 * Writes are serialized across processes by an OS lock on a lock file (`lock.ts`); `update` holds the lock while
 * its callback runs, so two processes refreshing the same token make one refresh: the
 * second one, once it has the lock, sees the fresh token.
 */
export interface CredentialStore {
  /** Human-readable location, e.g. `file ~/.local/share/mcpctl/credentials.json`. */
  readonly description: string;
  /** Reads an entry; `undefined` when there is none. */
  get(key: StoreKey): Promise<StoredCredential | undefined>;
  /** Replaces an entry. */
  put(key: StoreKey, value: StoredCredential): Promise<void>;
  /** Removes an entry; `true` when one existed. */
  delete(key: StoreKey): Promise<boolean>;
  /**
   * Read-modify-write under the store's lock. `fn` gets a copy of the current entry
   * (or `undefined`) and returns the new one, or `undefined` to delete it. Nothing is
   * written when the result equals the current entry. If `fn` throws, nothing changes.
   * Resolves to the entry as stored afterwards.
   */
  update(
    key: StoreKey,
    fn: UpdateFunction,
  ): Promise<StoredCredential | undefined>;
  /** Keys of all stored entries. */
  list(): Promise<StoreKey[]>;
}

/** Callback of {@linkcode CredentialStore.update}. */
export type UpdateFunction = (
  current: StoredCredential | undefined,
) => StoredCredential | undefined | Promise<StoredCredential | undefined>;

/** Options of {@linkcode openCredentialStore}. */
export interface OpenCredentialStoreOptions {
  /** `credentials.helper` from the configuration, e.g. `pass`. */
  helper?: string | undefined;
  /** Environment; defaults to `Deno.env.toObject()`. */
  env?: Record<string, string | undefined>;
  /** Home directory; defaults to `HOME` (or `USERPROFILE` on Windows) from `env`. */
  home?: string;
  /** Operating system; defaults to `Deno.build.os`. */
  platform?: typeof Deno.build.os;
  /** Process runner for the helper, for tests. */
  spawn?: HelperSpawn;
  /** How writers wait for the store's lock (deadline, Ctrl-C, a waiting notice). */
  lock?: LockOptions;
}

/**
 * Opens the credential store in use.
 *
 * A non-empty `MCPCTL_CREDENTIAL_HELPER` wins over `credentials.helper` from the
 * configuration (environment overrides files, as everywhere in mcpctl). With a helper,
 * credentials go to `docker-credential-<helper>` and never to the file, even when the
 * helper fails. Otherwise they go to `credentials.json` in the data directory.
 *
 * @example
 * ```ts
 * import { openCredentialStore } from "./store.ts";
 * const store = openCredentialStore({ env: { HOME: "/home/me" } });
 * console.log(store.description); // file ~/.local/share/mcpctl/credentials.json
 * ```
 */
export function openCredentialStore(options: OpenCredentialStoreOptions = {}): CredentialStore {
  const env = options.env ?? Deno.env.toObject();
  const dirOptions = {
    env,
    ...(options.home !== undefined ? { home: options.home } : {}),
    ...(options.platform !== undefined ? { platform: options.platform } : {}),
  };
  const helper = nonEmpty(env.MCPCTL_CREDENTIAL_HELPER) ?? nonEmpty(options.helper);
  if (helper !== undefined) {
    return new HelperCredentialStore({
      helper,
      stateDir: mcpctlDataDir(dirOptions).dir,
      ...(options.spawn !== undefined ? { spawn: options.spawn } : {}),
      ...(options.lock !== undefined ? { lock: options.lock } : {}),
    });
  }
  return new FileCredentialStore({
    ...dirOptions,
    ...(options.lock !== undefined ? { lock: options.lock } : {}),
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/**
 * The {@linkcode RegistrationStore} the flows use, on top of a credential store: the
 * registration of a server is kept in that server's entry (so it is keyed by server
 * URL too) and is returned only for the issuer it was made with.
 *
 * @example
 * ```ts
 * import { openCredentialStore, registrationStoreFor } from "./store.ts";
 * const registrations = registrationStoreFor(openCredentialStore(), "https://mcp.example/mcp");
 * await registrations.getRegistration({ serverName: "demo", issuer: "https://auth.example" });
 * ```
 */
export function registrationStoreFor(store: CredentialStore, serverUrl: string): RegistrationStore {
  return {
    async getRegistration(key: RegistrationKey): Promise<ClientRegistration | undefined> {
      const entry = await store.get({ serverName: key.serverName, serverUrl });
      const registration = entry?.registration;
      return registration?.issuer === key.issuer ? registration : undefined;
    },
    async putRegistration(key: RegistrationKey, registration: ClientRegistration): Promise<void> {
      await store.update(
        { serverName: key.serverName, serverUrl },
        (current) => ({ ...current, registration }),
      );
    },
  };
}

const KEY_PREFIX = "mcpctl://servers/";

/**
 * The string that names an entry, in the credentials file and as a helper's
 * `ServerURL`: `mcpctl://servers/<encodeURIComponent(name)>/<encodeURIComponent(url)>`.
 *
 * The name is encoded so it cannot contain `/`; the URL is encoded so that no two
 * (name, URL) pairs share a string. It sits in the path, not the host, because helpers
 * such as osxkeychain parse `ServerURL` as a URL and reject escapes in a host.
 *
 * @example
 * ```ts
 * import { credentialKeyId } from "./store.ts";
 * credentialKeyId({ serverName: "gh", serverUrl: "https://x.example/mcp" });
 * // "mcpctl://servers/gh/https%3A%2F%2Fx.example%2Fmcp"
 * ```
 */
export function credentialKeyId(key: StoreKey): string {
  return KEY_PREFIX + encodeURIComponent(key.serverName) + "/" +
    encodeURIComponent(normalizeServerUrl(key.serverUrl));
}

/**
 * Inverse of {@linkcode credentialKeyId}; `undefined` for strings that are not ours.
 * Accepts a decoded URL part too, since some helpers list `ServerURL` rebuilt from a
 * parsed URL.
 */
export function parseCredentialKeyId(id: string): StoreKey | undefined {
  if (!id.startsWith(KEY_PREFIX)) return undefined;
  const rest = id.slice(KEY_PREFIX.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return undefined;
  try {
    const serverName = decodeURIComponent(rest.slice(0, slash));
    const urlPart = rest.slice(slash + 1);
    // An encoded URL has no ":" left; a decoded one still has its scheme separator.
    const serverUrl = urlPart.includes(":") ? urlPart : decodeURIComponent(urlPart);
    return serverUrl ? { serverName, serverUrl } : undefined;
  } catch {
    return undefined;
  }
}

/** Normalizes a server URL the way `new URL()` does; unparseable strings are kept as is. */
export function normalizeServerUrl(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

/**
 * Checks untrusted stored data (from the file or a helper) and keeps the fields that
 * have the right types; `undefined` when it is not an object at all.
 */
export function parseStoredCredential(value: unknown): StoredCredential | undefined {
  if (!isRecord(value)) return undefined;
  const result: StoredCredential = {};
  const tokens = parseTokenSet(value.tokens);
  if (tokens) result.tokens = tokens;
  const registration = parseRegistration(value.registration);
  if (registration) result.registration = registration;
  if (typeof value.authServer === "string") result.authServer = value.authServer;
  return result;
}

function parseTokenSet(value: unknown): TokenSet | undefined {
  if (!isRecord(value) || typeof value.accessToken !== "string") return undefined;
  const tokens: TokenSet = {
    accessToken: value.accessToken,
    tokenType: typeof value.tokenType === "string" ? value.tokenType : "Bearer",
  };
  if (typeof value.refreshToken === "string") tokens.refreshToken = value.refreshToken;
  if (typeof value.expiresAt === "number" && Number.isFinite(value.expiresAt)) {
    tokens.expiresAt = value.expiresAt;
  }
  if (typeof value.scope === "string") tokens.scope = value.scope;
  return tokens;
}

const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = [
  "none",
  "client_secret_basic",
  "client_secret_post",
  "private_key_jwt",
];
const CLIENT_SOURCES: readonly ClientSource[] = ["preregistered", "metadata-document", "dynamic"];

function parseRegistration(value: unknown): ClientRegistration | undefined {
  if (
    !isRecord(value) || typeof value.clientId !== "string" ||
    typeof value.issuer !== "string" || typeof value.registeredAt !== "number"
  ) return undefined;
  const method = AUTH_METHODS.find((m) => m === value.tokenEndpointAuthMethod);
  const source = CLIENT_SOURCES.find((s) => s === value.source);
  if (method === undefined || source === undefined) return undefined;
  const registration: ClientRegistration = {
    clientId: value.clientId,
    tokenEndpointAuthMethod: method,
    registeredAt: value.registeredAt,
    issuer: value.issuer,
    source,
  };
  if (typeof value.clientSecret === "string") registration.clientSecret = value.clientSecret;
  if (typeof value.clientSecretExpiresAt === "number") {
    registration.clientSecretExpiresAt = value.clientSecretExpiresAt;
  }
  if (
    Array.isArray(value.redirectUris) &&
    value.redirectUris.every((u): u is string => typeof u === "string")
  ) {
    registration.redirectUris = value.redirectUris;
  }
  if (value.nativeApp === true) registration.nativeApp = true;
  return registration;
}

/** True for a plain JSON object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Same content, compared as canonical JSON; used to skip writes that change nothing. */
export function sameCredential(
  a: StoredCredential | undefined,
  b: StoredCredential | undefined,
): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (!isRecord(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = v[k];
    return sorted;
  }) ?? "undefined";
}
