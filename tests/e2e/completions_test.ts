import assert from "node:assert/strict";
import { cliCommand, fixture, ROOT, runCli, tempConfig } from "../helpers/cli.ts";

interface Setup {
  dir: string;
  /** Environment of the shells (a private HOME). */
  env: Record<string, string>;
  /** Environment of direct CLI runs (the real HOME, so Deno keeps its cache). */
  cli: Record<string, string>;
  pids: string;
  [Symbol.asyncDispose](): Promise<void>;
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * A config with two fixture servers, an `mcpctl` wrapper on PATH that runs the real CLI,
 * and a private HOME for the shells (the wrapper restores the real one for Deno).
 */
async function setup(): Promise<Setup> {
  const cfg = await tempConfig({});
  const pids = `${cfg.dir}/pids`;
  await Deno.writeTextFile(
    cfg.path,
    JSON.stringify({
      servers: { fx: fixture("--pidfile", pids), ev: fixture("--pidfile", pids, "--tools", "2") },
    }),
  );
  const bin = `${cfg.dir}/bin`;
  await Deno.mkdir(bin);
  const home = Deno.env.get("HOME") ?? "/";
  await Deno.writeTextFile(
    `${bin}/mcpctl`,
    `#!/bin/sh\nHOME=${shellQuote(home)} exec ${cliCommand([]).map(shellQuote).join(" ")} "$@"\n`,
    { mode: 0o755 },
  );
  const shellHome = `${cfg.dir}/shellhome`;
  await Deno.mkdir(shellHome);
  return {
    dir: cfg.dir,
    pids,
    cli: { MCPCTL_HOME: `${cfg.dir}/mcpctl`, MCPCTL_CONFIG: cfg.path },
    env: {
      PATH: `${bin}:${Deno.env.get("PATH") ?? ""}`,
      HOME: shellHome,
      XDG_CONFIG_HOME: `${shellHome}/.config`,
      XDG_DATA_HOME: `${shellHome}/.local/share`,
      MCPCTL_HOME: `${cfg.dir}/mcpctl`,
      MCPCTL_CONFIG: cfg.path,
      NO_COLOR: "1",
    },
    [Symbol.asyncDispose]: () => cfg[Symbol.asyncDispose](),
  };
}

async function starts(pidfile: string): Promise<number> {
  const text = await Deno.readTextFile(pidfile).catch(() => "");
  return text.split("\n").filter(Boolean).length;
}

async function sh(cmd: string, args: string[], s: Setup): Promise<string> {
  const out = await new Deno.Command(cmd, {
    args,
    cwd: s.dir,
    env: s.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, `${cmd}: ${new TextDecoder().decode(out.stderr)}\n${text}`);
  return text;
}

async function script(shell: string, s: Setup): Promise<string> {
  const r = await runCli(["completions", shell], { env: s.cli });
  assert.equal(r.code, 0, r.stderr);
  const path = `${s.dir}/mcpctl.${shell}`;
  await Deno.writeTextFile(path, r.stdout);
  return path;
}

/** Fills the tool cache the way a user does: one search. */
async function warm(s: Setup): Promise<void> {
  const r = await runCli(["search", "echo"], { env: s.cli });
  assert.equal(r.code, 0, r.stderr);
}

Deno.test("__complete: servers from config, tools from the cache only; never starts a server", async () => {
  await using s = await setup();
  const servers = await runCli(["__complete", "servers"], { env: s.cli });
  assert.equal(servers.stdout, "ev\nfx\n");
  const cold = await runCli(["__complete", "tools", "fx"], { env: s.cli });
  assert.equal(cold.code, 0);
  assert.equal(cold.stdout, "", "no cache yet, and no server is started to fill it");
  assert.equal(await starts(s.pids), 0);
  await warm(s);
  assert.equal(await starts(s.pids), 2);
  const tools = await runCli(["__complete", "tools", "ev"], { env: s.cli });
  assert.equal(tools.stdout, "echo\nadd\nfail\nbroken\nslow\ntyped\ntool_0\ntool_1\n");
  // Expired entries still complete (better than nothing while typing); still no start.
  const expired = await runCli(["__complete", "tools", "fx"], {
    env: { ...s.cli, MCPCTL_CACHE_TTL: "0" },
  });
  assert.match(expired.stdout, /^echo\n/);
  assert.equal(await starts(s.pids), 2);
  const help = await runCli(["--help"]);
  assert.doesNotMatch(help.stdout, /__complete/);
  assert.match(help.stdout, /\n {2}completions +print a shell completion script/);
});

Deno.test("completions bash: commands, options, server and tool names", async () => {
  await using s = await setup();
  await warm(s);
  const path = await script("bash", s);
  const out = await sh("bash", [
    "--norc",
    "--noprofile",
    "-c",
    `source ${shellQuote(path)}
c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _mcpctl; echo "\${COMPREPLY[*]}"; }
complete -p mcpctl
c mcpctl de
c mcpctl call ''
c mcpctl call f
c mcpctl call fx ec
c mcpctl describe fx.ty
c mcpctl list fx ''
c mcpctl search --bu
c mcpctl completions ''
c mcpctl -c "$MCPCTL_CONFIG" ping e`,
  ], s);
  assert.deepEqual(out.split("\n"), [
    "complete -F _mcpctl mcpctl",
    "describe",
    "ev fx",
    "fx",
    "echo",
    "fx.typed",
    "ev fx",
    "--budget",
    "bash zsh fish",
    "ev",
    "",
  ]);
});

Deno.test("completions zsh: a real completion session (zpty, compinit) completes names", async () => {
  await using s = await setup();
  await warm(s);
  const path = await script("zsh", s);
  const fn = `${s.dir}/zfunc`;
  await Deno.mkdir(fn);
  await Deno.copyFile(path, `${fn}/_mcpctl`);
  const driver = `${s.dir}/drive.zsh`;
  await Deno.writeTextFile(
    driver,
    `zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1='> '; bindkey -e; fpath=(${fn} \\$fpath); autoload -Uz compinit; compinit -u -d ${s.dir}/zcompdump"
zpty -w z "print -r -- READY\\$((1+1))"
zpty -r z out '*READY2*'
for line in "mcpctl call f" "mcpctl call fx ec" "mcpctl describe fx.ty" "mcpctl descr" "mcpctl search --bud"; do
  zpty -w -n z "$line"$'\\t\\x01print -r -- R$((3+4)): \\n'
  zpty -r z out '*R7: *'$'\\n'
  print -r -- "\${\${out##*R7: }%%$'\\r'*}"
done
zpty -d z
`,
  );
  const out = await sh("zsh", ["-f", driver], s);
  assert.deepEqual(out.split("\n"), [
    "mcpctl call fx",
    "mcpctl call fx echo",
    "mcpctl describe fx.typed",
    "mcpctl describe",
    "mcpctl search --budget",
    "",
  ]);
  assert.equal(await starts(s.pids), 2, "completing started no server");
});

Deno.test("completions fish: complete -C lists servers, tools and options", async () => {
  await using s = await setup();
  await warm(s);
  const path = await script("fish", s);
  const out = await sh("fish", [
    "--no-config",
    "-c",
    `source ${path}
complete -C "mcpctl call "; echo ==
complete -C "mcpctl call fx ec"; echo ==
complete -C "mcpctl describe fx.ty"; echo ==
complete -C "mcpctl des"; echo ==
complete -C "mcpctl search --bu"; echo ==
complete -C "mcpctl -c $MCPCTL_CONFIG ping e"`,
  ], s);
  assert.deepEqual(out.split("==\n"), [
    "ev\nfx\n",
    "echo\n",
    "fx.typed\n",
    "describe\tshow one tool in full: signature, description, hints and schemas\n",
    "--budget\tmost tokens of output, estimated as characters / 4 (default 2000)\n",
    "ev\n",
  ]);
  assert.equal(await starts(s.pids), 2);
});

Deno.test("completions: unknown shell is a usage error; scripts offer every visible command", async () => {
  const bad = await runCli(["completions", "tcsh"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /cannot complete for 'tcsh'/);
  const { COMMANDS } = await import(`${ROOT}/src/cli/commands.ts`);
  const visible = (COMMANDS as { name: string; hidden?: boolean }[]).filter((c) => !c.hidden)
    .map((c) => c.name);
  const bash = (await runCli(["completions", "bash"])).stdout;
  const words = bash.match(
    /COMPREPLY=\(\$\(compgen -W '([^']*)' -- "\$cur"\)\)\n\s+return 0\n\s+fi\n\s+local kind/,
  );
  assert.deepEqual(words?.[1]?.split(" "), visible);
  const zsh = (await runCli(["completions", "zsh"])).stdout;
  for (const name of visible) assert.match(zsh, new RegExp(`^ +'${name}:`, "m"));
  assert.doesNotMatch(zsh, /'__complete:/);
  const fish = (await runCli(["completions", "fish"])).stdout;
  const offered = [...fish.matchAll(/-n __mcpctl_no_command -a (\S+)/g)].map((m) => m[1]);
  assert.deepEqual(offered, visible);
});
