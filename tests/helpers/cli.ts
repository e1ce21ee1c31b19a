/**
 * Runs the real CLI the way users get it: `deno run` of main.ts with exactly the
 * permission set the compiled binary is granted (`-P=mcpctl` from deno.json).
 *
 * @module
 */

import { assertTaggedGone, TAG_VARIABLE } from "./processes.ts";

/** Repository root. */
export const ROOT: string = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/** Path of a file in `testdata/`. */
export function testdata(path: string): string {
  return `${ROOT}/testdata/${path}`;
}

/** Result of one CLI run. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Options for {@linkcode runCli}. */
export interface RunCliOptions {
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string;
  /** Kill the CLI after this many ms (a test bound, not a feature); default 60 s. */
  killAfterMs?: number;
  /** Called with the child once spawned (to send signals). */
  onSpawn?: (child: Deno.ChildProcess) => void;
  /** Runs the CLI through this command, e.g. `setpriv` with its options. */
  prefix?: string[];
}

/** The argv that runs the CLI with the compile permission set. */
export function cliCommand(args: string[]): string[] {
  return [
    Deno.execPath(),
    "run",
    "-q",
    "-P=mcpctl",
    "--config",
    `${ROOT}/deno.json`,
    `${ROOT}/main.ts`,
    ...args,
  ];
}

/**
 * Spawns the CLI and collects its output.
 *
 * @example
 * ```ts ignore
 * const r = await runCli(["--version"]);
 * ```
 */
export async function runCli(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  const [cmd, ...rest] = [...(options.prefix ?? []), ...cliCommand(args)];
  const started = performance.now();
  // Every run is tagged, so a server (or grandchild) left behind fails the test that
  // started it. A caller with its own ProcessWatch tag checks for itself.
  const ownTag = options.env?.[TAG_VARIABLE] === undefined ? crypto.randomUUID() : undefined;
  const child = new Deno.Command(cmd!, {
    args: rest,
    cwd: options.cwd ?? ROOT,
    env: { NO_COLOR: "1", ...(ownTag ? { [TAG_VARIABLE]: ownTag } : {}), ...options.env },
    stdin: options.stdin !== undefined ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  options.onSpawn?.(child);
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(options.stdin));
    await w.close();
  }
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, options.killAfterMs ?? 60_000);
  try {
    const out = await child.output();
    if (ownTag) await assertTaggedGone(ownTag);
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
      ms: performance.now() - started,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Writes a config file into a fresh temp dir; returns its path and the dir. */
export async function tempConfig(
  config: unknown,
  name = "mcpctl.json",
): Promise<{ dir: string; path: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "mcpctl-test-" });
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, typeof config === "string" ? config : JSON.stringify(config));
  return {
    dir,
    path,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** A stdio entry running the fixture server with extra flags. */
export function fixture(...flags: string[]): { command: string[] } {
  return {
    command: [
      Deno.execPath(),
      "run",
      "-A",
      "--no-config",
      testdata("servers/fixture.ts"),
      ...flags,
    ],
  };
}

/** Asserts every pid listed in `pidfile` is gone (no server process left behind). */
export async function assertNoProcessLeft(pidfile: string): Promise<void> {
  let text = "";
  try {
    text = await Deno.readTextFile(pidfile);
  } catch {
    return;
  }
  for (const line of text.split("\n").filter(Boolean)) {
    const pid = Number(line);
    const alive = await new Deno.Command("kill", { args: ["-0", String(pid)], stderr: "null" })
      .output();
    if (alive.success) {
      throw new Error(`server process ${pid} was left running`);
    }
  }
}
