/**
 * Proof that a test left no process behind.
 *
 * Tests run side by side in one `deno test` process, so "the children of this process"
 * would mix up the processes of every test running at the time. Instead each test gets a
 * tag: an environment variable that the CLI it starts inherits, and through it every
 * server and grandchild, even one that left its process group or session. After the
 * test, any live process whose environment carries the tag was left behind. Zombies do
 * not count: they have exited and only wait for a reaper.
 *
 * Servers may also append their pids (and their grandchildren's) to a pidfile; where
 * `/proc` is missing (not Linux) the pidfile is what gets checked.
 *
 * @module
 */

/** The environment variable that carries a test's tag. */
export const TAG_VARIABLE = "MCPCTL_TEST_PROCESS_TAG";

/** A process found alive. */
export interface LiveProcess {
  pid: number;
  /** Its command line, arguments joined with spaces. */
  command: string;
}

const HAS_PROC = Deno.build.os === "linux";

async function readProc(pid: number, file: string): Promise<Uint8Array | undefined> {
  try {
    return await Deno.readFile(`/proc/${pid}/${file}`);
  } catch {
    return undefined; // gone, or not ours to read
  }
}

// The state letter from /proc/<pid>/stat ("R", "S", "Z"…), undefined when gone.
async function stateOf(pid: number): Promise<string | undefined> {
  const stat = await readProc(pid, "stat");
  if (stat === undefined) return undefined;
  const text = new TextDecoder().decode(stat);
  return text.slice(text.lastIndexOf(")") + 2).split(" ")[0];
}

async function commandOf(pid: number): Promise<string> {
  const raw = await readProc(pid, "cmdline");
  if (raw === undefined) return "?";
  return new TextDecoder().decode(raw).split("\0").filter(Boolean).join(" ");
}

async function aliveByKill(pid: number): Promise<boolean> {
  const r = await new Deno.Command("kill", { args: ["-0", String(pid)], stderr: "null" })
    .output();
  return r.success;
}

/**
 * Watches the processes of one test.
 *
 * @example
 * ```ts ignore
 * await using watch = await ProcessWatch.create();
 * await runCli(["list"], { env: watch.env });
 * // on dispose: fails if any process with the tag is still alive (and kills it)
 * ```
 */
export class ProcessWatch {
  /** This test's tag. */
  readonly tag: string;
  /** A pidfile servers may append to (in a fresh temp dir). */
  readonly pidfile: string;
  readonly #dir: string;

  private constructor(dir: string) {
    this.tag = crypto.randomUUID();
    this.#dir = dir;
    this.pidfile = `${dir}/pids`;
  }

  /** Starts watching: a new tag and pidfile. */
  static async create(): Promise<ProcessWatch> {
    return new ProcessWatch(await Deno.makeTempDir({ prefix: "mcpctl-procs-" }));
  }

  /** Environment to pass to the CLI (its servers inherit it). */
  get env(): Record<string, string> {
    return { [TAG_VARIABLE]: this.tag };
  }

  /** Pids written to the pidfile so far. */
  async recordedPids(): Promise<number[]> {
    const text = await Deno.readTextFile(this.pidfile).catch(() => "");
    return text.split("\n").filter(Boolean).map(Number);
  }

  /** Every live (not zombie) process carrying the tag, or listed in the pidfile. */
  async live(): Promise<LiveProcess[]> {
    const found = new Map<number, LiveProcess>();
    if (HAS_PROC) {
      for (const p of await findTagged(this.tag)) found.set(p.pid, p);
    } else {
      for (const pid of await this.recordedPids()) {
        if (await aliveByKill(pid)) found.set(pid, { pid, command: "?" });
      }
    }
    return [...found.values()];
  }

  /** SIGKILLs the given processes, by pid. */
  kill(pids: Iterable<number>): void {
    for (const pid of pids) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* already gone */ }
    }
  }

  /**
   * Waits up to `graceMs` for every tagged process to end; what is still alive then is
   * killed and reported by a thrown Error.
   */
  async assertNoneLeft(graceMs = 3000): Promise<void> {
    const until = Date.now() + graceMs;
    let left = await this.live();
    while (left.length > 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      left = await this.live();
    }
    if (left.length === 0) return;
    this.kill(left.map((p) => p.pid));
    throw new Error(
      `${left.length} process(es) left running (now killed):\n` +
        left.map((p) => `  ${p.pid} ${p.command}`).join("\n"),
    );
  }

  /** Checks (see assertNoneLeft) and removes the pidfile's directory. */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.assertNoneLeft();
    } finally {
      await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
    }
  }
}

/** Live (not zombie) processes whose environment carries `tag`; empty where `/proc` is missing. */
export async function findTagged(tag: string): Promise<LiveProcess[]> {
  if (!HAS_PROC) return [];
  const marker = new TextEncoder().encode(`${TAG_VARIABLE}=${tag}\0`);
  const found: LiveProcess[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const pid = Number(entry.name);
    const environ = await readProc(pid, "environ");
    if (environ === undefined || !contains(environ, marker)) continue;
    const state = await stateOf(pid);
    if (state === undefined || state === "Z" || state === "X") continue;
    found.push({ pid, command: await commandOf(pid) });
  }
  return found;
}

/**
 * Fails (after killing them) when processes tagged `tag` are still alive once `graceMs`
 * has passed: what every `runCli` checks after the CLI exited.
 */
export async function assertTaggedGone(tag: string, graceMs = 2000): Promise<void> {
  const until = Date.now() + graceMs;
  let left = await findTagged(tag);
  while (left.length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = await findTagged(tag);
  }
  if (left.length === 0) return;
  for (const p of left) {
    try {
      Deno.kill(p.pid, "SIGKILL");
    } catch { /* gone */ }
  }
  throw new Error(
    `mcpctl left ${left.length} process(es) running (now killed):\n` +
      left.map((p) => `  ${p.pid} ${p.command}`).join("\n"),
  );
}

function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    // Variables start the buffer or follow a NUL.
    if (i > 0 && haystack[i - 1] !== 0) continue;
    for (let j = 0; j < needle.length; j++) {
      if (haystack[i + j] !== needle[j]) continue outer;
    }
    return true;
  }
  return false;
}

/**
 * Samples the peak resident memory (VmHWM, in bytes) of a running process until it
 * exits; `stop()` gives the highest value seen. VmHWM is the kernel's own high-water
 * mark, so sampling misses at most the last interval of the process's life. Returns 0
 * where `/proc` is missing.
 */
export function watchPeakRss(pid: number, intervalMs = 20): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    if (!HAS_PROC) return;
    while (running) {
      const status = await readProc(pid, "status");
      if (status === undefined) break;
      const m = new TextDecoder().decode(status).match(/^VmHWM:\s+(\d+) kB/m);
      if (m) peak = Math.max(peak, Number(m[1]) * 1024);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}
