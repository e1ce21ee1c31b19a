import assert from "node:assert/strict";
import {
  answerElicitation,
  type ElicitationOptions,
  type PromptIo,
  terminalPromptIo,
} from "../../src/cli/elicitation.ts";
import {
  checkValue,
  defaultsContent,
  describeField,
  type Field,
  parseInput,
  parseRequestedSchema,
  SchemaProblem,
} from "../../src/cli/elicitation_schema.ts";
import { Output } from "../../src/cli/output.ts";
import { Client } from "../../src/mcp/client.ts";
import type {
  JsonRpcMessage,
  Transport,
  TransportHandlers,
} from "../../src/mcp/transport/types.ts";
import { RpcError } from "../../src/errors.ts";

/** The form of the conformance scenario elicitation-sep1034-client-defaults. */
const SEP1034 = {
  type: "object",
  properties: {
    name: { type: "string", description: "User name", default: "John Doe" },
    age: { type: "integer", description: "User age", default: 30 },
    score: { type: "number", description: "User score", default: 95.5 },
    status: {
      type: "string",
      description: "User status",
      enum: ["active", "inactive", "pending"],
      default: "active",
    },
    verified: { type: "boolean", description: "Verification status", default: true },
  },
  required: [],
};

/** Every kind of field the spec allows. */
const EVERY_KIND = {
  type: "object",
  properties: {
    name: { type: "string", title: "Name", minLength: 2, maxLength: 5 },
    email: { type: "string", format: "email" },
    site: { type: "string", format: "uri" },
    born: { type: "string", format: "date" },
    at: { type: "string", format: "date-time" },
    code: { type: "string", pattern: "^[A-Z]{3}$" },
    count: { type: "integer", minimum: 1, maximum: 10, default: 3 },
    ratio: { type: "number", minimum: 0, maximum: 1 },
    ok: { type: "boolean" },
    color: { type: "string", enum: ["red", "green"] },
    hero: {
      type: "string",
      oneOf: [{ const: "h1", title: "Superman" }, { const: "h2", title: "Wonder Woman" }],
      default: "h2",
    },
    pet: { type: "string", enum: ["p1", "p2"], enumNames: ["Cats", "Dogs"] },
    tools: {
      type: "array",
      minItems: 1,
      maxItems: 2,
      items: { type: "string", enum: ["Guitar", "Piano", "Drums"] },
      default: ["Piano"],
    },
    fish: {
      type: "array",
      items: { anyOf: [{ const: "f1", title: "Tuna" }, { const: "f2", title: "Salmon" }] },
    },
  },
  required: ["name", "ok"],
};

function field(schema: Record<string, unknown>, name: string): Field {
  const found = parseRequestedSchema(schema).find((f) => f.name === name);
  assert.ok(found, name);
  return found;
}

/**
 * Prompt I/O that answers from a script and records everything written, as the
 * terminal gets it: through Output's guard, as `terminalPromptIo` writes.
 */
function scripted(answers: (string | null)[]): PromptIo & { text(): string } {
  const queue = [...answers];
  const written: string[] = [];
  const out = new Output();
  return {
    readLine: () => Promise.resolve(queue.length > 0 ? queue.shift()! : null),
    write: (text) => {
      written.push(out.clean(text));
      return Promise.resolve();
    },
    text: () => written.join(""),
  };
}

function form(schema: unknown, message = "Please fill in"): Record<string, unknown> {
  return { message, requestedSchema: schema };
}

Deno.test("elicitation schema: every kind of field is read, in order", () => {
  const fields = parseRequestedSchema(EVERY_KIND);
  assert.deepEqual(fields.map((f) => [f.name, f.kind, f.required]), [
    ["name", "string", true],
    ["email", "string", false],
    ["site", "string", false],
    ["born", "string", false],
    ["at", "string", false],
    ["code", "string", false],
    ["count", "integer", false],
    ["ratio", "number", false],
    ["ok", "boolean", true],
    ["color", "enum", false],
    ["hero", "enum", false],
    ["pet", "enum", false],
    ["tools", "multi", false],
    ["fish", "multi", false],
  ]);
  assert.deepEqual(field(EVERY_KIND, "hero").choices, [
    { value: "h1", label: "Superman" },
    { value: "h2", label: "Wonder Woman" },
  ]);
  assert.deepEqual(field(EVERY_KIND, "pet").choices, [
    { value: "p1", label: "Cats" },
    { value: "p2", label: "Dogs" },
  ]);
  assert.deepEqual(field(EVERY_KIND, "fish").choices?.map((c) => c.label), ["Tuna", "Salmon"]);
  assert.equal(field(EVERY_KIND, "hero").default, "h2");
  assert.deepEqual(field(EVERY_KIND, "tools").default, ["Piano"]);
});

Deno.test("elicitation schema: invalid defaults are dropped, unsupported fields refused", () => {
  const fields = parseRequestedSchema({
    type: "object",
    properties: {
      n: { type: "integer", maximum: 5, default: 9 },
      e: { type: "string", enum: ["a"], default: "b" },
      s: { type: "string", default: 42 },
    },
  });
  assert.ok(fields.every((f) => f.default === undefined));
  assert.throws(
    () => parseRequestedSchema({ type: "object", properties: { o: { type: "object" } } }),
    SchemaProblem,
  );
  assert.throws(() => parseRequestedSchema("nope"), SchemaProblem);
  assert.throws(() => parseRequestedSchema({ type: "array" }), SchemaProblem);
});

Deno.test("elicitation schema: typed input is parsed and checked", () => {
  const f = (name: string) => field(EVERY_KIND, name);
  assert.deepEqual(parseInput(f("name"), "Al"), { value: "Al" });
  assert.deepEqual(parseInput(f("name"), "A"), { problem: "must be at least 2 characters" });
  assert.deepEqual(parseInput(f("name"), "Alexander"), {
    problem: "must be at most 5 characters",
  });
  assert.deepEqual(parseInput(f("name"), "ééé"), { value: "ééé" });
  assert.ok("problem" in parseInput(f("email"), "not-an-email"));
  assert.deepEqual(parseInput(f("email"), "a@b.example"), { value: "a@b.example" });
  assert.ok("problem" in parseInput(f("site"), "just words"));
  assert.deepEqual(parseInput(f("site"), "https://x.example/"), { value: "https://x.example/" });
  assert.ok("problem" in parseInput(f("born"), "2024-02-30"));
  assert.deepEqual(parseInput(f("born"), "2024-02-29"), { value: "2024-02-29" });
  assert.ok("problem" in parseInput(f("at"), "2024-01-01 10:00"));
  assert.ok("problem" in parseInput(f("at"), "2024-01-01T25:00:00Z"));
  assert.deepEqual(parseInput(f("at"), "2024-01-01T10:00:00+02:00"), {
    value: "2024-01-01T10:00:00+02:00",
  });
  assert.deepEqual(parseInput(f("code"), "abc"), { problem: "must match the pattern ^[A-Z]{3}$" });
  assert.deepEqual(parseInput(f("code"), "ABC"), { value: "ABC" });
  assert.deepEqual(parseInput(f("count"), "7"), { value: 7 });
  assert.deepEqual(parseInput(f("count"), "2.5"), { problem: "must be a whole number" });
  assert.deepEqual(parseInput(f("count"), "11"), { problem: "must be at most 10" });
  assert.deepEqual(parseInput(f("count"), "0x5"), { problem: "must be a number" });
  assert.deepEqual(parseInput(f("ratio"), ".25"), { value: 0.25 });
  assert.deepEqual(parseInput(f("ratio"), "-1"), { problem: "must be at least 0" });
  assert.deepEqual(parseInput(f("ok"), "Yes"), { value: true });
  assert.deepEqual(parseInput(f("ok"), "n"), { value: false });
  assert.deepEqual(parseInput(f("ok"), "maybe"), { problem: "answer yes or no" });
  assert.deepEqual(parseInput(f("color"), "2"), { value: "green" });
  assert.deepEqual(parseInput(f("color"), "red"), { value: "red" });
  assert.deepEqual(parseInput(f("color"), "3"), { problem: "choose 1-2" });
  assert.deepEqual(parseInput(f("hero"), "wonder woman"), { value: "h2" });
  assert.deepEqual(parseInput(f("pet"), "Dogs"), { value: "p2" });
  assert.deepEqual(parseInput(f("tools"), "1, Drums,1"), { value: ["Guitar", "Drums"] });
  assert.deepEqual(parseInput(f("tools"), "1,2,3"), { problem: "choose at most 2" });
  assert.deepEqual(parseInput(f("tools"), "9"), { problem: '"9" is not a choice (1-3)' });
  assert.deepEqual(parseInput(f("fish"), "Salmon"), { value: ["f2"] });
  assert.equal(checkValue(f("tools"), []), "choose at least 1");
});

Deno.test("elicitation schema: descriptions name type and bounds", () => {
  assert.equal(describeField(field(EVERY_KIND, "count")), "whole number, 1 to 10, optional");
  assert.equal(
    describeField(field(EVERY_KIND, "name")),
    "text, at least 2 characters, at most 5 characters",
  );
  assert.equal(describeField(field(EVERY_KIND, "born")), "a date (YYYY-MM-DD), optional");
  assert.equal(describeField(field(EVERY_KIND, "ok")), "yes/no");
});

Deno.test("elicitation: defaults content (SEP-1034) and missing required defaults", () => {
  assert.deepEqual(defaultsContent(parseRequestedSchema(SEP1034)), {
    content: { name: "John Doe", age: 30, score: 95.5, status: "active", verified: true },
  });
  assert.deepEqual(defaultsContent(parseRequestedSchema(EVERY_KIND)), { missing: ["name", "ok"] });
});

Deno.test("elicitation policy: decline by default, cancel, accept-defaults", async () => {
  const notices: string[] = [];
  const base: ElicitationOptions = {
    server: "srv",
    notice: (t) => {
      notices.push(t);
      return Promise.resolve();
    },
  };
  assert.deepEqual(await answerElicitation(form(SEP1034), base), { action: "decline" });
  assert.match(notices[0]!, /server "srv" asked for input \(Please fill in\); declined \(not a/);
  assert.deepEqual(await answerElicitation(form(SEP1034), { ...base, policy: "cancel" }), {
    action: "cancel",
  });
  assert.deepEqual(
    await answerElicitation(form(SEP1034), { ...base, policy: "accept-defaults" }),
    {
      action: "accept",
      content: { name: "John Doe", age: 30, score: 95.5, status: "active", verified: true },
    },
  );
  assert.deepEqual(
    await answerElicitation(form(EVERY_KIND), { ...base, policy: "accept-defaults" }),
    { action: "decline" },
  );
  assert.match(notices.at(-1)!, /declined: no default for required name, ok/);
  // An explicit policy wins over the terminal.
  const io = scripted([]);
  assert.deepEqual(await answerElicitation(form(SEP1034), { ...base, policy: "decline", io }), {
    action: "decline",
  });
  assert.equal(io.text(), "");
});

Deno.test("elicitation: malformed requests are JSON-RPC errors, odd schemas declined", async () => {
  await assert.rejects(() => answerElicitation({}, { server: "s" }), RpcError);
  await assert.rejects(
    () => answerElicitation({ message: "m", mode: "telepathy" }, { server: "s" }),
    (e) => e instanceof RpcError && e.code === -32602,
  );
  await assert.rejects(() => answerElicitation({ message: "m", mode: "url" }, { server: "s" }));
  const io = scripted([]);
  assert.deepEqual(
    await answerElicitation(
      form({ type: "object", properties: { deep: { type: "object" } } }),
      { server: "s", io },
    ),
    { action: "decline" },
  );
});

Deno.test("elicitation prompt: defaults, re-prompts, choices, confirmation", async () => {
  const io = scripted([
    "A", // too short
    "Ann",
    "", // email: optional, skipped
    "", // site
    "", // born
    "", // at
    "abc", // pattern fails
    "XYZ",
    "", // count: default 3
    "2", // ratio: above maximum
    "0.5",
    "", // ok: required, no default
    "y",
    "green",
    "", // hero: default h2
    ":none", // pet: optional, left out
    "", // tools: default
    "1,2", // fish
    "", // confirm
  ]);
  const reply = await answerElicitation(
    form(EVERY_KIND, "\x1b[31mWho\x1b[0m are you?\x07"),
    { server: "srv", io },
  );
  assert.deepEqual(reply, {
    action: "accept",
    content: {
      name: "Ann",
      code: "XYZ",
      count: 3,
      ratio: 0.5,
      ok: true,
      color: "green",
      hero: "h2",
      tools: ["Piano"],
      fish: ["f1", "f2"],
    },
  });
  const text = io.text();
  assert.match(text, /── srv asks for input ──\n {2}Who are you\?\n/);
  assert.ok(!text.includes("\x1b[31m") && !text.includes("\x07"));
  assert.match(text, /! must be at least 2 characters/);
  assert.match(text, /! must match the pattern/);
  assert.match(text, /! must be at most 1/);
  assert.match(text, /! a value is required/);
  assert.match(text, /\[7\/14\] count\n {2}whole number, 1 to 10, optional\n {2}\[3\] > /);
  assert.match(
    text,
    / {2}1\) Superman \(h1\)\n {2}2\) Wonder Woman \(h2\)\n {2}\[Wonder Woman\] > /,
  );
  assert.match(text, /\[Piano\] > /);
  assert.match(text, /Reply to srv: \{"name":"Ann"/);
});

Deno.test("elicitation prompt: decline, cancel, Ctrl-D and a refused confirmation", async () => {
  const run = (answers: (string | null)[]) =>
    answerElicitation(form(SEP1034), { server: "s", io: scripted(answers) });
  assert.deepEqual(await run([":decline"]), { action: "decline" });
  assert.deepEqual(await run(["", ":cancel"]), { action: "cancel" });
  assert.deepEqual(await run(["", "", null]), { action: "cancel" });
  assert.deepEqual(await run(["", "", "", "", "", "n"]), { action: "decline" });
  assert.deepEqual(await run(["", "", "", "", "", "what", ":cancel"]), { action: "cancel" });
  assert.deepEqual(await run(["Jane", "41", "", "3", "no", "yes"]), {
    action: "accept",
    content: { name: "Jane", age: 41, score: 95.5, status: "pending", verified: false },
  });
});

Deno.test("elicitation URL mode: consent opens the whole URL; otherwise declined", async () => {
  const url = "https://bücher.example/pay?session=abc&x=1#frag";
  const opened: string[] = [];
  const openUrl = (u: string) => {
    opened.push(u);
    return Promise.resolve(true);
  };
  const params = { mode: "url", message: "Pay here", url, elicitationId: "e1" };
  assert.deepEqual(await answerElicitation(params, { server: "s", openUrl }), {
    action: "decline",
  });
  assert.deepEqual(
    await answerElicitation(params, { server: "s", openUrl, policy: "accept-defaults" }),
    { action: "decline" },
  );
  const no = scripted([""]);
  assert.deepEqual(await answerElicitation(params, { server: "s", io: no, openUrl }), {
    action: "decline",
  });
  assert.equal(opened.length, 0, "nothing opened without consent");
  const yes = scripted(["maybe", "y"]);
  assert.deepEqual(await answerElicitation(params, { server: "s", io: yes, openUrl }), {
    action: "accept",
  });
  const shown = "https://xn--bcher-kva.example/pay?session=abc&x=1#frag";
  assert.deepEqual(opened, [shown]);
  assert.match(yes.text(), /── s asks you to open a URL ──\n {2}Pay here\n {2}URL: (\S+)\n/);
  assert.ok(yes.text().includes(`URL: ${shown}\n`));
  const cancel = scripted([null]);
  assert.deepEqual(await answerElicitation(params, { server: "s", io: cancel, openUrl }), {
    action: "cancel",
  });
  const failed = scripted(["yes"]);
  assert.deepEqual(
    await answerElicitation(params, {
      server: "s",
      io: failed,
      openUrl: () => Promise.resolve(false),
    }),
    { action: "accept" },
  );
  assert.match(failed.text(), /open the URL above yourself/);
  const js = scripted(["y"]);
  assert.deepEqual(
    await answerElicitation({ ...params, url: "javascript:alert(1)" }, {
      server: "s",
      io: js,
      openUrl,
    }),
    { action: "decline" },
  );
  assert.equal(opened.length, 1);
});

Deno.test("elicitation terminal I/O: lines across chunks, CRLF, end of input, abort", async () => {
  const chunks = ["fir", "st\r\nsec", "ond\nlast"].map((c) => new TextEncoder().encode(c));
  const stdin = {
    read(buffer: Uint8Array): Promise<number | null> {
      const next = chunks.shift();
      if (next === undefined) return Promise.resolve(null);
      buffer.set(next);
      return Promise.resolve(next.length);
    },
  };
  const written: string[] = [];
  const sink = {
    write: (p: Uint8Array) => {
      written.push(new TextDecoder().decode(p));
      return Promise.resolve(p.length);
    },
    isTerminal: () => false,
  };
  const io = terminalPromptIo(new Output(sink, sink), new AbortController().signal, stdin);
  assert.equal(await io.readLine(), "first");
  assert.equal(await io.readLine(), "second");
  assert.equal(await io.readLine(), "last");
  assert.equal(await io.readLine(), null);
  await io.write("prompt> ");
  assert.deepEqual(written, ["prompt> "]);

  const controller = new AbortController();
  let release!: (n: number | null) => void;
  const pending = terminalPromptIo(new Output(sink, sink), controller.signal, {
    read: () => new Promise((resolve) => release = resolve),
  });
  const line = pending.readLine();
  controller.abort();
  assert.equal(await line, null);
  release(null);
});

/** A transport whose server asks for input in the middle of a slow tools/call. */
class AskingTransport implements Transport {
  readonly kind = "stdio" as const;
  readonly description = "asking";
  handlers: TransportHandlers | undefined;
  replies: JsonRpcMessage[] = [];
  start(h: TransportHandlers) {
    this.handlers = h;
    return Promise.resolve();
  }
  send(m: JsonRpcMessage) {
    queueMicrotask(() => {
      if ("method" in m && "id" in m && m.method === "initialize") {
        this.handlers!.onMessage({
          jsonrpc: "2.0",
          id: m.id,
          result: { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "x" } },
        });
      } else if ("method" in m && "id" in m && m.method === "tools/call") {
        this.handlers!.onMessage({
          jsonrpc: "2.0",
          id: "ask-1",
          method: "elicitation/create",
          params: form(SEP1034),
        });
        const callId = m.id;
        this.onAnswered = () =>
          this.handlers!.onMessage({ jsonrpc: "2.0", id: callId, result: { content: [] } });
      } else if (!("method" in m)) {
        this.replies.push(m);
        this.onAnswered?.();
      }
    });
    return Promise.resolve();
  }
  onAnswered: (() => void) | undefined;
  close() {
    return Promise.resolve();
  }
}

Deno.test("client: a request's idle timeout is held while a person answers", async () => {
  const transport = new AskingTransport();
  const seen: string[] = [];
  const client = new Client(transport, {
    name: "asker",
    timeoutMs: 100,
    requestHandlers: {
      "elicitation/create": async (params, context) => {
        seen.push(context.server);
        // Longer than the idle timeout: a person reading the form.
        await new Promise((resolve) => setTimeout(resolve, 350));
        return await answerElicitation(params, { server: context.server, policy: "cancel" });
      },
    },
  });
  await client.connect();
  const result = await client.request("tools/call", { name: "t", arguments: {} });
  assert.deepEqual(result, { content: [] });
  assert.deepEqual(seen, ["asker"]);
  assert.deepEqual(transport.replies, [{
    jsonrpc: "2.0",
    id: "ask-1",
    result: { action: "cancel" },
  }]);
  await client.close();
});
