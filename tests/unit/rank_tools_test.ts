import assert from "node:assert/strict";
import { rankTools, scoreTool, tokenize } from "../../src/cli/rank_tools.ts";
import { toolSignature } from "../../src/mcp/signature.ts";

Deno.test("tokenize: separators and camelCase", () => {
  assert.deepEqual(tokenize("read_file"), ["read", "file"]);
  assert.deepEqual(tokenize("get-tiny.image now"), ["get", "tiny", "image", "now"]);
  assert.deepEqual(tokenize("getTinyImage"), ["get", "tiny", "image"]);
  assert.deepEqual(tokenize("HTTPServer2Go"), ["http", "server2", "go"]);
});

Deno.test("score: exact name > name word > title > description", () => {
  const exact = scoreTool("read_file", { server: "fs", name: "read_file" });
  const nameWord = scoreTool("read", { server: "fs", name: "read_text" });
  const title = scoreTool("read", { server: "fs", name: "cat", title: "Read a thing" });
  const description = scoreTool("read", { server: "fs", name: "cat", description: "Reads it" });
  assert.ok(exact > nameWord && nameWord > title && title > description && description > 0);
  assert.equal(scoreTool("zzz", { server: "fs", name: "cat" }), 0);
  assert.equal(scoreTool("fs.read_file", { server: "fs", name: "read_file" }) >= 1000, true);
  assert.equal(scoreTool("read file", { server: "fs", name: "read_file" }), 1200);
  // Prefixes of three letters or more match: file ~ files.
  assert.equal(scoreTool("files", { server: "fs", name: "list_file" }), 100);
  assert.equal(scoreTool("fi", { server: "fs", name: "list_file" }), 0);
});

Deno.test("rank: best first, ties by server then name, zero scores left out", () => {
  const ranked = rankTools("echo", [
    { server: "b", name: "echo" },
    { server: "a", name: "echo" },
    { server: "a", name: "say", description: "echo text" },
    { server: "a", name: "other" },
  ]);
  assert.deepEqual(ranked.map((r) => `${r.item.server}.${r.item.name}:${r.score}`), [
    "a.echo:1100",
    "b.echo:1100",
    "a.say:1",
  ]);
});

Deno.test("signature: optional in brackets, types from the schema", () => {
  assert.equal(
    toolSignature("read_file", {
      type: "object",
      properties: { path: { type: "string" }, limit: { type: "integer" } },
      required: ["path"],
    }),
    "read_file(path: string, [limit: integer])",
  );
  assert.equal(
    toolSignature("t", {
      type: "object",
      $defs: { P: { type: "object", properties: {} } },
      properties: {
        tags: { type: "array", items: { type: "string" } },
        mode: { enum: ["a", "b"] },
        n: { type: ["integer", "null"] },
        p: { $ref: "#/$defs/P" },
        u: { anyOf: [{ type: "string" }, { type: "number" }] },
        any: {},
      },
      required: ["tags", "mode", "n", "p", "u", "any"],
    }),
    't(tags: string[], mode: "a"|"b", n: integer|null, p: object, u: string|number, any: any)',
  );
  assert.equal(toolSignature("none", { type: "object" }), "none()");
  assert.equal(toolSignature("gone", undefined), "gone(…)");
});
