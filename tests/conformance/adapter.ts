/**
 * The client command the conformance suite runs: `deno run -A tests/conformance/adapter.ts
 * <server-url>`, with `MCP_CONFORMANCE_SCENARIO` (and, for some scenarios,
 * `MCP_CONFORMANCE_CONTEXT`) in the environment.
 *
 * It turns a scenario into ordinary mcpctl command lines and runs them as the real CLI
 * with the release permission set (see `tests/helpers/cli.ts`). Everything
 * scenario-specific lives here: mcpctl itself knows nothing about the suite.
 *
 * Auth scenarios (`auth/*`) sign in inline (`--login`) with `BROWSER` set to a
 * "browser" that only follows redirects (`curl -sL -o /dev/null URL`), which completes
 * the loopback flow against the suite's authorization server. Credentials from the
 * context (pre-registered client, client credentials) go into a temporary config file;
 * tokens are stored under a temporary `MCPCTL_HOME`.
 *
 * @module
 */

import { cliCommand, ROOT } from "../helpers/cli.ts";

/** One mcpctl run. */
export interface Step {
  /** mcpctl arguments. */
  args: string[];
}

/** What the adapter does for a scenario. */
export interface Plan {
  steps: Step[];
  /** A config file to write first (its path replaces `{config}` in the arguments). */
  config?: Record<string, unknown>;
  /** Extra environment for every step. */
  env?: Record<string, string>;
}

/** The "browser" of auth scenarios: follows the authorization redirects, shows nothing. */
export const REDIRECT_FOLLOWER = "curl -sL -o /dev/null";

/** The Client ID Metadata Document URL the suite's `auth/basic-cimd` expects. */
export const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";

/** The tool each non-auth scenario exposes, with arguments that make sense for it. */
const CALLS: Record<string, string[]> = {
  "tools_call": ["add_numbers", "a=2", "b=3"],
  "sse-retry": ["test_reconnection"],
  // Not a terminal: the defaults are accepted with an ordinary option.
  "elicitation-sep1034-client-defaults": [
    "test_client_elicitation_defaults",
    "--elicitation",
    "accept-defaults",
  ],
};

/**
 * The mcpctl runs for a scenario against `url`. Unknown scenarios get a plain `list`,
 * which at least initializes and lists tools.
 *
 * @example
 * ```ts
 * import { planFor } from "./adapter.ts";
 * planFor("tools_call", "http://localhost:1/mcp", {}).steps.map((s) => s.args.join(" "));
 * // ["list --url http://localhost:1/mcp", "call --url http://localhost:1/mcp add_numbers a=2 b=3"]
 * ```
 */
export function planFor(
  scenario: string,
  url: string,
  context: Record<string, unknown>,
): Plan {
  if (scenario.startsWith("auth/")) return authPlan(scenario, url, context);
  const list: Step = { args: ["list", "--url", url] };
  const call = CALLS[scenario];
  if (call === undefined) return { steps: [list] };
  const steps: Step[] = [{ args: ["call", "--url", url, ...call] }];
  // `call` lists tools itself; tools_call runs both commands a user would.
  if (scenario === "tools_call") steps.unshift(list);
  return { steps };
}

function authPlan(scenario: string, url: string, context: Record<string, unknown>): Plan {
  const env = { BROWSER: REDIRECT_FOLLOWER };
  const oauth: Record<string, string> = {};
  const map: Record<string, string> = {
    client_id: "clientId",
    client_secret: "clientSecret",
    private_key_pem: "privateKey",
    signing_algorithm: "signingAlgorithm",
  };
  for (const [key, field] of Object.entries(map)) {
    if (typeof context[key] === "string") oauth[field] = context[key] as string;
  }
  if (scenario.startsWith("auth/client-credentials")) oauth.grant = "client_credentials";
  const tool = ["test-tool", "--login"];
  // The client's published metadata document, as a user would name theirs.
  if (scenario === "auth/basic-cimd") tool.push("--client-metadata-url", CLIENT_METADATA_URL);
  if (Object.keys(oauth).length === 0) {
    return { env, steps: [{ args: ["call", "--url", url, ...tool] }] };
  }
  // A secret never goes on a command line: pre-registered credentials come from config.
  return {
    env,
    config: { servers: { conformance: { type: "http", url, oauth } } },
    steps: [{ args: ["call", "--config", "{config}", "conformance", ...tool] }],
  };
}

/** Runs the plan; resolves to the first non-zero exit code, or 0. */
async function runPlan(plan: Plan): Promise<number> {
  const home = await Deno.makeTempDir({ prefix: "mcpctl-conformance-" });
  try {
    const configPath = `${home}/mcpctl.json`;
    if (plan.config) await Deno.writeTextFile(configPath, JSON.stringify(plan.config));
    const env: Record<string, string> = { ...Deno.env.toObject(), ...plan.env };
    // Tokens of this run stay in a throwaway home, never in the user's store.
    env.MCPCTL_HOME = home;
    delete env.MCPCTL_CREDENTIAL_HELPER;
    delete env.MCPCTL_CONFIG;
    for (const step of plan.steps) {
      const args = step.args.map((a) => a === "{config}" ? configPath : a);
      console.error(`adapter: mcpctl ${args.join(" ")}`);
      const [cmd, ...rest] = cliCommand(args);
      const { code } = await new Deno.Command(cmd!, {
        args: rest,
        cwd: ROOT,
        env,
        clearEnv: true,
        stdin: "null",
        stdout: "inherit",
        stderr: "inherit",
      }).output();
      if (code !== 0) {
        console.error(`adapter: mcpctl exited with ${code}`);
        return code;
      }
    }
    return 0;
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

if (import.meta.main) {
  const url = Deno.args.at(-1);
  const scenario = Deno.env.get("MCP_CONFORMANCE_SCENARIO") ?? "";
  if (url === undefined || !/^https?:\/\//.test(url)) {
    console.error("usage: adapter.ts SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)");
    Deno.exit(2);
  }
  let context: Record<string, unknown> = {};
  const raw = Deno.env.get("MCP_CONFORMANCE_CONTEXT");
  if (raw) context = JSON.parse(raw);
  Deno.exit(await runPlan(planFor(scenario, url, context)));
}
