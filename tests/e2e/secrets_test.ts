import assert from "node:assert/strict";
import { COMMANDS } from "../../src/cli/commands.ts";
import { pkcs8Pem } from "../../testdata/auth/fake_as.ts";
import { startProtectedServer } from "../../testdata/auth/protected_server.ts";
import { type CliResult, fixture, runCli, testdata } from "../helpers/cli.ts";
import { basicForms, findLeaks, secretForms } from "../helpers/secrets.ts";

/**
 * Runs every command mcpctl has — successes and failures (401, 500, refused refresh, a
 * token endpoint that echoes the request, a stdio server that prints its secrets),
 * with --verbose and --json — while it holds known secrets: header values from the
 * config (`${VAR}`) and from --header, values expanded into a stdio server's args and
 * env, OAuth access and refresh tokens, authorization codes, PKCE verifiers, client
 * secrets, a private key and the JWT assertions made with it. No form of any of them
 * (as is, URL-encoded, JSON-escaped, base64, `Basic base64(id:secret)`) may appear on
 * stdout, on stderr, or in any file mcpctl writes; the token store may hold tokens only.
 */

// Every encoding changes them: space, slash, plus, ampersand, equals, quote.
const API_KEY = 'sekrit/XYZ+123 "config header"=&Qm9';
const TRACE = "sekrit/XYZ+123 trace&header=Lp2";
const HDR_TOKEN = "sekrit-XYZ123-authz-header-Vv7";
const CLI_HEADER = 'sekrit/XYZ+123 "cli" header=Kk4';
const SECRET_BASIC = "sekrit/XYZ+123 client&basic=Aa1";
const SECRET_POST = "sekrit/XYZ+123 client&post=Bb2";

const has = (name: string) => COMMANDS.some((c) => c.name === name);

/**
 * A server that fails every request with a 500 whose body quotes the request's
 * credential headers first (so they land in the excerpt mcpctl shows), then the rest.
 */
function startLeakyServer(): { url: string; close(): Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.body?.cancel();
    const first = ["x-api-key", "authorization", "x-trace"];
    const seen = [...req.headers].sort(([a], [b]) =>
      Number(!first.includes(a)) - Number(!first.includes(b))
    ).map(([k, v]) => `${k}: ${v}`).join("; ");
    return new Response(`boom; you sent ${seen}`, { status: 500 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    close: () => server.shutdown(),
  };
}

async function walk(dir: string, out: string[] = []): Promise<string[]> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) await walk(path, out);
    else if (entry.isFile) out.push(path);
  }
  return out;
}

Deno.test("secrets: no command prints or writes a header value, token, client secret or key", async () => {
  const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  const pem = await pkcs8Pem(keys.privateKey);
  const srv = startProtectedServer({
    as: {
      clients: [
        { id: "ci-basic", method: "client_secret_basic", secret: SECRET_BASIC },
        { id: "ci-post", method: "client_secret_post", secret: SECRET_POST },
        {
          id: "ci-jwt",
          method: "private_key_jwt",
          publicKey: keys.publicKey,
          verify: { name: "ECDSA", hash: "SHA-256" },
        },
      ],
    },
  });
  const leaky = startLeakyServer();
  const root = await Deno.makeTempDir({ prefix: "mcpctl-secrets-" });
  try {
    const home = `${root}/mcpctl-home`;
    const config = `${root}/mcpctl.json`;
    const tmp = `${root}/tmp`;
    await Deno.mkdir(tmp);
    const grant = "client_credentials";
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        servers: {
          svc: { url: srv.url, headers: { "X-Api-Key": "${API_KEY}" } },
          ci: {
            url: srv.url,
            headers: { "X-Trace": "${TRACE}" },
            oauth: { grant, clientId: "ci-basic", clientSecret: "${SECRET_BASIC}" },
          },
          cipost: {
            url: srv.url,
            oauth: {
              grant,
              clientId: "ci-post",
              clientSecret: "${SECRET_POST}",
              tokenEndpointAuthMethod: "client_secret_post",
            },
          },
          cijwt: {
            url: srv.url,
            oauth: {
              grant,
              clientId: "ci-jwt",
              privateKey: "${KEY_PEM}",
              signingAlgorithm: "ES256",
            },
          },
          fixed: { url: srv.url, headers: { Authorization: "Bearer ${HDR_TOKEN}" } },
          down: { url: leaky.url, headers: { "X-Api-Key": "${API_KEY}" } },
          downauth: { url: leaky.url, headers: { Authorization: "Bearer ${HDR_TOKEN}" } },
          // stdio servers that print what variables put into their args.
          envy: {
            ...fixture("--stderr", "started with key ${API_KEY}"),
            env: { SERVICE_TOKEN: "${TRACE}" },
          },
          envydead: fixture("--mode", "exit-at-start", "--stderr", "fatal: bad key ${API_KEY}"),
        },
      }),
    );
    const env = {
      MCPCTL_HOME: home,
      BROWSER: `sh ${testdata("auth/follow_redirects.sh")}`,
      MCPCTL_CREDENTIAL_HELPER: "",
      MCPCTL_OAUTH_CLIENT_SECRET: "",
      MCPCTL_CACHE_TTL: "86400",
      XDG_CONFIG_HOME: `${root}/xdg-config`,
      XDG_STATE_HOME: `${root}/xdg-state`,
      XDG_DATA_HOME: `${root}/xdg-data`,
      TMPDIR: tmp,
      API_KEY,
      TRACE,
      HDR_TOKEN,
      SECRET_BASIC,
      SECRET_POST,
      KEY_PEM: pem,
    };
    const runs: Array<{ args: string[]; result: CliResult }> = [];
    const run = async (...args: string[]) => {
      const result = await runCli([...args, "--config", config], {
        env,
        killAfterMs: 30_000,
      });
      runs.push({ args, result });
      return result;
    };
    const adhoc = (...args: string[]) =>
      runCli(args, { env, killAfterMs: 30_000 }).then((result) => {
        runs.push({ args, result });
        return result;
      });
    const header = `X-Api-Key: ${CLI_HEADER}`;

    // Connecting commands other than list/call, when they exist: failures count too.
    const others = (server: string) =>
      [
        has("ping") ? [run("ping", server, "--verbose"), run("ping", server, "--json")] : [],
        has("describe") ? [run("describe", server, "echo", "--verbose", "--refresh")] : [],
        has("resources") ? [run("resources", server, "--verbose", "--json")] : [],
        has("prompts") ? [run("prompts", server, "--verbose")] : [],
        has("search") ? [run("search", "echo", "--verbose", "--refresh", "--json")] : [],
      ].flat();
    const configRuns = () =>
      has("config") ? [run("config"), run("config", "--json"), run("config", "--verbose")] : [];
    // Commands that start no server, reading config and cache only.
    const offline = () => [
      run("completions", "bash"),
      run("__complete", "servers"),
      run("__complete", "tools", "svc"),
      run("trust", "--list"),
      run("trust", "--list", "--json", "--verbose"),
    ];

    // 1. Nothing stored: 401s, a refused configured header, 500s, client credentials.
    const first = await Promise.all([
      run("list"),
      run("list", "--json", "--verbose"),
      run("list", "--strict", "--verbose"),
      run("call", "svc", "echo", "text=a", "--verbose"),
      run("call", "fixed", "echo", "text=a", "--verbose"),
      run("call", "down", "echo", "text=a", "--verbose"),
      run("call", "ci", "echo", "text=a", "--verbose"),
      run("call", "cipost", "echo", "text=a", "--verbose", "--json"),
      run("call", "cijwt", "echo", "text=a", "--verbose"),
      adhoc("call", "--url", srv.url, "--header", header, "echo", "text=a", "--verbose"),
      adhoc("list", "--url", leaky.url, "--header", header, "--verbose", "--json"),
      adhoc("call", "--url", leaky.url, "--header", header, "echo", "--verbose"),
      run("call", "downauth", "echo", "--verbose", "--json"),
      run("call", "envy", "echo", "message=a", "--verbose"),
      run("call", "envydead", "echo", "message=a"),
      ...configRuns(),
      ...offline(),
      ...others("svc"),
    ]);
    assert.equal(first[3]!.code, 4, first[3]!.stderr);
    assert.equal(first[6]!.code, 0, first[6]!.stderr);
    // The 500 bodies quoted the header values: redaction, not luck, keeps them out.
    assert.match(first[5]!.stderr, /boom; you sent x-api-key: <redacted>/);
    assert.match(first[11]!.stderr, /boom; you sent x-api-key: <redacted>/);
    assert.match(first[12]!.stderr, /boom; you sent authorization: <redacted>/);
    // The stdio servers printed the expanded value: on --verbose, and in a failure's tail.
    assert.match(first[13]!.stderr, /\[envy stderr\] started with key <redacted>/);
    assert.equal(first[14]!.code, 3, first[14]!.stderr);
    assert.match(first[14]!.stderr, /fatal: bad key <redacted>/);

    // 1b. A project file found walking up from the working directory: blocked, then
    //     approved with `trust --yes` (which writes the trust file), then used.
    const project = `${root}/repo`;
    await Deno.mkdir(`${project}/sub`, { recursive: true });
    await Deno.writeTextFile(
      `${project}/.mcp.json`,
      JSON.stringify({
        servers: {
          proj: {
            ...fixture("--stderr", "project key ${API_KEY}"),
            env: { PROJECT_TOKEN: "${TRACE}" },
          },
          projhttp: {
            url: `${leaky.url}?key=\${HDR_TOKEN}`,
            headers: { "X-Api-Key": "${API_KEY}" },
          },
        },
      }),
    );
    const inProject = async (...args: string[]) => {
      const result = await runCli(args, { env, cwd: `${project}/sub`, killAfterMs: 30_000 });
      runs.push({ args, result });
      return result;
    };
    await inProject("trust", "--list");
    await inProject("trust", "--list", "--json", "--verbose");
    await inProject("list", "--verbose");
    const approved = await inProject("trust", "--yes");
    assert.equal(approved.code, 0, approved.stderr);
    const used = await Promise.all([
      inProject("list", "--verbose", "--json"),
      inProject("call", "proj", "echo", "message=a", "--verbose"),
      inProject("call", "projhttp", "echo", "--verbose"),
      inProject("config"),
      inProject("config", "--json"),
    ]);
    assert.equal(used[1]!.code, 0, used[1]!.stderr);
    assert.match(used[1]!.stderr, /\[proj stderr\] project key <redacted>/);
    assert.match(used[2]!.stderr, /boom; you sent x-api-key: <redacted>/);

    // 2. Sign in, in the browser and inline.
    const login = await run("login", "svc", "--verbose");
    assert.equal(login.code, 0, login.stderr);
    const inline = await adhoc(
      "call",
      "--url",
      srv.url,
      "--header",
      header,
      "echo",
      "text=inline",
      "--login",
      "--verbose",
    );
    assert.equal(inline.code, 0, inline.stderr);

    // 3. Signed in: everything, including a 500 whose body quotes the bearer token.
    const save = `${root}/saved`;
    const signedIn = await Promise.all([
      run("list", "--verbose"),
      run("list", "--json", "--verbose"),
      run("call", "svc", "echo", "text=b", "--verbose"),
      run("call", "svc", "echo", "text=b", "--json", "--verbose"),
      run("call", "svc", "echo", "text=b", "--dry-run", "--verbose"),
      run("call", "svc", "image", "--save-dir", save, "--verbose"),
      run("call", "svc", "image", "--verbose"),
      run("call", "svc", "fail500", "--verbose"),
      run("call", "svc", "tool_error", "--verbose", "--json"),
      ...configRuns(),
      ...offline(),
      ...others("svc"),
    ]);
    assert.equal(signedIn[2]!.code, 0, signedIn[2]!.stderr);
    assert.equal(signedIn[7]!.code, 3, signedIn[7]!.stderr);
    const leakedBody = srv.requests.find((r) => r.status === 500)?.authorization;
    assert.ok(leakedBody, "the 500 body quoted a bearer token: redaction was needed");
    assert.match(signedIn[7]!.stderr, /while serving <redacted>/);

    // 4. Revoked access token: a forced refresh.
    srv.revokeAccessTokens();
    const forced = await run("call", "svc", "echo", "text=c", "--verbose");
    assert.equal(forced.code, 0, forced.stderr);
    assert.ok(srv.grants("refresh_token") >= 1);

    // 5. Refused refresh: auth_required, exit 4.
    srv.revokeAccessTokens();
    srv.as.controls.refuseRefresh = true;
    const refused = await run("call", "svc", "echo", "text=d", "--verbose");
    assert.equal(refused.code, 4, refused.stderr);
    await run("list", "--verbose", "--json");

    // 6. A careless token endpoint echoes every request (Basic header, form body with the
    //    secret, assertion, refresh token) in its error description.
    srv.as.controls.refuseRefresh = false;
    assert.equal((await run("login", "svc", "--verbose")).code, 0);
    for (const name of ["ci", "cipost", "cijwt"]) await run("logout", name, "--local");
    srv.as.controls.echoTokenRequests = true;
    srv.revokeAccessTokens();
    const echoed = await Promise.all([
      run("call", "ci", "echo", "text=e", "--verbose"),
      run("call", "cipost", "echo", "text=e", "--json"),
      run("call", "cijwt", "echo", "text=e", "--verbose"),
      run("call", "svc", "echo", "text=e", "--verbose"),
      run("list", "--json", "--verbose"),
      run("list"),
    ]);
    for (const r of echoed.slice(0, 4)) assert.equal(r.code, 4, r.stderr);
    for (const r of echoed.slice(0, 3)) assert.match(r.stderr, /you sent authorization=/);
    assert.match(echoed[0]!.stderr, /authorization=<redacted> body=/);
    assert.match(echoed[1]!.stderr, /client_secret=<redacted>/);
    assert.match(echoed[2]!.stderr, /client_assertion=<redacted>/);
    srv.as.controls.echoTokenRequests = false;

    // 7. Sign in again, then sign out.
    assert.equal((await run("login", "svc", "--verbose")).code, 0);
    await run("logout", "svc", "--verbose");
    await run("logout", "svc", "--all", "--verbose");
    await run("logout", "ci", "--verbose");
    await adhoc("logout", "--url", srv.url, "--verbose");

    // Every command was run.
    const ran = new Set(runs.map((r) => r.args[0]));
    assert.deepEqual(COMMANDS.map((c) => c.name).filter((n) => !ran.has(n)), []);

    // Every secret there was, each with the forms it may take.
    const configured = new Map<string, string[]>([
      ["API_KEY", secretForms(API_KEY)],
      ["TRACE", secretForms(TRACE)],
      ["HDR_TOKEN", secretForms(HDR_TOKEN)],
      ["CLI_HEADER", secretForms(CLI_HEADER)],
      ["SECRET_BASIC", [...secretForms(SECRET_BASIC), ...basicForms("ci-basic", SECRET_BASIC)]],
      ["SECRET_POST", secretForms(SECRET_POST)],
    ]);
    const pemBody = pem.split("\n").filter((l) => l && !l.startsWith("-----"));
    configured.set("private key", [
      pemBody.join(""),
      ...pemBody.filter((l) => l.length >= 40),
      ...secretForms(pem),
    ]);
    const obtained = new Map<string, string[]>();
    for (const [i, params] of srv.as.tokenParams.entries()) {
      for (const name of ["code", "code_verifier", "client_assertion"]) {
        const value = params.get(name);
        if (value) configured.set(`${name} #${i}`, secretForms(value));
      }
    }
    for (const request of srv.as.requests) {
      const assertion = new URLSearchParams(request.body).get("client_assertion");
      if (assertion) {
        configured.set(`echoed assertion ${assertion.slice(-8)}`, secretForms(assertion));
      }
    }
    for (const t of srv.as.issued) obtained.set(`token ${t.slice(0, 6)}…`, secretForms(t));
    assert.ok(srv.as.issued.length >= 10, `tokens issued: ${srv.as.issued.length}`);
    const all = new Map([...configured, ...obtained]);

    const leaks: string[] = [];
    for (const { args, result } of runs) {
      leaks.push(...findLeaks(`stdout of ${args.join(" ")}`, result.stdout, all));
      leaks.push(...findLeaks(`stderr of ${args.join(" ")}`, result.stderr, all));
    }
    // Every file under the sandbox but our own config; the token store holds tokens, and
    // nothing of the configuration (a pre-registered client's secret is read from there).
    const store = `${home}/credentials.json`;
    const files = (await walk(root)).filter((f) => f !== config);
    assert.ok(files.includes(store), "the token store was written");
    assert.ok(files.includes(`${home}/trust.json`), "the trust file was written");
    assert.ok(files.some((f) => f.startsWith(save)), "--save-dir wrote the image");
    for (const file of files) {
      const text = new TextDecoder().decode(await Deno.readFile(file));
      leaks.push(
        ...findLeaks(`file ${file.slice(root.length)}`, text, file === store ? configured : all),
      );
    }
    assert.deepEqual(leaks, []);
  } finally {
    await srv.close();
    await leaky.close();
    await Deno.remove(root, { recursive: true });
  }
});
