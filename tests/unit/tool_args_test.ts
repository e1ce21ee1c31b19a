import assert from "node:assert/strict";
import { parseToolArgs } from "../../src/cli/tool_args.ts";
import { ArgumentError } from "../../src/errors.ts";
import { parseSelector } from "../../src/cli/call.ts";

const schema = {
  type: "object",
  properties: {
    thread_ts: { type: "string" },
    n: { type: "integer" },
    x: { type: "number" },
    on: { type: "boolean" },
    tags: { type: "array", items: { type: "integer" } },
    names: { type: "array", items: { type: "string" } },
    filter: { type: "object", properties: { limit: { type: "integer" } } },
    ref: { $ref: "#/$defs/lim" },
    either: { type: ["string", "number"] },
    "dotted.name": { type: "string" },
  },
  $defs: { lim: { type: "integer" } },
};

Deno.test("tool args: typed by the schema", async () => {
  assert.deepEqual(
    await parseToolArgs(
      [
        "thread_ts=1712345678.000100",
        "n=5",
        "x=2.5",
        "on=false",
        "tags=[1,2]",
        "names=solo",
        "filter.limit=5",
        "ref=7",
        "either=12",
        "dotted.name=kept",
        "free=42",
        "free2=hello",
      ],
      schema,
    ),
    {
      thread_ts: "1712345678.000100",
      n: 5,
      x: 2.5,
      on: false,
      tags: [1, 2],
      names: ["solo"],
      filter: { limit: 5 },
      ref: 7,
      either: "12",
      "dotted.name": "kept",
      free: 42,
      free2: "hello",
    },
  );
});

Deno.test("tool args: a scalar for an array is wrapped; repeated keys collect", async () => {
  assert.deepEqual(await parseToolArgs(["tags=1", "tags=2", "names=a"], schema), {
    tags: [1, 2],
    names: ["a"],
  });
});

Deno.test("tool args: := raw JSON, @file, @@ literal, base merged under pairs", async () => {
  const files: Record<string, string> = { "/f.txt": "file text", "/j.json": '{"a":1}' };
  const readText = (p: string) =>
    files[p] !== undefined
      ? Promise.resolve(files[p]!)
      : Promise.reject(new Deno.errors.NotFound());
  assert.deepEqual(
    await parseToolArgs(
      ["thread_ts:=123", "note=@/f.txt", "at=@@home", "obj:=@/j.json", "n=1"],
      schema,
      { base: { n: 9, keep: true }, readText },
    ),
    { n: 1, keep: true, thread_ts: 123, note: "file text", at: "@home", obj: { a: 1 } },
  );
  await assert.rejects(() => parseToolArgs(["a=@/missing"], schema, { readText }), /no such file/);
});

Deno.test("tool args: bad input is an ArgumentError", async () => {
  await assert.rejects(() => parseToolArgs(["novalue"], schema), ArgumentError);
  await assert.rejects(() => parseToolArgs(["=x"], schema), ArgumentError);
  await assert.rejects(() => parseToolArgs(["a:=not json"], schema), /not valid JSON/);
  await assert.rejects(() => parseToolArgs(["__proto__.x=1"], schema), /not allowed/);
  await assert.rejects(() => parseToolArgs(["a..b=1"], schema), /empty segment/);
});

Deno.test("selector: SERVER TOOL, SERVER.TOOL, mcp__SERVER__TOOL, ad-hoc TOOL", () => {
  assert.deepEqual(parseSelector(["gh", "create", "a=1"], false), {
    server: "gh",
    tool: "create",
    pairs: ["a=1"],
  });
  assert.deepEqual(parseSelector(["gh.create.v2", "a=1"], false), {
    server: "gh",
    tool: "create.v2",
    pairs: ["a=1"],
  });
  assert.deepEqual(parseSelector(["mcp__gh__create"], false), {
    server: "gh",
    tool: "create",
    pairs: [],
  });
  assert.deepEqual(parseSelector(["echo", "m=1"], true), { tool: "echo", pairs: ["m=1"] });
  assert.throws(() => parseSelector([], false), /missing SERVER and TOOL/);
  assert.throws(() => parseSelector(["gh", "a=1"], false), /missing TOOL after server 'gh'/);
});
