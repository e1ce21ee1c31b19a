import assert from "node:assert/strict";
import { createCallbackHandler, escapeHtml, startLoopback } from "../../src/auth/loopback.ts";
import {
  AuthRequiredError,
  ConfigError,
  InterruptedError,
  TimeoutError,
} from "../../src/errors.ts";

async function get(url: string): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text(), headers: response.headers };
}

function portOf(redirectUri: string): number {
  return Number(new URL(redirectUri).port);
}

Deno.test("loopback: success returns the code and shuts the server down", async () => {
  const lines: string[] = [];
  const loopback = await startLoopback({
    expectedState: "st-1",
    log: (line) => lines.push(line),
  });
  try {
    assert.match(loopback.redirectUri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.notEqual(portOf(loopback.redirectUri), 0);
    const page = await get(`${loopback.redirectUri}?code=secret-code-42&state=st-1&iss=x`);
    assert.equal(page.status, 200);
    assert.match(page.text, /Signed in to mcpctl; you can close this tab/);
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    assert.equal(page.headers.get("cache-control"), "no-store");
    assert.equal(page.headers.get("referrer-policy"), "no-referrer");
    assert.deepEqual(await loopback.result, { code: "secret-code-42", state: "st-1", iss: "x" });
  } finally {
    await loopback.close();
  }
  assert.ok(lines.length > 0);
  assert.ok(lines.every((line) => !line.includes("secret-code-42")), "the code is never logged");
  // The server stopped by itself: nothing listens on the port any more.
  await assert.rejects(fetch(loopback.redirectUri), TypeError);
});

Deno.test("loopback: a mismatched state is refused", async () => {
  const loopback = await startLoopback({ expectedState: "right" });
  try {
    const page = await get(`${loopback.redirectUri}?code=c&state=wrong`);
    assert.equal(page.status, 400);
    await assert.rejects(loopback.result, (e: unknown) => {
      assert.ok(e instanceof AuthRequiredError);
      assert.match(e.message, /^state mismatch/);
      return true;
    });
  } finally {
    await loopback.close();
  }
});

Deno.test("loopback: a missing state is refused", async () => {
  const loopback = await startLoopback({ expectedState: "right" });
  try {
    assert.equal((await get(`${loopback.redirectUri}?code=c`)).status, 400);
    await assert.rejects(loopback.result, /state mismatch/);
  } finally {
    await loopback.close();
  }
});

Deno.test("loopback: an error parameter is refused, escaped and stripped", async () => {
  const loopback = await startLoopback({ expectedState: "s" });
  try {
    const description = "<script>alert(1)</script>\u001b[31mred\u0007";
    const query = new URLSearchParams({
      state: "s",
      error: "access_denied",
      error_description: description,
    });
    const page = await get(`${loopback.redirectUri}?${query}`);
    assert.equal(page.status, 400);
    assert.ok(!page.text.includes("<script>"), "HTML is escaped");
    assert.match(page.text, /&#60;script&#62;/);
    assert.match(page.text, /access_denied/);
    await assert.rejects(loopback.result, (e: unknown) => {
      assert.ok(e instanceof AuthRequiredError);
      assert.match(e.message, /access_denied/);
      assert.match(e.message, /red/);
      // deno-lint-ignore no-control-regex
      assert.doesNotMatch(e.message, /[\u0000-\u001f]/, "control characters are stripped");
      return true;
    });
  } finally {
    await loopback.close();
  }
});

Deno.test("loopback: a callback without a code is refused", async () => {
  const loopback = await startLoopback({ expectedState: "s" });
  try {
    assert.equal((await get(`${loopback.redirectUri}?state=s`)).status, 400);
    await assert.rejects(loopback.result, AuthRequiredError);
  } finally {
    await loopback.close();
  }
});

Deno.test("loopback: other paths get 404 and do not consume the callback", async () => {
  const loopback = await startLoopback({ expectedState: "s" });
  try {
    const origin = new URL(loopback.redirectUri).origin;
    assert.equal((await get(`${origin}/favicon.ico`)).status, 404);
    assert.equal((await get(`${origin}/callback/x?code=c&state=s`)).status, 404);
    const post = await fetch(`${loopback.redirectUri}?code=c&state=s`, { method: "POST" });
    await post.body?.cancel();
    assert.equal(post.status, 405);
    assert.equal((await get(`${loopback.redirectUri}?code=real&state=s`)).status, 200);
    assert.equal((await loopback.result).code, "real");
  } finally {
    await loopback.close();
  }
});

Deno.test("loopback: a second request is refused and changes nothing", async () => {
  // Through the server: it is gone after the first request, or answers 410.
  const loopback = await startLoopback({ expectedState: "s" });
  try {
    assert.equal((await get(`${loopback.redirectUri}?code=first&state=s`)).status, 200);
    try {
      const second = await get(`${loopback.redirectUri}?code=second&state=s`);
      assert.equal(second.status, 410);
    } catch (error) {
      assert.ok(error instanceof TypeError, "connection refused");
    }
    assert.equal((await loopback.result).code, "first");
  } finally {
    await loopback.close();
  }

  // Deterministically, through the handler: a second request while the server still runs.
  const handler = createCallbackHandler({ expectedState: "s" });
  const first = handler.handle(new Request("http://127.0.0.1/callback?code=one&state=s"));
  assert.equal(first.status, 200);
  await first.body?.cancel();
  for (const query of ["code=two&state=s", "state=bad", "error=access_denied&state=s"]) {
    const again = handler.handle(new Request(`http://127.0.0.1/callback?${query}`));
    assert.equal(again.status, 410);
    assert.match(await again.text(), /already used/);
  }
  handler.reject(new Error("ignored once settled"));
  assert.equal((await handler.result).code, "one");
});

Deno.test("loopback: times out with a TimeoutError", async () => {
  const loopback = await startLoopback({ expectedState: "s", timeoutMs: 50 });
  try {
    await assert.rejects(loopback.result, (e: unknown) => {
      assert.ok(e instanceof TimeoutError);
      assert.match(e.message, /sign-in was not completed within 0\.1 seconds/);
      return true;
    });
  } finally {
    await loopback.close();
  }
  await assert.rejects(fetch(loopback.redirectUri), TypeError);
});

Deno.test("loopback: abort rejects with InterruptedError", async () => {
  const controller = new AbortController();
  const loopback = await startLoopback({ expectedState: "s", signal: controller.signal });
  controller.abort();
  await assert.rejects(loopback.result, InterruptedError);
  await loopback.close();
  await assert.rejects(
    startLoopback({ expectedState: "s", signal: controller.signal }),
    InterruptedError,
  );
});

Deno.test("loopback: close before the callback rejects; close is idempotent", async () => {
  const loopback = await startLoopback({ expectedState: "s" });
  await loopback.close();
  await loopback.close();
  await assert.rejects(loopback.result, AuthRequiredError);
  await assert.rejects(fetch(loopback.redirectUri), TypeError);
});

Deno.test("loopback: a fixed port is used, and a busy one is a ConfigError", async () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = probe.addr.port;
  try {
    await assert.rejects(startLoopback({ expectedState: "s", port }), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, new RegExp(`port ${port} is in use`));
      return true;
    });
  } finally {
    probe.close();
  }
  const loopback = await startLoopback({ expectedState: "s", port });
  try {
    assert.equal(loopback.redirectUri, `http://127.0.0.1:${port}/callback`);
  } finally {
    await loopback.close();
  }
});

Deno.test("loopback: listens on 127.0.0.1 only", async () => {
  const loopback = await startLoopback({ expectedState: "s" });
  try {
    const port = portOf(loopback.redirectUri);
    const ok = await Deno.connect({ hostname: "127.0.0.1", port });
    assert.equal(ok.remoteAddr.hostname, "127.0.0.1");
    ok.close();
    const others = Deno.networkInterfaces()
      .map((i) => i.address)
      .filter((a) => a !== "127.0.0.1" && !a.startsWith("fe80:"));
    // 127.0.0.2 is loopback on Linux but a different address than the one bound.
    if (Deno.build.os === "linux") others.push("127.0.0.2");
    assert.ok(others.length > 0, "this machine has another address to try");
    for (const hostname of new Set(others)) {
      await assert.rejects(
        Deno.connect({ hostname, port }).then((conn) => conn.close()),
        Deno.errors.ConnectionRefused,
        `connecting via ${hostname} must fail`,
      );
    }
  } finally {
    await loopback.close();
  }
});

Deno.test("loopback: escapeHtml escapes markup and quotes", () => {
  assert.equal(
    escapeHtml(`<a href="x">'&'</a>`),
    "&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;",
  );
});
