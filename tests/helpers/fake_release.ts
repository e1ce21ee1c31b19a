/**
 * A fake GitHub release for testing `install.sh` and the GitHub Action: archives laid out
 * the way `.github/workflows/release.yml` publishes them, and a loopback HTTP server that
 * answers like `https://github.com/<owner>/<repo>/releases`.
 *
 * @module
 */

import { join } from "node:path";

/** Every target the release workflow builds, in its order. */
export const RELEASE_TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

/** Options of {@linkcode buildFakeRelease}. */
export interface FakeReleaseOptions {
  /** Directory served as the releases root; created if missing. */
  root: string;
  /** Version without the leading `v`, e.g. `0.3.1`. */
  version: string;
  /** Target triple of the one real archive (the host's). */
  target: string;
  /** Also publish the release under `latest/download/`. */
  latest?: boolean;
  /** Write a wrong digest for the real archive into `SHA256SUMS`. */
  corruptChecksum?: boolean;
}

/** What {@linkcode buildFakeRelease} wrote. */
export interface FakeRelease {
  /** File name of the real archive. */
  archiveName: string;
  /** Its true SHA-256, lowercase hex. */
  sha256: string;
  /** The digest that `SHA256SUMS` lists for it (differs when corrupted). */
  listedSha256: string;
  /** What the fake `mcpctl --version` prints. */
  versionLine: string;
}

/**
 * Maps `uname -s` / `uname -m` output to a release target triple, or `undefined` when no
 * binary is published for that pair. Mirrors `detect_target` in install.sh.
 */
export function targetFor(os: string, arch: string): string | undefined {
  const osPart = os === "Linux" ? "unknown-linux-gnu" : os === "Darwin" ? "apple-darwin" : "";
  const archPart = arch === "x86_64" || arch === "amd64"
    ? "x86_64"
    : arch === "aarch64" || arch === "arm64"
    ? "aarch64"
    : "";
  return osPart && archPart ? `${archPart}-${osPart}` : undefined;
}

/** Runs `uname` with one flag and returns its trimmed output. */
async function uname(flag: string): Promise<string> {
  const out = await new Deno.Command("uname", { args: [flag], stderr: "inherit" }).output();
  if (!out.success) throw new Error(`uname ${flag} failed with exit code ${out.code}`);
  return new TextDecoder().decode(out.stdout).trim();
}

/**
 * The release target of this machine according to `uname`, as install.sh computes it.
 * Throws when the host has no published target.
 */
export async function hostTarget(): Promise<string> {
  const os = await uname("-s");
  const arch = await uname("-m");
  const target = targetFor(os, arch);
  if (!target) throw new Error(`no release target for ${os}/${arch}`);
  return target;
}

/** Lowercase hex SHA-256 of a file's bytes. */
export async function sha256File(path: string): Promise<string> {
  const bytes = await Deno.readFile(path);
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Writes a release under `root/download/v<version>/` (and `root/latest/download/` when
 * `latest`): one real `.tar.gz` for `target`, holding a shell-script `mcpctl` that prints
 * its version, README.md and LICENSE; and a `SHA256SUMS` that also lists made-up digests
 * for the other targets so that name selection is exercised.
 */
export async function buildFakeRelease(options: FakeReleaseOptions): Promise<FakeRelease> {
  const { root, version, target } = options;
  const versionLine = `mcpctl ${version}`;
  const releaseDir = join(root, "download", `v${version}`);
  await Deno.mkdir(releaseDir, { recursive: true });

  const stage = await Deno.makeTempDir({ prefix: "mcpctl-stage-" });
  try {
    const bin = join(stage, "mcpctl");
    await Deno.writeTextFile(bin, `#!/bin/sh\necho '${versionLine}'\n`);
    await Deno.chmod(bin, 0o755);
    await Deno.writeTextFile(join(stage, "README.md"), "# mcpctl (test build)\n");
    await Deno.writeTextFile(join(stage, "LICENSE"), "MIT (test build)\n");

    const archiveName = `mcpctl-${version}-${target}.tar.gz`;
    const archivePath = join(releaseDir, archiveName);
    const tar = await new Deno.Command("tar", {
      args: ["-czf", archivePath, "-C", stage, "mcpctl", "README.md", "LICENSE"],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!tar.success) {
      throw new Error(`tar failed: ${new TextDecoder().decode(tar.stderr)}`);
    }

    const sha256 = await sha256File(archivePath);
    // Flip the first hex digit: a plausible digest that is certainly wrong.
    const listedSha256 = options.corruptChecksum
      ? (sha256[0] === "0" ? "1" : "0") + sha256.slice(1)
      : sha256;

    const lines = RELEASE_TARGETS.map((t) => {
      const ext = t.includes("windows") ? "zip" : "tar.gz";
      const name = `mcpctl-${version}-${t}.${ext}`;
      const digest = t === target ? listedSha256 : "f".repeat(64);
      return `${digest}  ${name}\n`;
    });
    await Deno.writeTextFile(join(releaseDir, "SHA256SUMS"), lines.join(""));

    if (options.latest) {
      const latestDir = join(root, "latest", "download");
      await Deno.mkdir(latestDir, { recursive: true });
      for (const name of [archiveName, "SHA256SUMS"]) {
        await Deno.copyFile(join(releaseDir, name), join(latestDir, name));
      }
    }

    return { archiveName, sha256, listedSha256, versionLine };
  } finally {
    await Deno.remove(stage, { recursive: true });
  }
}

/** A running loopback file server; see {@linkcode serveReleases}. */
export interface ReleaseServer extends AsyncDisposable {
  /** Base URL to use as `MCPCTL_RELEASE_BASE`, without a trailing slash. */
  baseUrl: string;
  /** Paths requested so far, in order. */
  requests: string[];
  /** Stops the server and waits until it has closed. */
  close(): Promise<void>;
}

/**
 * Serves the files under `root` on 127.0.0.1 with an ephemeral port. Unknown paths, and
 * any path trying to leave `root`, get 404 like GitHub's missing assets.
 */
export function serveReleases(root: string): ReleaseServer {
  const requests: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const path = decodeURIComponent(new URL(req.url).pathname);
      requests.push(path);
      const parts = path.split("/").filter((p) => p !== "");
      if (req.method !== "GET" || parts.some((p) => p === "." || p === "..")) {
        return new Response("not found\n", { status: 404 });
      }
      const file = join(root, ...parts);
      const info = await Deno.stat(file).catch((e) => {
        if (e instanceof Deno.errors.NotFound) return undefined;
        throw e;
      });
      if (!info?.isFile) return new Response("not found\n", { status: 404 });
      return new Response(await Deno.readFile(file), {
        headers: { "content-type": "application/octet-stream" },
      });
    },
  );
  let closing: Promise<void> | undefined;
  // Idempotent, so an explicit close() and `await using` can both run.
  const close = () => {
    closing ??= server.shutdown().then(() => server.finished);
    return closing;
  };
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}
