/**
 * Elicitation through the real CLI: the `--elicitation` policies against the scripted
 * HTTP fixture (the request arrives on the answer's SSE stream, the reply goes back as
 * a POST), and the terminal prompts against server-everything (under `script`, with the
 * answers typed ahead on the pseudo-terminal).
 */

import assert from "node:assert/strict";
import { cliCommand, ROOT, runCli } from "../helpers/cli.ts";
import { startStreamableServer } from "../../testdata/http/streamable_server.ts";

const EVERYTHING = `deno run -A npm:@modelcontextprotocol/server-everything@2026.8.31 stdio`;

Deno.test("elicitation e2e: policies when no one can answer", async () => {
  const server = await startStreamableServer();
  try {
    const call = (...extra: string[]) => runCli(["call", "--url", server.url, "elicit", ...extra]);

    const plain = await call();
    assert.equal(plain.code, 0, plain.stderr);
    assert.deepEqual(JSON.parse(plain.stdout), { action: "decline" });
    assert.match(
      plain.stderr,
      /server "adhoc" asked for input \(Who are you\?\); declined \(not a terminal; see --elicitation\)/,
    );

    const defaults = await call("--elicitation", "accept-defaults");
    assert.equal(defaults.code, 0, defaults.stderr);
    assert.deepEqual(JSON.parse(defaults.stdout), {
      action: "accept",
      content: { name: "Ada", age: 36 },
    });

    const cancel = await call("--elicitation", "cancel", "--quiet");
    assert.deepEqual(JSON.parse(cancel.stdout), { action: "cancel" });
    assert.equal(cancel.stderr, "");

    const noDefault = await call(
      "--elicitation",
      "accept-defaults",
      'schema:={"type":"object","properties":{"token":{"type":"string"}},"required":["token"]}',
    );
    assert.deepEqual(JSON.parse(noDefault.stdout), { action: "decline" });
    assert.match(noDefault.stderr, /declined: no default for required token/);

    const bad = await call("--elicitation", "maybe");
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--elicitation must be decline, cancel or accept-defaults/);

    const init = server.requests.find((q) => q.rpcMethod === "initialize")!;
    const capabilities = (init.body as { params: { capabilities: Record<string, unknown> } })
      .params.capabilities;
    // Not a terminal: form mode only (URL mode needs a person to consent).
    assert.deepEqual(capabilities.elicitation, { form: {} });
  } finally {
    await server.close();
  }
});

/** Runs the CLI on a pseudo-terminal with `input` typed ahead; returns the screen. */
async function typeAhead(
  args: string[],
  input: string,
  env: Record<string, string> = {},
): Promise<{ code: number; screen: string }> {
  const line = cliCommand(args).map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const child = new Deno.Command("script", {
    args: ["-qec", line, "/dev/null"],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await child.output();
  return { code: out.code, screen: new TextDecoder().decode(out.stdout) };
}

Deno.test("elicitation e2e: a form on the terminal (server-everything)", async () => {
  // name, agree, then Enter for every other field (defaults or nothing), then send.
  const answers = ["Alice", "y", ...Array(11).fill(""), ""].join("\n") + "\n";
  const { code, screen } = await typeAhead(
    ["call", "--stdio", EVERYTHING, "trigger-elicitation-request"],
    answers,
  );
  assert.equal(code, 0, screen);
  assert.match(screen, /── adhoc asks for input ──/);
  assert.match(screen, /Please provide inputs for the following fields:/);
  assert.match(screen, /\[3\/13\] String with default \(firstLine\)/);
  assert.match(screen, /\[It was a dark and stormy night\.\] > /);
  assert.match(screen, /1\) Superman \(hero-1\)/);
  assert.match(screen, /User provided the requested information/);
  assert.match(screen, /- Name: Alice/);
  assert.match(screen, /- Agreed to terms: true/);
  assert.match(screen, /- Favorite Integer: 42/);
});

Deno.test("elicitation e2e: a URL is opened only with consent (server-everything)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mcpctl-elicit-" });
  try {
    const opened = `${dir}/opened`;
    // A "browser" that records what it was asked to open.
    const env = { BROWSER: `sh -c 'echo "$0" >> ${opened}'` };
    const url = "https://example.com/approve?item=42";
    const args = ["call", "--stdio", EVERYTHING, "trigger-url-elicitation", `url=${url}`];

    const no = await typeAhead(args, "n\n", env);
    assert.equal(no.code, 0, no.screen);
    assert.match(no.screen, /── adhoc asks you to open a URL ──/);
    assert.ok(no.screen.includes(`URL: ${url}`), no.screen);
    assert.match(no.screen, /User declined to open the URL/);
    assert.equal(await Deno.readTextFile(opened).catch(() => ""), "");

    const yes = await typeAhead(args, "y\n", env);
    assert.equal(yes.code, 0, yes.screen);
    assert.match(yes.screen, /User completed the URL elicitation flow/);
    assert.equal(await Deno.readTextFile(opened), `${url}\n`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
