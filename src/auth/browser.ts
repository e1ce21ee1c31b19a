/**
 * Opens the sign-in page in the user's browser, or prints the URL when that cannot work.
 *
 * Order of choice:
 * 1. `noBrowser` → print.
 * 2. `$BROWSER`, when set, even without a display (a remote editor sets it to a script
 *    that opens the page on the user's machine). It is a list separated by `:`
 *    (`;` on Windows), tried in order until one exits successfully, as xdg-utils does.
 *    Each entry is split like a shell would split words (spaces, '…', "…", \), without
 *    running a shell; `%s` in an argument is replaced by the URL, else the URL is
 *    appended as the last argument.
 * 3. No display → print: over SSH (`SSH_CONNECTION`, `SSH_CLIENT` or `SSH_TTY`) without
 *    `DISPLAY`, and on Linux and the BSDs without `DISPLAY` or `WAYLAND_DISPLAY`.
 * 4. The platform opener: `open` (macOS), `cmd /c start "" <url>` (Windows, with cmd's
 *    special characters escaped by `^`), `xdg-open` (others).
 * 5. If every attempt failed → print.
 *
 * The opener is awaited (reaped); openers return as soon as they hand the URL over. One
 * that is still running after a few seconds (xdg-open may run the browser itself) is
 * taken as a success and left to finish on its own.
 *
 * @module
 */

import { AuthRequiredError } from "../errors.ts";

/** Runs a program to completion; rejects when it cannot be started. */
export type BrowserSpawn = (cmd: string, args: string[]) => Promise<{ success: boolean }>;

/** Options of {@linkcode openBrowser}. */
export interface OpenBrowserOptions {
  /** Environment; defaults to `Deno.env.toObject()`. */
  env?: Record<string, string | undefined>;
  /** Process runner; defaults to {@linkcode spawnOpener}. */
  spawn?: BrowserSpawn;
  /** Operating system; defaults to `Deno.build.os`. */
  platform?: typeof Deno.build.os;
  /** Where the fallback message goes; defaults to `console.error`. */
  stderr?: (line: string) => void;
  /** Only print the URL (`--no-browser`). */
  noBrowser?: boolean;
}

/** Outcome of {@linkcode openBrowser}. */
export interface OpenBrowserResult {
  /** True when an opener reported success; false when the URL was printed instead. */
  opened: boolean;
}

/** How long the default spawner waits for an opener before assuming it worked. */
export const OPENER_WAIT_MS = 5_000;

/**
 * Opens `url` (which must be http or https) in a browser.
 *
 * @throws {AuthRequiredError} for any other kind of URL: it came from server metadata,
 * and an opener given `file:` or a bare name would run programs.
 *
 * @example
 * ```ts
 * import { openBrowser } from "./browser.ts";
 * const { opened } = await openBrowser("https://auth.example/authorize?x=1", {
 *   noBrowser: true,
 * });
 * // prints: Open this URL in a browser to sign in:
 * //           https://auth.example/authorize?x=1
 * ```
 */
export async function openBrowser(
  url: string,
  options: OpenBrowserOptions = {},
): Promise<OpenBrowserResult> {
  const href = checkUrl(url);
  const env = options.env ?? Deno.env.toObject();
  const platform = options.platform ?? Deno.build.os;
  const spawn = options.spawn ?? spawnOpener;
  const stderr = options.stderr ?? ((line: string) => console.error(line));

  for (const attempt of options.noBrowser ? [] : openerCommands(href, env, platform)) {
    try {
      const status = await spawn(attempt.cmd, attempt.args);
      if (status.success) return { opened: true };
    } catch {
      // Not installed, or not runnable: try the next one, then print.
    }
  }
  stderr(`Open this URL in a browser to sign in:\n  ${href}`);
  return { opened: false };
}

/** One program to try. */
export interface OpenerCommand {
  /** Program. */
  cmd: string;
  /** Its arguments, the URL among them. */
  args: string[];
}

/**
 * The programs {@linkcode openBrowser} would try, in order; empty when there is no
 * display to open a browser on.
 *
 * @example
 * ```ts
 * import { openerCommands } from "./browser.ts";
 * openerCommands("https://a.example/", { BROWSER: "firefox --new-tab" }, "linux");
 * // [{ cmd: "firefox", args: ["--new-tab", "https://a.example/"] }]
 * ```
 */
export function openerCommands(
  url: string,
  env: Record<string, string | undefined>,
  platform: typeof Deno.build.os,
): OpenerCommand[] {
  const browser = env.BROWSER?.trim();
  if (browser) {
    const commands: OpenerCommand[] = [];
    for (const entry of browser.split(platform === "windows" ? ";" : ":")) {
      // Backslashes separate paths on Windows, so they escape nothing there.
      const words = splitWords(entry, { backslashEscapes: platform !== "windows" });
      const [cmd, ...rest] = words;
      if (cmd === undefined) continue;
      const substituted = rest.some((w) => w.includes("%s"));
      const args = rest.map((w) => w.replaceAll("%s", url));
      commands.push({ cmd, args: substituted ? args : [...args, url] });
    }
    if (commands.length > 0) return commands;
  }
  if (!hasDisplay(env, platform)) return [];
  switch (platform) {
    case "darwin":
      return [{ cmd: "open", args: [url] }];
    case "windows":
      // `start` is a cmd builtin; "" is the window title, so the URL is not taken as one.
      return [{ cmd: "cmd", args: ["/c", "start", "", escapeForCmd(url)] }];
    default:
      return [{ cmd: "xdg-open", args: [url] }];
  }
}

/** Whether a browser opened here would be seen by the user. */
function hasDisplay(env: Record<string, string | undefined>, platform: typeof Deno.build.os) {
  const display = Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
  const ssh = Boolean(env.SSH_CONNECTION || env.SSH_CLIENT || env.SSH_TTY);
  if (ssh && !display) return false;
  if (platform === "darwin" || platform === "windows") return true;
  return display;
}

/**
 * Escapes cmd.exe's special characters with `^`. The URL is percent-encoded, so it has
 * no spaces or quotes and reaches cmd unquoted; `&` would otherwise end the command.
 */
function escapeForCmd(url: string): string {
  return url.replace(/[\^&|<>()%!]/g, "^$&");
}

/** Options of {@linkcode splitWords}. */
export interface SplitWordsOptions {
  /** Whether `\` escapes the next character (POSIX); default true. */
  backslashEscapes?: boolean;
}

/**
 * Splits a command line into words the way a POSIX shell does for plain words and
 * quotes, with no expansion of any kind.
 *
 * @example
 * ```ts
 * import { splitWords } from "./browser.ts";
 * splitWords(`open -a "Google Chrome"`); // ["open", "-a", "Google Chrome"]
 * ```
 */
export function splitWords(line: string, options: SplitWordsOptions = {}): string[] {
  const escapes = options.backslashEscapes ?? true;
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (
        escapes && c === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1]!)
      ) {
        word += line[++i];
      } else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (escapes && c === "\\" && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (c === " " || c === "\t" || c === "\n") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/**
 * The default {@linkcode BrowserSpawn}: runs the opener with no stdio and waits for it.
 * If it is still running after {@linkcode OPENER_WAIT_MS}, it is assumed to be the
 * browser itself: success, and it is unref'ed so it does not keep mcpctl alive.
 */
export async function spawnOpener(cmd: string, args: string[]): Promise<{ success: boolean }> {
  const child = new Deno.Command(cmd, {
    args,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const slow = new Promise<"slow">((resolve) => {
    timer = setTimeout(() => resolve("slow"), OPENER_WAIT_MS);
  });
  try {
    const outcome = await Promise.race([child.status, slow]);
    if (outcome === "slow") {
      child.unref();
      return { success: true };
    }
    return { success: outcome.success };
  } finally {
    clearTimeout(timer);
  }
}

function checkUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AuthRequiredError("the sign-in URL is not a valid URL");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new AuthRequiredError(
      `refusing to open a sign-in URL with scheme ${parsed.protocol} (only http and https)`,
    );
  }
  return parsed.href;
}
