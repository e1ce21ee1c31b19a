/**
 * Which `scope` to ask for (MCP scope selection strategy, SEP-2207 for `offline_access`).
 *
 * @module
 */

/** The scope that asks for a refresh token at servers that gate them behind it. */
export const OFFLINE_ACCESS = "offline_access";

/** Splits a space-separated scope string into distinct scope tokens, in order. */
export function splitScope(scope: string | undefined): string[] {
  if (!scope) return [];
  return [...new Set(scope.split(/\s+/).filter((s) => s !== ""))];
}

/**
 * The union of scope strings, in order of first appearance; undefined when empty.
 *
 * @example
 * ```ts
 * import { unionScopes } from "./scopes.ts";
 * unionScopes("a b", undefined, "b c"); // "a b c"
 * ```
 */
export function unionScopes(...scopes: Array<string | undefined>): string | undefined {
  const all = splitScope(scopes.filter((s) => s !== undefined).join(" "));
  return all.length > 0 ? all.join(" ") : undefined;
}

/** Inputs of `selectScope`. */
export interface ScopeSelection {
  /** `scope` of the WWW-Authenticate challenge. */
  challengeScope?: string | undefined;
  /** `oauth.scope` from the configuration. */
  configuredScope?: string | undefined;
  /** `scopes_supported` of the protected resource metadata. */
  resourceScopes?: string[] | undefined;
  /** `scopes_supported` of the authorization server metadata. */
  serverScopes?: string[] | undefined;
  /** Scope of the token being replaced on step-up: kept so nothing is lost. */
  previousScope?: string | undefined;
  /** Whether a refresh token is wanted (true for the authorization code grant). */
  wantRefreshToken?: boolean | undefined;
}

/**
 * The scope to request:
 * 1. the challenge's `scope` (plus a configured `oauth.scope`);
 * 2. else the configured scope;
 * 3. else every `scopes_supported` of the protected resource metadata;
 * 4. else none (the parameter is omitted).
 *
 * On step-up the previous scope is added. `offline_access` is added only when a
 * refresh token is wanted, something is requested anyway (asking for `offline_access`
 * alone would replace the server's default scope) and the authorization server lists
 * it; it is removed when the server does not list it, unless configured explicitly.
 */
export function selectScope(input: ScopeSelection): string | undefined {
  const challenge = input.challengeScope?.trim() ? input.challengeScope : undefined;
  const fromResource = input.resourceScopes && input.resourceScopes.length > 0
    ? input.resourceScopes.join(" ")
    : undefined;
  const base = challenge !== undefined
    ? unionScopes(input.configuredScope, challenge)
    : unionScopes(input.configuredScope) ?? fromResource;
  let scopes = splitScope(unionScopes(base, input.previousScope));
  const serverOffers = input.serverScopes?.includes(OFFLINE_ACCESS) ?? false;
  const configured = splitScope(input.configuredScope).includes(OFFLINE_ACCESS);
  if (!serverOffers && !configured) scopes = scopes.filter((s) => s !== OFFLINE_ACCESS);
  if (input.wantRefreshToken && serverOffers && scopes.length > 0) {
    scopes = splitScope(unionScopes(scopes.join(" "), OFFLINE_ACCESS));
  }
  return scopes.length > 0 ? scopes.join(" ") : undefined;
}
