/**
 * URLs as the HTTP transports handle them: the origin rule for redirects and
 * endpoints, the form in which a URL may be printed, and the credentials a URL
 * carries.
 *
 * @module
 */

import { ConfigError } from "../../errors.ts";

/**
 * True when both URLs have the same origin (scheme, host, port). URLs without a
 * tuple origin (e.g. `data:`) are never same-origin.
 *
 * @example
 * ```ts
 * import { sameOrigin } from "./http_url.ts";
 * sameOrigin(new URL("http://a.test/x"), new URL("http://a.test:80/y")); // true
 * ```
 */
export function sameOrigin(a: URL, b: URL): boolean {
  return a.origin !== "null" && a.origin === b.origin;
}

/**
 * A URL as it may appear in messages: no user name, password, query or fragment
 * (those may hold credentials).
 *
 * @example
 * ```ts
 * import { displayUrl } from "./http_url.ts";
 * displayUrl("https://u:p@h.test/mcp?key=k"); // "https://h.test/mcp"
 * ```
 */
export function displayUrl(url: string | URL): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "<invalid URL>";
  }
  return `${u.protocol}//${u.host}${u.pathname}`;
}

/**
 * Replaces any http(s) URL inside free text (e.g. a fetch error or an error page) with
 * its {@linkcode displayUrl} form.
 *
 * @example
 * ```ts
 * import { scrubUrls } from "./http_url.ts";
 * scrubUrls("see https://h.test/a?token=t"); // "see https://h.test/a"
 * ```
 */
export function scrubUrls(text: string): string {
  return text.replace(/\bhttps?:\/\/[^\s)"'<>]+/gi, (m) => {
    const shown = displayUrl(m);
    return shown === "<invalid URL>" ? "<URL>" : shown;
  });
}

/**
 * Parses a server URL for a transport: http or https only. Throws ConfigError (the URL
 * shown without credentials or query) otherwise.
 */
export function parseServerUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`invalid server URL ${displayUrl(text)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`server URL must use http or https, not ${url.protocol}`);
  }
  return url;
}
