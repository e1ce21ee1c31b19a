/**
 * Fuzzing the border parsers with fast-check: the JSONC config loader, variable
 * expansion, the stdio line framer, the SSE decoder, the `call` selector and the
 * `key=value` argument parser. For every input they must return, or fail with one of our
 * own error types (an `McpctlError`, or the documented `MissingVariableError`): any other
 * exception fails the property. Input sizes are bounded (no hang), and the framers are
 * fed huge inputs without line ends to show that memory stays bounded.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { parseJsonc } from "../../src/config/jsonc.ts";
import { normalizeConfig } from "../../src/config/normalize.ts";
import { loadConfig } from "../../src/config/load.ts";
import { expandVariables, MissingVariableError } from "../../src/config/expand.ts";
import {
  type DecodedLine,
  FrameTooLargeError,
  LineSplitter,
} from "../../src/mcp/transport/lines.ts";
import { SseDecoder, type SseEvent, SseTooLargeError } from "../../src/mcp/transport/sse.ts";
import { parseSelector } from "../../src/cli/call.ts";
import { parseToolArgs } from "../../src/cli/tool_args.ts";
import { serverNameProblem } from "../../src/mcp/names.ts";
import { ArgumentError, ConfigError, McpctlError, UsageError } from "../../src/errors.ts";

const encoder = new TextEncoder();

/** Runs `fn`; passes when it returns or throws an instance of one of `allowed`. */
function only<T>(allowed: (new (...a: never[]) => Error)[], fn: () => T): T | undefined {
  try {
    return fn();
  } catch (e) {
    if (allowed.some((c) => e instanceof c)) return undefined;
    throw new Error(`unexpected ${describe(e)}`, { cause: e });
  }
}

async function onlyAsync<T>(
  allowed: (new (...a: never[]) => Error)[],
  fn: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await fn();
  } catch (e) {
    if (allowed.some((c) => e instanceof c)) return undefined;
    throw new Error(`unexpected ${describe(e)}`, { cause: e });
  }
}

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : `throw of ${typeof e}`;
}

/** Splits bytes into chunks at the given cut points (any order, any duplicates). */
function chunked(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let at = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.slice(at, p));
    at = p;
  }
  return out;
}

// Text that looks like JSONC often enough to get past the first character.
const jsoncish = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.array(
    fc.constantFrom(
      "{",
      "}",
      "[",
      "]",
      ",",
      ":",
      '"',
      "\\",
      "//",
      "/*",
      "*/",
      "\n",
      " ",
      "\ufeff",
      '"servers"',
      '"mcpServers"',
      '"mcp"',
      '"command"',
      '"url"',
      '"args"',
      '"env"',
      '"headers"',
      '"type"',
      '"timeout"',
      '"${X}"',
      '"a"',
      "1",
      "-0",
      "1e999",
      "true",
      "null",
    ),
    { maxLength: 60 },
  ).map((parts) => parts.join("")),
);

// Config documents: the known sections with entries of anything, and known fields.
const fieldValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom("stdio", "http", "sse", "local", "remote", "http://127.0.0.1/mcp", "${X}"),
  fc.array(fc.string({ maxLength: 10 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 8 }), fc.integer())),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 2 }),
);
// Strings as config values are written, variables included.
const configString = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom("${X}", "${NOPE}", "${X:-dflt}", "{env:TOKEN}", "$${X}", "Bearer ${TOKEN}"),
);
// Entries whose fields have the right types, so that the checks past the types run too.
const wellTypedEntry = fc.record({
  command: fc.oneof(configString, fc.array(configString, { minLength: 1, maxLength: 3 })),
  args: fc.array(configString, { maxLength: 3 }),
  env: fc.dictionary(fc.string({ maxLength: 6 }), configString, { maxKeys: 3 }),
  cwd: configString,
  url: fc.oneof(configString, fc.constantFrom("http://127.0.0.1/mcp", "https://h/${X}", "ftp://x")),
  headers: fc.dictionary(fc.string({ maxLength: 6 }), configString, { maxKeys: 2 }),
  type: fc.constantFrom("stdio", "http", "sse", "local", "remote", "streamable-http", "bogus"),
  enabled: fc.boolean(),
  timeout: fc.integer({ min: -5, max: 100_000 }),
  maxMessageBytes: fc.integer({ min: 0, max: 1 << 24 }),
}, { requiredKeys: [] });
// Entries that pass every check (their variables may still be missing).
const validEntry = fc.oneof(
  fc.record({
    command: fc.oneof(configString, fc.array(configString, { minLength: 1, maxLength: 3 })),
    args: fc.array(configString, { maxLength: 3 }),
    env: fc.dictionary(fc.string({ maxLength: 6 }), configString, { maxKeys: 3 }),
    cwd: configString,
    enabled: fc.boolean(),
    timeout: fc.integer({ min: 1, max: 100_000 }),
  }, { requiredKeys: ["command"] }),
  fc.record({
    url: fc.oneof(configString, fc.constantFrom("http://127.0.0.1/mcp", "https://h/${X}")),
    type: fc.constantFrom("http", "sse", "remote", "streamable-http"),
    headers: fc.dictionary(fc.string({ maxLength: 6 }), configString, { maxKeys: 2 }),
    maxMessageBytes: fc.integer({ min: 1, max: 1 << 24 }),
  }, { requiredKeys: ["url"] }),
);
const entryDoc = fc.oneof(
  { arbitrary: validEntry, weight: 6 },
  { arbitrary: wellTypedEntry, weight: 2 },
  {
    arbitrary: fc.dictionary(
      fc.constantFrom(
        "command",
        "args",
        "env",
        "environment",
        "cwd",
        "url",
        "headers",
        "type",
        "enabled",
        "disabled",
        "timeout",
        "maxMessageBytes",
        "oauth",
        "tokenCommand",
      ),
      fieldValue,
      { maxKeys: 6 },
    ),
    weight: 1,
  },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
);
const serverKey = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom("fx", "a__b", "x_", "ok-1"),
);
const configDoc = fc.oneof(
  fc.record(
    {
      servers: fc.dictionary(serverKey, entryDoc, { maxKeys: 3 }),
      mcpServers: fc.dictionary(serverKey, entryDoc, { maxKeys: 3 }),
      mcp: fc.oneof(
        { arbitrary: fc.dictionary(serverKey, entryDoc, { maxKeys: 3 }), weight: 5 },
        { arbitrary: fieldValue, weight: 1 },
      ),
      credentials: fc.oneof(
        { arbitrary: fc.record({ helper: configString }), weight: 5 },
        { arbitrary: fieldValue, weight: 1 },
      ),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);

Deno.test("fuzz: parseJsonc + normalizeConfig accept or fail with ConfigError", async () => {
  await fc.assert(
    fc.asyncProperty(jsoncish, async (text) => {
      const doc = await onlyAsync([ConfigError], () => parseJsonc(text, "fuzz.jsonc"));
      if (doc !== undefined) only([ConfigError], () => normalizeConfig(doc, "fuzz.jsonc"));
    }),
    { numRuns: 300 },
  );
});

Deno.test("fuzz: normalizeConfig of config-shaped documents: RawConfig or ConfigError", () => {
  fc.assert(
    fc.property(configDoc, (doc) => {
      const config = only([ConfigError], () => normalizeConfig(doc, "fuzz.json"));
      if (config === undefined) return;
      for (const e of config.entries) {
        assert.equal(typeof e.name, "string");
        assert.ok(Array.isArray(e.args) && e.args.every((a) => typeof a === "string"));
        assert.ok(Object.values(e.env).every((v) => typeof v === "string"));
        assert.ok(Object.values(e.headers).every((v) => typeof v === "string"));
      }
    }),
    { numRuns: 500 },
  );
});

Deno.test("fuzz: loadConfig of any file text: servers or ConfigError, never a throw elsewhere", async () => {
  const text = fc.oneof(
    { arbitrary: jsoncish, weight: 1 },
    { arbitrary: configDoc.map((d) => JSON.stringify(d)), weight: 3 },
  );
  const env = fc.dictionary(fc.constantFrom("X", "HOME", "TOKEN"), fc.string({ maxLength: 10 }));
  let withServers = 0;
  await fc.assert(
    fc.asyncProperty(text, env, async (body, vars) => {
      const loaded = await onlyAsync([ConfigError], () =>
        loadConfig({
          configPath: "/fuzz/mcpctl.json",
          env: (n) => vars[n],
          cwd: "/fuzz",
          readFile: () => Promise.resolve(body),
        }));
      if (loaded?.servers.length) withServers++;
      for (const s of loaded?.servers ?? []) {
        assert.ok(["stdio", "http", "sse"].includes(s.type));
        // A missing variable marks the server failed, it never escapes as an exception.
        if (s.error !== undefined) assert.equal(typeof s.error, "string");
      }
    }),
    { numRuns: 500 },
  );
  // The generators must reach past the syntax and type checks often enough to matter
  // (about one document in ten does).
  assert.ok(withServers >= 15, `only ${withServers} of 500 documents gave servers`);
});

Deno.test("fuzz: JSONC with comments and trailing commas parses like the JSON it wraps", async () => {
  await fc.assert(
    fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), fc.string({ maxLength: 12 }), async (v, c) => {
      const json = JSON.stringify(v, null, 2);
      // Pretty JSON has line breaks only between tokens; strings escape theirs.
      const note = c.replaceAll("\n", " ").replaceAll("*/", "* /");
      const jsonc = json
        .replace(/\n(\s*)([}\]])/g, ",\n$1$2") // a trailing comma before every close
        .replaceAll("\n", () => ` // ${note}\n /* ${note} */ `);
      const expected = JSON.parse(json);
      assert.deepEqual(await parseJsonc(`\ufeff${jsonc}`, "f.jsonc"), expected);
    }),
    { numRuns: 300 },
  );
});

Deno.test("fuzz: expandVariables returns a string or throws MissingVariableError", () => {
  const piece = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.constantFrom("${", "$${", "}", "{env:", ":-", "$", "{", "A", "B", "_1", "${A}", "{env:B}"),
  );
  const text = fc.array(piece, { maxLength: 20 }).map((p) => p.join(""));
  const vars = fc.dictionary(fc.constantFrom("A", "B", "_1", "C"), fc.string({ maxLength: 8 }));
  fc.assert(
    fc.property(text, vars, (t, v) => {
      const out = only([MissingVariableError], () => expandVariables(t, (n) => v[n]));
      if (out !== undefined) assert.equal(typeof out, "string");
    }),
    { numRuns: 1000 },
  );
});

Deno.test("fuzz: expansion is one pass and leaves plain text alone", () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), (value, plain) => {
      // A value from the environment is never expanded again, whatever it holds.
      assert.equal(expandVariables("${V}", (n) => n === "V" ? value : undefined), value);
      assert.equal(expandVariables("{env:V}", (n) => n === "V" ? value : undefined), value);
      const text = plain.replaceAll("$", "").replaceAll("{", "");
      assert.equal(expandVariables(text, () => undefined), text);
      assert.equal(expandVariables(`$\${${text}`, () => undefined), `\${${text}`);
    }),
    { numRuns: 500 },
  );
});

const lineText = fc.string({ maxLength: 40 }).filter((s) => !/[\r\n]/.test(s));

Deno.test("fuzz: LineSplitter gives back the lines, whatever the chunking", () => {
  fc.assert(
    fc.property(
      fc.array(lineText, { maxLength: 20 }),
      fc.boolean(),
      fc.array(fc.nat(), { maxLength: 30 }),
      (lines, crlf, cuts) => {
        const bytes = encoder.encode(lines.map((l) => l + (crlf ? "\r\n" : "\n")).join(""));
        const got: string[] = [];
        const splitter = new LineSplitter((l) => {
          assert.ok(!l.replaced);
          got.push(l.text);
        }, 1024 * 1024);
        for (const chunk of chunked(bytes, cuts)) splitter.push(chunk);
        splitter.end();
        assert.deepEqual(got, lines.filter((l) => l !== ""));
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("fuzz: LineSplitter on random bytes: bounded lines or FrameTooLargeError", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 600 }),
      fc.integer({ min: 1, max: 64 }),
      fc.array(fc.nat(), { maxLength: 20 }),
      (bytes, max, cuts) => {
        const splitter = new LineSplitter((l: DecodedLine) => {
          // U+FFFD takes 3 bytes where it replaced as few as 1.
          const limit = l.replaced ? max * 3 : max;
          assert.ok(encoder.encode(l.text).length <= limit);
        }, max);
        for (const chunk of chunked(bytes, cuts)) {
          // After a too-large line the splitter starts afresh: keep feeding it.
          only([FrameTooLargeError], () => splitter.push(chunk));
        }
        only([FrameTooLargeError], () => splitter.end());
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("fuzz: LineSplitter without line ends fails once past the limit (bounded memory)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 4096 }),
      fc.integer({ min: 1, max: 8192 }),
      (max, size) => {
        const chunk = new Uint8Array(size).fill(0x61);
        const splitter = new LineSplitter(() => assert.fail("no line expected"), max);
        let fed = 0;
        for (;;) {
          try {
            splitter.push(chunk);
          } catch (e) {
            assert.ok(e instanceof FrameTooLargeError, describe(e));
            break;
          }
          fed += size;
          // What the splitter holds never passes the limit.
          assert.ok(fed <= max, `buffered ${fed} bytes over a limit of ${max}`);
        }
      },
    ),
    { numRuns: 300 },
  );
  // And the real thing: 64 MiB offered in 64 KiB chunks with the 1 MiB default limit.
  const big = new Uint8Array(64 * 1024).fill(0x7b);
  const splitter = new LineSplitter(() => assert.fail("no line expected"), 1024 * 1024);
  let pushed = 0;
  assert.throws(() => {
    while (pushed < 64 * 1024 * 1024) {
      splitter.push(big);
      pushed += big.length;
    }
  }, FrameTooLargeError);
  assert.ok(pushed <= 1024 * 1024, `accepted ${pushed} bytes`);
});

const sseText = fc.array(
  fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.constantFrom(
      "data:",
      "data: ",
      "event:",
      "id:",
      "retry:",
      "retry: 100",
      ":",
      "\n",
      "\r\n",
      "\r",
      "\n\n",
      "\0",
      "\ufeff",
      "é",
      "😀",
    ),
  ),
  { maxLength: 40 },
).map((p) => p.join(""));

Deno.test("fuzz: SseDecoder on random input: events within the limit or SseTooLargeError", () => {
  fc.assert(
    fc.property(
      fc.oneof(sseText.map((t) => encoder.encode(t)), fc.uint8Array({ maxLength: 400 })),
      fc.integer({ min: 1, max: 64 }),
      fc.array(fc.nat(), { maxLength: 20 }),
      (bytes, max, cuts) => {
        const events: SseEvent[] = [];
        const decoder = new SseDecoder((e) => events.push(e), { maxEventBytes: max });
        // After an SseTooLargeError the decoder stays failed and rethrows it.
        for (const chunk of chunked(bytes, cuts)) {
          only([SseTooLargeError], () => decoder.push(chunk));
        }
        only([SseTooLargeError], () => decoder.end());
        for (const e of events) {
          assert.equal(typeof e.data, "string");
          assert.ok(encoder.encode(e.data).length <= max, `event data over ${max} bytes`);
        }
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("fuzz: SseDecoder without line ends, or with endless data lines, stays bounded", () => {
  const max = 1024 * 1024;
  for (
    const [what, piece] of [
      ["no line end", new Uint8Array(64 * 1024).fill(0x61)],
      ["endless data lines", encoder.encode("data: 0123456789abcdef\n".repeat(2048))],
      ["endless comment", encoder.encode(":" + "c".repeat(64 * 1024 - 1))],
    ] as const
  ) {
    const decoder = new SseDecoder(() => assert.fail(`${what}: no event expected`), {
      maxEventBytes: max,
    });
    let pushed = 0;
    assert.throws(
      () => {
        while (pushed < 64 * 1024 * 1024) {
          decoder.push(piece);
          pushed += piece.length;
        }
      },
      SseTooLargeError,
      what,
    );
    assert.ok(pushed <= 2 * max, `${what}: accepted ${pushed} bytes`);
  }
});

Deno.test("fuzz: parseSelector returns a selector or throws UsageError", () => {
  const word = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom("mcp__", "__", ".", "=", "a.b", "mcp__a__b", "mcp__a___b", "k=v", "", "x"),
  );
  fc.assert(
    fc.property(fc.array(word, { maxLength: 5 }), fc.boolean(), (positionals, adhoc) => {
      const sel = only([UsageError], () => parseSelector(positionals, adhoc));
      if (sel === undefined) return;
      assert.equal(typeof sel.tool, "string");
      // The pairs are always the tail of the positionals.
      assert.deepEqual(sel.pairs, positionals.slice(positionals.length - sel.pairs.length));
      if (adhoc) assert.equal(sel.server, undefined);
      else assert.equal(typeof sel.server, "string");
    }),
    { numRuns: 1000 },
  );
});

const serverName = fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/).filter((n) =>
  serverNameProblem(n) === undefined
);
const toolName = fc.stringMatching(/^[A-Za-z0-9_.-]{1,30}$/);

Deno.test("fuzz: parseSelector reads all three forms back", () => {
  fc.assert(
    fc.property(
      serverName,
      toolName,
      fc.array(fc.string({ maxLength: 8 }).map((s) => `k=${s}`), { maxLength: 3 }),
      (server, tool, pairs) => {
        assert.deepEqual(parseSelector([`mcp__${server}__${tool}`, ...pairs], false), {
          server,
          tool,
          pairs,
        });
        assert.deepEqual(parseSelector([server, tool, ...pairs], false), { server, tool, pairs });
        if (!tool.startsWith(".")) {
          assert.deepEqual(parseSelector([`${server}.${tool}`, ...pairs], false), {
            server,
            tool,
            pairs,
          });
        }
      },
    ),
    { numRuns: 500 },
  );
});

// JSON Schemas of any shape, local `$ref`s (cycles included) and odd property names.
const propertyName = fc.constantFrom(
  "a",
  "b",
  "n",
  "a.b",
  "list",
  "obj",
  "__proto__",
  "constructor",
  "toString",
  "x y",
  "",
);
const { schema } = fc.letrec((tie) => ({
  schema: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({
      type: fc.oneof(
        fc.constantFrom("string", "number", "integer", "boolean", "null", "array", "object"),
        fc.array(fc.constantFrom("string", "number", "integer", "boolean", "null", "array"), {
          maxLength: 3,
        }),
      ),
    }),
    fc.record({ type: fc.constant("array"), items: tie("schema") }, { requiredKeys: ["type"] }),
    fc.record({
      type: fc.constant("object"),
      properties: fc.dictionary(propertyName, tie("schema"), { maxKeys: 3 }),
    }),
    fc.record({ anyOf: fc.array(tie("schema"), { maxLength: 3 }) }),
    fc.record({ oneOf: fc.array(tie("schema"), { maxLength: 3 }) }),
    fc.constantFrom(
      { $ref: "#/$defs/a" },
      { $ref: "#/$defs/b" },
      { $ref: "#/nowhere" },
      {
        $ref: "https://example.com/s.json",
      },
      {},
      { enum: [1, "a"] },
    ),
    fc.jsonValue({ maxDepth: 1 }),
  ),
}));
const rootSchema = fc.record({
  type: fc.constant("object"),
  properties: fc.dictionary(propertyName, schema, { maxKeys: 5 }),
  $defs: fc.record({ a: fc.oneof(schema, fc.constant({ $ref: "#/$defs/b" })), b: schema }),
}, { requiredKeys: ["type"] });
const pair = fc.tuple(
  fc.oneof(propertyName, fc.constantFrom("a.b.c", "obj.n", "list", ".", "a..b", "q")),
  fc.constantFrom("=", ":="),
  fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    fc.constantFrom("@file", "@missing", "@@at", "@", "", "1", "true", "[1,2]", '{"k":1}'),
  ),
).map(([key, op, value]) => `${key}${op}${value}`);

Deno.test("fuzz: parseToolArgs with random schemas: an object or ArgumentError", async () => {
  const readText = (path: string) =>
    path === "file"
      ? Promise.resolve('{"from":"file"}')
      : Promise.reject(new Deno.errors.NotFound());
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(rootSchema, fc.constant(undefined)),
      fc.array(fc.oneof(pair, fc.string({ maxLength: 10 })), { maxLength: 6 }),
      async (schema, pairs) => {
        const args = await onlyAsync(
          [ArgumentError],
          () => parseToolArgs(pairs, schema as Record<string, unknown> | undefined, { readText }),
        );
        if (args !== undefined) {
          assert.equal(Object.getPrototypeOf(args), Object.prototype);
          JSON.stringify(args); // always plain data
        }
        // Nothing reached Object.prototype.
        assert.deepEqual(Object.keys(Object.prototype), []);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("fuzz: every error the border parsers throw on purpose is an McpctlError", () => {
  // The classes allowed above, checked once: all but MissingVariableError (documented in
  // src/config/expand.ts and always caught by the loader) carry an exit code.
  for (const c of [ConfigError, ArgumentError, UsageError, FrameTooLargeError, SseTooLargeError]) {
    assert.ok(new c("x") instanceof McpctlError, c.name);
  }
});
