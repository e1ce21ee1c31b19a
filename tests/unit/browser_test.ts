import assert from "node:assert/strict";
import { openBrowser, openerCommands, splitWords } from "../../src/auth/browser.ts";
import { AuthRequiredError } from "../../src/errors.ts";

const URL_ = "https://auth.example/authorize?client_id=a&state=b&redirect_uri=x";

interface Harness {
  calls: { cmd: string; args: string[] }[];
  lines: string[];
  spawn: (cmd: string, args: string[]) => Promise<{ success: boolean }>;
  stderr: (line: string) => void;
}

/** A spawn that records calls; `results` maps a program to its outcome ("throw" = not found). */
function harness(results: Record<string, boolean | "throw"> = {}): Harness {
  const calls: { cmd: string; args: string[] }[] = [];
  const lines: string[] = [];
  return {
    calls,
    lines,
    spawn(cmd, args) {
      calls.push({ cmd, args });
      const outcome = results[cmd] ?? true;
      if (outcome === "throw") return Promise.reject(new Deno.errors.NotFound(cmd));
      return Promise.resolve({ success: outcome });
    },
    stderr: (line) => lines.push(line),
  };
}

function printed(h: Harness): void {
  assert.deepEqual(h.lines, [`Open this URL in a browser to sign in:\n  ${URL_}`]);
}

Deno.test("browser: $BROWSER with %s substitutes the URL", async () => {
  const h = harness();
  const result = await openBrowser(URL_, {
    env: { BROWSER: "firefox --new-tab '%s' --x=%s" },
    platform: "linux",
    spawn: h.spawn,
    stderr: h.stderr,
  });
  assert.deepEqual(result, { opened: true });
  assert.deepEqual(h.calls, [{ cmd: "firefox", args: ["--new-tab", URL_, `--x=${URL_}`] }]);
  assert.deepEqual(h.lines, []);
});

Deno.test("browser: $BROWSER without %s gets the URL appended; quotes are honoured", async () => {
  const h = harness();
  await openBrowser(URL_, {
    env: { BROWSER: `"/opt/My Browser/run" -a "b c"` },
    platform: "linux",
    spawn: h.spawn,
    stderr: h.stderr,
  });
  assert.deepEqual(h.calls, [{ cmd: "/opt/My Browser/run", args: ["-a", "b c", URL_] }]);
});

Deno.test("browser: a $BROWSER list is tried in order; $BROWSER works without a display", async () => {
  const h = harness({ missing: "throw", failing: false, good: true });
  const result = await openBrowser(URL_, {
    env: { BROWSER: "missing:failing --flag:good:never", SSH_CONNECTION: "1 2 3 4" },
    platform: "linux",
    spawn: h.spawn,
    stderr: h.stderr,
  });
  assert.deepEqual(result, { opened: true });
  assert.deepEqual(h.calls.map((c) => c.cmd), ["missing", "failing", "good"]);
  assert.deepEqual(h.calls[1]?.args, ["--flag", URL_]);
});

Deno.test("browser: when every $BROWSER entry fails, the URL is printed", async () => {
  const h = harness({ a: false, b: "throw" });
  const result = await openBrowser(URL_, {
    env: { BROWSER: "a:b", DISPLAY: ":0" },
    platform: "linux",
    spawn: h.spawn,
    stderr: h.stderr,
  });
  assert.deepEqual(result, { opened: false });
  printed(h);
});

Deno.test("browser: Linux uses xdg-open only with a display", async () => {
  for (const env of [{ DISPLAY: ":0" }, { WAYLAND_DISPLAY: "wayland-0" }]) {
    const h = harness();
    assert.deepEqual(
      await openBrowser(URL_, { env, platform: "linux", spawn: h.spawn, stderr: h.stderr }),
      { opened: true },
    );
    assert.deepEqual(h.calls, [{ cmd: "xdg-open", args: [URL_] }]);
  }
  const h = harness();
  assert.deepEqual(
    await openBrowser(URL_, { env: {}, platform: "linux", spawn: h.spawn, stderr: h.stderr }),
    { opened: false },
  );
  assert.deepEqual(h.calls, []);
  printed(h);
});

Deno.test("browser: over SSH without DISPLAY the URL is printed, even on macOS", async () => {
  for (const platform of ["linux", "darwin", "windows"] as const) {
    const h = harness();
    const result = await openBrowser(URL_, {
      env: { SSH_CONNECTION: "10.0.0.1 5 10.0.0.2 22" },
      platform,
      spawn: h.spawn,
      stderr: h.stderr,
    });
    assert.deepEqual(result, { opened: false });
    assert.deepEqual(h.calls, []);
    printed(h);
  }
  // X forwarding: SSH with DISPLAY opens.
  const h = harness();
  await openBrowser(URL_, {
    env: { SSH_CONNECTION: "x", DISPLAY: "localhost:10.0" },
    platform: "linux",
    spawn: h.spawn,
    stderr: h.stderr,
  });
  assert.equal(h.calls[0]?.cmd, "xdg-open");
});

Deno.test("browser: macOS uses open", async () => {
  const h = harness();
  await openBrowser(URL_, { env: {}, platform: "darwin", spawn: h.spawn, stderr: h.stderr });
  assert.deepEqual(h.calls, [{ cmd: "open", args: [URL_] }]);
});

Deno.test("browser: Windows uses cmd /c start with an empty title and & escaped", async () => {
  const h = harness();
  await openBrowser(URL_, { env: {}, platform: "windows", spawn: h.spawn, stderr: h.stderr });
  assert.deepEqual(h.calls, [{
    cmd: "cmd",
    args: ["/c", "start", "", URL_.replaceAll("&", "^&")],
  }]);
  // On Windows the $BROWSER list separator is ";" so drive letters survive.
  assert.deepEqual(
    openerCommands("https://a.example/", { BROWSER: "C:\\b\\x.exe;y" }, "windows").map((c) =>
      c.cmd
    ),
    ["C:\\b\\x.exe", "y"],
  );
});

Deno.test("browser: noBrowser and a failing opener print the URL", async () => {
  const h = harness();
  assert.deepEqual(
    await openBrowser(URL_, {
      env: { DISPLAY: ":0", BROWSER: "x" },
      platform: "linux",
      noBrowser: true,
      spawn: h.spawn,
      stderr: h.stderr,
    }),
    { opened: false },
  );
  assert.deepEqual(h.calls, []);
  printed(h);

  const failing = harness({ "xdg-open": "throw" });
  assert.deepEqual(
    await openBrowser(URL_, {
      env: { DISPLAY: ":0" },
      platform: "linux",
      spawn: failing.spawn,
      stderr: failing.stderr,
    }),
    { opened: false },
  );
  printed(failing);
});

Deno.test("browser: only http and https URLs are opened", async () => {
  const h = harness();
  for (const url of ["file:///etc/passwd", "javascript:alert(1)", "calc.exe", "-x"]) {
    await assert.rejects(
      openBrowser(url, { env: { DISPLAY: ":0" }, platform: "linux", spawn: h.spawn }),
      AuthRequiredError,
    );
  }
  assert.deepEqual(h.calls, []);
});

Deno.test("browser: the default spawner runs and reaps real programs", async () => {
  const lines: string[] = [];
  // `true` and `false` stand in for openers that succeed and fail.
  assert.deepEqual(
    await openBrowser(URL_, { env: { BROWSER: "true" }, stderr: (l) => lines.push(l) }),
    { opened: true },
  );
  assert.deepEqual(
    await openBrowser(URL_, {
      env: { BROWSER: "false:/nonexistent/opener" },
      stderr: (l) => lines.push(l),
    }),
    { opened: false },
  );
  assert.equal(lines.length, 1);
});

Deno.test("browser: splitWords splits like a shell without expanding", () => {
  assert.deepEqual(splitWords(`a  b\t'c d' "e \\"f\\" $g" h\\ i ''`), [
    "a",
    "b",
    "c d",
    'e "f" $g',
    "h i",
    "",
  ]);
  assert.deepEqual(splitWords("   "), []);
  assert.deepEqual(splitWords(`C:\\a\\b.exe "x y"`, { backslashEscapes: false }), [
    "C:\\a\\b.exe",
    "x y",
  ]);
});
