/**
 * Profiling helper: times several shell commands round-robin (A B C A B C …) and prints
 * the median, min and max wall time of each, and its difference to the first command.
 * Each command runs once untimed first (warm caches). Used for the analysis in
 * bench/NOTES.md.
 *
 * Usage: deno run -A bench/compare.ts [-n RUNS] [--rss] 'CMD A' 'CMD B' ...
 *   --rss   also report max RSS via GNU time (/usr/bin/time -f %M)
 *
 * @module
 */

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function once(cmd: string, rss: boolean): Promise<{ ms: number; kb: number }> {
  const file = rss ? await Deno.makeTempFile() : "";
  const args = rss ? ["-c", `/usr/bin/time -f %M -o ${file} sh -c "$1"`, "sh", cmd] : ["-c", cmd];
  const start = performance.now();
  const out = await new Deno.Command("sh", { args, stdout: "null", stderr: "piped" }).output();
  const ms = performance.now() - start;
  if (!out.success) {
    throw new Error(`'${cmd}' failed: ${new TextDecoder().decode(out.stderr).slice(0, 300)}`);
  }
  let kb = 0;
  if (rss) {
    const lines = (await Deno.readTextFile(file)).trim().split("\n");
    kb = Number(lines[lines.length - 1]);
    await Deno.remove(file);
  }
  return { ms, kb };
}

if (import.meta.main) {
  let runs = 21;
  let rss = false;
  const cmds: string[] = [];
  for (let i = 0; i < Deno.args.length; i++) {
    const a = Deno.args[i]!;
    if (a === "-n") runs = Number(Deno.args[++i]);
    else if (a === "--rss") rss = true;
    else cmds.push(a);
  }
  if (cmds.length === 0) {
    console.error("usage: compare.ts [-n RUNS] [--rss] 'CMD A' 'CMD B' ...");
    Deno.exit(2);
  }
  for (const c of cmds) await once(c, rss);
  const ms: number[][] = cmds.map(() => []);
  const kb: number[][] = cmds.map(() => []);
  for (let r = 0; r < runs; r++) {
    for (let i = 0; i < cmds.length; i++) {
      const x = await once(cmds[i]!, rss);
      ms[i]!.push(x.ms);
      kb[i]!.push(x.kb);
    }
  }
  // The `sh -c` wrapper costs the same for every command; differences are what count.
  const base = median(ms[0]!);
  for (let i = 0; i < cmds.length; i++) {
    const m = median(ms[i]!);
    const s = [...ms[i]!].sort((a, b) => a - b);
    const delta = i === 0 ? "" : ` (${m - base >= 0 ? "+" : ""}${(m - base).toFixed(1)})`;
    const mem = rss ? `  rss ${(median(kb[i]!) / 1024).toFixed(1)} MB` : "";
    console.log(
      `${m.toFixed(1).padStart(7)} ms${delta.padEnd(10)} [${s[0]!.toFixed(1)}–${
        s[s.length - 1]!.toFixed(1)
      }]${mem}  ${cmds[i]}`,
    );
  }
}
