import assert from "node:assert/strict";
import { Client } from "../../src/mcp/client.ts";
import type {
  JsonRpcMessage,
  Transport,
  TransportHandlers,
} from "../../src/mcp/transport/types.ts";
import { ConnectionClosedError, ProtocolError, RpcError, TimeoutError } from "../../src/errors.ts";

/** An in-memory transport whose "server" is a function of each sent message. */
class FakeTransport implements Transport {
  readonly kind = "stdio" as const;
  readonly description = "fake";
  sent: JsonRpcMessage[] = [];
  handlers: TransportHandlers | undefined;
  closed = false;
  constructor(readonly server: (m: JsonRpcMessage, t: FakeTransport) => void) {}
  start(h: TransportHandlers) {
    this.handlers = h;
    return Promise.resolve();
  }
  send(m: JsonRpcMessage) {
    this.sent.push(m);
    queueMicrotask(() => this.server(m, this));
    return Promise.resolve();
  }
  close() {
    this.closed = true;
    return Promise.resolve();
  }
  reply(m: unknown) {
    this.handlers!.onMessage(m);
  }
}

function standardServer(version = "2025-11-25") {
  return (m: JsonRpcMessage, t: FakeTransport) => {
    if (!("id" in m) || !("method" in m)) return;
    if (m.method === "initialize") {
      t.reply({
        jsonrpc: "2.0",
        id: m.id,
        result: { protocolVersion: version, capabilities: {}, serverInfo: { name: "s" } },
      });
    } else if (m.method === "echo") {
      t.reply({ jsonrpc: "2.0", id: m.id, result: m.params });
    } else if (m.method === "boom") {
      t.reply({ jsonrpc: "2.0", id: m.id, error: { code: -32000, message: "bad" } });
    }
  };
}

Deno.test("client: initialize, initialized, ids never reused", async () => {
  const t = new FakeTransport(standardServer());
  const c = new Client(t, { name: "s" });
  const info = await c.connect();
  assert.equal(info.protocolVersion, "2025-11-25");
  const init = t.sent[0] as { method: string; params: Record<string, unknown> };
  assert.equal(init.method, "initialize");
  assert.equal(init.params.protocolVersion, "2025-11-25");
  assert.deepEqual((init.params.clientInfo as { name: string }).name, "mcpctl");
  assert.equal((t.sent[1] as { method: string }).method, "notifications/initialized");
  await c.request("echo", { a: 1 });
  await c.request("echo", { a: 2 });
  const ids = t.sent.filter((m) => "id" in m).map((m) => (m as { id: number }).id);
  assert.equal(new Set(ids).size, ids.length);
  await c.close();
});

Deno.test("client: an unsupported version disconnects naming both versions", async () => {
  const t = new FakeTransport(standardServer("2030-01-01"));
  const c = new Client(t, { name: "s" });
  await assert.rejects(() => c.connect(), (e) => {
    assert.ok(e instanceof ProtocolError);
    assert.match(e.message, /"2030-01-01".*asked for 2025-11-25/);
    return true;
  });
  assert.ok(t.closed);
});

Deno.test("client: older supported versions are accepted", async () => {
  for (const v of ["2025-06-18", "2025-03-26", "2024-11-05"]) {
    const c = new Client(new FakeTransport(standardServer(v)), { name: "s" });
    assert.equal((await c.connect()).protocolVersion, v);
    await c.close();
  }
});

Deno.test("client: ping answered, unknown server request gets -32601, batch handled", async () => {
  const t = new FakeTransport(standardServer());
  const c = new Client(t, { name: "s" });
  await c.connect();
  t.reply([
    { jsonrpc: "2.0", id: "p1", method: "ping" },
    { jsonrpc: "2.0", id: "x1", method: "sampling/createMessage", params: {} },
  ]);
  await new Promise((r) => setTimeout(r, 0));
  const replies = t.sent.filter((m) => "id" in m && !("method" in m)) as {
    id: string;
    result?: unknown;
    error?: { code: number };
  }[];
  assert.deepEqual(replies.find((r) => r.id === "p1")!.result, {});
  assert.equal(replies.find((r) => r.id === "x1")!.error!.code, -32601);
  await c.close();
});

Deno.test("client: JSON-RPC error becomes RpcError", async () => {
  const c = new Client(new FakeTransport(standardServer()), { name: "s" });
  await c.connect();
  await assert.rejects(() => c.request("boom"), (e) => e instanceof RpcError && e.code === -32000);
  await c.close();
});

Deno.test("client: timeout sends notifications/cancelled and closes the connection", async () => {
  const t = new FakeTransport(standardServer());
  const c = new Client(t, { name: "s", timeoutMs: 50 });
  await c.connect();
  await assert.rejects(() => c.request("never"), TimeoutError);
  const cancel = t.sent.find((m) =>
    "method" in m && m.method === "notifications/cancelled"
  ) as unknown as {
    params: { requestId: number };
  };
  assert.ok(cancel, "cancelled notification sent");
  assert.equal(cancel.params.requestId, 2);
  assert.ok(c.closed);
  assert.ok(t.closed);
  await assert.rejects(() => c.request("echo"), ConnectionClosedError);
});

Deno.test("client: progress resets the idle timeout; max time still bounds", async () => {
  const ticks: ReturnType<typeof setInterval>[] = [];
  const t = new FakeTransport((m, tr) => {
    standardServer()(m, tr);
    if ("method" in m && m.method === "long" && "id" in m) {
      const token = (m.params!._meta as { progressToken: string }).progressToken;
      let n = 0;
      const tick = setInterval(() => {
        n++;
        tr.reply({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: token, progress: n, total: 4 },
        });
        if (n === 4) {
          clearInterval(tick);
          tr.reply({ jsonrpc: "2.0", id: m.id, result: { done: true } });
        }
      }, 40);
      ticks.push(tick);
    }
  });
  const c = new Client(t, { name: "s" });
  await c.connect();
  const seen: number[] = [];
  const r = await c.request("long", {}, {
    timeoutMs: 70,
    onProgress: (p) => seen.push(p.progress),
  });
  assert.deepEqual(r, { done: true });
  assert.deepEqual(seen, [1, 2, 3, 4]);
  await assert.rejects(
    () => c.request("long", {}, { timeoutMs: 70, maxTimeMs: 100, onProgress: () => {} }),
    /max-time/,
  );
  for (const tick of ticks) clearInterval(tick);
  await c.close();
});

Deno.test("client: close fails pending requests at once", async () => {
  const t = new FakeTransport(standardServer());
  const c = new Client(t, { name: "s" });
  await c.connect();
  const p = c.request("never");
  t.handlers!.onClose(new ConnectionClosedError("server exited (exit code 1)"));
  await assert.rejects(() => p, /exit code 1/);
  await c.close();
});

Deno.test("client: settle waits only after the server asked something", async () => {
  const quiet = new Client(new FakeTransport(standardServer()), { name: "s" });
  await quiet.connect();
  let t0 = performance.now();
  await quiet.settle(200);
  assert.ok(performance.now() - t0 < 50, "no server request: no wait");
  await quiet.close();

  const t = new FakeTransport(standardServer());
  const c = new Client(t, {
    name: "s",
    requestHandlers: { "roots/list": () => Promise.resolve({ roots: [] }) },
  });
  await c.connect();
  t.reply({ jsonrpc: "2.0", id: "r1", method: "roots/list" });
  await new Promise((r) => setTimeout(r, 0));
  t0 = performance.now();
  await c.settle(100);
  assert.ok(performance.now() - t0 >= 80, "waited for the answer to age");
  await c.close();
});
