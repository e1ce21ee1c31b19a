/**
 * Test helpers for sign-in end to end: the real authorization server and MCP server of
 * `testdata/oidc/server.ts` in a child process (so oidc-provider's timers and sockets
 * stay out of the test's sanitizers), `$BROWSER` scripts, and small polling helpers.
 *
 * @module
 */

import { ROOT } from "./cli.ts";
import type { OidcStackInfo, OidcStackStats } from "../../testdata/oidc/server.ts";

export type { OidcStackInfo, OidcStackStats } from "../../testdata/oidc/server.ts";

/** A running authorization server + MCP server, in a child process. */
export interface OidcStackProcess extends OidcStackInfo {
  /** The first MCP endpoint, `…/mcp`. */
  mcpUrl: string;
  /** The second one, `…/v2/mcp`: another protected resource on the same origin. */
  mcpUrl2: string;
  /** What the servers saw so far. */
  stats(): Promise<OidcStackStats>;
  /** Revokes every grant at the authorization server; resolves to how many. */
  revokeAllGrants(): Promise<number>;
  /** What the child wrote to stderr so far (for failure messages). */
  stderr(): string;
  /** Stops the servers and reaps the process. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options of {@linkcode startOidcStack}. */
export interface StartOidcStackOptions {
  /** Access token lifetime, seconds. */
  accessTokenTtl?: number;
  /** Approve every sign-in at once as this user (for a curl "browser"). */
  autoApprove?: string;
}

/** Starts `testdata/oidc/server.ts` and waits for its address line. */
export async function startOidcStack(
  options: StartOidcStackOptions = {},
): Promise<OidcStackProcess> {
  const args = [
    "run",
    "-A",
    "-q",
    "--config",
    `${ROOT}/deno.json`,
    `${ROOT}/testdata/oidc/server.ts`,
  ];
  if (options.accessTokenTtl !== undefined) {
    args.push("--access-token-ttl", String(options.accessTokenTtl));
  }
  if (options.autoApprove !== undefined) args.push("--auto-approve", options.autoApprove);
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stderrText = "";
  const stderrDone = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (stderrText += chunk) }),
  ).catch(() => {});
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stdin = child.stdin.getWriter();
  let buffered = "";
  let stdoutDone: Promise<void> = Promise.resolve();
  const stop = async () => {
    await stdin.close().catch(() => {});
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
    }, 5_000);
    try {
      await child.status;
    } finally {
      clearTimeout(timer);
    }
    await Promise.all([stdoutDone, stderrDone]);
  };

  let info: OidcStackInfo;
  const startTimer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, 60_000);
  try {
    while (!buffered.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) throw new Error(`the OIDC test server did not start:\n${stderrText}`);
      buffered += value;
    }
    info = JSON.parse(buffered.slice(0, buffered.indexOf("\n")));
  } catch (error) {
    clearTimeout(startTimer);
    await lines.cancel().catch(() => {});
    await stop();
    throw error;
  }
  clearTimeout(startTimer);
  // Keep draining stdout so the pipe never fills.
  stdoutDone = (async () => {
    while (!(await lines.read()).done) { /* nothing else is printed */ }
  })().catch(() => {});

  const admin = async (path: string, method = "GET") => {
    const response = await fetch(`${info.mcpOrigin}${path}`, { method });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    return await response.json();
  };
  return {
    ...info,
    mcpUrl: info.mcpUrls[0]!,
    mcpUrl2: info.mcpUrls[1]!,
    stats: () => admin("/_test/stats"),
    revokeAllGrants: async () => (await admin("/_test/revoke", "POST")).revoked,
    stderr: () => stderrText,
    close: stop,
    [Symbol.asyncDispose]: stop,
  };
}

/**
 * Writes a `$BROWSER` script that follows every redirect with curl, cookies on (the
 * authorization server's interaction needs its cookie), ending at mcpctl's loopback
 * listener: a "browser" for a server started with `autoApprove`. Returns its path.
 */
export async function writeCurlBrowser(dir: string): Promise<string> {
  const path = `${dir}/curl-browser.sh`;
  await Deno.writeTextFile(path, '#!/bin/sh\nexec curl -sfL -b "" -o /dev/null "$1"\n');
  await Deno.chmod(path, 0o755);
  return path;
}

/**
 * Writes a `$BROWSER` script that hands the URL to the test: it appends one line to
 * `urlFile` (written whole, then renamed) and exits 0. Returns the script's path.
 */
export async function writeHandOffBrowser(dir: string, urlFile: string): Promise<string> {
  const path = `${dir}/hand-off-browser.sh`;
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\nprintf '%s\\n' "$1" > '${urlFile}.tmp' && mv '${urlFile}.tmp' '${urlFile}'\n`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

/** Polls `probe` every 50 ms until it returns a value other than undefined. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The file's text, or undefined while it does not exist. */
export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/** Whether `name` is an executable file in a `$PATH` directory. */
export function onPath(name: string): boolean {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      const info = Deno.statSync(`${dir}/${name}`);
      if (dir && info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return true;
    } catch {
      // Not in this directory.
    }
  }
  return false;
}
