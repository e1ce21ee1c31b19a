/**
 * Guards for user-supplied HTTP headers and for the secrets they carry: validation of
 * names and values, the `--header "K: V"` parser, redaction of values in anything we
 * print, and a tolerant parser for `WWW-Authenticate: Bearer` challenges.
 *
 * Every header value is treated as a secret: errors name the header, never its value.
 *
 * @module
 */

import { ConfigError, UsageError } from "../../errors.ts";
import { REDACTED, Redactor as SecretRedactor } from "../../util/redact.ts";

export { REDACTED };

// RFC 9110 §5.6.2 token: 1*tchar.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// CR, LF and NUL make a header unsendable (and CR/LF would allow header injection).
const FORBIDDEN_IN_VALUE = /[\r\n\0]/;

/** True when `name` is a valid HTTP field name (an RFC 9110 token). */
export function isHeaderName(name: string): boolean {
  return TOKEN.test(name);
}

/**
 * Checks configured headers: names must be RFC 9110 tokens, values must not contain
 * CR, LF or NUL.
 *
 * @example
 * ```ts
 * import { validateHeaders } from "./headers.ts";
 * validateHeaders({ "X-Api-Key": "k" }, "server \"demo\" in mcp.json"); // ok
 * ```
 *
 * @param headers Header names and values.
 * @param where Where the headers come from, for the message (e.g. a server and file).
 * @throws {ConfigError} naming the offending header and `where`, never the value.
 */
export function validateHeaders(headers: Record<string, string>, where: string): void {
  for (const [name, value] of Object.entries(headers)) {
    if (!isHeaderName(name)) {
      throw new ConfigError(`invalid header name ${JSON.stringify(name)} in ${where}`, {
        hint: "header names may contain only letters, digits and !#$%&'*+-.^_`|~",
      });
    }
    if (typeof value !== "string") {
      throw new ConfigError(`header ${name} in ${where} must be a string`);
    }
    if (FORBIDDEN_IN_VALUE.test(value)) {
      throw new ConfigError(
        `header ${name} in ${where} has a value containing a line break or NUL character`,
      );
    }
  }
}

/**
 * Returns a copy of `headers` with every value replaced by `<redacted>`, for display.
 *
 * @example
 * ```ts
 * import { redactHeaders } from "./headers.ts";
 * redactHeaders({ Authorization: "Bearer t" }); // { Authorization: "<redacted>" }
 * ```
 */
export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers)) out[name] = REDACTED;
  return out;
}

/** One header given on the command line. */
export interface HeaderFlag {
  /** The header name as typed. */
  name: string;
  /** The value with surrounding whitespace removed. */
  value: string;
}

/**
 * Parses a `--header` argument of the form `Name: value`.
 *
 * @example
 * ```ts
 * import { parseHeaderFlag } from "./headers.ts";
 * parseHeaderFlag("X-Api-Key: abc123"); // { name: "X-Api-Key", value: "abc123" }
 * ```
 *
 * @throws {UsageError} on a missing colon, a bad name or a bad value; the message never
 * repeats the value.
 */
export function parseHeaderFlag(flag: string): HeaderFlag {
  const colon = flag.indexOf(":");
  if (colon === -1) {
    throw new UsageError('--header needs the form "Name: value" (no colon found)');
  }
  const name = flag.slice(0, colon).trim();
  if (name === "") throw new UsageError("--header needs a name before the colon");
  if (!isHeaderName(name)) {
    throw new UsageError(`--header has an invalid name ${JSON.stringify(name)}`, {
      hint: "header names may contain only letters, digits and !#$%&'*+-.^_`|~",
    });
  }
  const value = flag.slice(colon + 1).trim();
  if (FORBIDDEN_IN_VALUE.test(value)) {
    throw new UsageError(`--header ${name} has a value containing a line break or NUL character`);
  }
  return { name, value };
}

/** Replaces secrets in a piece of text with `<redacted>`. */
export type Redactor = (text: string) => string;

/**
 * A function that hides `secrets` and their derived forms, by the rules of the one
 * redactor (`src/util/redact.ts`): short values only where they stand as whole tokens.
 *
 * @example
 * ```ts
 * import { createRedactor } from "./headers.ts";
 * const redact = createRedactor(["s3cret-token", "abc"]);
 * redact("got s3cret-token and abc, HTTP 401"); // "got <redacted> and <redacted>, HTTP 401"
 * ```
 */
export function createRedactor(secrets: Iterable<string>): Redactor {
  const redactor = new SecretRedactor(secrets);
  return (text) => redactor.redact(text);
}

/**
 * Parses the parameters of the `Bearer` challenge in a `WWW-Authenticate` header value.
 * Tolerant by design: quoted (with `\` escapes) and bare values, any case for the scheme
 * and names (names are returned lower-cased), other schemes before or after, stray
 * commas; a malformed header yields whatever parsed cleanly, never an exception. The
 * first occurrence of a parameter wins.
 *
 * @example
 * ```ts
 * import { parseBearerChallenge } from "./headers.ts";
 * parseBearerChallenge('Bearer error="insufficient_scope", scope="a b"');
 * // { error: "insufficient_scope", scope: "a b" }
 * ```
 *
 * @param header The header value, or null when the header was absent.
 * @returns The parameters, empty when there is no Bearer challenge.
 */
export function parseBearerChallenge(header: string | null | undefined): Record<string, string> {
  const params = new Map<string, string>();
  if (!header) return {};
  const s = header;
  let i = 0;
  let inBearer = false;
  let sawBearer = false;

  const skipSpace = () => {
    while (i < s.length && (s[i] === " " || s[i] === "\t")) i++;
  };
  const readToken = () => {
    const start = i;
    while (i < s.length && /[!#$%&'*+\-.^_`|~0-9A-Za-z]/.test(s[i]!)) i++;
    return s.slice(start, i);
  };

  while (i < s.length) {
    skipSpace();
    if (s[i] === ",") {
      i++;
      continue;
    }
    const token = readToken();
    if (token === "") {
      // Garbage: skip to the next comma and try again from there.
      while (i < s.length && s[i] !== ",") i++;
      continue;
    }
    skipSpace();
    if (s[i] !== "=") {
      // A new challenge starts with its scheme.
      if (sawBearer) break; // only the first Bearer challenge counts
      inBearer = token.toLowerCase() === "bearer";
      sawBearer = inBearer;
      continue;
    }
    i++; // "="
    skipSpace();
    let value: string;
    if (s[i] === '"') {
      i++;
      value = "";
      while (i < s.length && s[i] !== '"') {
        if (s[i] === "\\" && i + 1 < s.length) i++;
        value += s[i];
        i++;
      }
      i++; // closing quote (or past the end when unterminated)
    } else {
      const start = i;
      while (i < s.length && s[i] !== "," && s[i] !== " " && s[i] !== "\t") i++;
      value = s.slice(start, i);
    }
    const name = token.toLowerCase();
    // A token68 credential such as `Bearer abc==` parses as name "abc", value "=": skip.
    if (inBearer && !/^=*$/.test(value) && !params.has(name)) params.set(name, value);
  }
  return Object.fromEntries(params);
}
