import assert from "node:assert/strict";
import type { ServerEntry } from "../../src/config/types.ts";
import {
  cacheFile,
  cacheTtlMs,
  DEFAULT_CACHE_TTL_MS,
  definitionDigest,
  openToolCache,
  readCachedTools,
  type ToolCache,
  writeCachedTools,
} from "../../src/mcp/tool_cache.ts";

function entry(extra: Partial<ServerEntry> = {}): ServerEntry {
  return {
    name: "fx",
    source: "/x/mcpctl.json",
    type: "stdio",
    typeExplicit: false,
    enabled: true,
    command: "srv",
    args: ["--a"],
    env: { A: "1" },
    headers: {},
    ...extra,
  };
}

const listed = {
  tools: [{ name: "echo", inputSchema: { type: "object" } }],
  rejected: [{ name: "bad name", problem: "tool name has characters outside [A-Za-z0-9_.-]" }],
  warnings: [],
};

async function withCache(fn: (cache: ToolCache, clock: { t: number }) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "mcpctl-cache-test-" });
  const clock = { t: 1_000_000 };
  try {
    await fn({ dir: `${dir}/cache`, ttlMs: 60_000, now: () => clock.t }, clock);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("tool cache: location from MCPCTL_HOME, XDG_STATE_HOME, HOME, LOCALAPPDATA", () => {
  const env = (vars: Record<string, string>) => (n: string) => vars[n];
  assert.equal(
    openToolCache({ env: env({ MCPCTL_HOME: "/m", HOME: "/h" }), os: "linux" })?.dir,
    "/m/cache",
  );
  assert.equal(
    openToolCache({ env: env({ XDG_STATE_HOME: "/s", HOME: "/h" }), os: "linux" })?.dir,
    "/s/mcpctl/cache",
  );
  assert.equal(
    openToolCache({ env: env({ XDG_STATE_HOME: "rel", HOME: "/h" }), os: "linux" })?.dir,
    "/h/.local/state/mcpctl/cache",
  );
  assert.equal(
    openToolCache({ env: env({ LOCALAPPDATA: "C:\\L" }), os: "windows" })?.dir,
    "C:\\L\\mcpctl\\cache",
  );
  assert.equal(openToolCache({ env: env({}), os: "linux" }), undefined);
});

Deno.test("tool cache: TTL from MCPCTL_CACHE_TTL seconds", () => {
  assert.equal(cacheTtlMs(() => undefined), DEFAULT_CACHE_TTL_MS);
  assert.equal(cacheTtlMs(() => "90"), 90_000);
  assert.equal(cacheTtlMs(() => "0"), 0);
  assert.throws(() => cacheTtlMs(() => "1h"), /whole number of seconds/);
});

Deno.test("tool cache: the digest covers the definition, not the name or source", async () => {
  const base = await definitionDigest(entry());
  assert.match(base, /^[0-9a-f]{64}$/);
  assert.equal(await definitionDigest(entry({ name: "other", source: "elsewhere" })), base);
  assert.equal(await definitionDigest(entry({ timeoutMs: 5 })), base);
  for (
    const changed of [
      entry({ command: "srv2" }),
      entry({ args: ["--b"] }),
      entry({ env: { A: "2" } }),
      entry({ cwd: "/tmp" }),
      entry({ type: "http", url: "https://a.example/mcp" }),
      entry({ headers: { Authorization: "Bearer x" } }),
    ]
  ) {
    assert.notEqual(await definitionDigest(changed), base, JSON.stringify(changed));
  }
  // Key order does not matter.
  assert.equal(
    await definitionDigest(entry({ env: { A: "1", B: "2" } })),
    await definitionDigest(entry({ env: { B: "2", A: "1" } })),
  );
});

Deno.test("tool cache: write then read; 0600 file; no header values stored", async () => {
  await withCache(async (cache) => {
    const secret = entry({
      type: "http",
      url: "https://a.example/mcp",
      headers: { Authorization: "Bearer s3cr3t" },
    });
    await writeCachedTools(cache, secret, listed);
    const got = await readCachedTools(cache, secret);
    assert.ok(got);
    assert.deepEqual(got.tools, listed.tools);
    assert.deepEqual(got.rejected, listed.rejected);
    const path = cacheFile(cache, "fx");
    const text = await Deno.readTextFile(path);
    assert.ok(!text.includes("s3cr3t"));
    assert.ok(!text.includes("Authorization"));
    if (Deno.build.os !== "windows") {
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
      assert.equal((await Deno.stat(cache.dir)).mode! & 0o777, 0o700);
    }
    // No temp files are left behind.
    const names = [...Deno.readDirSync(cache.dir)].map((e) => e.name);
    assert.deepEqual(names, ["fx.json"]);
  });
});

Deno.test("tool cache: a changed definition or an expired entry is a miss", async () => {
  await withCache(async (cache, clock) => {
    await writeCachedTools(cache, entry(), listed);
    assert.ok(await readCachedTools(cache, entry()));
    assert.equal(await readCachedTools(cache, entry({ args: ["--other"] })), undefined);
    assert.equal(await readCachedTools(cache, entry({ name: "gx" })), undefined);
    clock.t += 59_999;
    assert.ok(await readCachedTools(cache, entry()));
    clock.t += 1;
    assert.equal(await readCachedTools(cache, entry()), undefined);
    assert.ok(await readCachedTools(cache, entry(), { allowExpired: true }));
    assert.equal(await readCachedTools({ ...cache, ttlMs: 0 }, entry()), undefined);
  });
});

Deno.test("tool cache: an unreadable or foreign file is a miss", async () => {
  await withCache(async (cache) => {
    await Deno.mkdir(cache.dir, { recursive: true });
    await Deno.writeTextFile(cacheFile(cache, "fx"), "{not json");
    assert.equal(await readCachedTools(cache, entry()), undefined);
    await Deno.writeTextFile(cacheFile(cache, "fx"), JSON.stringify({ version: 99 }));
    assert.equal(await readCachedTools(cache, entry()), undefined);
    await writeCachedTools(cache, entry(), listed);
    assert.ok(await readCachedTools(cache, entry()));
  });
});
