import assert from "node:assert/strict";
import { closest, parseArguments, splitCommandLine } from "../../src/cli/args.ts";
import type { OptionSpec } from "../../src/cli/args.ts";
import { UsageError } from "../../src/errors.ts";

const specs: OptionSpec[] = [
  { name: "timeout", short: "t", type: "string", description: "" },
  { name: "json", type: "boolean", description: "" },
  { name: "verbose", short: "v", type: "boolean", description: "" },
  { name: "header", short: "H", type: "string", multiple: true, description: "" },
];

Deno.test("args: long, short, =, grouped, repeated, --", () => {
  const r = parseArguments(
    ["call", "--timeout=5", "-v", "-H", "A: 1", "--header", "B: 2", "--json", "x=1", "--", "--y"],
    specs,
    "mcpctl",
  );
  assert.deepEqual(r.values, { timeout: "5", verbose: true, header: ["A: 1", "B: 2"], json: true });
  assert.deepEqual(r.positionals, ["call", "x=1", "--y"]);
  assert.deepEqual(parseArguments(["-t5", "n=-3", "-1"], specs, "m").positionals, ["n=-3", "-1"]);
});

Deno.test("args: unknown option suggests the closest", () => {
  assert.throws(() => parseArguments(["--jsno"], specs, "mcpctl list"), (e) => {
    assert.ok(e instanceof UsageError);
    assert.match(e.message, /unknown option --jsno for 'mcpctl list'; did you mean --json\?/);
    return true;
  });
  assert.throws(() => parseArguments(["--timeout"], specs, "m"), /needs a value/);
  assert.deepEqual(closest("ech", ["echo", "add", "fail"]), ["echo"]);
});

Deno.test("splitCommandLine: quotes and escapes", () => {
  assert.deepEqual(splitCommandLine(`npx -y "my server" 'a b' c\\ d ""`), [
    "npx",
    "-y",
    "my server",
    "a b",
    "c d",
    "",
  ]);
  assert.throws(() => splitCommandLine('"open'), UsageError);
});
