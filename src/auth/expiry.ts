/**
 * When a token is due for refresh. Kept apart from the token requests so that using a
 * stored token loads none of the OAuth machinery.
 *
 * @module
 */

import type { TokenSet } from "./types.ts";

/** Refresh this long before expiry, so a token does not expire in flight. */
export const REFRESH_MARGIN_MS = 60_000;

/** True when the access token expires within a minute (or has expired). */
export function needsRefresh(tokens: TokenSet, now: number): boolean {
  return tokens.expiresAt !== undefined && now >= tokens.expiresAt - REFRESH_MARGIN_MS;
}
