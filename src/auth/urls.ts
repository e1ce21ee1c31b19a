/**
 * URL rules of the OAuth side: canonical resource identifiers (RFC 8707), resource
 * matching (RFC 9728 / MCP), issuer comparison (RFC 8414) and the https requirement
 * for everything that receives credentials.
 *
 * @module
 */

import { AuthRequiredError, ConfigError } from "../errors.ts";

/**
 * True for hosts that can only be this machine: `localhost`, 127.0.0.0/8 and `::1`.
 * Takes `URL.hostname`, which is already lowercased and normalised (`127.1` → `127.0.0.1`).
 */
export function isLoopbackHost(hostname: string): boolean {
  if (hostname === "localhost" || hostname === "[::1]" || hostname === "::1") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** Parses an absolute http(s) URL, or returns undefined. */
export function parseHttpUrl(value: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  return url.protocol === "https:" || url.protocol === "http:" ? url : undefined;
}

/**
 * The canonical form of a resource URI: lowercase scheme and host (the URL parser does
 * that), no fragment, and no lone `/` path so that `https://h/` and `https://h` agree,
 * as in the MCP specification's examples.
 *
 * @example
 * ```ts
 * import { canonicalResource } from "./urls.ts";
 * canonicalResource("HTTPS://Example.COM/mcp#x"); // "https://example.com/mcp"
 * ```
 */
export function canonicalResource(value: string): string {
  const url = parseHttpUrl(value);
  if (!url) throw new ConfigError(`not an http(s) URL: ${describeUrl(value)}`);
  url.hash = "";
  if (url.pathname === "/" && url.search === "") return url.origin;
  return url.href;
}

/**
 * True when the protected resource `resource` covers `serverUrl`: same origin, and its
 * path is a prefix of the server's path on a segment boundary (`/mcp` covers `/mcp` and
 * `/mcp/x`, not `/mcpx`).
 */
export function resourceCovers(resource: string, serverUrl: string): boolean {
  const r = parseHttpUrl(resource);
  const s = parseHttpUrl(serverUrl);
  if (!r || !s || r.origin !== s.origin) return false;
  const prefix = r.pathname.replace(/\/+$/, "");
  return prefix === "" || s.pathname === prefix || s.pathname.startsWith(prefix + "/");
}

/** True when two issuer identifiers are the same, ignoring trailing slashes and case of host. */
export function sameIssuer(a: string, b: string): boolean {
  const x = parseHttpUrl(a);
  const y = parseHttpUrl(b);
  if (!x || !y) return false;
  return x.origin === y.origin &&
    x.pathname.replace(/\/+$/, "") === y.pathname.replace(/\/+$/, "") &&
    x.search === y.search;
}

/**
 * Throws AuthRequiredError unless `value` is https, or http to a loopback host: an
 * endpoint that receives codes, secrets or tokens must not be reachable in clear text.
 */
export function requireSecureUrl(value: string, what: string): URL {
  const url = parseHttpUrl(value);
  if (!url) {
    throw new AuthRequiredError(`${what} is not an http(s) URL: ${describeUrl(value)}`);
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    throw new AuthRequiredError(
      `${what} ${url.origin}${url.pathname} does not use https; mcpctl sends credentials ` +
        "only over https (plain http is allowed for loopback hosts only)",
    );
  }
  return url;
}

/**
 * A printable form of an untrusted URL-ish string: the parsed URL without query and
 * fragment when it parses, else a JSON-quoted, shortened copy.
 */
export function describeUrl(value: string): string {
  try {
    const url = new URL(value);
    return `${url.origin === "null" ? url.protocol : url.origin}${url.pathname}`;
  } catch {
    return JSON.stringify(value.length > 120 ? value.slice(0, 120) + "…" : value);
  }
}

/**
 * True when two redirect URIs differ at most in the port and both are plain `http` to
 * the loopback IP literal `127.0.0.1` or `[::1]`: what an authorization server must
 * accept as the same redirect for a native app (RFC 8252 §7.3). `localhost` does not
 * count, since it can resolve elsewhere (RFC 8252 §8.3).
 *
 * @example
 * ```ts
 * import { sameLoopbackRedirect } from "./urls.ts";
 * sameLoopbackRedirect("http://127.0.0.1:5000/callback", "http://127.0.0.1:6000/callback"); // true
 * sameLoopbackRedirect("http://localhost:5000/callback", "http://localhost:6000/callback"); // false
 * ```
 */
export function sameLoopbackRedirect(a: string, b: string): boolean {
  const x = parseHttpUrl(a);
  const y = parseHttpUrl(b);
  if (!x || !y) return false;
  const plain = (u: URL) =>
    u.protocol === "http:" && (u.hostname === "127.0.0.1" || u.hostname === "[::1]") &&
    u.username === "" && u.password === "" && u.hash === "";
  return plain(x) && plain(y) && x.hostname === y.hostname && x.pathname === y.pathname &&
    x.search === y.search;
}
