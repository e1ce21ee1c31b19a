/**
 * Profiling helper: the modules an entry loads EAGERLY (static, non-type imports,
 * transitively; dynamic `import()` targets are left out), from `deno info --json`.
 * What `mcpctl --version` pays for at startup is this list for `main.ts`; a command
 * additionally pays for the eager graph of its own module.
 *
 * `--all` lists instead every module `deno run` reads while building the graph before it
 * runs anything: static AND statically analyzable dynamic imports (`import("./x.ts")`),
 * npm packages included (their files are not listed; each package is one line).
 *
 * Usage: deno run -A bench/graph.ts [ENTRY] [--since OTHER_ENTRY] [--all]
 *   ENTRY     default main.ts
 *   --since   list only the modules ENTRY adds on top of OTHER_ENTRY's eager graph
 *             (e.g. `bench/graph.ts src/cli/call.ts --since main.ts`)
 *
 * @module
 */

interface InfoModule {
  specifier: string;
  size?: number;
  dependencies?: {
    specifier: string;
    code?: { specifier: string };
    isDynamic?: boolean;
  }[];
  // npm packages appear as kind "npm" without size; their files are counted apart.
  kind?: string;
  npmPackage?: string;
}

interface Info {
  roots: string[];
  modules: InfoModule[];
  redirects?: Record<string, string>;
  npmPackages?: Record<string, { name: string; version: string }>;
}

async function info(entry: string): Promise<Info> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/**
 * The eager module set of `entry`, in load order, with sizes in bytes; with `all`, the
 * dynamic imports too.
 */
export async function eagerGraph(entry: string, all = false): Promise<Map<string, number>> {
  const data = await info(entry);
  const byId = new Map(data.modules.map((m) => [m.specifier, m]));
  const resolve = (s: string) => data.redirects?.[s] ?? s;
  const seen = new Map<string, number>();
  const visit = (spec: string) => {
    const id = resolve(spec);
    if (seen.has(id)) return;
    const m = byId.get(id);
    seen.set(id, m?.size ?? 0);
    for (const d of m?.dependencies ?? []) {
      if (d.code && (all || !d.isDynamic)) visit(d.code.specifier);
    }
  };
  for (const root of data.roots) visit(root);
  return seen;
}

if (import.meta.main) {
  let entry = "main.ts";
  let since: string | undefined;
  let all = false;
  for (let i = 0; i < Deno.args.length; i++) {
    const a = Deno.args[i]!;
    if (a === "--since") since = Deno.args[++i];
    else if (a === "--all") all = true;
    else entry = a;
  }
  const graph = await eagerGraph(entry, all);
  const base = since ? await eagerGraph(since, all) : new Map<string, number>();
  const cwd = `file://${Deno.cwd()}/`;
  let total = 0;
  let count = 0;
  for (const [spec, size] of graph) {
    if (base.has(spec)) continue;
    total += size;
    count++;
    console.log(`${(size / 1024).toFixed(1).padStart(7)} KB  ${spec.replace(cwd, "")}`);
  }
  console.log(
    `${(total / 1024).toFixed(1).padStart(7)} KB  total, ${count} modules` +
      (since ? ` (beyond ${since})` : ""),
  );
}
