import assert from "node:assert/strict";
import { parseRoute, partitionTools, serverNameProblem, toolRoute } from "../../src/mcp/names.ts";
import { oneLine, stripTerminal } from "../../src/mcp/sanitize.ts";

Deno.test("server names", () => {
  assert.equal(serverNameProblem("git-hub_2"), undefined);
  assert.ok(serverNameProblem(""));
  assert.ok(serverNameProblem("a.b"));
  assert.ok(serverNameProblem("a__b"));
  assert.ok(serverNameProblem("a_"));
  assert.ok(serverNameProblem("é"));
});

Deno.test("routes: build, parse, 64-byte cap", () => {
  assert.deepEqual(toolRoute("gh", "create_issue"), { route: "mcp__gh__create_issue" });
  assert.deepEqual(parseRoute("mcp__gh__create_issue"), { server: "gh", tool: "create_issue" });
  assert.equal(parseRoute("gh.create"), undefined);
  assert.ok("problem" in toolRoute("gh", "x".repeat(60)));
  assert.ok("problem" in toolRoute("gh", "a__b"));
  assert.ok("problem" in toolRoute("gh", "sp ace"));
});

Deno.test("partition: invalid and duplicate tools are reported, the rest kept", () => {
  const { accepted, rejected } = partitionTools("s", [
    { name: "ok" },
    { name: "dup" },
    { name: "dup" },
    { name: "bad__name" },
  ]);
  assert.deepEqual(accepted.map((t) => t.name), ["ok"]);
  assert.deepEqual(rejected.map((r) => r.name).sort(), ["bad__name", "dup"]);
});

Deno.test("sanitize: escapes and controls stripped, newlines kept", () => {
  assert.equal(stripTerminal("\x1b[31mred\x1b[0m"), "red");
  assert.equal(stripTerminal("a\x1b]0;title\x07b"), "ab");
  assert.equal(stripTerminal("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b"), "alinkb");
  assert.equal(stripTerminal("x\x9b2Jy\u202etxt"), "xytxt");
  assert.equal(stripTerminal("l1\nl2\tz\r\x08"), "l1\nl2\tz");
  assert.equal(oneLine("a\n  b\x1b[2J c"), "a b c");
});
