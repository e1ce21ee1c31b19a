import assert from "node:assert/strict";
import { judge, outcomeOf, parseScenarioList } from "../conformance/run.ts";
import { CLIENT_METADATA_URL, planFor, REDIRECT_FOLLOWER } from "../conformance/adapter.ts";

Deno.test("conformance judge: evidence of a real exchange is required", () => {
  assert.equal(judge([{ id: "a", status: "SUCCESS" }, { id: "b", status: "INFO" }]).passed, true);
  // A client that did nothing: one verdict check, or none at all.
  assert.equal(judge([{ id: "a", status: "SUCCESS" }]).passed, false);
  assert.equal(judge([]).passed, false);
  assert.equal(judge([{ id: "a", status: "INFO" }, { id: "b", status: "INFO" }]).passed, false);
  const warned = judge([
    { id: "a", status: "SUCCESS" },
    { id: "timing", status: "WARNING", errorMessage: "reconnected late" },
  ]);
  assert.equal(warned.passed, false);
  assert.equal(warned.summary, "WARNING timing: reconnected late");
  assert.equal(
    judge([{ id: "a", status: "SUCCESS" }, { id: "b", status: "FAILURE" }]).passed,
    false,
  );
});

Deno.test("conformance outcome: expected failures may only shrink", () => {
  assert.equal(outcomeOf(true, false), "pass");
  assert.equal(outcomeOf(false, false), "fail");
  assert.equal(outcomeOf(false, true), "expected failure");
  assert.equal(outcomeOf(true, true), "unexpected pass");
});

Deno.test("conformance scenario list is parsed from the suite's listing", () => {
  const text = "Client scenarios (test against a client):\n" +
    "  - initialize [2025-06-18,2025-11-25]\n  - auth/basic-cimd [2025-11-25]\n";
  assert.deepEqual(parseScenarioList(text), ["initialize", "auth/basic-cimd"]);
});

Deno.test("conformance adapter: scenarios become ordinary mcpctl commands", () => {
  const url = "http://localhost:9/mcp";
  const args = (scenario: string, context = {}) =>
    planFor(scenario, url, context).steps.map((s) => s.args);
  assert.deepEqual(args("initialize"), [["list", "--url", url]]);
  assert.deepEqual(args("tools_call"), [
    ["list", "--url", url],
    ["call", "--url", url, "add_numbers", "a=2", "b=3"],
  ]);
  assert.deepEqual(args("elicitation-sep1034-client-defaults"), [
    ["call", "--url", url, "test_client_elicitation_defaults", "--elicitation", "accept-defaults"],
  ]);
  assert.deepEqual(args("some-new-scenario"), [["list", "--url", url]]);
  const auth = planFor("auth/metadata-default", url, {});
  assert.deepEqual(auth.steps[0]!.args, ["call", "--url", url, "test-tool", "--login"]);
  assert.equal(auth.env?.BROWSER, REDIRECT_FOLLOWER);
  assert.ok(args("auth/basic-cimd")[0]!.includes(CLIENT_METADATA_URL));
  // Pre-registered credentials go into a config file, never onto the command line.
  const pre = planFor("auth/pre-registration", url, {
    client_id: "pre-registered-client",
    client_secret: "pre-registered-secret",
  });
  assert.deepEqual(pre.config, {
    servers: {
      conformance: {
        type: "http",
        url,
        oauth: { clientId: "pre-registered-client", clientSecret: "pre-registered-secret" },
      },
    },
  });
  assert.ok(!pre.steps[0]!.args.join(" ").includes("pre-registered-secret"));
  const cc = planFor("auth/client-credentials-basic", url, { client_id: "c", client_secret: "s" });
  assert.equal(
    (cc.config?.servers as Record<string, { oauth: { grant: string } }>).conformance!.oauth.grant,
    "client_credentials",
  );
});
