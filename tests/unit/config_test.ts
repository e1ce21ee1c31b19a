import assert from "node:assert/strict";
import { expandVariables, MissingVariableError } from "../../src/config/expand.ts";
import { parseJsonc, stripJsonc } from "../../src/config/jsonc.ts";
import { loadConfig, projectConfigPaths } from "../../src/config/load.ts";
import { normalizeConfig } from "../../src/config/normalize.ts";
import { ConfigError } from "../../src/errors.ts";

const env = (vars: Record<string, string>) => (n: string) => vars[n];

Deno.test("expand: ${VAR}, ${VAR:-default}, {env:VAR}, $${ literal", () => {
  const look = env({ A: "1", EMPTY: "" });
  assert.equal(expandVariables("x${A}y", look), "x1y");
  assert.equal(expandVariables("${B:-dflt}", look), "dflt");
  assert.equal(expandVariables("${EMPTY:-dflt}", look), "dflt");
  assert.equal(expandVariables("{env:A}", look), "1");
  assert.equal(expandVariables("$${A}", look), "${A}");
  assert.throws(() => expandVariables("${NOPE}", look), MissingVariableError);
});

Deno.test("expand: one pass only, values are never expanded again", () => {
  assert.equal(expandVariables("${A}", env({ A: "${B}", B: "no" })), "${B}");
});

Deno.test("jsonc: comments, trailing commas, strings with comment-like text", async () => {
  const text = '{\n // c\n "a": "http://x/*y*/", /* b */ "b": [1, 2,], }';
  assert.deepEqual(await parseJsonc(text, "f"), { a: "http://x/*y*/", b: [1, 2] });
  assert.equal(stripJsonc('{"a": "\\"//"}'), '{"a": "\\"//"}');
});

Deno.test("jsonc: syntax error names file:line:column", async () => {
  await assert.rejects(() => parseJsonc('{\n  "a": 1\n  "b": 2\n}', "cfg.json"), (e) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /^cfg\.json:3:3: comma expected$/);
    return true;
  });
});

Deno.test("normalize: the three formats", () => {
  const own = normalizeConfig({
    servers: { a: { command: ["node", "s.js"], args: ["--x"], env: { K: "v" } } },
  }, "f");
  assert.equal(own.entries[0]!.command, "node");
  assert.deepEqual(own.entries[0]!.args, ["s.js", "--x"]);
  const claude = normalizeConfig({
    mcpServers: { b: { type: "http", url: "https://x/mcp", headers: { A: "1" } } },
  }, "f");
  assert.equal(claude.entries[0]!.type, "http");
  const oc = normalizeConfig({
    mcp: { c: { type: "local", command: ["x", "y"], environment: { E: "1" }, enabled: false } },
  }, "f");
  assert.equal(oc.entries[0]!.type, "stdio");
  assert.deepEqual(oc.entries[0]!.env, { E: "1" });
  assert.equal(oc.entries[0]!.enabled, false);
});

Deno.test("normalize: field errors name file, server and field", () => {
  assert.throws(
    () => normalizeConfig({ servers: { a: { url: 5 } } }, "cfg.json"),
    /cfg\.json: server "a": field "url" must be a string/,
  );
  assert.throws(
    () => normalizeConfig({ servers: { a: { type: "ws", url: "x" } } }, "cfg.json"),
    /field "type" must be "stdio", "http" or "sse"/,
  );
  assert.throws(() => normalizeConfig({ servers: { a: {} } }, "c"), /"command" or "url"/);
});

Deno.test("load: layering, type inference, name validation, header expanded once", async () => {
  const files: Record<string, string> = {
    "/home/u/.config/mcpctl/config.json": JSON.stringify({
      servers: { shared: { command: "global" }, g: { url: "https://g/mcp" } },
    }),
    "/p/mcpctl.json": JSON.stringify({ servers: { shared: { command: "project" } } }),
    "/p/sub/.mcp.json": JSON.stringify({
      mcpServers: {
        "bad__name": { command: "x" },
        h: { url: "https://h/mcp", headers: { Authorization: "Bearer ${TOK}" } },
      },
    }),
  };
  const config = await loadConfig({
    env: env({ HOME: "/home/u", TOK: "${NOT_AGAIN}" }),
    cwd: "/p/sub",
    os: "linux",
    readFile: (p) => Promise.resolve(files[p]),
    // Approved for the run: a blocked project entry would not be expanded at all.
    trustProject: true,
  });
  const by = Object.fromEntries(config.servers.map((s) => [s.name, s]));
  assert.equal(by.shared!.command, "project");
  assert.equal(by.g!.type, "http");
  assert.equal(by.g!.typeExplicit, false);
  assert.match(by.bad__name!.error!, /must not contain '__'/);
  assert.equal(by.h!.headers.Authorization, "Bearer ${NOT_AGAIN}");
  assert.deepEqual(config.files.map((f) => f.origin), ["global", "project", "project"]);
});

Deno.test("load: --config alone; a missing explicit file is an error", async () => {
  await assert.rejects(
    () =>
      loadConfig({
        configPath: "/nope.json",
        env: env({}),
        cwd: "/",
        readFile: () => Promise.resolve(undefined),
      }),
    /config file not found: \/nope\.json/,
  );
});

Deno.test("load: project paths from root down", () => {
  assert.deepEqual(projectConfigPaths("/a").slice(0, 3), [
    "/.mcp.json",
    "/mcpctl.jsonc",
    "/mcpctl.json",
  ]);
  assert.equal(projectConfigPaths("/a").at(-1), "/a/mcpctl.json");
});
