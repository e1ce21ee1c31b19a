/**
 * The one redactor: every secret mcpctl learns is registered with a {@linkcode Redactor}
 * and replaced by `<redacted>` wherever it would be shown.
 *
 * Where it lives: here, at the bottom of the layers, so that `src/auth` (token errors,
 * credential helpers), `src/mcp/transport` (HTTP error excerpts) and `src/cli` can all
 * use the same rules. The CLI's `Output` owns one instance per run and passes every
 * write through it (stdout and stderr, text and `--json`); the lower layers register
 * what they learn through `onSecret` callbacks and keep their own instance only to
 * clean the messages they build.
 *
 * What one secret covers (its derived forms): the value; the credential after an
 * auth scheme (`Bearer abc` → `abc`); URL-encoding in both styles (`%20`,
 * `+` as in forms, hex digits in either case); JSON-escaping (with `\uXXXX` for
 * non-ASCII and `\/`); base64 (standard and URL-safe, padding optional).
 * {@linkcode Redactor.addBasic} adds HTTP Basic's `base64(id:secret)`.
 *
 * Short values: a form shorter than {@linkcode MIN_ANYWHERE} characters is replaced only
 * where it stands as a whole token, never inside a longer word, number, host or path:
 * a header `X-Api-Version: 1` hides `v=1` and `"1"`, but leaves `127.0.0.1` and
 * `HTTP 401` alone. Longer forms are replaced wherever they occur.
 *
 * @module
 */

/** What replaces a secret. */
export const REDACTED = "<redacted>";

/** Forms at least this long are replaced wherever they occur; shorter ones as whole tokens. */
export const MIN_ANYWHERE = 8;

/**
 * Request headers whose values are never secrets (they describe the client or the
 * content): their values are not registered, so `User-Agent: mcpctl` leaves the word
 * `mcpctl` alone. Every other header value is a secret.
 */
export const PUBLIC_HEADERS: ReadonlySet<string> = new Set([
  "accept",
  "accept-charset",
  "accept-encoding",
  "accept-language",
  "cache-control",
  "content-language",
  "content-type",
  "dnt",
  "mcp-protocol-version",
  "pragma",
  "user-agent",
]);

/**
 * Environment variables whose values are locations or names, never secrets: expanding
 * `${HOME}` into a `cwd` must not hide every path under the home directory.
 */
export const NON_SECRET_VARIABLES: ReadonlySet<string> = new Set([
  "HOME",
  "USER",
  "USERNAME",
  "LOGNAME",
  "PWD",
  "OLDPWD",
  "PATH",
  "SHELL",
  "LANG",
  "TERM",
  "TMPDIR",
  "TMP",
  "TEMP",
  "HOSTNAME",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "XDG_STATE_HOME",
  "XDG_CACHE_HOME",
  "XDG_RUNTIME_DIR",
  "USERPROFILE",
  "APPDATA",
  "LOCALAPPDATA",
]);

/**
 * Values that are never treated as secrets: words of mcpctl's own output and of JSON
 * (`mcpctl: …`, `hint: …`, `true`), which a header like `X-Debug: true` would otherwise
 * hide everywhere. None of them can keep anything secret.
 */
export const NEVER_SECRET: ReadonlySet<string> = new Set([
  "mcpctl",
  "hint",
  "true",
  "false",
  "null",
  "yes",
  "no",
  "on",
  "off",
]);

// An environment variable name that says its value is a credential.
const SECRET_NAME =
  /TOKEN|SECRET|PASSW|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|COOKIE|SESSION|(^|_)KEY$|(^|_)PAT$/i;

// A whole token: not next to a letter, digit or underscore, nor to a joining mark
// (`.`, `-`, `/`…) that has a letter or digit on its other side. `=` only ever joins
// after a value (base64 padding): before one it separates (`token=abc`).
const WORD = String.raw`[\p{L}\p{N}_]`;
const BEFORE = String.raw`(?<!${WORD})(?<!${WORD}[-.~+/%])`;
const AFTER = String.raw`(?!${WORD})(?![-.~+/%=](?:${WORD}|=))`;

/**
 * A set of secrets and the function that hides them.
 *
 * @example
 * ```ts
 * import { Redactor } from "./redact.ts";
 * const r = new Redactor(["s3cret-token-value", "1"]);
 * r.redact("got s3cret-token-value, v=1 from 127.0.0.1");
 * // "got <redacted>, v=<redacted> from 127.0.0.1"
 * ```
 */
export class Redactor {
  readonly #secrets = new Set<string>();
  readonly #forms = new Set<string>();
  // Base64 forms, stored without padding: the padding goes with them when present.
  readonly #padded = new Set<string>();
  #long: RegExp | undefined;
  #short: RegExp | undefined;
  #dirty = false;

  /** Creates a redactor holding `secrets` (empty and undefined values are ignored). */
  constructor(secrets: Iterable<string | undefined> = []) {
    for (const s of secrets) this.add(s);
  }

  /** How many secrets were registered (derived forms not counted). */
  get size(): number {
    return this.#secrets.size;
  }

  /**
   * Registers a secret with its derived forms. A value with an auth scheme
   * (`Bearer abc`) registers the credential alone as well. Surrounding white space
   * is ignored; empty values are.
   */
  add(secret: string | undefined): void {
    const value = secret?.trim();
    this.#add(value);
    // `Bearer abc`: the credential after the scheme may be echoed alone.
    const space = value?.search(/\s/) ?? -1;
    if (space > 0) this.#add(value!.slice(space + 1).trim());
  }

  #add(value: string | undefined): void {
    if (!value || this.#secrets.has(value) || NEVER_SECRET.has(value.toLowerCase())) return;
    this.#secrets.add(value);
    for (const form of derivedForms(value)) this.#addForm(form);
    if (value.length >= MIN_ANYWHERE) {
      const b64 = base64(new TextEncoder().encode(value)).replace(/=+$/, "");
      this.#addForm(b64, true);
      this.#addForm(b64.replaceAll("+", "-").replaceAll("/", "_"), true);
    }
  }

  /** Registers every value in `secrets`. */
  addAll(secrets: Iterable<string | undefined>): void {
    for (const s of secrets) this.add(s);
  }

  /** Registers the values of request headers, but those of {@linkcode PUBLIC_HEADERS}. */
  addHeaders(headers: Record<string, string>): void {
    for (const [name, value] of Object.entries(headers)) {
      if (!PUBLIC_HEADERS.has(name.toLowerCase())) this.add(value);
    }
  }

  /**
   * Registers what a URL carries that may be a credential: the password (or the user
   * name when there is no password: `https://TOKEN@host/`) and every query value
   * (decoded). An invalid URL registers nothing.
   */
  addUrl(url: string | URL): void {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return;
    }
    this.add(decodeSafe(u.password || u.username));
    for (const value of u.searchParams.values()) this.add(value);
  }

  /**
   * Registers environment values: those expanded from variables (`${VAR}`), but the
   * locations of {@linkcode NON_SECRET_VARIABLES}.
   */
  addVariables(values: Record<string, string>): void {
    for (const [name, value] of Object.entries(values)) {
      if (!NON_SECRET_VARIABLES.has(name)) this.add(value);
    }
  }

  /**
   * Registers the values of a server's `env` whose names say they are credentials
   * (`GITHUB_TOKEN`, `API_KEY`, `DB_PASSWORD`…).
   */
  addSecretEnv(env: Record<string, string>): void {
    for (const [name, value] of Object.entries(env)) if (SECRET_NAME.test(name)) this.add(value);
  }

  /**
   * Registers HTTP Basic credentials: the secret, and `base64(id:secret)` both as is and
   * form-encoded first (RFC 6749 §2.3.1).
   */
  addBasic(id: string | undefined, secret: string | undefined): void {
    if (!secret) return;
    this.add(secret);
    if (id === undefined) return;
    for (const pair of new Set([`${id}:${secret}`, `${formEncode(id)}:${formEncode(secret)}`])) {
      this.#addForm(base64(new TextEncoder().encode(pair)).replace(/=+$/, ""), true);
    }
  }

  /** Every form that is hidden (the secrets and their derived forms). */
  forms(): string[] {
    return [...this.#forms];
  }

  /** Replaces every registered secret, in every form, with `<redacted>`. */
  redact(text: string): string {
    if (this.#forms.size === 0 || text === "") return text;
    if (this.#dirty) this.#compile();
    let out = text;
    if (this.#long) out = out.replace(this.#long, REDACTED);
    if (this.#short) out = out.replace(this.#short, REDACTED);
    return out;
  }

  /**
   * A copy of a JSON-like value with every string (object keys too) redacted: what
   * `--json` output goes through, so the result is still exact JSON.
   */
  redactValue<T>(value: T): T {
    if (this.#forms.size === 0) return value;
    return this.#walk(value, 0) as T;
  }

  #walk(value: unknown, depth: number): unknown {
    if (typeof value === "string") return this.redact(value);
    if (value === null || typeof value !== "object" || depth > 200) return value;
    if (Array.isArray(value)) return value.map((v) => this.#walk(v, depth + 1));
    // Only plain data; anything with its own toJSON is serialized first.
    if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
      return this.#walk(JSON.parse(JSON.stringify(value)), depth + 1);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[this.redact(k)] = this.#walk(v, depth + 1);
    return out;
  }

  #addForm(form: string, padded = false): void {
    if (form === "" || this.#forms.has(form)) return;
    this.#forms.add(form);
    if (padded) this.#padded.add(form);
    this.#dirty = true;
  }

  #compile(): void {
    // Longest first, so that a secret containing another is replaced whole.
    const sorted = [...this.#forms].sort((a, b) => b.length - a.length);
    const source = (f: string) => pattern(f) + (this.#padded.has(f) ? "=*" : "");
    const long = sorted.filter((f) => f.length >= MIN_ANYWHERE).map(source);
    const short = sorted.filter((f) => f.length < MIN_ANYWHERE).map(source);
    this.#long = long.length ? new RegExp(long.join("|"), "gu") : undefined;
    this.#short = short.length
      ? new RegExp(`${BEFORE}(?:${short.join("|")})${AFTER}`, "gu")
      : undefined;
    this.#dirty = false;
  }
}

// The textual forms of a secret: as is, URL-encoded in both styles, JSON-escaped three
// ways. (Base64 forms are added by the Redactor, for values long enough to have them.)
function derivedForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  forms.add(encodeURIComponent(secret));
  forms.add(formEncode(secret));
  const json = JSON.stringify(secret).slice(1, -1);
  forms.add(json);
  forms.add(json.replaceAll("/", "\\/"));
  const ascii = json.replace(/[^\x20-\x7e]/g, (c) => `\\u${hex4(c)}`);
  forms.add(ascii);
  forms.add(ascii.replace(/\\u([0-9a-f]{4})/g, (_, h: string) => `\\u${h.toUpperCase()}`));
  return [...forms];
}

/** Form-urlencoding (`application/x-www-form-urlencoded`): space as `+`. */
export function formEncode(value: string): string {
  return new URLSearchParams([["", value]]).toString().slice(1);
}

// A form as a regular expression: literal text, with percent-escapes in either case.
function pattern(form: string): string {
  return form.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(
    /%([0-9A-Fa-f])([0-9A-Fa-f])/g,
    (_, a: string, b: string) => `%${either(a)}${either(b)}`,
  );
}

function either(digit: string): string {
  const lower = digit.toLowerCase();
  const upper = digit.toUpperCase();
  return lower === upper ? digit : `[${lower}${upper}]`;
}

function hex4(c: string): string {
  return c.charCodeAt(0).toString(16).padStart(4, "0");
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
