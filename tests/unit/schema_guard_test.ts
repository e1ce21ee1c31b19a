import assert from "node:assert/strict";
import {
  guardSchema,
  guardToolSchemas,
  MAX_SCHEMA_CHARS,
  MAX_SCHEMA_DEPTH,
} from "../../src/mcp/schema_guard.ts";

Deno.test("schema guard: keeps ordinary object schemas, draft-07 and 2020-12", () => {
  const draft7 = {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { a: { type: "string" }, b: { type: "array", items: { type: "number" } } },
    required: ["a"],
  };
  assert.equal(guardSchema(draft7).schema, draft7);
  const withDefs = {
    type: "object",
    $defs: { point: { type: "object", properties: { x: { type: "number" } } } },
    properties: { p: { $ref: "#/$defs/point" }, q: { $ref: "#/$defs/point/properties/x" } },
  };
  assert.equal(guardSchema(withDefs).schema, withDefs);
  assert.ok(guardSchema({}).schema, "an empty schema is an object schema");
});

Deno.test("schema guard: recursion through subschemas is kept", () => {
  const tree = {
    type: "object",
    $defs: {
      node: {
        type: "object",
        properties: { children: { type: "array", items: { $ref: "#/$defs/node" } } },
      },
    },
    properties: { root: { $ref: "#/$defs/node" } },
  };
  assert.ok(guardSchema(tree).schema);
  const selfRoot = { type: "object", properties: { next: { $ref: "#" } } };
  assert.ok(guardSchema(selfRoot).schema);
});

Deno.test("schema guard: non-object schemas are dropped", () => {
  assert.equal(guardSchema(null).dropped, "not a JSON object (null)");
  assert.equal(guardSchema([1]).dropped, "not a JSON object (array)");
  assert.equal(guardSchema("x").dropped, "not a JSON object (string)");
  assert.equal(guardSchema({ type: "string" }).dropped, 'not an object schema (type "string")');
});

Deno.test("schema guard: $ref cycles, dangling and external refs are dropped", () => {
  const cycle = {
    type: "object",
    $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } },
    properties: { x: { $ref: "#/$defs/a" } },
  };
  assert.match(guardSchema(cycle).dropped ?? "", /^\$ref cycle \(#\/\$defs\/(a|b) → /);
  const viaAllOf = {
    type: "object",
    $defs: { a: { allOf: [{ $ref: "#/$defs/a" }] } },
    properties: { x: { $ref: "#/$defs/a" } },
  };
  assert.match(guardSchema(viaAllOf).dropped ?? "", /^\$ref cycle/);
  assert.match(guardSchema({ type: "object", allOf: [{ $ref: "#" }] }).dropped ?? "", /cycle/);
  assert.equal(
    guardSchema({ type: "object", properties: { x: { $ref: "#/$defs/missing" } } }).dropped,
    "$ref to nothing (#/$defs/missing)",
  );
  assert.equal(
    guardSchema({ type: "object", properties: { x: { $ref: "other.json#/a" } } }).dropped,
    "$ref to an external document (other.json#/a)",
  );
  assert.ok(
    guardSchema({
      type: "object",
      $defs: { n: { $anchor: "num", type: "number" } },
      properties: { x: { $ref: "#num" } },
    }).schema,
  );
});

Deno.test("schema guard: absurd depth and size are dropped", () => {
  let deep: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < MAX_SCHEMA_DEPTH + 5; i++) deep = { type: "object", properties: { a: deep } };
  assert.match(guardSchema(deep).dropped ?? "", /nested too deep/);
  const big = {
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: 5000 }, (_, i) => [`field_${i}`, { type: "string" }]),
    ),
  };
  assert.ok(JSON.stringify(big).length > MAX_SCHEMA_CHARS);
  assert.match(guardSchema(big).dropped ?? "", /too large/);
  // Data under enum/const/default is not a schema and does not count as depth.
  let data: unknown = 1;
  for (let i = 0; i < MAX_SCHEMA_DEPTH + 5; i++) data = [data];
  assert.ok(guardSchema({ type: "object", default: data }).schema);
});

Deno.test("schema guard: both schemas of a tool, with notes", () => {
  const g = guardToolSchemas({
    inputSchema: { type: "object" },
    outputSchema: { type: "object", properties: { x: { $ref: "http://e.x/s" } } },
  });
  assert.deepEqual(g.inputSchema, { type: "object" });
  assert.equal(g.outputSchema, undefined);
  assert.deepEqual(g.notes, ["output schema dropped: $ref to an external document (http://e.x/s)"]);
  assert.deepEqual(guardToolSchemas({ inputSchema: { type: "object" } }).notes, []);
});
