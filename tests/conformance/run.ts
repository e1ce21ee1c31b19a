/**
 * Runs the client scenarios of the official MCP conformance suite
 * (`@modelcontextprotocol/conformance`, pinned below) against the real mcpctl CLI,
 * through `tests/conformance/adapter.ts`.
 *
 * A scenario passes only when its `checks.json` has at least one SUCCESS, no FAILURE
 * or WARNING, and at least two checks (a client that does nothing gets a bare PASSED
 * from the suite on some scenarios). `expected_failures.json` lists the scenarios that
 * do not pass yet; it may only shrink: an unlisted failure fails the run, and so does a
 * listed scenario that passes now (remove it from the file).
 *
 * Usage: `deno task conformance [SCENARIO...] [--jobs N] [--out DIR] [--verbose]`.
 * The last line is `conformance: N passed, M failed` (expected failures count as
 * neither); the exit code is 0 only when M is 0.
 *
 * @module
 */

import { ROOT } from "../helpers/cli.ts";

/** The suite, pinned (also in deno.json `imports`). */
export const SUITE = "npm:@modelcontextprotocol/conformance@0.1.16";

/** Scenarios run at the same time (each starts a Node-style server and the CLI). */
export const DEFAULT_JOBS = 2;

/** Bound on one scenario, above the suite's own 30 s client timeout. */
const SCENARIO_LIMIT_MS = 90_000;

/** One check of a `checks.json`. */
export interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

/** The verdict on one scenario's checks. */
export interface Verdict {
  passed: boolean;
  /** Why it did not pass, or a short summary of what passed. */
  summary: string;
}

/**
 * Judges a scenario by its checks: at least one SUCCESS, no FAILURE or WARNING, at
 * least two checks.
 *
 * @example
 * ```ts
 * import { judge } from "./run.ts";
 * judge([{ id: "a", status: "SUCCESS" }, { id: "b", status: "INFO" }]).passed; // true
 * judge([{ id: "a", status: "SUCCESS" }]).passed; // false: one check proves little
 * ```
 */
export function judge(checks: Check[]): Verdict {
  const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
  const successes = checks.filter((c) => c.status === "SUCCESS").length;
  if (bad.length > 0) {
    const shown = bad.slice(0, 4).map((c) =>
      `${c.status} ${c.id}${c.errorMessage ? `: ${c.errorMessage.slice(0, 160)}` : ""}`
    );
    return { passed: false, summary: shown.join("; ") + (bad.length > 4 ? "; …" : "") };
  }
  if (successes === 0) return { passed: false, summary: "no SUCCESS check" };
  if (checks.length < 2) {
    return {
      passed: false,
      summary: `only ${checks.length} check: no evidence of a real exchange`,
    };
  }
  return { passed: true, summary: `${successes} SUCCESS of ${checks.length} checks` };
}

/** The outcome of one scenario against the expected failures. */
export type Outcome = "pass" | "fail" | "expected failure" | "unexpected pass";

/** Combines a verdict with whether the scenario is listed as an expected failure. */
export function outcomeOf(passed: boolean, expectedToFail: boolean): Outcome {
  if (passed) return expectedToFail ? "unexpected pass" : "pass";
  return expectedToFail ? "expected failure" : "fail";
}

/** Parses the client scenarios from `conformance list --client`. */
export function parseScenarioList(text: string): string[] {
  const names: string[] = [];
  for (const line of text.split("\n")) {
    const m = /^\s*-\s+(\S+)/.exec(line);
    if (m) names.push(m[1]!);
  }
  return names;
}

/** Quotes a word for the POSIX shell the suite runs the command through. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

async function listScenarios(): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", SUITE, "list", "--client"],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const names = parseScenarioList(text);
  if (!out.success || names.length === 0) {
    throw new Error(
      `cannot list the conformance scenarios: ${new TextDecoder().decode(out.stderr).trim()}`,
    );
  }
  return names;
}

async function findChecks(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await findChecks(path));
    else if (entry.name === "checks.json") found.push(path);
  }
  return found;
}

/** The result of running one scenario. */
interface Ran {
  scenario: string;
  verdict: Verdict;
  /** The client's stderr (mcpctl and the adapter), for failures. */
  clientStderr: string;
  /** The suite's own output, for failures. */
  suiteOutput: string;
}

async function runScenario(scenario: string, outRoot: string): Promise<Ran> {
  const out = `${outRoot}/${scenario.replaceAll("/", "_")}`;
  await Deno.mkdir(out, { recursive: true });
  const command = [Deno.execPath(), "run", "-A", `${ROOT}/tests/conformance/adapter.ts`]
    .map(shellQuote).join(" ");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", SUITE, "client", "--command", command, "--scenario", scenario, "-o", out],
    cwd: ROOT,
    env: { NO_COLOR: "1", FORCE_COLOR: "0" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, SCENARIO_LIMIT_MS);
  let output: Deno.CommandOutput;
  try {
    output = await child.output();
  } finally {
    clearTimeout(timer);
  }
  const decoder = new TextDecoder();
  const suiteOutput = decoder.decode(output.stdout) + decoder.decode(output.stderr);
  const files = await findChecks(out);
  if (files.length !== 1) {
    return {
      scenario,
      verdict: {
        passed: false,
        summary: files.length === 0
          ? `no checks.json (suite exit code ${output.code})`
          : `${files.length} checks.json files`,
      },
      clientStderr: "",
      suiteOutput,
    };
  }
  const dir = files[0]!.slice(0, -"/checks.json".length);
  const checks = JSON.parse(await Deno.readTextFile(files[0]!)) as Check[];
  const clientStderr = await Deno.readTextFile(`${dir}/stderr.txt`).catch(() => "");
  return { scenario, verdict: judge(checks), clientStderr, suiteOutput };
}

/** Runs `work` over `items` with at most `jobs` at a time, keeping the order of results. */
async function pool<T, R>(items: T[], jobs: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker));
  return results;
}

function tail(text: string, lines: number): string {
  return text.trimEnd().split("\n").slice(-lines).map((l) => `      ${l}`).join("\n");
}

async function main(args: string[]): Promise<number> {
  let jobs = Number(Deno.env.get("CONFORMANCE_JOBS") ?? DEFAULT_JOBS);
  let keep: string | undefined;
  let verbose = false;
  const selected: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--jobs") jobs = Number(args[++i]);
    else if (a === "--out") keep = args[++i];
    else if (a === "--verbose") verbose = true;
    else if (a.startsWith("-")) {
      console.error(`unknown option ${a}; usage: run.ts [SCENARIO...] [--jobs N] [--out DIR]`);
      return 2;
    } else selected.push(a);
  }
  if (!Number.isInteger(jobs) || jobs < 1) jobs = DEFAULT_JOBS;

  const expectedFile = `${ROOT}/tests/conformance/expected_failures.json`;
  const expected = JSON.parse(await Deno.readTextFile(expectedFile)) as Record<string, string>;
  const all = await listScenarios();
  let failed = 0;
  let passed = 0;
  for (const name of Object.keys(expected)) {
    if (!all.includes(name)) {
      console.log(`fail  ${name}: listed in expected_failures.json but not a scenario`);
      failed++;
    }
  }
  const unknown = selected.filter((s) => !all.includes(s));
  if (unknown.length > 0) {
    console.error(`unknown scenario ${unknown.join(", ")}; scenarios: ${all.join(", ")}`);
    return 2;
  }
  const scenarios = selected.length > 0 ? selected : all;
  const outRoot = keep ?? await Deno.makeTempDir({ prefix: "mcpctl-conformance-" });
  console.log(`conformance: ${scenarios.length} client scenarios of ${SUITE}, ${jobs} at a time`);
  try {
    await pool(scenarios, jobs, async (scenario) => {
      const ran = await runScenario(scenario, outRoot);
      const outcome = outcomeOf(ran.verdict.passed, scenario in expected);
      if (outcome === "pass") passed++;
      if (outcome === "fail" || outcome === "unexpected pass") failed++;
      const label = outcome === "unexpected pass" ? "fail" : outcome;
      let line = `${label.padEnd(16)}  ${scenario}: ${ran.verdict.summary}`;
      if (outcome === "unexpected pass") {
        line += `\n      it passes now: remove "${scenario}" from ${expectedFile}`;
      }
      if (outcome === "fail" || (verbose && outcome !== "pass")) {
        if (ran.clientStderr.trim()) line += `\n    client stderr:\n${tail(ran.clientStderr, 12)}`;
        else line += `\n    suite output:\n${tail(ran.suiteOutput, 12)}`;
      }
      console.log(line);
    });
  } finally {
    if (keep === undefined) await Deno.remove(outRoot, { recursive: true });
    else console.log(`results kept in ${outRoot}`);
  }
  console.log(`conformance: ${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
