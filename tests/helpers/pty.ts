/**
 * Runs the real CLI on a pseudo-terminal (util-linux `script`), so stdin and stderr are
 * terminals as for a person, and answers its questions: each answer is typed only once
 * the question's text is on the screen (never after a sleep).
 *
 * @module
 */

import { cliCommand } from "./cli.ts";
import { assertTaggedGone, TAG_VARIABLE } from "./processes.ts";

/** One question and its answer. */
export interface TerminalStep {
  /** Text that shows the question is on the screen (after the previous one). */
  waitFor: string;
  /** What the person types, e.g. `"n\n"`. */
  answer: string;
}

/** What the terminal showed, and the exit code. */
export interface TerminalResult {
  code: number;
  /** Everything written to the terminal, raw bytes decoded (the typed answers echoed). */
  screen: string;
}

/** Whether `script` is here to make a terminal. */
export async function hasScript(): Promise<boolean> {
  try {
    const r = await new Deno.Command("script", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output();
    return r.success;
  } catch {
    return false;
  }
}

/**
 * Runs `mcpctl ARGS` on a terminal and answers `steps` in order.
 *
 * @example
 * ```ts ignore
 * const r = await runInTerminal(["call", "fx", "echo"], { cwd, env }, [
 *   { waitFor: "[y/N]", answer: "n\n" },
 * ]);
 * ```
 */
export async function runInTerminal(
  args: string[],
  options: { cwd: string; env: Record<string, string>; killAfterMs?: number },
  steps: TerminalStep[],
): Promise<TerminalResult> {
  const line = cliCommand(args).map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const tag = crypto.randomUUID();
  const child = new Deno.Command("script", {
    args: ["-qec", line, "/dev/null"],
    cwd: options.cwd,
    env: { NO_COLOR: "1", [TAG_VARIABLE]: tag, ...options.env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // A test bound, not a wait for an event: a question that never comes fails the test.
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, options.killAfterMs ?? 60_000);
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  let screen = "";
  let from = 0;
  let step = 0;
  const stderr = new Response(child.stderr).text();
  try {
    const decoder = new TextDecoder();
    for await (const chunk of child.stdout) {
      screen += decoder.decode(chunk, { stream: true });
      while (step < steps.length) {
        const at = screen.indexOf(steps[step]!.waitFor, from);
        if (at < 0) break;
        from = at + steps[step]!.waitFor.length;
        await writer.write(encoder.encode(steps[step]!.answer));
        step++;
      }
      if (step === steps.length) {
        await writer.close().catch(() => {});
        step++;
      }
    }
    const status = await child.status;
    await stderr;
    await assertTaggedGone(tag);
    if (step < steps.length) {
      throw new Error(
        `the terminal never showed ${JSON.stringify(steps[step]!.waitFor)}:\n${screen}`,
      );
    }
    return { code: status.code, screen };
  } finally {
    clearTimeout(timer);
    await writer.close().catch(() => {});
  }
}
