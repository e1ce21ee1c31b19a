import assert from "node:assert/strict";
import fc from "fast-check";
import { CLEAR_LINE, Output, type Sink } from "../../src/cli/output.ts";
import { REDACTED, Redactor } from "../../src/util/redact.ts";
import { basicForms, secretForms } from "../helpers/secrets.ts";

const SECRET = 'k3y/with+odd "chars"&=ü';

Deno.test("redactor: every derived form of a secret is hidden", () => {
  const r = new Redactor([SECRET]);
  const forms = [
    SECRET,
    encodeURIComponent(SECRET),
    encodeURIComponent(SECRET).toLowerCase().replace(/%[0-9a-f]{2}/g, (m) => m),
    new URLSearchParams([["", SECRET]]).toString().slice(1),
    JSON.stringify(SECRET).slice(1, -1),
    JSON.stringify(SECRET).slice(1, -1).replaceAll("/", "\\/"),
    JSON.stringify(SECRET).slice(1, -1).replace("ü", "\\u00fc"),
    JSON.stringify(SECRET).slice(1, -1).replace("ü", "\\u00FC"),
    ...secretForms(SECRET),
  ];
  // The percent-escapes with lower-case hex digits, as some servers write them.
  forms.push(encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  for (const form of forms) {
    const text = `before ${form} after`;
    assert.equal(r.redact(text), `before ${REDACTED} after`, JSON.stringify(form));
  }
  // Base64 with its padding goes whole.
  const padded = btoa("exactly-nine!");
  assert.ok(padded.endsWith("="));
  assert.equal(new Redactor(["exactly-nine!"]).redact(`x ${padded} y`), `x ${REDACTED} y`);
});

Deno.test("redactor: a scheme's credential, Basic id:secret, URLs, headers, env", () => {
  const r = new Redactor(["Bearer tok-1234567890"]);
  assert.equal(r.redact("got tok-1234567890"), `got ${REDACTED}`);
  assert.equal(r.redact("Authorization: Bearer tok-1234567890"), `Authorization: ${REDACTED}`);

  const basic = new Redactor();
  basic.addBasic("my client", "s3cret value");
  for (const form of basicForms("my client", "s3cret value")) {
    assert.equal(basic.redact(`Basic ${form}`), `Basic ${REDACTED}`);
    assert.equal(basic.redact(`Basic ${form}==`), `Basic ${REDACTED}`);
  }

  const url = new Redactor();
  url.addUrl("https://user:pa%24%24word-99@h.test/mcp?key=query-secret-1&v=2");
  assert.equal(
    url.redact("pa$$word-99 query-secret-1 v=2 user"),
    `${REDACTED} ${REDACTED} v=${REDACTED} user`,
  );
  const tokenAsUser = new Redactor();
  tokenAsUser.addUrl("https://ghp_token1234@github.test/");
  assert.equal(tokenAsUser.redact("ghp_token1234"), REDACTED);

  const headers = new Redactor();
  headers.addHeaders({
    "User-Agent": "my-agent/1.0",
    Accept: "application/json",
    "X-Custom": "custom-secret",
  });
  assert.equal(
    headers.redact("my-agent/1.0 application/json custom-secret"),
    `my-agent/1.0 application/json ${REDACTED}`,
  );

  const vars = new Redactor();
  vars.addVariables({ HOME: "/home/someone", CI_TOKEN: "ci-token-value" });
  assert.equal(vars.redact("/home/someone/x ci-token-value"), `/home/someone/x ${REDACTED}`);

  const env = new Redactor();
  env.addSecretEnv({
    GITHUB_TOKEN: "gh-env-token",
    DB_PASSWORD: "pw-in-env",
    API_KEY: "key-in-env",
    LOG_LEVEL: "debug-level",
  });
  assert.equal(
    env.redact("gh-env-token pw-in-env key-in-env debug-level"),
    `${REDACTED} ${REDACTED} ${REDACTED} debug-level`,
  );
});

Deno.test("redactor: a short value only where it stands as a whole token", () => {
  const r = new Redactor(["1", "abc"]);
  // Standing alone, as a server echoes it.
  assert.equal(r.redact("v=1"), `v=${REDACTED}`);
  assert.equal(r.redact('"1"'), `"${REDACTED}"`);
  assert.equal(r.redact("token=abc, abc."), `token=${REDACTED}, ${REDACTED}.`);
  assert.equal(r.redact("Bearer abc"), `Bearer ${REDACTED}`);
  // Inside numbers, hosts, paths and words: untouched.
  for (
    const text of [
      "cannot reach http://127.0.0.1:9/mcp",
      "HTTP 401",
      "x1y",
      "fabcd abc-def abc.def a/abc/x 1.5",
      "a%1 ab1c",
    ]
  ) {
    assert.equal(r.redact(text), text);
  }
  // Words mcpctl's own output is made of are never secrets.
  const words = new Redactor(["mcpctl", "true", "hint"]);
  assert.equal(words.size, 0);
  assert.equal(words.redact("mcpctl: x\nhint: true"), "mcpctl: x\nhint: true");
});

Deno.test("redactor: redactValue keeps the JSON shape and redacts keys and strings", () => {
  const r = new Redactor(["secret-value-1"]);
  const value = {
    a: ["secret-value-1", 3, null, true],
    "secret-value-1": { b: "x secret-value-1" },
  };
  assert.deepEqual(r.redactValue(value), {
    a: [REDACTED, 3, null, true],
    [REDACTED]: { b: `x ${REDACTED}` },
  });
  assert.deepEqual(value.a[0], "secret-value-1", "the input is not modified");
  assert.equal(new Redactor().redactValue(value), value);
});

// A secret long enough to be replaced anywhere, with no surrounding white space (which
// add() trims) and none of the placeholder's characters.
const secretArb = fc.string({ minLength: 8, maxLength: 40 }).filter((s) =>
  s.trim() === s && !/[<>]/.test(s)
);

Deno.test("redactor property: no form of a secret survives, whatever surrounds it", () => {
  fc.assert(
    fc.property(secretArb, fc.string(), fc.string(), fc.nat(), (secret, before, after, pick) => {
      const forms = secretForms(secret);
      const form = forms[pick % forms.length]!;
      const out = new Redactor([secret]).redact(before + form + after);
      for (const f of forms) assert.ok(!out.includes(f), `${JSON.stringify(f)} in ${out}`);
    }),
    { numRuns: 500 },
  );
});

Deno.test("redactor property: a short value inside a word is left alone", () => {
  const word = fc.stringMatching(/^[A-Za-z0-9]{1,6}$/);
  fc.assert(
    fc.property(word, word, word, (secret, left, right) => {
      const text = `see ${left}${secret}${right} here`;
      assert.equal(new Redactor([secret]).redact(text), text);
    }),
    { numRuns: 300 },
  );
});

/** A sink that keeps what is written. */
function capture(): Sink & { text(): string } {
  const chunks: Uint8Array[] = [];
  return {
    write(p: Uint8Array) {
      chunks.push(p.slice());
      return Promise.resolve(p.length);
    },
    isTerminal: () => false,
    text: () => chunks.map((c) => new TextDecoder().decode(c)).join(""),
  };
}

Deno.test("output: every path is redacted; text sanitized, JSON escaped and exact", async () => {
  const stdout = capture();
  const stderr = capture();
  const out = new Output(stdout, stderr);
  out.addSecret('tok"en-secret\\1');
  const hostile = "name\x1b]0;title\x07 \x9b2J\u202eevil\r\x1b[3A";
  await out.result(`result tok"en-secret\\1 ${hostile}\n\tindented\n`);
  await out.error(`error tok"en-secret\\1 ${hostile}\n`);
  await out.status(`progress tok"en-secret\\1 ${hostile}`);
  await out.json({ value: 'tok"en-secret\\1', hostile });
  const [result, json] = [
    stdout.text().split("{")[0]!,
    stdout.text().slice(stdout.text().indexOf("{")),
  ];
  assert.equal(result, `result ${REDACTED} name evil\n\tindented\n`);
  assert.equal(
    stderr.text(),
    `error ${REDACTED} name evil\n${CLEAR_LINE}progress ${REDACTED} name evil`,
  );
  // JSON: the exact value (redacted), with nothing a terminal acts on.
  assert.deepEqual(JSON.parse(json), { value: REDACTED, hostile });
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  assert.doesNotMatch(json, /[\x1b\x07\x9b\u202e\r]/);
});

Deno.test("output: a control character cannot split a secret past the redactor", async () => {
  const stderr = capture();
  const out = new Output(capture(), stderr);
  out.addSecret("split-me-secret");
  await out.error("split-\x00me-\x1b[0msecret\n");
  assert.equal(stderr.text(), `${REDACTED}\n`);
});
