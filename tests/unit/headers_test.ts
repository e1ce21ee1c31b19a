import assert from "node:assert/strict";
import { ConfigError, UsageError } from "../../src/errors.ts";
import {
  createRedactor,
  parseBearerChallenge,
  parseHeaderFlag,
  REDACTED,
  redactHeaders,
  validateHeaders,
} from "../../src/mcp/transport/headers.ts";

/** Runs `fn`, asserting it throws an instance of `cls`; returns the error. */
function throwsAs<E extends Error>(fn: () => unknown, cls: new (...args: never[]) => E): E {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof cls, `expected ${cls.name}, got ${e}`);
    return e;
  }
  throw new assert.AssertionError({ message: `expected ${cls.name} to be thrown` });
}

Deno.test("validateHeaders accepts tokens and ordinary values", () => {
  validateHeaders({
    "X-Api-Key": "abc def",
    "Authorization": "Bearer x.y-z",
    "a!#$%&'*+.^_`|~": "",
  }, "t");
});

Deno.test("validateHeaders rejects bad names, naming them and where", () => {
  const e = throwsAs(() => validateHeaders({ "Bad Name": "v" }, "server demo"), ConfigError);
  assert.ok(e.message.includes("Bad Name"));
  assert.ok(e.message.includes("server demo"));
  throwsAs(() => validateHeaders({ "": "v" }, "x"), ConfigError);
  throwsAs(() => validateHeaders({ "X:Y": "v" }, "x"), ConfigError);
  throwsAs(() => validateHeaders({ "Ünï": "v" }, "x"), ConfigError);
});

Deno.test("validateHeaders rejects CR, LF and NUL without echoing the value", () => {
  for (const bad of ["sec\r\nret-value", "secret\nvalue", "secret\0value", "secretvalue\r"]) {
    const e = throwsAs(
      () => validateHeaders({ "X-Token": bad }, "mcp.json"),
      ConfigError,
    );
    assert.ok(e.message.includes("X-Token"));
    assert.ok(e.message.includes("mcp.json"));
    assert.ok(!e.message.includes("secret"), e.message);
  }
});

Deno.test("redactHeaders keeps names and hides every value", () => {
  assert.deepEqual(redactHeaders({ A: "1", Authorization: "Bearer t" }), {
    A: REDACTED,
    Authorization: REDACTED,
  });
});

Deno.test("parseHeaderFlag splits at the first colon and trims", () => {
  assert.deepEqual(parseHeaderFlag("X-Api-Key: abc:def "), { name: "X-Api-Key", value: "abc:def" });
  assert.deepEqual(parseHeaderFlag("Empty:"), { name: "Empty", value: "" });
  assert.deepEqual(parseHeaderFlag("  Authorization :Bearer t"), {
    name: "Authorization",
    value: "Bearer t",
  });
});

Deno.test("parseHeaderFlag errors never repeat the value", () => {
  for (const flag of ["no colon secretvalue", ": secretvalue", "Bad Name: secretvalue"]) {
    const e = throwsAs(() => parseHeaderFlag(flag), UsageError);
    assert.ok(!e.message.includes("secretvalue"), e.message);
  }
  const e = throwsAs(() => parseHeaderFlag("X-Ok: secret\rvalue"), UsageError);
  assert.ok(e.message.includes("X-Ok"));
  assert.ok(!e.message.includes("secret"), e.message);
});

Deno.test("createRedactor replaces long secrets everywhere, longest first", () => {
  const redact = createRedactor(["tok-123456", "tok-123456-extended", ""]);
  assert.deepEqual(
    redact("a tok-123456-extended b tok-123456c"),
    `a ${REDACTED} b ${REDACTED}c`,
  );
  assert.deepEqual(redact("nothing here"), "nothing here");
  assert.deepEqual(createRedactor([])("same"), "same");
});

Deno.test("createRedactor covers the URL-encoded form", () => {
  const redact = createRedactor(["a b/c+d"]);
  assert.deepEqual(redact("q=a%20b%2Fc%2Bd"), `q=${REDACTED}`);
});

Deno.test("createRedactor replaces short secrets only where they stand alone", () => {
  const redact = createRedactor(["abc", "1"]);
  assert.deepEqual(redact("token=abc, HTTP 401"), `token=${REDACTED}, HTTP 401`);
  assert.deepEqual(redact('"abc"'), `"${REDACTED}"`);
  assert.deepEqual(redact("abc"), REDACTED);
  assert.deepEqual(redact("Bearer abc"), `Bearer ${REDACTED}`);
  assert.deepEqual(redact("fabcd and x1y"), "fabcd and x1y");
  assert.deepEqual(redact("level 1 of 2"), `level ${REDACTED} of 2`);
});

Deno.test("parseBearerChallenge reads quoted and bare parameters", () => {
  assert.deepEqual(
    parseBearerChallenge(
      'Bearer realm="mcp", error=insufficient_scope, scope="files:read files:write", ' +
        'resource_metadata="https://a.test/.well-known/oauth-protected-resource"',
    ),
    {
      realm: "mcp",
      error: "insufficient_scope",
      scope: "files:read files:write",
      resource_metadata: "https://a.test/.well-known/oauth-protected-resource",
    },
  );
});

Deno.test("parseBearerChallenge lower-cases names, handles escapes and other schemes", () => {
  assert.deepEqual(
    parseBearerChallenge('Basic realm="x", bearer Error="invalid_token", Scope="a\\"b"'),
    { error: "invalid_token", scope: 'a"b' },
  );
  assert.deepEqual(
    parseBearerChallenge('Bearer scope="a", DPoP algs="ES256"'),
    { scope: "a" },
  );
  assert.deepEqual(parseBearerChallenge("Bearer"), {});
  assert.deepEqual(parseBearerChallenge("Basic realm=x"), {});
  assert.deepEqual(parseBearerChallenge(null), {});
  assert.deepEqual(parseBearerChallenge(""), {});
});

Deno.test("parseBearerChallenge survives malformed headers", () => {
  for (
    const header of [
      'Bearer realm="unterminated',
      "Bearer ,,, =, ==, scope",
      "Bearer abc==",
      'Bearer @@@ scope="x"',
      "\u0000\u00ff Bearer error=x",
      "Bearer scope=",
      '"Bearer"',
    ]
  ) {
    const params = parseBearerChallenge(header);
    assert.deepEqual(typeof params, "object");
  }
  assert.deepEqual(parseBearerChallenge('Bearer realm="unterminated'), { realm: "unterminated" });
  assert.deepEqual(parseBearerChallenge("Bearer abc=="), {});
  assert.deepEqual(parseBearerChallenge("Bearer error=x, error=y"), { error: "x" });
  assert.deepEqual(parseBearerChallenge("Bearer __proto__=x").__proto__, "x");
});
