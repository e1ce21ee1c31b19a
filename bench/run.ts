/**
 * `deno task bench`: whole-process benchmarks of mcpctl against floors measured in the
 * same run. Every figure is a ratio to its floor; figure and floor commands alternate
 * (A B A B ...) so drift on a shared machine hits both alike. Medians decide; min and max
 * are reported. One untimed warm-up pass per command first fills Deno's transpile cache
 * and the page cache, so all figures are warm.
 *
 * Options:
 *   --runs N        alternated pairs per process benchmark (default: per benchmark)
 *   --only A,B      run only these benchmarks (names: see `--help`)
 *   --out PATH      write the Markdown report here (default BENCHMARKS.md, but only
 *                   when every benchmark ran, i.e. without --only)
 *   --no-write      print the report, write no Markdown file
 *
 * Progress goes to stderr, the report to stdout; raw numbers to bench/results/latest.json.
 *
 * @module
 */

const ROOT = new URL("../", import.meta.url);
const ROOT_DIR = decodeURIComponent(ROOT.pathname).replace(/\/$/, "");
const FLOORS = `${ROOT_DIR}/bench/floors`;
const DENO = Deno.execPath();
const TTY = Deno.stderr.isTerminal();

/** One process to run. */
interface Cmd {
  /** How the command reads in the report. */
  show: string;
  cmd: string;
  args: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** Text stdout must contain (checked on the warm-up runs). */
  expect?: string;
  /** Exact number of times `expect` must occur (e.g. one answer per raw client). */
  expectCount?: number;
}

/** Summary of a series of samples. */
interface Stats {
  median: number;
  min: number;
  max: number;
  samples: number[];
}

type Unit = "s" | "MB" | "MB/s";

/** One row of the report. */
interface Row {
  name: string;
  /** Budget number (1-6) or undefined for informational rows. */
  budgetNo?: number;
  title: string;
  unit: Unit;
  figure?: { cmd: string; stats: Stats };
  floor?: { cmd: string; stats: Stats };
  ratio?: number;
  /** Median of the per-pair ratios (robustness check against the ratio of medians). */
  pairRatio?: number;
  budget?: { op: "<=" | ">="; value: number };
  status: "pass" | "miss" | "info" | "not measured" | "failed";
  note?: string;
}

interface Options {
  bin?: string;
  from?: string;
  runs?: number;
  only?: Set<string>;
  out?: string;
  write: boolean;
}

// ---------------------------------------------------------------------------------------
// Process running and statistics

async function runOnce(c: Cmd): Promise<{ ms: number; stdout: string; stderr: string }> {
  const command = new Deno.Command(c.cmd, {
    args: c.args,
    cwd: c.cwd ?? ROOT_DIR,
    ...(c.env ? { env: c.env } : {}),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
  const start = performance.now();
  const out = await command.output();
  const ms = performance.now() - start;
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  if (!out.success) {
    throw new Error(
      `${c.show} exited ${out.code}${out.signal ? ` (${out.signal})` : ""}: ` +
        (stderr.trim() || stdout.trim()).slice(0, 400),
    );
  }
  return { ms, stdout, stderr };
}

async function warmUp(c: Cmd): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const { stdout } = await runOnce(c);
    if (c.expect === undefined) continue;
    const count = stdout.split(c.expect).length - 1;
    if (count === 0 || (c.expectCount !== undefined && count !== c.expectCount)) {
      throw new Error(
        `${c.show}: expected ${c.expectCount ?? "some"} × ${JSON.stringify(c.expect)} in ` +
          `stdout, got ${count}: ${JSON.stringify(stdout.slice(0, 300))}`,
      );
    }
  }
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, samples };
}

function progress(text: string): void {
  Deno.stderr.writeSync(new TextEncoder().encode(text));
}

/**
 * Runs `measure` on A and B alternately, `runs` pairs, after a warm-up of each.
 * Returns both series (in the unit `measure` returns).
 */
async function alternate(
  name: string,
  a: Cmd,
  b: Cmd,
  runs: number,
  measure: (c: Cmd) => Promise<number>,
  format: (v: number) => string,
): Promise<{ a: Stats; b: Stats; pairRatio: number }> {
  progress(`[${name}] warm-up\n`);
  await warmUp(a);
  await warmUp(b);
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < runs; i++) {
    as.push(await measure(a));
    bs.push(await measure(b));
    const line = `[${name}] ${i + 1}/${runs}  mcpctl ${format(as[i]!)}  floor ${format(bs[i]!)}`;
    progress(TTY ? `\r${line}   ` : `${line}\n`);
  }
  if (TTY) progress("\n");
  return { a: stats(as), b: stats(bs), pairRatio: stats(as.map((v, i) => v / bs[i]!)).median };
}

const seconds = async (c: Cmd) => (await runOnce(c)).ms / 1000;
const fmtS = (v: number) => `${v.toFixed(3)} s`;

// ---------------------------------------------------------------------------------------
// Peak memory

const GNU_TIME = "/usr/bin/time";

async function haveGnuTime(): Promise<boolean> {
  try {
    const out = await new Deno.Command(GNU_TIME, {
      args: ["-f", "%M", "true"],
      stdout: "null",
      stderr: "piped",
    }).output();
    return out.success && /^\d+\s*$/m.test(new TextDecoder().decode(out.stderr));
  } catch {
    return false;
  }
}

/**
 * Max RSS in MB via GNU time (`%M`, from wait4's rusage). Linux reports the maximum
 * over the process and the descendants it reaped, so for `mcpctl call` it is
 * max(mcpctl, server); the report shows the server alone too.
 */
async function maxRssGnuTime(c: Cmd): Promise<number> {
  const file = await Deno.makeTempFile({ prefix: "mcpctl-bench-rss-" });
  try {
    await runOnce({ ...c, cmd: GNU_TIME, args: ["-f", "%M", "-o", file, c.cmd, ...c.args] });
    const lines = (await Deno.readTextFile(file)).trim().split("\n");
    const kb = Number(lines[lines.length - 1]);
    if (!Number.isFinite(kb)) throw new Error(`GNU time wrote ${JSON.stringify(lines)}`);
    return kb / 1024;
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

/**
 * Fallback without GNU time: samples VmHWM (the kernel's own high-water mark of the
 * process) from /proc/PID/status every millisecond until the process exits. VmHWM is
 * monotonic, so only growth in the last sampling interval before exit can be missed.
 * Covers the process alone, not its children.
 */
async function maxRssSampled(c: Cmd): Promise<number> {
  const child = new Deno.Command(c.cmd, {
    args: c.args,
    cwd: c.cwd ?? ROOT_DIR,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let done = false;
  const status = child.status.then((s) => {
    done = true;
    return s;
  });
  let peakKb = 0;
  while (!done) {
    try {
      const text = await Deno.readTextFile(`/proc/${child.pid}/status`);
      const m = /VmHWM:\s+(\d+) kB/.exec(text);
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch { /* exited */ }
    await new Promise((r) => setTimeout(r, 1));
  }
  const s = await status;
  if (!s.success) throw new Error(`${c.show} exited ${s.code}`);
  return peakKb / 1024;
}

// ---------------------------------------------------------------------------------------
// Environment of the run

async function machine(): Promise<Record<string, string>> {
  const read = (p: string) => Deno.readTextFile(p).catch(() => "");
  const cpuinfo = await read("/proc/cpuinfo");
  const cpu = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? "unknown";
  const osRelease = await read("/etc/os-release");
  const os = /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(osRelease)?.[1] ?? Deno.build.os;
  const load = (await read("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
  return {
    cpu,
    cores: String(navigator.hardwareConcurrency),
    os: `${os}, kernel ${Deno.osRelease()} (${Deno.build.target})`,
    deno: `${Deno.version.deno} (v8 ${Deno.version.v8}, typescript ${Deno.version.typescript})`,
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    load: load || "unknown",
  };
}

async function which(name: string): Promise<string | undefined> {
  const out = await new Deno.Command("sh", {
    args: ["-c", `command -v "$1"`, "sh", name],
    stdout: "piped",
    stderr: "null",
  }).output();
  const path = new TextDecoder().decode(out.stdout).trim();
  return out.success && path ? path : undefined;
}

// ---------------------------------------------------------------------------------------
// Commands

const serverArgs = ["run", "-q", "--no-config", `${FLOORS}/min_server.ts`];
const serverLine = [DENO, ...serverArgs].join(" ");

/** A compiled mcpctl to measure instead of `deno run` of the source (`--bin PATH`). */
let mcpctlBinary: string | undefined;

function mcpctl(show: string, args: string[], expect?: string): Cmd {
  return {
    show: `mcpctl ${show}`,
    cmd: mcpctlBinary ?? DENO,
    args: mcpctlBinary ? args : ["run", "-q", "-P=mcpctl", `${ROOT_DIR}/main.ts`, ...args],
    ...(expect !== undefined ? { expect } : {}),
  };
}

const emptyScript: Cmd = {
  show: "deno run -q bench/floors/empty.ts",
  cmd: DENO,
  args: ["run", "-q", `${FLOORS}/empty.ts`],
};

function rawClients(n: number): Cmd {
  return {
    show: n === 1 ? "sh bench/floors/raw_client.sh" : `sh bench/floors/raw_client.sh ${n}`,
    cmd: "sh",
    args: [`${FLOORS}/raw_client.sh`, String(n)],
    env: { DENO },
    expect: '"text":"hi"',
    expectCount: n,
  };
}

/** The cheapest Deno client of the stdio server, run the way mcpctl runs. */
const denoClient: Cmd = {
  show: "deno run -q -P=mcpctl bench/floors/deno_client.ts SERVER",
  cmd: DENO,
  args: ["run", "-q", "-P=mcpctl", `${FLOORS}/deno_client.ts`, DENO, ...serverArgs],
  expect: "hi",
};

/** `mcpctl --config F call min echo message=hi` against a one-server config. */
function callCmd(config: string): Cmd {
  return mcpctl("--config F call min echo message=hi", [
    "--config",
    config,
    "call",
    "min",
    "echo",
    "message=hi",
  ], "hi");
}

function urlCmd(url: string): Cmd {
  return mcpctl(
    "call --url URL echo message=hi",
    ["call", "--url", url, "echo", "message=hi"],
    "hi",
  );
}

function curlCmd(url: string): Cmd {
  return {
    show: "sh bench/floors/curl_client.sh URL",
    cmd: "sh",
    args: [`${FLOORS}/curl_client.sh`, url],
    expect: '"text":"hi"',
    expectCount: 1,
  };
}

function denoFetchCmd(url: string): Cmd {
  return {
    show: "deno run -q -P=mcpctl bench/floors/deno_http_client.ts URL",
    cmd: DENO,
    args: ["run", "-q", "-P=mcpctl", `${FLOORS}/deno_http_client.ts`, url],
    expect: "hi",
  };
}

async function writeConfig(dir: string, count: number): Promise<string> {
  const servers: Record<string, unknown> = {};
  for (let i = 1; i <= count; i++) {
    servers[count === 1 ? "min" : `s${String(i).padStart(2, "0")}`] = {
      command: [DENO, ...serverArgs],
    };
  }
  const path = `${dir}/mcpctl-${count}.json`;
  await Deno.writeTextFile(path, JSON.stringify({ servers }, null, 2));
  return path;
}

/** Starts the minimal HTTP server; returns its URL and a stopper. */
async function startHttpServer(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = new Deno.Command(DENO, {
    args: ["run", "-q", "--no-config", "--allow-net=127.0.0.1", `${FLOORS}/min_http_server.ts`],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("minimal HTTP server exited before printing its URL");
    text += value;
  }
  const url = text.split("\n")[0]!.trim();
  return {
    url,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      await reader.cancel().catch(() => {});
      await child.status;
    },
  };
}

// ---------------------------------------------------------------------------------------
// Benchmarks

interface Bench {
  name: string;
  /** Default pairs. */
  runs: number;
  /** `--runs` does not apply (the SSE benchmark's rounds are fixed). */
  fixedRuns?: boolean;
  describe: string;
  run(ctx: BenchContext): Promise<Row[]>;
}

interface BenchContext {
  runs: number;
  tmp: string;
}

/** Runs `fn` with the minimal HTTP server up; a failure becomes one failed row. */
async function withHttpServer(
  name: string,
  title: string,
  budgetNo: number | undefined,
  fn: (url: string) => Promise<Row[]>,
): Promise<Row[]> {
  let server: Awaited<ReturnType<typeof startHttpServer>> | undefined;
  try {
    server = await startHttpServer();
    return await fn(server.url);
  } catch (e) {
    return [failedRow(name, title, budgetNo, e)];
  } finally {
    await server?.stop();
  }
}

function timeRow(
  name: string,
  title: string,
  budgetNo: number | undefined,
  budget: number | undefined,
  a: Cmd,
  b: Cmd,
  r: { a: Stats; b: Stats; pairRatio: number },
  note?: string,
): Row {
  const ratio = r.a.median / r.b.median;
  return {
    name,
    title,
    unit: "s",
    ...(budgetNo !== undefined ? { budgetNo } : {}),
    figure: { cmd: a.show, stats: r.a },
    floor: { cmd: b.show, stats: r.b },
    ratio,
    pairRatio: r.pairRatio,
    ...(budget !== undefined ? { budget: { op: "<=" as const, value: budget } } : {}),
    status: budget === undefined ? "info" : ratio <= budget ? "pass" : "miss",
    ...(note !== undefined ? { note } : {}),
  };
}

function failedRow(name: string, title: string, budgetNo: number | undefined, e: unknown): Row {
  return {
    name,
    title,
    unit: "s",
    ...(budgetNo !== undefined ? { budgetNo } : {}),
    status: "failed",
    note: e instanceof Error ? e.message : String(e),
  };
}

async function timed(
  name: string,
  title: string,
  budgetNo: number | undefined,
  budget: number | undefined,
  a: Cmd,
  b: Cmd,
  runs: number,
  note?: string,
): Promise<Row> {
  try {
    const r = await alternate(name, a, b, runs, seconds, fmtS);
    return timeRow(name, title, budgetNo, budget, a, b, r, note);
  } catch (e) {
    progress(`\n[${name}] FAILED: ${e instanceof Error ? e.message : e}\n`);
    return failedRow(name, title, budgetNo, e);
  }
}

const BENCHES: Bench[] = [
  {
    name: "version",
    runs: 41,
    describe: "mcpctl --version vs deno run of an empty script (budget 1)",
    run: async ({ runs }) => [
      await timed(
        "version",
        "`mcpctl --version`",
        1,
        1.5,
        mcpctl("--version", ["--version"], "mcpctl "),
        emptyScript,
        runs,
      ),
    ],
  },
  {
    name: "help",
    runs: 41,
    describe: "mcpctl --help vs deno run of an empty script (budget 1)",
    run: async ({ runs }) => [
      await timed(
        "help",
        "`mcpctl --help`",
        1,
        1.5,
        mcpctl("--help", ["--help"], "call"),
        emptyScript,
        runs,
      ),
    ],
  },
  {
    name: "call",
    runs: 31,
    describe: "mcpctl call (config entry) vs the raw sh client, minimal stdio server (budget 2)",
    run: async ({ runs, tmp }) => {
      const config = await writeConfig(tmp, 1);
      return [
        await timed(
          "call",
          "`mcpctl call min echo message=hi` (stdio, from a config file)",
          2,
          1.3,
          callCmd(config),
          rawClients(1),
          runs,
        ),
      ];
    },
  },
  {
    name: "deno-client",
    runs: 31,
    describe: "the cheapest Deno client vs the raw sh client: what any Deno client costs " +
      "(reference)",
    run: async ({ runs }) => [
      await timed(
        "deno-client",
        "reference: cheapest Deno client (`bench/floors/deno_client.ts`) vs the raw client",
        undefined,
        undefined,
        { ...denoClient, show: `${denoClient.show} (not mcpctl)` },
        rawClients(1),
        runs,
        "the best ratio any client running on `deno run` can reach against budget 2's floor: " +
          "its own Deno start comes in series with the server's",
      ),
    ],
  },
  {
    name: "call-deno",
    runs: 31,
    describe: "mcpctl call vs the cheapest Deno client: what mcpctl's own code costs " +
      "(reference)",
    run: async ({ runs, tmp }) => {
      const config = await writeConfig(tmp, 1);
      return [
        await timed(
          "call-deno",
          "reference: `mcpctl call` vs the cheapest Deno client",
          undefined,
          undefined,
          callCmd(config),
          denoClient,
          runs,
          "the part of budget 2's gap that is mcpctl's own code",
        ),
      ];
    },
  },
  {
    name: "call-stdio",
    runs: 21,
    describe: "mcpctl call --stdio (ad-hoc) vs the raw sh client (informational)",
    run: async ({ runs }) => [
      await timed(
        "call-stdio",
        "`mcpctl call --stdio CMD echo message=hi` (ad-hoc, no config)",
        undefined,
        undefined,
        mcpctl('call --stdio "deno run ... min_server.ts" echo message=hi', [
          "call",
          "--stdio",
          serverLine,
          "echo",
          "message=hi",
        ], "hi"),
        rawClients(1),
        runs,
      ),
    ],
  },
  {
    name: "list",
    runs: 21,
    describe: "mcpctl list over 20 configured minimal servers vs 20 raw clients (budget 3)",
    run: async ({ runs, tmp }) => {
      const config = await writeConfig(tmp, 20);
      return [
        await timed(
          "list",
          "`mcpctl list` over 20 minimal stdio servers",
          3,
          1.3,
          mcpctl("--config F list (20 servers)", ["--config", config, "list"], "echo"),
          rawClients(20),
          runs,
        ),
      ];
    },
  },
  {
    name: "list-deno",
    runs: 15,
    describe: "mcpctl list (20 servers) vs the cheapest Deno client running 20 clients " +
      "(reference)",
    run: async ({ runs, tmp }) => {
      const config = await writeConfig(tmp, 20);
      return [
        await timed(
          "list-deno",
          "reference: `mcpctl list` (20 servers) vs the cheapest Deno client doing 20 calls",
          undefined,
          undefined,
          mcpctl("--config F list (20 servers)", ["--config", config, "list"], "echo"),
          {
            ...denoClient,
            show: "deno run -q -P=mcpctl bench/floors/deno_client.ts -n 20 SERVER",
            args: [
              "run",
              "-q",
              "-P=mcpctl",
              `${FLOORS}/deno_client.ts`,
              "-n",
              "20",
              DENO,
              ...serverArgs,
            ],
            expectCount: 20,
          },
          runs,
          "the part of budget 3's gap that is mcpctl's own code",
        ),
      ];
    },
  },
  {
    name: "http",
    runs: 31,
    describe: "mcpctl call --url vs one curl doing the three POSTs (budget 4)",
    run: ({ runs }) =>
      withHttpServer("http", "`mcpctl call --url` (Streamable HTTP)", 4, async (url) => [
        await timed(
          "http",
          "`mcpctl call --url URL echo message=hi` (Streamable HTTP)",
          4,
          1.3,
          urlCmd(url),
          curlCmd(url),
          runs,
        ),
      ]),
  },
  {
    name: "http-deno",
    runs: 25,
    describe: "the cheapest Deno HTTP client vs curl, and mcpctl call --url vs it (reference)",
    run: ({ runs }) =>
      withHttpServer("http-deno", "reference: HTTP rows", undefined, async (url) => [
        await timed(
          "http-deno-client",
          "reference: cheapest Deno HTTP client (`bench/floors/deno_http_client.ts`) vs curl",
          undefined,
          undefined,
          { ...denoFetchCmd(url), show: `${denoFetchCmd(url).show} (not mcpctl)` },
          curlCmd(url),
          runs,
          "the best ratio any client running on `deno run` can reach against budget 4's " +
            "floor: Deno's start and its fetch stack",
        ),
        await timed(
          "http-deno",
          "reference: `mcpctl call --url` vs the cheapest Deno HTTP client",
          undefined,
          undefined,
          urlCmd(url),
          denoFetchCmd(url),
          runs,
          "the part of budget 4's gap that is mcpctl's own code",
        ),
      ]),
  },
  {
    name: "sse",
    runs: 3,
    fixedRuns: true,
    describe: "SSE decoder vs eventsource-parser on 100 MB, in-process (budget 5)",
    run: async ({ runs }) => {
      const title = "SSE decoder throughput, 100 MB stream";
      let mod: { measureSseThroughput?: unknown };
      try {
        mod = await import("./sse_throughput.ts");
      } catch (e) {
        return [{
          name: "sse",
          budgetNo: 5,
          title,
          unit: "MB/s",
          status: "not measured",
          note: `bench/sse_throughput.ts not importable: ${e instanceof Error ? e.message : e}`,
        }];
      }
      if (typeof mod.measureSseThroughput !== "function") {
        return [{
          name: "sse",
          budgetNo: 5,
          title,
          unit: "MB/s",
          status: "not measured",
          note: "bench/sse_throughput.ts exports no measureSseThroughput",
        }];
      }
      const measure = mod.measureSseThroughput as (
        o: { bytes: number; rounds?: number },
      ) => Promise<{ ours: number; oracle: number }>;
      progress(`[sse] 100 MB, ${runs} alternated rounds each (median) ...\n`);
      try {
        const { ours, oracle } = await measure({ bytes: 100e6, rounds: runs });
        const ratio = ours / oracle;
        progress(
          `[sse] SseDecoder ${ours.toFixed(0)} MB/s, eventsource-parser ` +
            `${oracle.toFixed(0)} MB/s\n`,
        );
        return [{
          name: "sse",
          budgetNo: 5,
          title,
          unit: "MB/s",
          figure: { cmd: "SseDecoder (src/mcp/transport/sse.ts)", stats: stats([ours]) },
          floor: {
            cmd: "eventsource-parser 4.1.3 (+ streaming TextDecoder)",
            stats: stats([oracle]),
          },
          ratio,
          budget: { op: ">=", value: 1.0 },
          status: ratio >= 1.0 ? "pass" : "miss",
          note: `measureSseThroughput({ bytes: 100e6, rounds: ${runs} }) from ` +
            "bench/sse_throughput.ts; each figure is the median of its rounds (min/max not " +
            "exposed); higher is better",
        }];
      } catch (e) {
        return [{
          name: "sse",
          budgetNo: 5,
          title,
          unit: "MB/s",
          status: "failed",
          note: e instanceof Error ? e.message : String(e),
        }];
      }
    },
  },
  {
    name: "memory",
    runs: 21,
    describe: "peak RSS of mcpctl call vs deno run of an empty script (budget 6)",
    run: async ({ runs, tmp }) => {
      const title = "Peak memory (max RSS) of `mcpctl call min echo message=hi`";
      const config = await writeConfig(tmp, 1);
      const gnu = await haveGnuTime();
      const measure = gnu ? maxRssGnuTime : maxRssSampled;
      const method = gnu
        ? "GNU time `%M` (wait4 rusage; max over mcpctl and the server it reaps)"
        : "VmHWM of /proc/PID/status sampled every 1 ms (mcpctl process alone)";
      const a = callCmd(config);
      const fmt = (v: number) => `${v.toFixed(1)} MB`;
      try {
        const r = await alternate("memory", a, emptyScript, runs, measure, fmt);
        // The server's own peak, to show which process the `call` figure belongs to.
        const server: number[] = [];
        for (let i = 0; i < 5; i++) {
          server.push(await measure({ show: "min_server.ts alone", cmd: DENO, args: serverArgs }));
        }
        const ratio = r.a.median / r.b.median;
        // Reference: what spawning a server costs any Deno client.
        const d = await alternate(
          "memory-deno-client",
          denoClient,
          emptyScript,
          runs,
          measure,
          fmt,
        );
        const dRatio = d.a.median / d.b.median;
        const reference: Row = {
          name: "memory-deno-client",
          title: "reference: peak memory of the cheapest Deno client (`deno_client.ts`)",
          unit: "MB",
          figure: { cmd: `${denoClient.show} (not mcpctl)`, stats: d.a },
          floor: { cmd: emptyScript.show, stats: d.b },
          ratio: dRatio,
          pairRatio: d.pairRatio,
          status: "info",
          note: "the least any Deno client that spawns a server can use against budget 6's floor",
        };
        return [reference, {
          name: "memory",
          budgetNo: 6,
          title,
          unit: "MB",
          figure: { cmd: a.show, stats: r.a },
          floor: { cmd: emptyScript.show, stats: r.b },
          ratio,
          pairRatio: r.pairRatio,
          budget: { op: "<=", value: 1.25 },
          status: ratio <= 1.25 ? "pass" : "miss",
          note: `${method}; the minimal server alone peaks at ${
            fmt(stats(server).median)
          } (median of 5, stdin closed at once)`,
        }];
      } catch (e) {
        progress(`\n[memory] FAILED: ${e instanceof Error ? e.message : e}\n`);
        return [{ ...failedRow("memory", title, 6, e), unit: "MB" }];
      }
    },
  },
  {
    name: "peers",
    runs: 15,
    describe: "mcporter / mcpc rows, only when already installed (informational)",
    run: async ({ runs, tmp }) => {
      const rows: Row[] = [];
      const mcporter = await which("mcporter");
      const mcpc = await which("mcpc");
      if (mcporter) {
        rows.push(
          await timed(
            "peer-mcporter-stdio",
            "peer: `mcporter call --stdio CMD echo message=hi`",
            undefined,
            undefined,
            {
              show: "mcporter call --stdio CMD echo message=hi",
              cmd: mcporter,
              args: ["call", "--stdio", serverLine, "echo", "message=hi"],
              expect: "hi",
            },
            rawClients(1),
            runs,
          ),
        );
      }
      if (mcpc) {
        const config = `${tmp}/mcpc.json`;
        await Deno.writeTextFile(
          config,
          JSON.stringify({ mcpServers: { min: { command: DENO, args: serverArgs } } }),
        );
        rows.push(
          await timed(
            "peer-mcpc-stdio",
            "peer: `mcpc --config F min tools-call echo --args message=hi`",
            undefined,
            undefined,
            {
              show: "mcpc --config F min tools-call echo --args message=hi",
              cmd: mcpc,
              args: ["--config", config, "min", "tools-call", "echo", "--args", "message=hi"],
              expect: "hi",
            },
            rawClients(1),
            runs,
          ),
        );
      }
      if (!mcporter && !mcpc) {
        progress("[peers] neither mcporter nor mcpc is on PATH; no peer rows\n");
      }
      return rows;
    },
  },
];

// ---------------------------------------------------------------------------------------
// Report

function fmtValue(v: number, unit: Unit): string {
  if (unit === "s") return `${v.toFixed(3)} s`;
  if (unit === "MB") return `${v.toFixed(1)} MB`;
  return `${v.toFixed(0)} MB/s`;
}

function fmtStats(s: Stats, unit: Unit): string {
  if (s.samples.length === 1) return fmtValue(s.median, unit);
  return `${fmtValue(s.median, unit)} (${fmtValue(s.min, unit)}–${fmtValue(s.max, unit)})`;
}

function statusCell(row: Row): string {
  switch (row.status) {
    case "pass":
      return "**pass**";
    case "miss":
      return "**MISS**";
    default:
      return row.status;
  }
}

function table(rows: Row[], heads = ["mcpctl", "Floor"]): string {
  const lines = [
    `| # | Benchmark | ${heads[0]}: median (min–max) | ${
      heads[1]
    }: median (min–max) | Ratio | Budget | Result |`,
    "|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const fig = r.figure ? fmtStats(r.figure.stats, r.unit) : "—";
    const floor = r.floor ? fmtStats(r.floor.stats, r.unit) : "—";
    const ratio = r.ratio !== undefined ? `${r.ratio.toFixed(2)}×` : "—";
    const budget = r.budget ? `${r.budget.op === "<=" ? "≤" : "≥"} ${r.budget.value}×` : "—";
    lines.push(
      `| ${r.budgetNo ?? "–"} | ${r.title} | ${fig} | ${floor} | ${ratio} | ${budget} | ${
        statusCell(r)
      } |`,
    );
  }
  return lines.join("\n");
}

function details(rows: Row[]): string {
  const out: string[] = [];
  for (const r of rows) {
    const parts: string[] = [];
    if (r.figure) parts.push(`figure \`${r.figure.cmd}\``);
    if (r.floor) parts.push(`against \`${r.floor.cmd}\``);
    if (r.figure && r.figure.stats.samples.length > 1) {
      parts.push(`${r.figure.stats.samples.length} alternated pairs`);
    }
    if (r.pairRatio !== undefined) {
      parts.push(`median of per-pair ratios ${r.pairRatio.toFixed(2)}×`);
    }
    if (r.note) parts.push(r.note.replaceAll("\n", " "));
    out.push(`- **${r.name}**${r.budgetNo ? ` (budget ${r.budgetNo})` : ""}: ${parts.join("; ")}.`);
  }
  return out.join("\n");
}

function markdown(
  rows: Row[],
  env: Record<string, string>,
  peersChecked: boolean,
  totalS: number,
): string {
  const budgets = rows.filter((r) => r.budgetNo !== undefined);
  const info = rows.filter((r) => r.budgetNo === undefined);
  const met = budgets.filter((r) => r.status === "pass").length;
  const missed = budgets.filter((r) => r.status === "miss").map((r) => r.name);
  const other = budgets.filter((r) => r.status !== "pass" && r.status !== "miss")
    .map((r) => `${r.name} (${r.status})`);
  return `# Benchmarks

mcpctl runs inside scripts and CI loops, so its own cost on every invocation is the
product. Each figure below is a whole-process measurement of a real command, set against a
**floor** measured in the same run: the cheapest thing that does the same job. The two
commands **alternate** (A B A B …) so that drift on a shared machine hits both alike; the
**median** decides, min and max are shown. Budgets are targets, not tests: CI does not fail
on them.

Generated by \`deno task bench\` (\`bench/run.ts\`) on ${env.date}; the whole run took
${totalS.toFixed(0)} s. Analysis of the misses: [bench/NOTES.md](bench/NOTES.md).

**Summary:** ${met} of ${budgets.length} budget rows met${
    missed.length ? `; missed: ${missed.join(", ")}` : ""
  }${other.length ? `; ${other.join(", ")}` : ""}.

## How mcpctl was run

${
    env.mcpctl
      ? `mcpctl is the ${env.mcpctl} (\`--bin\`).`
      : "The release binary (`deno compile`) cannot be built here, so mcpctl is measured as\n" +
        "`deno run -q -P=mcpctl main.ts …` from the repository root: the named permission set\n" +
        "in `deno.json` is exactly what the compiled binary gets (`deno task bench --bin PATH`\n" +
        "measures a compiled binary instead)."
  } All figures are **warm**: every
command ran twice untimed first, so Deno's transpile cache (DENO_DIR) and the OS page cache
are filled, as they are for a script calling mcpctl in a loop. A compiled binary does not
discover \`deno.json\`/\`deno.lock\` or build the module graph from source files at start,
so it is expected to start faster than these figures show (not verified here; see
bench/NOTES.md).

The machine is shared: other engineers' builds and test suites ran at the same time (load
average ${env.load} at the start, on ${env.cores} cores). Alternation keeps the ratios honest;
absolute times are inflated and the min column is the better guide to intrinsic cost.

## Budgets

${table(budgets)}

Ratio = median of mcpctl ÷ median of the floor (for throughput: ours ÷ theirs, higher is
better).

## Reference rows

${info.length ? table(info, ["Figure", "Against"]) : "None in this run."}

The references separate what any client running on \`deno run\` must pay (its own Deno start
in series with the server's, Deno's spawn and fetch machinery) from what mcpctl's own code
adds: \`deno_client.ts\` and \`deno_http_client.ts\` are the cheapest Deno clients that do
the same job, run with the same \`deno run -q -P=mcpctl\` as mcpctl.

## Machine

| | |
|---|---|
| CPU | ${env.cpu} |
| Cores | ${env.cores} |
| OS | ${env.os} |
| Deno | ${env.deno} |
| Date | ${env.date} |
| Load average at start | ${env.load} |

## Floors

All in \`bench/floors/\`:

- \`empty.ts\`: \`deno run -q\` of an empty script, from the repository root (so it
  discovers \`deno.json\` and \`deno.lock\` exactly as mcpctl's \`deno run\` does).
- \`min_server.ts\`: a minimal stdio MCP server in plain Deno, no SDK, no imports, no
  permissions (\`deno run -q --no-config\`): newline-delimited JSON-RPC, answers
  \`initialize\`, \`tools/list\`, \`tools/call\` of its one tool \`echo\`; exits at end of
  input. mcpctl and the floors start the very same command.
- \`raw_client.sh\`: the raw client, a POSIX \`sh\` script (dash, ~1 ms to start; \`printf\`
  is a builtin) that pipes \`initialize\`, \`notifications/initialized\` and \`tools/call\`
  into the server and waits for it to answer and exit. A shell script, not a Deno script,
  because the floor must be the cheapest possible client: a Deno client would add a second
  Deno start (~40 ms) to the floor and flatter mcpctl. With an argument N it starts N such
  clients in parallel and waits for all (the \`list\` floor).
- \`min_http_server.ts\`: a minimal stateless Streamable HTTP server (\`Deno.serve\` on
  127.0.0.1, port 0, JSON responses, 202 for notifications, 405 for GET/DELETE) started
  once per benchmark; it prints its URL.
- \`curl_client.sh\`: one \`curl\` process doing the three POSTs in order over one kept-alive
  connection (\`--next\`); one process rather than three is the cheapest way to do it.
- References, not floors: \`deno_client.ts\` (spawns the server, writes the three messages,
  reads the answer, closes stdin, waits for exit) and \`deno_http_client.ts\` (three
  \`fetch\` POSTs). No imports.

What mcpctl does beyond the floor is part of its cost by design: it also sends
\`tools/list\` (to type and validate the arguments against the tool's schema), validates,
renders the result, and shuts the server down gracefully (closes stdin, waits for exit).

## Details

${details(rows)}

## Peers

${
    peersChecked
      ? info.some((r) => r.name.startsWith("peer-"))
        ? "Peer rows above (mcporter / mcpc were found on PATH; not installed by the bench)."
        : "Neither `mcporter` nor `mcpc` is on PATH on this machine, so there are no peer rows " +
          "(the bench never installs them). For scale, mcporter is reported to take 0.46 s " +
          "for a call whose server needs 0.08 s."
      : "Not checked in this run."
  }

## Reproduce

\`\`\`sh
deno task bench                       # everything, writes BENCHMARKS.md (< 5 min on 2 cores)
deno task bench --runs 51 --only call # more pairs, one benchmark, prints the table only
deno task bench --only version,help --out /tmp/b.md
\`\`\`

Benchmarks: ${BENCHES.map((b) => `\`${b.name}\``).join(", ")}. Raw samples of the last run
are in \`bench/results/latest.json\` (not committed).
`;
}

// ---------------------------------------------------------------------------------------
// Main

function usage(): string {
  return [
    "usage: deno task bench [--runs N] [--only NAME[,NAME...]] [--out PATH] [--no-write]",
    "                       [--bin PATH]   (measure a compiled mcpctl instead of deno run)",
    "                       [--from JSON --out PATH]   (re-render a saved run, measure nothing)",
    "",
    "benchmarks:",
    ...BENCHES.map((b) => `  ${b.name.padEnd(11)} ${b.describe} [default runs ${b.runs}]`),
    "",
  ].join("\n");
}

function parseOptions(args: string[]): Options {
  const o: Options = { write: true };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const [flag, inline] = a.startsWith("--") && a.includes("=")
      ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
      : [a, undefined];
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case "--runs": {
        const n = Number(value());
        if (!Number.isInteger(n) || n < 1) throw new Error("--runs needs a positive integer");
        o.runs = n;
        break;
      }
      case "--only": {
        const names = value().split(",").map((s) => s.trim()).filter(Boolean);
        for (const n of names) {
          if (!BENCHES.some((b) => b.name === n)) throw new Error(`unknown benchmark '${n}'`);
        }
        o.only = new Set(names);
        break;
      }
      case "--out":
        o.out = value();
        break;
      case "--bin":
        o.bin = value();
        break;
      case "--from":
        o.from = value();
        break;
      case "--no-write":
        o.write = false;
        break;
      case "-h":
      case "--help":
        console.log(usage());
        Deno.exit(0);
        break;
      default:
        throw new Error(`unknown option '${a}'`);
    }
  }
  return o;
}

async function main(): Promise<void> {
  let options: Options;
  try {
    options = parseOptions(Deno.args);
  } catch (e) {
    console.error(`bench: ${e instanceof Error ? e.message : e}\n\n${usage()}`);
    Deno.exit(2);
  }
  let env: Record<string, string>;
  let rows: Row[];
  let totalS: number;
  let peersChecked: boolean;
  if (options.from !== undefined) {
    // Re-render a previous run (e.g. after changing the report's wording).
    const saved = JSON.parse(await Deno.readTextFile(options.from));
    ({ env, rows, totalS } = saved);
    peersChecked = saved.peersChecked ?? true;
  } else {
    const started = performance.now();
    env = await machine();
    if (options.bin !== undefined) {
      mcpctlBinary = options.bin;
      env.mcpctl = `compiled binary ${options.bin}`;
    }
    progress(`bench: ${env.cpu}, ${env.cores} cores, deno ${Deno.version.deno}\n`);
    const tmp = await Deno.makeTempDir({ prefix: "mcpctl-bench-" });
    rows = [];
    const selected = BENCHES.filter((b) => !options.only || options.only.has(b.name));
    try {
      for (const b of selected) {
        const runs = b.fixedRuns ? b.runs : options.runs ?? b.runs;
        rows.push(...await b.run({ runs, tmp }));
      }
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
    totalS = (performance.now() - started) / 1000;
    progress(`bench: done in ${totalS.toFixed(0)} s\n`);
    rows.sort((a, b) => (a.budgetNo ?? 99) - (b.budgetNo ?? 99));
    peersChecked = selected.some((b) => b.name === "peers");
    await Deno.mkdir(`${ROOT_DIR}/bench/results`, { recursive: true });
    await Deno.writeTextFile(
      `${ROOT_DIR}/bench/results/latest.json`,
      JSON.stringify({ env, totalS, peersChecked, rows }, null, 2) + "\n",
    );
  }
  const report = markdown(rows, env, peersChecked, totalS);
  console.log(table(rows));
  const out = options.out ??
    (options.only || options.from ? undefined : `${ROOT_DIR}/BENCHMARKS.md`);
  if (options.write && out !== undefined) {
    await Deno.writeTextFile(out, report);
    // Keep the generated file as `deno fmt --check` (in `deno task check`) wants it.
    await new Deno.Command(DENO, { args: ["fmt", "-q", out], stdout: "null", stderr: "null" })
      .output().catch(() => {});
    progress(`bench: wrote ${out}\n`);
  }
}

if (import.meta.main) await main();
