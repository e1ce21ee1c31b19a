/**
 * End-to-end tests of install.sh against a fake release served on loopback.
 *
 * install.sh is POSIX-only (Windows users get the zip or the GitHub Action), so these tests
 * are skipped on Windows.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildFakeRelease, hostTarget, serveReleases } from "../helpers/fake_release.ts";

const INSTALL_SH = fileURLToPath(new URL("../../install.sh", import.meta.url));
const ignore = Deno.build.os === "windows";
const decoder = new TextDecoder();

/** Result of one install.sh run. */
interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Full path of a program on PATH, or undefined; for tests that need a specific tool. */
async function which(name: string): Promise<string | undefined> {
  if (ignore) return undefined;
  const out = await new Deno.Command("sh", {
    args: ["-c", 'command -v "$1"', "sh", name],
    stdout: "piped",
    stderr: "null",
  }).output();
  const path = decoder.decode(out.stdout).trim();
  return out.success && path.startsWith("/") ? path : undefined;
}

/**
 * Runs install.sh with a clean environment: only PATH, HOME (a temp dir, so the real home
 * is never touched) and the given variables.
 */
async function runInstall(
  args: string[],
  env: Record<string, string>,
  home: string,
): Promise<RunResult> {
  // Absolute, because some tests run with a PATH that has no sh on it.
  const out = await new Deno.Command(SH, {
    args: [INSTALL_SH, ...args],
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Runs a program and returns its trimmed stdout, failing on a non-zero exit. */
async function runOk(program: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(program, { args, stdout: "piped", stderr: "piped" })
    .output();
  assert.equal(out.code, 0, `${program} failed: ${decoder.decode(out.stderr)}`);
  return decoder.decode(out.stdout).trim();
}

/** Names in a directory, sorted. */
async function listDir(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

const SH = ignore ? "sh" : (await which("sh")) ?? "/bin/sh";

/** Writes an executable `uname` into `dir` that reports the given OS and machine. */
async function writeFakeUname(dir: string, os: string, machine: string): Promise<void> {
  const path = join(dir, "uname");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\ncase "$1" in\n  -m) echo '${machine}' ;;\n  *) echo '${os}' ;;\nesac\n`,
  );
  await Deno.chmod(path, 0o755);
}

/** A temp directory with `releases/`, `home/` and `bin/` inside, removed afterwards. */
async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "mcpctl-install-test-" });
  try {
    for (const sub of ["releases", "home", "bin"]) await Deno.mkdir(join(dir, sub));
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: "install.sh installs a pinned version that runs and prints its version",
  ignore,
  fn: () =>
    withTempDir(async (dir) => {
      const target = await hostTarget();
      const release = await buildFakeRelease({
        root: join(dir, "releases"),
        version: "0.3.1",
        target,
      });
      await using server = serveReleases(join(dir, "releases"));
      const installDir = join(dir, "bin");

      const result = await runInstall(["0.3.1"], {
        MCPCTL_RELEASE_BASE: `${server.baseUrl}/`,
        MCPCTL_INSTALL_DIR: installDir,
      }, join(dir, "home"));

      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(await listDir(installDir), ["mcpctl"], "only the binary, no temp file");
      const installed = join(installDir, "mcpctl");
      assert.equal((await Deno.stat(installed)).mode! & 0o777, 0o755);
      assert.equal(await runOk(installed, ["--version"]), release.versionLine);
      assert.deepEqual(server.requests, [
        "/download/v0.3.1/SHA256SUMS",
        `/download/v0.3.1/${release.archiveName}`,
      ]);
      // The temp install dir is not on PATH, so the hint must be there.
      assert.match(result.stdout, /is not on your PATH/);
      assert.ok(result.stdout.includes(`export PATH="${installDir}:$PATH"`), result.stdout);
    }),
});

Deno.test({
  name: "install.sh: MCPCTL_VERSION wins over the argument, accepts a v prefix, and upgrades",
  ignore,
  fn: () =>
    withTempDir(async (dir) => {
      const target = await hostTarget();
      const root = join(dir, "releases");
      await buildFakeRelease({ root, version: "0.3.1", target });
      const newer = await buildFakeRelease({ root, version: "0.4.0", target });
      await using server = serveReleases(root);
      const installDir = join(dir, "bin");
      const env = { MCPCTL_RELEASE_BASE: server.baseUrl, MCPCTL_INSTALL_DIR: installDir };

      const first = await runInstall(["0.3.1"], env, join(dir, "home"));
      assert.equal(first.code, 0, first.stderr);
      const second = await runInstall(
        ["0.3.1"],
        { ...env, MCPCTL_VERSION: "v0.4.0", PATH: `${installDir}:${Deno.env.get("PATH")}` },
        join(dir, "home"),
      );
      assert.equal(second.code, 0, second.stderr);

      assert.deepEqual(await listDir(installDir), ["mcpctl"]);
      assert.equal(await runOk(join(installDir, "mcpctl"), ["--version"]), newer.versionLine);
      // Already on PATH this time: no hint.
      assert.doesNotMatch(second.stdout, /not on your PATH/);
    }),
});

Deno.test({
  name: "install.sh refuses an archive whose checksum does not match and installs nothing",
  ignore,
  fn: () =>
    withTempDir(async (dir) => {
      const target = await hostTarget();
      const release = await buildFakeRelease({
        root: join(dir, "releases"),
        version: "0.3.1",
        target,
        corruptChecksum: true,
      });
      await using server = serveReleases(join(dir, "releases"));
      const installDir = join(dir, "bin");

      const result = await runInstall(["0.3.1"], {
        MCPCTL_RELEASE_BASE: server.baseUrl,
        MCPCTL_INSTALL_DIR: installDir,
      }, join(dir, "home"));

      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /checksum mismatch/);
      assert.ok(result.stderr.includes(release.archiveName), result.stderr);
      assert.ok(result.stderr.includes(release.listedSha256), "names the expected digest");
      assert.ok(result.stderr.includes(release.sha256), "names the actual digest");
      assert.deepEqual(await listDir(installDir), []);
    }),
});

Deno.test({
  name: "install.sh resolves latest from the SHA256SUMS of the latest release",
  ignore,
  fn: () =>
    withTempDir(async (dir) => {
      const target = await hostTarget();
      const root = join(dir, "releases");
      await buildFakeRelease({ root, version: "0.3.1", target });
      const latest = await buildFakeRelease({ root, version: "0.5.0", target, latest: true });
      await using server = serveReleases(root);
      const installDir = join(dir, "bin");

      const result = await runInstall([], {
        MCPCTL_RELEASE_BASE: server.baseUrl,
        MCPCTL_INSTALL_DIR: installDir,
      }, join(dir, "home"));

      assert.equal(result.code, 0, result.stderr);
      assert.equal(await runOk(join(installDir, "mcpctl"), ["--version"]), latest.versionLine);
      assert.deepEqual(server.requests, [
        "/latest/download/SHA256SUMS",
        `/latest/download/${latest.archiveName}`,
      ]);
    }),
});

Deno.test({
  name: "install.sh defaults to ~/.local/bin when MCPCTL_INSTALL_DIR is unset",
  ignore,
  fn: () =>
    withTempDir(async (dir) => {
      const target = await hostTarget();
      const root = join(dir, "releases");
      const release = await buildFakeRelease({ root, version: "0.3.1", target, latest: true });
      await using server = serveReleases(root);
      const home = join(dir, "home");

      const result = await runInstall(["latest"], { MCPCTL_RELEASE_BASE: server.baseUrl }, home);

      assert.equal(result.code, 0, result.stderr);
      const installed = join(home, ".local", "bin", "mcpctl");
      assert.equal(await runOk(installed, ["--version"]), release.versionLine);
    }),
});

Deno.test({
  name: "install.sh names an unsupported architecture",
  ignore,
  fn: () =>
    withTempDir(async (dir) => {
      const fakeBin = join(dir, "fakebin");
      await Deno.mkdir(fakeBin);
      await writeFakeUname(fakeBin, "Linux", "riscv64");
      const installDir = join(dir, "bin");

      const result = await runInstall(["0.3.1"], {
        // Unroutable on purpose: the script must stop before any download.
        MCPCTL_RELEASE_BASE: "http://127.0.0.1:9/never",
        MCPCTL_INSTALL_DIR: installDir,
        PATH: `${fakeBin}:${Deno.env.get("PATH")}`,
      }, join(dir, "home"));

      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /unsupported architecture: riscv64/);
      assert.match(result.stderr, /x86_64/);
      assert.deepEqual(await listDir(installDir), []);
    }),
});

Deno.test({
  name: "install.sh names an unsupported operating system",
  ignore,
  fn: () =>
    withTempDir(async (dir) => {
      const fakeBin = join(dir, "fakebin");
      await Deno.mkdir(fakeBin);
      await writeFakeUname(fakeBin, "FreeBSD", "amd64");

      const result = await runInstall([], {
        MCPCTL_RELEASE_BASE: "http://127.0.0.1:9/never",
        MCPCTL_INSTALL_DIR: join(dir, "bin"),
        PATH: `${fakeBin}:${Deno.env.get("PATH")}`,
      }, join(dir, "home"));

      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /unsupported operating system: FreeBSD/);
    }),
});

Deno.test({
  name: "install.sh fails clearly when the version does not exist",
  ignore,
  fn: () =>
    withTempDir(async (dir) => {
      await buildFakeRelease({
        root: join(dir, "releases"),
        version: "0.3.1",
        target: await hostTarget(),
      });
      await using server = serveReleases(join(dir, "releases"));
      const installDir = join(dir, "bin");

      const result = await runInstall(["9.9.9"], {
        MCPCTL_RELEASE_BASE: server.baseUrl,
        MCPCTL_INSTALL_DIR: installDir,
      }, join(dir, "home"));

      assert.notEqual(result.code, 0);
      assert.ok(
        result.stderr.includes(`download failed: ${server.baseUrl}/download/v9.9.9/SHA256SUMS`),
        result.stderr,
      );
      assert.deepEqual(await listDir(installDir), []);
    }),
});

Deno.test({
  name: "install.sh rejects a malformed version before downloading anything",
  ignore,
  fn: () =>
    withTempDir(async (dir) => {
      const result = await runInstall(["../../etc"], {
        MCPCTL_RELEASE_BASE: "http://127.0.0.1:9/never",
        MCPCTL_INSTALL_DIR: join(dir, "bin"),
      }, join(dir, "home"));

      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /invalid version '\.\.\/\.\.\/etc'/);
    }),
});

// A PATH holding only the tools install.sh needs, minus curl and sha256sum, proves the
// wget and `shasum -a 256` fallbacks. Needs both fallbacks installed on the host.
const fallbackTools = ["uname", "mktemp", "rm", "awk", "tr", "tar", "gzip", "mkdir", "cp"]
  .concat(["chmod", "mv", "wget", "shasum"]);
const fallbackPaths = await Promise.all(fallbackTools.map(which));
const hasFallbacks = fallbackPaths.every((p) => p !== undefined);

Deno.test({
  name: "install.sh falls back to wget and shasum",
  ignore: ignore || !hasFallbacks,
  fn: () =>
    withTempDir(async (dir) => {
      const toolDir = join(dir, "tools");
      await Deno.mkdir(toolDir);
      for (const [i, name] of fallbackTools.entries()) {
        await Deno.symlink(fallbackPaths[i]!, join(toolDir, name));
      }
      const release = await buildFakeRelease({
        root: join(dir, "releases"),
        version: "0.3.1",
        target: await hostTarget(),
      });
      await using server = serveReleases(join(dir, "releases"));
      const installDir = join(dir, "bin");

      const result = await runInstall(["0.3.1"], {
        MCPCTL_RELEASE_BASE: server.baseUrl,
        MCPCTL_INSTALL_DIR: installDir,
        PATH: toolDir,
      }, join(dir, "home"));

      assert.equal(result.code, 0, result.stderr);
      assert.equal(await runOk(join(installDir, "mcpctl"), ["--version"]), release.versionLine);
    }),
});

Deno.test({
  name: "install.sh passes shellcheck",
  ignore,
  fn: async () => {
    const shellcheck = await which("shellcheck");
    assert.ok(
      shellcheck,
      "shellcheck is not installed; install it (Debian/Ubuntu: apt-get install -y shellcheck, " +
        "macOS: brew install shellcheck) and run the tests again",
    );
    const out = await new Deno.Command(shellcheck, {
      args: ["--shell=sh", "--severity=style", INSTALL_SH],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(
      out.code,
      0,
      `shellcheck found problems:\n${decoder.decode(out.stdout)}${decoder.decode(out.stderr)}`,
    );
  },
});
