import assert from "node:assert/strict";
import { FrameTooLargeError, LineSplitter } from "../../src/mcp/transport/lines.ts";

const enc = (s: string) => new TextEncoder().encode(s);

function collect(max = 1024) {
  const lines: string[] = [];
  let invalid = 0;
  const s = new LineSplitter((l) => {
    if (l.replaced) invalid++;
    lines.push(l.text);
  }, max);
  return { s, lines, invalid: () => invalid };
}

Deno.test("lines: split across chunks, CRLF stripped, empty lines skipped", () => {
  const { s, lines } = collect();
  s.push(enc('{"a":1}\r\n{"b"'));
  s.push(enc(":2}\n\n"));
  s.push(enc("tail"));
  s.end();
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}', "tail"]);
});

Deno.test("lines: a UTF-8 character split across chunks", () => {
  const { s, lines } = collect();
  const bytes = enc("héllo→\n");
  s.push(bytes.subarray(0, 2));
  s.push(bytes.subarray(2, 7));
  s.push(bytes.subarray(7));
  assert.deepEqual(lines, ["héllo→"]);
});

Deno.test("lines: invalid UTF-8 is decoded as U+FFFD and reported, not thrown", () => {
  const { s, lines, invalid } = collect();
  s.push(new Uint8Array([0xff, 0xfe, 0x0a]));
  s.push(enc("ok\n"));
  s.push(new Uint8Array([...enc('{"t":"a'), 0xc3, 0x28, ...enc('b"}\n')]));
  assert.equal(invalid(), 2);
  assert.deepEqual(lines, ["\ufffd\ufffd", "ok", '{"t":"a\ufffd(b"}']);
});

Deno.test("lines: a line over the limit throws as soon as the limit is crossed", () => {
  const { s } = collect(10);
  s.push(enc("12345"));
  assert.throws(() => s.push(enc("678901")), FrameTooLargeError);
  const b = collect(10);
  b.s.push(enc("1234567890\n"));
  assert.deepEqual(b.lines, ["1234567890"]);
  assert.throws(() => b.s.push(enc("12345678901\n")), FrameTooLargeError);
});
