/**
 * Test fixture: one of several processes writing to the same credential store at once.
 *
 * Usage: `deno run -A store_writer.ts <file|helper> <writer id> <count>`, with
 * `MCPCTL_HOME` naming the store's directory (and `WRITER_HELPER` the helper for
 * `helper`). Each run puts `count` entries of its own and bumps a shared counter entry
 * `count` times through `update`, so a lost write shows up as a missing entry or a
 * short count.
 *
 * @module
 */

import { FileCredentialStore } from "../../src/auth/file_store.ts";
import { HelperCredentialStore } from "../../src/auth/helper_store.ts";
import type { CredentialStore } from "../../src/auth/store.ts";

/** The entry every writer increments. */
const COUNTER_KEY = { serverName: "counter", serverUrl: "https://counter.example/mcp" };

const [kind, writer, countText] = Deno.args;
const count = Number(countText);
const home = Deno.env.get("MCPCTL_HOME");
if (!home || !writer || !Number.isInteger(count)) throw new Error("bad arguments");

const store: CredentialStore = kind === "helper"
  ? new HelperCredentialStore({
    helper: Deno.env.get("WRITER_HELPER") ?? "fake",
    stateDir: home,
    lock: { timeoutMs: 120_000 },
  })
  : new FileCredentialStore();

for (let i = 0; i < count; i++) {
  await store.put(
    { serverName: `w${writer}-${i}`, serverUrl: `https://s${writer}.example/mcp/${i}` },
    { tokens: { accessToken: `token-${writer}-${i}`, tokenType: "Bearer" } },
  );
  await store.update(COUNTER_KEY, (current) => ({
    tokens: {
      accessToken: String(Number(current?.tokens?.accessToken ?? "0") + 1),
      tokenType: "Bearer",
    },
  }));
}
