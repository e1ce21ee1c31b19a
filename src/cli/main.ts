/**
 * The CLI entry: finds the command, parses options, runs it, maps errors to exit codes.
 * `--help` and `--version` import nothing beyond this file's small dependencies.
 *
 * @module
 */

import { ExitCode, exitCodeOf, InterruptedError, McpctlError, UsageError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { killAllChildren } from "../util/children.ts";
import { closest, type OptionSpec, parseArguments } from "./args.ts";
import { COMMANDS, type CommandSpec, GLOBAL_OPTIONS } from "./commands.ts";
import { commandHelp, mainHelp } from "./help.ts";
import { BrokenPipe, Output } from "./output.ts";

/** Injected I/O and environment (tests). */
export interface MainOptions {
  out?: Output;
  env?: (name: string) => string | undefined;
  cwd?: string;
  /** Install SIGINT/SIGTERM handlers (default true). */
  signals?: boolean;
}

/**
 * Runs mcpctl with `args`; resolves to the process exit code.
 *
 * @example
 * ```ts ignore
 * import { main } from "./main.ts";
 * Deno.exit(await main(["--version"]));
 * ```
 */
export async function main(args: string[], options: MainOptions = {}): Promise<number> {
  const out = options.out ?? new Output();
  const controller = new AbortController();
  const removeSignals = options.signals === false ? () => {} : installSignals(controller, out);
  try {
    return await dispatch(args, out, controller.signal, options);
  } catch (error) {
    if (error instanceof BrokenPipe) return ExitCode.ok;
    await reportError(out, error);
    return exitCodeOf(error);
  } finally {
    removeSignals();
  }
}

async function dispatch(
  args: string[],
  out: Output,
  signal: AbortSignal,
  options: MainOptions,
): Promise<number> {
  const { index, spec } = findCommand(args);
  if (!spec) {
    const global = parseArguments(args, [
      ...GLOBAL_OPTIONS,
      { name: "version", short: "V", type: "boolean", description: "" },
    ], "mcpctl");
    if (global.values.version) {
      await out.result(
        `mcpctl ${VERSION} (deno ${Deno.version.deno}, ${Deno.build.target})\n`,
      );
      return ExitCode.ok;
    }
    if (global.values.help || args.length === 0) {
      await out.result(mainHelp());
      return ExitCode.ok;
    }
    const word = global.positionals[0] ?? "";
    const names = COMMANDS.filter((c) => !c.hidden).map((c) => c.name);
    const close = closest(word, names);
    throw new UsageError(
      `unknown command '${word}'${close.length ? `; did you mean '${close[0]}'?` : ""}`,
      { hint: `commands: ${names.join(", ")}; see 'mcpctl --help'` },
    );
  }
  const rest = [...args.slice(0, index), ...args.slice(index + 1)];
  const optionSpecs: OptionSpec[] = [...GLOBAL_OPTIONS, ...spec.options];
  const parsed = parseArguments(rest, optionSpecs, `mcpctl ${spec.name}`);
  if (parsed.values.help) {
    await out.result(commandHelp(spec));
    return ExitCode.ok;
  }
  const module = await spec.load();
  return await module.run({
    values: parsed.values,
    positionals: parsed.positionals,
    out,
    signal,
    env: options.env ?? ((n) => Deno.env.get(n)),
    cwd: options.cwd ?? Deno.cwd(),
  });
}

/** Finds the command word: the first argument that is not a global option or its value. */
function findCommand(args: string[]): { index: number; spec?: CommandSpec } {
  const withValue = new Set<string>();
  for (const o of GLOBAL_OPTIONS) {
    if (o.type === "string") {
      withValue.add(`--${o.name}`);
      if (o.short) withValue.add(`-${o.short}`);
    }
  }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") return { index: -1 };
    if (withValue.has(a)) {
      i++;
      continue;
    }
    if (a.startsWith("-")) continue;
    const spec = COMMANDS.find((c) => c.name === a);
    return spec ? { index: i, spec } : { index: -1 };
  }
  return { index: -1 };
}

async function reportError(out: Output, error: unknown): Promise<void> {
  if (error instanceof McpctlError) {
    let text = `mcpctl: ${error.message}\n`;
    if (error.hint) text += `hint: ${error.hint}\n`;
    await out.error(text);
    return;
  }
  const e = error instanceof Error ? error : new Error(String(error));
  await out.error(`mcpctl: unexpected ${e.name}: ${e.message}\n`);
  if (Deno.env.get("MCPCTL_DEBUG")) await out.error(`${e.stack}\n`);
}

function installSignals(controller: AbortController, out: Output): () => void {
  let count = 0;
  const handler = () => {
    count++;
    if (count === 1) {
      controller.abort(new InterruptedError("interrupted"));
    } else {
      // A second interrupt ends at once, still taking every server down with it.
      killAllChildren();
      void out.error("mcpctl: interrupted again; exiting now\n").finally(() =>
        Deno.exit(ExitCode.interrupted)
      );
    }
  };
  const signals: Deno.Signal[] = Deno.build.os === "windows"
    ? ["SIGINT", "SIGBREAK"]
    : ["SIGINT", "SIGTERM"];
  for (const s of signals) {
    try {
      Deno.addSignalListener(s, handler);
    } catch { /* not supported here */ }
  }
  return () => {
    for (const s of signals) {
      try {
        Deno.removeSignalListener(s, handler);
      } catch { /* ignore */ }
    }
  };
}
