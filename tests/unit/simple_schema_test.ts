/**
 * The simple-schema validator against the full one (`@cfworker/json-schema`): unit tests
 * per keyword, then properties over random subset schemas and instances (edge numbers,
 * astral and lone-surrogate strings, nesting, missing and extra fields) that the verdict
 * and the failing paths are the same, and that schemas outside the subset are refused.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { Validator } from "@cfworker/json-schema";
import {
  type ArgumentProblem,
  type Dialect,
  isSimpleSchema,
  MAX_SIMPLE_DEPTH,
  validateSimple,
} from "../../src/mcp/simple_schema.ts";
import { formatProblems, validateArguments, validateFully } from "../../src/mcp/schema_validate.ts";
import { ArgumentError } from "../../src/errors.ts";

type Json = Record<string, unknown>;

const URLS: Record<Dialect, string> = {
  "4": "http://json-schema.org/draft-04/schema#",
  "7": "http://json-schema.org/draft-07/schema#",
  "2019-09": "https://json-schema.org/draft/2019-09/schema",
  "2020-12": "https://json-schema.org/draft/2020-12/schema",
};

/** The simple validator's problems; fails when it declines the schema or instance. */
function simple(schema: Json, instance: unknown, dialect: Dialect = "2020-12"): ArgumentProblem[] {
  const problems = validateSimple(schema, instance, dialect);
  assert.ok(problems, `declined ${JSON.stringify(schema)}`);
  return problems;
}

function messages(schema: Json, instance: unknown, dialect: Dialect = "2020-12"): string[] {
  return simple(schema, instance, dialect).map((p) => `${p.path}: ${p.message}`);
}

function cfworkerValid(schema: Json, instance: unknown, dialect: Dialect): boolean {
  return new Validator(schema as never, dialect, false).validate(instance).valid;
}

// ---------------------------------------------------------------------------------------
// Keywords

Deno.test("simple schema: type names, arrays of names, and integer as cfworker has it", () => {
  const n = { type: "number" };
  assert.deepEqual(messages(n, 1.5), []);
  assert.deepEqual(messages(n, "1"), [": expected number, got string"]);
  const i = { type: "integer" };
  assert.deepEqual(messages(i, JSON.parse("1.0")), [], "1.0 is an integer");
  assert.deepEqual(messages(i, -0), []);
  assert.deepEqual(messages(i, 1e300), []);
  assert.deepEqual(messages(i, 1.5), [": expected integer, got number"]);
  assert.deepEqual(messages(i, "1"), [": expected integer, got string"]);
  const many = { type: ["string", "integer", "null"] };
  assert.deepEqual(messages(many, null), []);
  assert.deepEqual(messages(many, 2), []);
  assert.deepEqual(messages(many, 2.5), [": expected string or integer or null, got number"]);
  assert.deepEqual(messages({ type: "array" }, {}), [": expected array, got object"]);
  assert.deepEqual(messages({ type: "object" }, []), [": expected object, got array"]);
  assert.deepEqual(messages({ type: "boolean" }, 0), [": expected boolean, got number"]);
  assert.deepEqual(messages({ type: "null" }, false), [": expected null, got boolean"]);
  assert.deepEqual(messages({}, { anything: [1] }), []);
});

Deno.test("simple schema: properties and required, with the texts call prints", () => {
  const schema = {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
  };
  const problems = simple(schema, { a: "x" });
  assert.deepEqual(problems, [
    { path: "", message: 'missing required field "b"' },
    { path: "/a", message: "expected number, got string" },
  ]);
  assert.equal(
    formatProblems("fx.add", problems),
    'invalid arguments for fx.add:\n  - missing required field "b"\n  - a: expected number, got string',
  );
  // Nested, and names that need escaping in a JSON pointer.
  const nested = {
    type: "object",
    properties: {
      filter: { type: "object", properties: { "a/b~c": { type: "string" } }, required: ["n"] },
    },
  };
  assert.deepEqual(simple(nested, { filter: { "a/b~c": 1 } }), [
    { path: "/filter", message: 'missing required field "n"' },
    { path: "/filter/a~1b~0c", message: "expected string, got number" },
  ]);
  assert.deepEqual(messages(schema, "x"), [": expected object, got string"], "no required check");
  assert.deepEqual(messages({ required: ["a", "a"] }, {}), [': missing required field "a"']);
});

Deno.test("simple schema: additionalProperties false, true and as a schema", () => {
  const closed = { properties: { a: {} }, additionalProperties: false };
  assert.deepEqual(messages(closed, { a: 1, b: 2, 'q"x': 3 }), [
    ': unknown field "b"',
    ': unknown field "q"x"',
  ]);
  assert.deepEqual(messages({ additionalProperties: true }, { b: 2 }), []);
  const typed = { properties: { a: {} }, additionalProperties: { type: "string" } };
  assert.deepEqual(messages(typed, { a: 1, b: "x", c: 2 }), ["/c: expected string, got number"]);
});

Deno.test("simple schema: enum and const compare as JSON (1 equals 1.0, key order ignored)", () => {
  assert.deepEqual(messages({ enum: ["a", 1, null] }, JSON.parse("1.0")), []);
  assert.deepEqual(messages({ enum: ["a", 1] }, "b"), [': must be one of "a", 1']);
  assert.deepEqual(messages({ enum: [{ x: 1, y: [2] }] }, { y: [2], x: 1 }), []);
  assert.deepEqual(messages({ enum: [{ x: 1 }] }, { x: 1, y: 2 }), [': must be one of {"x":1}']);
  assert.deepEqual(messages({ enum: [[1, 2]] }, [2, 1]).length, 1);
  assert.deepEqual(messages({ const: 0 }, -0), []);
  assert.deepEqual(messages({ const: null }, 0), [": must be null"]);
  assert.deepEqual(messages({ const: { a: [] } }, { a: [] }), []);
  assert.deepEqual(messages({ const: "x" }, ["x"]), [': must be "x"']);
  const long = Array.from({ length: 20 }, (_, i) => i);
  assert.match(messages({ enum: long }, 99)[0]!, /11, …$/);
});

Deno.test("simple schema: minimum, maximum and their exclusive number forms", () => {
  const s = { minimum: 1, maximum: 3 };
  assert.deepEqual(messages(s, 1), []);
  assert.deepEqual(messages(s, 3), []);
  assert.deepEqual(messages(s, 0.5), [": must be >= 1 (got 0.5)"]);
  assert.deepEqual(messages(s, 4), [": must be <= 3 (got 4)"]);
  assert.deepEqual(messages(s, "9"), [], "bounds apply to numbers only");
  const x = { exclusiveMinimum: 1, exclusiveMaximum: 3 };
  assert.deepEqual(messages(x, 2), []);
  assert.deepEqual(messages(x, 1), [": must be > 1 (got 1)"]);
  assert.deepEqual(messages(x, 3), [": must be < 3 (got 3)"]);
  assert.deepEqual(messages({ minimum: 0 }, -0), []);
  assert.deepEqual(messages({ maximum: 1e308 }, 1.7e308), [": must be <= 1e+308 (got 1.7e+308)"]);
});

Deno.test("simple schema: multipleOf on the decimal digits sent", () => {
  assert.deepEqual(messages({ multipleOf: 0.1 }, 0.3), [], "0.3 / 0.1 is 3 in decimal");
  assert.deepEqual(messages({ multipleOf: 0.1 }, 0.35), [": must be a multiple of 0.1 (got 0.35)"]);
  assert.deepEqual(messages({ multipleOf: 0.01 }, 19.99), []);
  assert.deepEqual(messages({ multipleOf: 3 }, -9), []);
  assert.deepEqual(messages({ multipleOf: 3 }, -0), []);
  assert.deepEqual(messages({ multipleOf: 7 }, 1e21), [": must be a multiple of 7 (got 1e+21)"]);
  assert.deepEqual(messages({ multipleOf: 5 }, 1e21), []);
  assert.deepEqual(messages({ multipleOf: 1e-7 }, 5e-324).length, 1);
  assert.deepEqual(messages({ multipleOf: 2.5 }, 7.5), []);
  // The same verdicts as the full validator.
  for (const [d, v] of [[0.1, 0.3], [0.1, 0.1 * 3], [0.01, 19.99], [7, 1e21], [1e-7, 5e-324]]) {
    const problems = simple({ multipleOf: d }, v);
    assert.equal(
      problems.length === 0,
      cfworkerValid({ multipleOf: d }, v, "2020-12"),
      `${v}/${d}`,
    );
  }
});

Deno.test("simple schema: string lengths count code points, not UTF-16 units", () => {
  const s = { minLength: 2, maxLength: 3 };
  assert.deepEqual(messages(s, "ab"), []);
  assert.deepEqual(messages(s, "😀😀😀"), [], "three astral characters, six units");
  assert.deepEqual(messages(s, "😀"), [": must be at least 2 characters long (has 1)"]);
  assert.deepEqual(messages(s, "abcd"), [": must be at most 3 characters long (has 4)"]);
  assert.deepEqual(messages(s, "\ud800\ud800"), [], "lone surrogates count once each");
  assert.deepEqual(messages(s, "\udc00\ud800\udc00"), [], "a lone low, then a pair");
  assert.deepEqual(messages(s, 12345), []);
});

Deno.test("simple schema: items, minItems, maxItems, uniqueItems", () => {
  const s = { items: { type: "integer" }, minItems: 1, maxItems: 2, uniqueItems: true };
  assert.deepEqual(messages(s, [1, 2]), []);
  assert.deepEqual(messages(s, []), [": must have at least 1 items (has 0)"]);
  assert.deepEqual(messages(s, [1, "x", 2.5]), [
    ": must have at most 2 items (has 3)",
    "/1: expected integer, got string",
    "/2: expected integer, got number",
  ]);
  assert.deepEqual(messages(s, [1, JSON.parse("1.0")]), [
    ": items must be unique (items 0 and 1 are equal)",
  ]);
  const objects = { uniqueItems: true };
  assert.deepEqual(messages(objects, [{ a: 1, b: 2 }, { b: 2, a: 1 }]).length, 1);
  assert.deepEqual(messages(objects, [[1], [1, 1], 1, "1", null, {}, []]), []);
  assert.deepEqual(messages({ uniqueItems: false }, [1, 1]), []);
  assert.deepEqual(messages({ items: false }, [1]), ["/0: must not be present"]);
});

Deno.test("simple schema: annotations are ignored; format only where strings fail type", () => {
  const annotated = {
    $schema: URLS["2020-12"],
    title: "t",
    description: "d",
    $comment: "c",
    default: { any: "thing" },
    examples: [1, "two"],
    deprecated: true,
    readOnly: false,
    writeOnly: false,
    type: "object",
    properties: {
      n: { type: "integer", format: "int32" },
      d: { type: "number", format: "double" },
    },
  };
  assert.ok(isSimpleSchema(annotated, "2020-12"));
  assert.deepEqual(messages(annotated, { n: 5, d: 0.5 }), []);
  assert.deepEqual(messages(annotated, { n: "5" }), ["/n: expected integer, got string"]);
  // cfworker asserts formats on strings, so these go to it.
  for (
    const s of [{ format: "email" }, { type: "string", format: "date-time" }, {
      type: ["string", "null"],
      format: "uri",
    }]
  ) {
    assert.equal(isSimpleSchema(s, "2020-12"), false, JSON.stringify(s));
  }
});

Deno.test("simple schema: dialects (draft-04 numbers and boolean subschemas, $schema at the root)", () => {
  for (const d of ["4", "7", "2019-09", "2020-12"] as Dialect[]) {
    const s = { $schema: URLS[d], properties: { a: { minimum: 1 } }, additionalProperties: false };
    assert.ok(isSimpleSchema(s, d), d);
    assert.deepEqual(messages(s, { a: 0, b: 1 }, d), [
      "/a: must be >= 1 (got 0)",
      ': unknown field "b"',
    ]);
  }
  assert.equal(isSimpleSchema({ exclusiveMinimum: 1 }, "4"), false, "a boolean in draft-04");
  assert.equal(isSimpleSchema({ exclusiveMinimum: true, minimum: 1 }, "4"), false);
  assert.equal(isSimpleSchema({ exclusiveMinimum: true }, "7"), false);
  assert.equal(isSimpleSchema({ const: 1 }, "4"), false, "no const before draft-06");
  assert.equal(isSimpleSchema({ properties: { a: true } }, "4"), false);
  assert.equal(isSimpleSchema({ items: false }, "4"), false);
  assert.ok(isSimpleSchema({ properties: { a: true } }, "7"));
  assert.ok(isSimpleSchema({ additionalProperties: false }, "4"));
  assert.equal(isSimpleSchema({ properties: { a: { $schema: URLS["7"] } } }, "7"), false);
});

Deno.test("simple schema: keywords outside the subset, and too deep, are not simple", () => {
  const outside: Json[] = [
    { $ref: "#" },
    { $defs: {} },
    { definitions: {} },
    { allOf: [{}] },
    { anyOf: [{}] },
    { oneOf: [{}] },
    { not: {} },
    { if: {}, then: {} },
    { pattern: "^a" },
    { patternProperties: {} },
    { dependentRequired: {} },
    { dependencies: {} },
    { prefixItems: [] },
    { items: [{}] },
    { contains: {} },
    { minProperties: 1 },
    { propertyNames: {} },
    { unevaluatedProperties: false },
    { $id: "x" },
    { id: "x" },
    { nullable: true },
    { type: "any" },
    { type: [] },
    { type: ["string", "string"] },
    { minLength: -1 },
    { minLength: 1.5 },
    { maxItems: "2" },
    { multipleOf: 0 },
    { minimum: "1" },
    { enum: "a" },
    { required: "a" },
    { required: [1] },
    { description: 5 },
    { examples: {} },
    { deprecated: "yes" },
    { properties: { "\ud800": {} } },
    { properties: [] },
    { additionalProperties: "no" },
  ];
  for (const s of outside) {
    assert.equal(isSimpleSchema(s, "2020-12"), false, JSON.stringify(s));
    assert.equal(isSimpleSchema({ properties: { a: { items: s } } }, "2020-12"), false);
    assert.equal(validateSimple(s, {}, "2020-12"), undefined);
  }
  let deep: Json = { type: "string" };
  for (let i = 0; i < MAX_SIMPLE_DEPTH; i++) deep = { properties: { a: deep } };
  assert.ok(isSimpleSchema(deep, "2020-12"));
  assert.equal(isSimpleSchema({ items: deep }, "2020-12"), false);
});

Deno.test("simple schema: instances that are not JSON go to the full validator", () => {
  const s = { properties: { a: { type: "string" } } };
  assert.equal(validateSimple(s, { a: undefined }, "2020-12"), undefined);
  assert.equal(validateSimple(s, { a: 1n }, "2020-12"), undefined);
  assert.deepEqual(validateSimple(s, { b: undefined }, "2020-12"), [], "not looked at");
  // The full validator cannot name a field with a lone surrogate in its error paths.
  const closed = { additionalProperties: false };
  assert.equal(validateSimple(closed, { "\ud800": 1 }, "2020-12"), undefined);
});

Deno.test("validateArguments: simple first, the full validator otherwise, same problems", async () => {
  const s = { type: "object", properties: { a: { type: "number" } }, required: ["a", "b"] };
  assert.deepEqual(await validateArguments(s, { a: "x" }), await validateFully(s, { a: "x" }));
  const rich = { type: "object", properties: { a: { type: "string", pattern: "^x" } } };
  assert.deepEqual(await validateArguments(rich, { a: "y" }), [
    { path: "/a", message: "String does not match pattern." },
  ]);
  await assert.rejects(
    validateArguments({ $schema: "http://json-schema.org/draft-03/schema#" }, {}),
    ArgumentError,
  );
  await assert.rejects(validateArguments({ properties: { a: { $ref: "#/nope" } } }, { a: 1 }), {
    name: "ArgumentError",
    message: /cannot be used for validation/,
  });
});

Deno.test("validateFully: leaf problems as JSON pointers; unknown and forbidden fields", async () => {
  const s = {
    properties: { "a b": { type: "string" }, gone: false },
    additionalProperties: { type: "integer" },
    patternProperties: { "^p": {} },
  };
  assert.deepEqual(await validateFully(s, { "a b": 1, gone: 1, n: 1, m: "x", p: 1 }), [
    { path: "/a b", message: "expected string, got number" },
    { path: "/gone", message: "must not be present" },
    { path: "/m", message: "expected integer, got string" },
  ]);
  const closed = { properties: { x: { additionalProperties: false } }, patternProperties: {} };
  assert.deepEqual(await validateFully(closed, { x: { 'k"/': 1 } }), [
    { path: "/x", message: 'unknown field "k"/"' },
  ]);
  assert.deepEqual(await validateFully({ anyOf: [{ type: ["string", "null"] }] }, 1), [
    { path: "", message: "expected string or null, got number" },
  ]);
});

// ---------------------------------------------------------------------------------------
// Properties against the full validator

const DIALECTS: Dialect[] = ["4", "7", "2019-09", "2020-12"];
const TYPE_NAMES = ["null", "boolean", "object", "array", "number", "integer", "string"];

// Property names: some need pointer escapes or percent-encoding, one is __proto__.
const NAMES = ["a", "b", "c", "a b", "~/x", "é", "😀", "%", "__proto__"];
const nameArb = fc.constantFrom(...NAMES);
const instanceKeyArb = fc.oneof(
  { arbitrary: nameArb, weight: 20 },
  { arbitrary: fc.constant("\ud800"), weight: 1 },
);

const EDGE_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.1,
  0.3,
  0.5,
  1.5,
  2,
  3,
  10,
  1e21,
  -1e21,
  1e300,
  -1e300,
  5e-324,
  Number.MAX_SAFE_INTEGER,
  2 ** 53 + 2,
  1.7976931348623157e308,
];
const numberArb = fc.oneof(
  fc.constantFrom(...EDGE_NUMBERS),
  fc.integer({ min: -20, max: 20 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const divisorArb = fc.oneof(
  fc.constantFrom(0.1, 0.5, 1, 2, 3, 0.01, 1e-7, 2.5, 1e21, 5e-324, 7, 0.3),
  fc.double({ min: 1e-9, max: 1e9, noNaN: true }),
);
const charArb = fc.constantFrom("a", "b", "é", "😀", "𝒳", "\ud800", "\udc00", "~", "/", " ");
const stringArb = fc.string({ unit: charArb, maxLength: 5 });

const leafJson: fc.Arbitrary<unknown> = fc.oneof(
  numberArb,
  stringArb,
  fc.boolean(),
  fc.constant(null),
);
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: leafJson, weight: 6 },
  { arbitrary: fc.array(leafJson, { maxLength: 3 }), weight: 2 },
  {
    arbitrary: fc.dictionary(nameArb, leafJson, { maxKeys: 3 }).map(plain),
    weight: 2,
  },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
);

/** An object with own data properties only, `__proto__` included. */
function plain(o: Record<string, unknown>): Json {
  return Object.fromEntries(Object.entries(o));
}

/** Picks up to `max` of the keyword generators. */
function someOf(entries: Record<string, fc.Arbitrary<unknown>>, max: number): fc.Arbitrary<Json> {
  return fc.shuffledSubarray(Object.keys(entries), { maxLength: max }).chain((keys) =>
    keys.length === 0
      ? fc.constant({})
      : fc.record(Object.fromEntries(keys.map((k) => [k, entries[k]!])))
  );
}

const typeArb: fc.Arbitrary<string | string[]> = fc.oneof(
  fc.constantFrom(...TYPE_NAMES),
  fc.uniqueArray(fc.constantFrom(...TYPE_NAMES), { minLength: 1, maxLength: 3 }),
);

function assertions(dialect: Dialect): Record<string, fc.Arbitrary<unknown>> {
  return {
    type: typeArb,
    enum: fc.array(anyJson, { maxLength: 4 }),
    ...(dialect === "4" ? {} : { const: anyJson }),
    minimum: numberArb,
    maximum: numberArb,
    ...(dialect === "4" ? {} : { exclusiveMinimum: numberArb, exclusiveMaximum: numberArb }),
    multipleOf: divisorArb,
    minLength: fc.nat(4),
    maxLength: fc.nat(4),
    minItems: fc.nat(3),
    maxItems: fc.nat(3),
    uniqueItems: fc.boolean(),
    required: fc.array(nameArb, { maxLength: 3 }),
  };
}

const annotations: Record<string, fc.Arbitrary<unknown>> = {
  title: fc.string(),
  description: fc.string(),
  $comment: fc.string(),
  default: anyJson,
  examples: fc.array(anyJson, { maxLength: 2 }),
  deprecated: fc.boolean(),
  readOnly: fc.boolean(),
  writeOnly: fc.boolean(),
};

const schemaMemo = new Map<string, fc.Arbitrary<Json | boolean>>();

/** A schema in the subset, at most `depth` more levels deep. */
function schemaArb(dialect: Dialect, depth: number): fc.Arbitrary<Json | boolean> {
  const key = `${dialect} ${depth}`;
  const known = schemaMemo.get(key);
  if (known) return known;
  const own = fc.tuple(someOf(assertions(dialect), 3), someOf(annotations, 1)).map(([a, b]) =>
    withFormat({ ...a, ...b })
  );
  const options: fc.Arbitrary<Json | boolean>[] = [own];
  if (depth > 0) {
    const sub = schemaArb(dialect, depth - 1);
    const objectSchema = fc.record({
      own: someOf(assertions(dialect), 1),
      properties: fc.dictionary(nameArb, sub, { maxKeys: 3 }).map(plain),
      required: fc.array(nameArb, { maxLength: 3 }),
      extra: fc.option(fc.oneof(fc.boolean(), sub.filter((s) => typeof s !== "boolean")), {
        nil: undefined,
      }),
      typed: fc.boolean(),
    }).map(({ own, properties, required, extra, typed }) => {
      const s: Json = { ...own, properties, required };
      if (typed) s.type = "object";
      if (extra !== undefined) s.additionalProperties = extra;
      return s;
    });
    const arraySchema = fc.record({
      own: someOf(assertions(dialect), 2),
      items: sub,
      typed: fc.boolean(),
    }).map(({ own, items, typed }) => ({ ...own, items, ...(typed ? { type: "array" } : {}) }));
    options.push(objectSchema, objectSchema, arraySchema);
  }
  if (dialect !== "4") options.push(fc.boolean());
  const arb = fc.oneof(...options);
  schemaMemo.set(key, arb);
  return arb;
}

/** Adds a `format` where `type` rules strings out, as the subset allows. */
function withFormat(s: Json): Json {
  const types = typeof s.type === "string" ? [s.type] : s.type as string[] | undefined;
  if (types && !types.includes("string") && types.length % 2 === 1) {
    return { ...s, format: types.length === 1 ? "date-time" : "int32" };
  }
  return s;
}

/** A root schema (an object) and its dialect, `$schema` set or, for 2020-12, maybe not. */
const rootArb: fc.Arbitrary<{ dialect: Dialect; schema: Json }> = fc.constantFrom(...DIALECTS)
  .chain((dialect) =>
    fc.tuple(
      schemaArb(dialect, 3).filter((s): s is Json => typeof s !== "boolean"),
      fc.boolean(),
    ).map(([schema, named]) => ({
      dialect,
      schema: named || dialect !== "2020-12" ? { $schema: URLS[dialect], ...schema } : schema,
    }))
  );

const MISSING = Symbol("missing");

/** Instances near `schema`: often valid, often just off (bounds, types, fields). */
function instanceArb(schema: Json | boolean, depth = 0): fc.Arbitrary<unknown> {
  if (typeof schema === "boolean" || depth > 4) return anyJson;
  const types = typeof schema.type === "string"
    ? [schema.type]
    : (schema.type as string[] | undefined) ?? TYPE_NAMES;
  const options: fc.Arbitrary<unknown>[] = [anyJson];
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    options.push(fc.constantFrom(...schema.enum));
  }
  if ("const" in schema) options.push(fc.constant(schema.const));
  for (const t of types) options.push(valueOfType(t, schema, depth), valueOfType(t, schema, depth));
  return fc.oneof(...options);
}

function valueOfType(type: string, s: Json, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "number":
    case "integer":
      return numbersNear(s);
    case "string": {
      const min = (s.minLength as number | undefined) ?? 0;
      const max = (s.maxLength as number | undefined) ?? min + 3;
      const from = Math.max(0, min - 1);
      return fc.string({ unit: charArb, minLength: from, maxLength: Math.max(from, max + 1) });
    }
    case "array": {
      const items = s.items === undefined ? anyJson : instanceArb(s.items as Json, depth + 1);
      const max = ((s.maxItems as number | undefined) ?? 3) + 1;
      return fc.tuple(fc.array(items, { maxLength: max }), fc.boolean()).map(([a, dup]) =>
        dup && a.length > 0 ? [...a, reordered(a[0])] : a
      );
    }
    default:
      return objectsFor(s, depth);
  }
}

function numbersNear(s: Json): fc.Arbitrary<number> {
  const anchors = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
    .map((k) => s[k])
    .filter((v): v is number => typeof v === "number");
  const options: fc.Arbitrary<number>[] = [numberArb];
  if (anchors.length > 0) {
    options.push(
      fc.tuple(fc.constantFrom(...anchors), fc.constantFrom(0, 1, -1, 0.5, -0.5)).map(([a, d]) =>
        a + d
      ),
    );
  }
  const m = s.multipleOf;
  if (typeof m === "number") {
    options.push(
      fc.integer({ min: -50, max: 50 }).map((k) => k * m),
      fc.integer({ min: -50, max: 50 }).map((k) => Number((k * m).toPrecision(12))),
    );
  }
  return fc.oneof(...options);
}

function objectsFor(s: Json, depth: number): fc.Arbitrary<unknown> {
  const properties = (s.properties ?? {}) as Record<string, Json | boolean>;
  const names = Object.keys(properties);
  const extra = s.additionalProperties;
  const extraValue = typeof extra === "object" && extra !== null
    ? fc.oneof(instanceArb(extra as Json, depth + 1), anyJson)
    : anyJson;
  // Rarely a value that is not JSON, which the full validator throws on.
  const oddValue = fc.oneof({ arbitrary: extraValue, weight: 30 }, {
    arbitrary: fc.constant(undefined),
    weight: 1,
  });
  return fc.record({
    present: fc.tuple(
      ...names.map((n) => fc.option(instanceArb(properties[n]!, depth + 1), { nil: MISSING })),
    ),
    extras: fc.array(fc.tuple(instanceKeyArb, oddValue), { maxLength: 2 }),
  }).map(({ present, extras }) => {
    const entries: [string, unknown][] = [...extras];
    names.forEach((n, i) => {
      if (present[i] !== MISSING) entries.push([n, present[i]]);
    });
    return Object.fromEntries(entries);
  });
}

/** A deep copy of `v` with object keys in reverse order (still equal as JSON). */
function reordered(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reordered);
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).reverse().map(([k, e]) => [k, reordered(e)]));
  }
  return v;
}

function pathSet(problems: ArgumentProblem[]): string[] {
  return [...new Set(problems.map((p) => p.path))].sort();
}

Deno.test("simple schema property: same verdict and failing paths as cfworker", async () => {
  const schemaAndInstance = rootArb.chain(({ dialect, schema }) =>
    instanceArb(schema).map((instance) => ({ dialect, schema, instance }))
  );
  let valid = 0;
  let invalid = 0;
  await fc.assert(
    fc.asyncProperty(schemaAndInstance, async ({ dialect, schema, instance }) => {
      assert.ok(isSimpleSchema(schema, dialect));
      const mine = validateSimple(schema, instance, dialect);
      let expected: boolean | undefined;
      try {
        expected = cfworkerValid(schema, instance, dialect);
      } catch {
        expected = undefined;
      }
      if (mine === undefined || expected === undefined) {
        // Declined exactly when the full validator cannot judge the instance.
        assert.equal(mine, undefined, "cfworker threw, the simple validator did not decline");
        assert.equal(expected, undefined, "declined an instance cfworker judges");
        return;
      }
      assert.equal(mine.length === 0, expected, "verdict");
      assert.deepEqual(pathSet(mine), pathSet(await validateFully(schema, instance)), "paths");
      if (expected) valid++;
      else invalid++;
    }),
    { numRuns: 3000 },
  );
  // The generators must reach both verdicts often enough to mean something.
  assert.ok(valid > 300 && invalid > 300, `valid ${valid}, invalid ${invalid}`);
});

// Patches that put a schema outside the subset, wherever they land.
const OUTSIDE: Json[] = [
  { $ref: "#" },
  { $defs: { a: {} } },
  { allOf: [{}] },
  { anyOf: [{}] },
  { oneOf: [{}] },
  { not: {} },
  { if: {} },
  { then: {} },
  { else: {} },
  { pattern: "a" },
  { patternProperties: {} },
  { dependentRequired: {} },
  { dependentSchemas: {} },
  { prefixItems: [] },
  { items: [{}] },
  { additionalItems: false },
  { contains: {} },
  { maxProperties: 2 },
  { unevaluatedItems: false },
  { $anchor: "a" },
  { nullable: true },
  { type: "file" },
  { minItems: -1 },
  { maxLength: 0.5 },
  { multipleOf: -2 },
  { maximum: null },
  { exclusiveMaximum: false },
  { required: [null] },
  { enum: {} },
  { type: "string", format: "email" },
  { $schema: URLS["2020-12"] },
  { title: null },
];

function objectNodes(s: Json, out: Json[] = []): Json[] {
  out.push(s);
  for (const sub of Object.values((s.properties ?? {}) as Record<string, unknown>)) {
    if (typeof sub === "object" && sub !== null) objectNodes(sub as Json, out);
  }
  for (const k of ["items", "additionalProperties"]) {
    const sub = s[k];
    if (typeof sub === "object" && sub !== null) objectNodes(sub as Json, out);
  }
  return out;
}

Deno.test("simple schema property: a schema with anything outside the subset is not simple", () => {
  fc.assert(
    fc.property(rootArb, fc.constantFrom(...OUTSIDE), fc.nat(), ({ dialect, schema }, patch, n) => {
      const copy = structuredClone(schema);
      let nodes = objectNodes(copy);
      if ("$schema" in patch) {
        // $schema is allowed at the root, so it goes at least one level down.
        copy.properties = { ...copy.properties as Json, below: {} };
        nodes = objectNodes(copy).slice(1);
      }
      Object.assign(nodes[n % nodes.length]!, patch);
      assert.equal(isSimpleSchema(copy, dialect), false, JSON.stringify(copy));
    }),
    { numRuns: 1000 },
  );
});
