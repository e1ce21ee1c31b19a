/**
 * A real sign-in, end to end, in a real browser: `mcpctl login` against the real
 * authorization server of `testdata/oidc/server.ts` (npm `oidc-provider`: dynamic
 * registration, PKCE, resource indicators, refresh tokens, its own login and consent
 * pages), with Debian's chromium driven headless by playwright-core typing the user
 * name and password and clicking the buttons like a person.
 *
 * `$BROWSER` is a script that hands the sign-in URL to the test (it writes it to a
 * file); the test's page opens it, and chromium follows the final redirect to mcpctl's
 * loopback listener. Chromium stays on loopback: a fresh profile, no background
 * networking, every hostname unresolvable, and every non-loopback request aborted.
 *
 * Needs `apt-get install chromium curl`; skipped, saying so, when chromium is missing.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { type CliResult, runCli, type RunCliOptions, tempConfig } from "../helpers/cli.ts";
import { readIfExists, startOidcStack, waitFor, writeHandOffBrowser } from "../helpers/oidc.ts";
import type { StoredCredential } from "../../src/auth/store.ts";

const CHROMIUM = "/usr/bin/chromium";
const chromiumMissing = (() => {
  try {
    return !Deno.statSync(CHROMIUM).isFile;
  } catch {
    return true;
  }
})();
if (chromiumMissing) {
  console.warn(
    `browser_login_test: skipped, ${CHROMIUM} not found (apt-get install -y chromium)`,
  );
}

/** Access tokens live this long (seconds): short, so the test can wait one out. */
const ACCESS_TOKEN_TTL = 6;

const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-extensions",
  // No host name resolves: only 127.0.0.1 itself can be reached.
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
];

function show(r: CliResult): string {
  return `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
}

interface CredentialsFile {
  entries: Record<string, StoredCredential & { serverName: string; serverUrl: string }>;
}

async function readCredentials(home: string): Promise<CredentialsFile | undefined> {
  const text = await readIfExists(`${home}/credentials.json`);
  return text === undefined ? undefined : JSON.parse(text);
}

/** The entries stored for `name`, whatever their URL. */
async function entriesFor(home: string, name: string): Promise<StoredCredential[]> {
  const file = await readCredentials(home);
  return Object.values(file?.entries ?? {}).filter((e) => e.serverName === name);
}

/** A CLI run in the background that is killed, if still running, when disposed. */
function startCli(args: string[], options: RunCliOptions) {
  let child: Deno.ChildProcess | undefined;
  const result = runCli(args, { ...options, onSpawn: (c) => child = c });
  return {
    result,
    async [Symbol.asyncDispose]() {
      try {
        child?.kill("SIGKILL");
      } catch { /* already gone */ }
      await result.catch(() => {});
    },
  };
}

/** Opens the URL mcpctl handed to `$BROWSER` (and removes the hand-off file). */
async function openHandedOffUrl(page: Page, urlFile: string): Promise<URL> {
  const text = await waitFor("mcpctl to open the browser", () => readIfExists(urlFile));
  await Deno.remove(urlFile);
  const url = new URL(text.trim());
  await page.goto(url.href);
  return url;
}

async function signInPage(page: Page, user: string, password: string): Promise<void> {
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  await page.getByLabel("User name").pressSequentially(user, { delay: 5 });
  await page.getByLabel("Password").pressSequentially(password, { delay: 5 });
  await page.getByRole("button", { name: "Sign in" }).click();
}

async function waitForCallbackPage(page: Page): Promise<URL> {
  await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
  return new URL(page.url());
}

Deno.test({
  name: "browser sign-in: chromium, a real authorization server, refresh, revoke, logout, reuse",
  ignore: chromiumMissing,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "mcpctl-browser-" });
    let context: BrowserContext | undefined;
    try {
      await using stack = await startOidcStack({ accessTokenTtl: ACCESS_TOKEN_TTL });
      const home = `${dir}/mcpctl-home`;
      const urlFile = `${dir}/opened-url`;
      const env = {
        MCPCTL_HOME: home,
        MCPCTL_CREDENTIAL_HELPER: "",
        BROWSER: await writeHandOffBrowser(dir, urlFile),
      };
      await using config = await tempConfig({ servers: { secure: { url: stack.mcpUrl } } });
      const cli = (...args: string[]) =>
        runCli(["--config", config.path, ...args], { env, killAfterMs: 30_000 });

      context = await chromium.launchPersistentContext(`${dir}/profile`, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_FLAGS,
        // Chromium's crash handler writes under $XDG_CONFIG_HOME (or ~/.config) whatever
        // the profile: keep that in the temp dir too.
        env: {
          ...Deno.env.toObject(),
          HOME: `${dir}/home`,
          XDG_CONFIG_HOME: `${dir}/home/.config`,
          XDG_CACHE_HOME: `${dir}/home/.cache`,
        },
      });
      const offLoopback: string[] = [];
      await context.route("**/*", (route) => {
        const { hostname } = new URL(route.request().url());
        if (hostname === "127.0.0.1") return route.continue();
        offLoopback.push(route.request().url());
        return route.abort();
      });
      const page = await context.newPage();

      await t.step("login: the user signs in and consents in the browser", async () => {
        await using login = startCli(["--config", config.path, "login", "secure"], {
          env,
          killAfterMs: 30_000,
        });
        const authorize = await openHandedOffUrl(page, urlFile);
        assert.equal(authorize.origin + authorize.pathname, `${stack.issuer}/auth`);
        assert.equal(authorize.searchParams.get("code_challenge_method"), "S256");
        assert.equal(authorize.searchParams.get("resource"), stack.mcpUrl);
        assert.ok(authorize.searchParams.get("state"));

        // A wrong password first: the server says so and asks again.
        await signInPage(page, stack.user, "not the password");
        await page.getByRole("alert").filter({ hasText: "Wrong user name or password" })
          .waitFor();
        await signInPage(page, stack.user, stack.password);

        await page.getByRole("heading", { name: "Allow access?" }).waitFor();
        assert.equal(await page.locator("#client").textContent(), "mcpctl");
        assert.equal(await page.locator("#account").textContent(), stack.user);
        assert.equal(await page.locator("#resource").textContent(), stack.mcpUrl);
        await page.getByRole("button", { name: "Allow" }).click();

        const callback = await waitForCallbackPage(page);
        assert.equal(callback.searchParams.get("state"), authorize.searchParams.get("state"));
        assert.equal(callback.searchParams.get("iss"), stack.issuer);
        await page.getByRole("heading", { name: /Signed in to mcpctl/ }).waitFor();

        const r = await login.result;
        assert.equal(r.code, 0, show(r) + stack.stderr());
        assert.match(r.stderr, /Signed in to secure \(1 tool\)\. Tokens stored in file /);
        const [entry] = await entriesFor(home, "secure");
        assert.ok(entry?.tokens?.accessToken && entry.tokens.refreshToken);
        assert.equal(entry.authServer, stack.issuer);
        assert.equal((await Deno.stat(`${home}/credentials.json`)).mode! & 0o777, 0o600);

        const stats = await stack.stats();
        assert.deepEqual(stats.logins, [
          { user: stack.user, ok: false },
          { user: stack.user, ok: true },
        ]);
        assert.deepEqual(stats.consents, ["allowed"]);
        assert.deepEqual(stats.registrations, [entry.registration?.clientId]);
        const codeGrants = stats.tokenRequests.filter((r) => r.grantType === "authorization_code");
        assert.deepEqual(codeGrants, [{
          grantType: "authorization_code",
          clientId: entry.registration?.clientId,
          resource: stack.mcpUrl,
        }]);
      });

      await t.step("call works with the stored token", async () => {
        const r = await cli("call", "secure", "whoami");
        assert.equal(r.code, 0, show(r));
        const [entry] = await entriesFor(home, "secure");
        assert.equal(
          r.stdout.trim(),
          `${stack.user} via ${entry?.registration?.clientId} at ${stack.mcpUrl}`,
        );
      });

      await t.step("an expired access token is refreshed", async () => {
        const [before] = await entriesFor(home, "secure");
        const expired = before?.tokens;
        assert.ok(expired?.expiresAt && expired.refreshToken);
        // Wait the token out, then check the server really refuses it now.
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, expired.expiresAt! - Date.now()) + 1_000)
        );
        const direct = await fetch(stack.mcpUrl, {
          method: "POST",
          headers: {
            authorization: `Bearer ${expired.accessToken}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
        });
        await direct.body?.cancel();
        assert.equal(direct.status, 401);
        assert.match(direct.headers.get("www-authenticate") ?? "", /error="invalid_token"/);

        const refreshesBefore = (await stack.stats()).tokenRequests
          .filter((r) => r.grantType === "refresh_token").length;
        // Three processes at once: one refresh at a time (the store's lock). The server
        // rotates refresh tokens and treats a reused one as theft, revoking the grant, so
        // two processes refreshing with the same token would fail here.
        const calls = await Promise.all([1, 2, 3].map(() => cli("call", "secure", "whoami")));
        for (const r of calls) {
          assert.equal(r.code, 0, show(r));
          assert.match(r.stdout, new RegExp(`^${stack.user} via `));
        }
        assert.equal((await stack.stats()).activeGrants, 1, "the grant is still alive");

        const refreshes = (await stack.stats()).tokenRequests
          .filter((r) => r.grantType === "refresh_token");
        assert.ok(refreshes.length > refreshesBefore, "the AS saw a refresh_token grant");
        for (const refresh of refreshes) {
          assert.equal(refresh.error, undefined);
          assert.equal(refresh.resource, stack.mcpUrl, "refresh carries resource (RFC 8707)");
        }
        const [after] = await entriesFor(home, "secure");
        assert.ok(after?.tokens);
        assert.notEqual(after.tokens.accessToken, expired.accessToken);
        assert.notEqual(after.tokens.refreshToken, expired.refreshToken, "rotated");
        assert.ok(after.tokens.expiresAt! > Date.now());
      });

      await t.step("a revoked grant: auth_required, exit 4", async () => {
        // The user revokes mcpctl's access: RFC 7009 revocation of its refresh token,
        // which makes the server revoke the whole grant.
        const [stored] = await entriesFor(home, "secure");
        assert.ok(stored?.tokens?.refreshToken && stored.registration);
        const discovery = await (await fetch(`${stack.issuer}/.well-known/openid-configuration`))
          .json();
        const revoke = await fetch(discovery.revocation_endpoint, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            token: stored.tokens.refreshToken,
            token_type_hint: "refresh_token",
            client_id: stored.registration.clientId,
          }),
        });
        await revoke.body?.cancel();
        assert.equal(revoke.status, 200);
        assert.equal((await stack.stats()).activeGrants, 0, "the grant is gone");

        const call = await cli("call", "secure", "whoami");
        assert.equal(call.code, 4, show(call));
        assert.match(call.stderr, /server "secure" needs sign-in/);
        assert.match(call.stderr, /mcpctl login secure/);
        assert.equal(call.stdout, "");

        const list = await cli("list", "--json");
        assert.equal(list.code, 0, show(list));
        const [status] = JSON.parse(list.stdout);
        assert.equal(status.name, "secure");
        assert.equal(status.status, "auth_required");
        const strict = await cli("list", "--strict");
        assert.equal(strict.code, 4, show(strict));

        const refused = (await stack.stats()).tokenRequests
          .filter((r) => r.grantType === "refresh_token" && r.error !== undefined);
        assert.ok(refused.length >= 1, "the refresh was tried and refused");
        assert.equal(refused[0]!.error, "invalid_grant");
        const [entry] = await entriesFor(home, "secure");
        assert.equal(entry?.tokens, undefined, "the refused tokens are gone from the store");
      });

      await t.step("logout --all: nothing left for the server", async () => {
        assert.equal((await entriesFor(home, "secure")).length, 1, "the registration is there");
        const r = await cli("logout", "secure", "--all");
        assert.equal(r.code, 0, show(r));
        assert.match(r.stderr, /Signed out of secure/);
        assert.deepEqual(await entriesFor(home, "secure"), []);
        assert.deepEqual((await readCredentials(home))?.entries, {});
      });

      await t.step("denied consent: exit 4, nothing stored", async () => {
        await using login = startCli(["--config", config.path, "login", "secure"], {
          env,
          killAfterMs: 30_000,
        });
        await openHandedOffUrl(page, urlFile);
        // The browser still has its session at the server: it goes straight to consent.
        await page.getByRole("heading", { name: "Allow access?" }).waitFor();
        await page.getByRole("button", { name: "Deny" }).click();
        const callback = await waitForCallbackPage(page);
        assert.equal(callback.searchParams.get("error"), "access_denied");
        const r = await login.result;
        assert.equal(r.code, 4, show(r));
        assert.match(r.stderr, /refused the sign-in: access_denied/);
        const entries = await entriesFor(home, "secure");
        assert.ok(entries.every((e) => e.tokens === undefined), "no tokens stored");
      });

      await t.step("another login on a new port reuses the native registration", async () => {
        const [before] = await entriesFor(home, "secure");
        const registered = before?.registration;
        assert.ok(registered?.redirectUris?.[0], "the denied sign-in registered a client");
        assert.equal(registered.nativeApp, true, "oidc-provider confirmed application_type");
        const registrations = (await stack.stats()).registrations.length;
        await using login = startCli(["--config", config.path, "login", "secure"], {
          env,
          killAfterMs: 30_000,
        });
        const authorize = await openHandedOffUrl(page, urlFile);
        const redirect = new URL(authorize.searchParams.get("redirect_uri")!);
        assert.notEqual(redirect.port, new URL(registered.redirectUris[0]!).port);
        assert.equal(authorize.searchParams.get("client_id"), registered.clientId);
        await page.getByRole("heading", { name: "Allow access?" }).waitFor();
        await page.getByRole("button", { name: "Allow" }).click();
        await waitForCallbackPage(page);
        const r = await login.result;
        assert.equal(r.code, 0, show(r) + stack.stderr());
        assert.equal((await stack.stats()).registrations.length, registrations, "no new client");
        const [entry] = await entriesFor(home, "secure");
        assert.equal(entry?.registration?.clientId, registered.clientId);
        assert.ok(entry?.tokens?.refreshToken);
      });

      await t.step("logout revokes the grant at the server (RFC 7009)", async () => {
        const [entry] = await entriesFor(home, "secure");
        assert.ok(entry?.tokens?.refreshToken);
        assert.equal((await stack.stats()).activeGrants, 1);
        const r = await cli("logout", "secure");
        assert.equal(r.code, 0, show(r));
        assert.ok(
          r.stderr.includes(`Signed out of secure: tokens removed from `) &&
            r.stderr.includes(`; revoked at ${stack.issuer}/.`),
          r.stderr,
        );
        assert.equal((await stack.stats()).activeGrants, 0, "the grant is gone");
        const [after] = await entriesFor(home, "secure");
        assert.equal(after?.tokens, undefined);
        const refresh = await fetch(`${stack.issuer}/token`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            grant_type: "refresh_token",
            refresh_token: entry.tokens.refreshToken,
            client_id: entry.registration!.clientId,
          }),
        });
        assert.equal(refresh.status, 400);
        assert.equal((await refresh.json()).error, "invalid_grant");
      });

      assert.deepEqual(offLoopback, [], "the browser never left loopback");
    } finally {
      await context?.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
