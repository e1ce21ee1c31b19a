/**
 * The helper store against the real `docker-credential-pass`, with a throwaway GnuPG key
 * and password store. Needs `apt-get install golang-docker-credential-helpers pass gnupg`;
 * skipped when those programs are missing.
 */
import assert from "node:assert/strict";
import { HelperCredentialStore } from "../../src/auth/helper_store.ts";
import { credentialKeyId, type StoredCredential } from "../../src/auth/store.ts";

function onPath(name: string): boolean {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (dir && Deno.statSync(`${dir}/${name}`).isFile) return true;
    } catch {
      // Not in this directory.
    }
  }
  return false;
}

const missing = ["docker-credential-pass", "pass", "gpg", "gpgconf"].filter((p) => !onPath(p));
if (missing.length > 0) {
  console.warn(
    `helper_store_real_test: skipped, ${missing.join(", ")} not on PATH ` +
      "(apt-get install -y golang-docker-credential-helpers pass gnupg)",
  );
}

async function run(cmd: string, args: string[], env: Record<string, string>): Promise<string> {
  const out = await new Deno.Command(cmd, { args, env, stdin: "null" }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return text;
}

Deno.test({
  name: "helper store (real docker-credential-pass): store, get, list, update, erase",
  ignore: missing.length > 0,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "mcpctl-pass-" });
    const env = { GNUPGHOME: `${dir}/gnupg`, PASSWORD_STORE_DIR: `${dir}/store` };
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, Deno.env.get(k)]));
    await Deno.mkdir(env.GNUPGHOME, { mode: 0o700 });
    try {
      await run("gpg", [
        "--batch",
        "--passphrase",
        "",
        "--quick-gen-key",
        "mcpctl test <test@mcpctl.invalid>",
        "default",
        "default",
        "never",
      ], env);
      const keys = await run("gpg", ["--list-keys", "--with-colons"], env);
      const fingerprint = keys.split("\n").find((l) => l.startsWith("fpr:"))?.split(":")[9];
      assert.ok(fingerprint, "the new key has a fingerprint");
      await run("pass", ["init", fingerprint], env);
      for (const [k, v] of Object.entries(env)) Deno.env.set(k, v);

      const store = new HelperCredentialStore({ helper: "pass", stateDir: `${dir}/state` });
      const key = { serverName: "real", serverUrl: "https://mcp.example/mcp" };
      const moved = { ...key, serverUrl: "https://mcp.example/v2" };
      const cred: StoredCredential = {
        tokens: {
          accessToken: "real-access-token",
          tokenType: "Bearer",
          refreshToken: "real-refresh-token",
          expiresAt: 1_900_000_000_000,
        },
        authServer: "https://auth.example",
      };

      await t.step("get of a missing entry", async () => {
        assert.equal(await store.get(key), undefined);
      });
      await t.step("store and get", async () => {
        await store.put(key, cred);
        assert.deepEqual(await store.get(key), cred);
        assert.equal(await store.get(moved), undefined);
        await store.put(moved, { authServer: "https://other.example" });
        assert.deepEqual(await store.get(moved), { authServer: "https://other.example" });
        assert.deepEqual(await store.get(key), cred);
      });
      await t.step("entries are encrypted at rest", async () => {
        // pass keeps <store>/docker-credential-helpers/<base64 ServerURL>/<user>.gpg.
        const root = `${env.PASSWORD_STORE_DIR}/docker-credential-helpers`;
        let files = 0;
        for await (const entry of Deno.readDir(root)) {
          for await (const file of Deno.readDir(`${root}/${entry.name}`)) {
            const text = new TextDecoder().decode(
              await Deno.readFile(`${root}/${entry.name}/${file.name}`),
            );
            assert.ok(!text.includes("real-access-token"));
            files++;
          }
        }
        assert.equal(files, 2);
      });
      await t.step("list", async () => {
        const ids = (await store.list()).map(credentialKeyId).sort();
        assert.deepEqual(ids, [credentialKeyId(key), credentialKeyId(moved)].sort());
      });
      await t.step("update", async () => {
        const next = await store.update(key, (current) => {
          assert.ok(current?.tokens);
          current.tokens.accessToken = "real-access-token-2";
          return current;
        });
        assert.equal(next?.tokens?.accessToken, "real-access-token-2");
        assert.equal((await store.get(key))?.tokens?.accessToken, "real-access-token-2");
      });
      await t.step("erase", async () => {
        assert.equal(await store.delete(key), true);
        assert.equal(await store.get(key), undefined);
        assert.equal(await store.delete(key), false);
        assert.deepEqual((await store.list()).map(credentialKeyId), [credentialKeyId(moved)]);
      });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) Deno.env.delete(k);
        else Deno.env.set(k, v);
      }
      // gpg started an agent for this GNUPGHOME; stop it so nothing outlives the test.
      await new Deno.Command("gpgconf", {
        args: ["--kill", "all"],
        env,
        stdout: "null",
        stderr: "null",
      })
        .output().catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
});
