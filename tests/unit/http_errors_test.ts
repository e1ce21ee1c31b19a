import assert from "node:assert/strict";
import { createRedactor } from "../../src/mcp/transport/headers.ts";
import { bodyExcerpt, type Redaction } from "../../src/mcp/transport/http_errors.ts";

function redaction(...secrets: string[]): Redaction {
  return { redact: createRedactor(secrets), secrets };
}

function html(text: string, secrets: string[] = [], cut = false): string {
  return bodyExcerpt(text, { cut, markup: true, redaction: redaction(...secrets) });
}

Deno.test("bodyExcerpt: markup reduced to text, whitespace folded", () => {
  assert.equal(
    html("<html>\n<body>\n  <h1>Service\tUnavailable</h1>\r\n<p>try <b>again</b>.</p></body>"),
    "Service Unavailable try again .",
  );
});

Deno.test("bodyExcerpt: comments, scripts and styles are not text", () => {
  assert.equal(
    html("<!-- a -->x<script type=x>if (a<b) go()</script>y<STYLE>p{}</STYLE>z"),
    "x y z",
  );
});

Deno.test("bodyExcerpt: entities decoded; a lone < stays text", () => {
  assert.equal(
    html("<p>a &lt; b &amp;&amp; c&nbsp;&#62;&#x20AC; d &bogus; e < f</p>"),
    "a < b && c >€ d &bogus; e < f",
  );
});

Deno.test("bodyExcerpt: the redaction placeholder survives tag stripping", () => {
  assert.equal(html("<p>token s3cret-token</p>", ["s3cret-token"]), "token <redacted>");
  // Inside an attribute the whole tag goes, the secret with it.
  assert.equal(html('<a href="/x?t=s3cret-token">link</a>', ["s3cret-token"]), "link");
});

Deno.test("bodyExcerpt: a partial body loses its cut-off tag, script and secret prefix", () => {
  assert.equal(html('<p>fine</p><div class="a', [], true), "fine");
  assert.equal(html("<p>fine</p><script>var a = 1;", [], true), "fine");
  assert.equal(html("<p>key s3cr", ["s3cret-token"], true), "key");
});

Deno.test("bodyExcerpt: plain text keeps its angle brackets", () => {
  const text = "expected <string> but got a < b";
  assert.equal(bodyExcerpt(text, { cut: false, markup: false, redaction: redaction() }), text);
});

Deno.test("bodyExcerpt: an entity cannot smuggle a secret past redaction", () => {
  assert.equal(html("<p>s3cret&#45;token</p>", ["s3cret-token"]), "<redacted>");
});
