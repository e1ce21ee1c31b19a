/**
 * Argument validation without a library, for the schemas most tools send: flat or lightly
 * nested objects of typed fields with `required`, `enum` and bounds. Importing any npm
 * package boots Deno's Node compatibility layer (~14 ms and ~2 MB per `call`), so the full
 * validator is loaded only for schemas outside this subset.
 *
 * The subset (anything else, at any depth, is "not simple"):
 *
 * - assertions: `type` (a name or a non-empty array of distinct names), `enum`, `const`,
 *   `required`, `properties`, `additionalProperties` (a boolean or a subset schema),
 *   `items` (one schema, not the tuple form), `minItems`, `maxItems`, `uniqueItems`,
 *   `minLength`, `maxLength`, `minimum`, `maximum`, `multipleOf`, and the number forms of
 *   `exclusiveMinimum` / `exclusiveMaximum`; in draft-04 neither those two (booleans there)
 *   nor `const` (not a keyword yet);
 * - annotations: `title`, `description`, `$comment`, `default`, `examples`, `deprecated`,
 *   `readOnly`, `writeOnly`, `$schema` at the root, and `format` only where `type` rules
 *   out strings (the full validator asserts `format` on strings);
 * - boolean subschemas (not in draft-04); at most {@linkcode MAX_SIMPLE_DEPTH} levels.
 *
 * Within it, the verdict and the failing paths are those of the full validator (checked by
 * a property test against it): `integer` accepts `1.0`, string lengths count code points,
 * and `multipleOf` works on the decimal digits the number is sent with.
 *
 * @module
 */

/** JSON Schema dialects mcpctl validates against. */
export type Dialect = "4" | "7" | "2019-09" | "2020-12";

/** One problem found in the arguments. */
export interface ArgumentProblem {
  /** JSON pointer to the field, e.g. `/filter/limit` (empty for the whole object). */
  path: string;
  /** What is wrong, for a person: `expected number, got string`. */
  message: string;
}

/** Deepest nesting of subschemas taken by the simple validator. */
export const MAX_SIMPLE_DEPTH = 16;

// Deeper than this, equality checks (enum, const, uniqueItems) leave it to the full validator.
const MAX_VALUE_DEPTH = 64;

type Json = Record<string, unknown>;

const TYPE_NAMES = new Set(["null", "boolean", "object", "array", "number", "integer", "string"]);

const ANNOTATION_STRINGS = new Set(["title", "description", "$comment"]);
const ANNOTATION_BOOLEANS = new Set(["deprecated", "readOnly", "writeOnly"]);
const COUNTS = new Set(["minLength", "maxLength", "minItems", "maxItems"]);

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Whether `schema` lies in the subset described in the module doc.
 *
 * @param schema the tool's `inputSchema`
 * @param dialect its dialect, from `dialectOf` in `schema_validate.ts` (which also vets `$schema`)
 *
 * @example
 * ```ts
 * import { isSimpleSchema } from "./simple_schema.ts";
 * isSimpleSchema({ type: "object", properties: { a: { type: "string" } } }, "2020-12"); // true
 * isSimpleSchema({ type: "object", properties: { a: { pattern: "^x" } } }, "2020-12"); // false
 * ```
 */
export function isSimpleSchema(schema: unknown, dialect: Dialect): boolean {
  return isObject(schema) && simpleObject(schema, dialect, 0);
}

function simpleSubschema(s: unknown, dialect: Dialect, depth: number): boolean {
  // Boolean schemas arrived with draft-06.
  if (typeof s === "boolean") return dialect !== "4";
  return isObject(s) && simpleObject(s, dialect, depth);
}

function simpleObject(s: Json, dialect: Dialect, depth: number): boolean {
  if (depth > MAX_SIMPLE_DEPTH) return false;
  for (const key of Object.keys(s)) {
    const v = s[key];
    if (ANNOTATION_STRINGS.has(key)) {
      if (typeof v !== "string") return false;
    } else if (ANNOTATION_BOOLEANS.has(key)) {
      if (typeof v !== "boolean") return false;
    } else if (COUNTS.has(key)) {
      if (!Number.isInteger(v) || (v as number) < 0) return false;
    } else if (!simpleKeyword(key, v, s, dialect, depth)) {
      return false;
    }
  }
  return true;
}

function simpleKeyword(
  key: string,
  v: unknown,
  s: Json,
  dialect: Dialect,
  depth: number,
): boolean {
  switch (key) {
    case "type":
      return typeNames(v) !== undefined;
    case "properties":
      if (!isObject(v)) return false;
      for (const name of Object.keys(v)) {
        // The full validator puts names into URI fragments, which fails on lone surrogates.
        if (!name.isWellFormed() || !simpleSubschema(v[name], dialect, depth + 1)) return false;
      }
      return true;
    case "additionalProperties":
    case "items":
      return simpleSubschema(v, dialect, depth + 1) ||
        (key === "additionalProperties" && typeof v === "boolean");
    case "required":
      return Array.isArray(v) && v.every((name) => typeof name === "string");
    case "enum":
      return Array.isArray(v) && v.every((e) => isJsonValue(e, 0));
    case "const":
      // Not a draft-04 keyword (a strict validator ignores it; cfworker asserts it).
      return dialect !== "4" && isJsonValue(v, 0);
    case "minimum":
    case "maximum":
      return Number.isFinite(v);
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      // Draft-04 spells these as booleans beside minimum/maximum.
      return dialect !== "4" && Number.isFinite(v);
    case "multipleOf":
      return Number.isFinite(v) && (v as number) > 0;
    case "uniqueItems":
      return typeof v === "boolean";
    case "format": {
      // An assertion on strings in the full validator; harmless only where strings fail `type`.
      const types = typeNames(s.type);
      return typeof v === "string" && types !== undefined && !types.includes("string");
    }
    case "default":
      return true;
    case "examples":
      return Array.isArray(v);
    case "$schema":
      return depth === 0 && typeof v === "string";
    default:
      return false;
  }
}

function typeNames(v: unknown): string[] | undefined {
  if (typeof v === "string") return TYPE_NAMES.has(v) ? [v] : undefined;
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const seen = new Set<unknown>();
  for (const t of v) {
    if (typeof t !== "string" || !TYPE_NAMES.has(t) || seen.has(t)) return undefined;
    seen.add(t);
  }
  return v as string[];
}

function isJsonValue(v: unknown, depth: number): boolean {
  if (depth > MAX_VALUE_DEPTH) return false;
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.every((e) => isJsonValue(e, depth + 1));
  if (isObject(v)) return Object.values(v).every((e) => isJsonValue(e, depth + 1));
  return false;
}

/** Thrown inside the walk when an instance is one the full validator should judge. */
class NotSimple extends Error {}

/**
 * Validates `instance` against `schema` if the schema is simple: the problems (empty when
 * valid), or `undefined` when the full validator must decide (a schema outside the subset,
 * or an instance holding something other than JSON).
 *
 * @param schema the tool's `inputSchema`
 * @param instance the arguments
 * @param dialect the schema's dialect, from `dialectOf` in `schema_validate.ts`
 *
 * @example
 * ```ts
 * import { validateSimple } from "./simple_schema.ts";
 * const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
 * validateSimple(schema, { n: 1.5 }, "2020-12");
 * // [{ path: "/n", message: "expected integer, got number" }]
 * ```
 */
export function validateSimple(
  schema: Record<string, unknown>,
  instance: unknown,
  dialect: Dialect,
): ArgumentProblem[] | undefined {
  if (!isSimpleSchema(schema, dialect)) return undefined;
  const problems = new Map<string, ArgumentProblem>();
  try {
    check(instance, schema, "", problems);
  } catch (e) {
    if (e instanceof NotSimple) return undefined;
    throw e;
  }
  return [...problems.values()];
}

type Problems = Map<string, ArgumentProblem>;

function report(problems: Problems, path: string, message: string): void {
  problems.set(`${path} ${message}`, { path, message });
}

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  const t = typeof v;
  if (t === "object" || t === "number" || t === "string" || t === "boolean") return t;
  // undefined, bigint, function, symbol: not JSON, and the full validator throws on them.
  throw new NotSimple();
}

function pointer(path: string, key: string): string {
  return `${path}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
}

function check(value: unknown, schema: Json | boolean, path: string, problems: Problems): void {
  if (schema === true) return;
  if (schema === false) {
    report(problems, path, "must not be present");
    return;
  }
  const kind = kindOf(value);
  const types = typeNames(schema.type);
  if (types && !types.some((t) => t === kind || (t === "integer" && Number.isInteger(value)))) {
    report(problems, path, `expected ${types.join(" or ")}, got ${kind}`);
  }
  if (Object.hasOwn(schema, "const") && !equal(value, schema.const, 0)) {
    report(problems, path, `must be ${JSON.stringify(schema.const)}`);
  }
  const choices = schema.enum as unknown[] | undefined;
  if (choices && !choices.some((c) => equal(value, c, 0))) {
    report(problems, path, `must be one of ${listed(choices)}`);
  }
  if (kind === "object") checkObject(value as Json, schema, path, problems);
  else if (kind === "array") checkArray(value as unknown[], schema, path, problems);
  else if (kind === "number") checkNumber(value as number, schema, path, problems);
  else if (kind === "string") checkString(value as string, schema, path, problems);
}

function listed(values: unknown[]): string {
  const shown = values.slice(0, 12).map((v) => JSON.stringify(v));
  return shown.join(", ") + (values.length > shown.length ? ", …" : "");
}

function checkObject(value: Json, schema: Json, path: string, problems: Problems): void {
  for (const name of (schema.required as string[] | undefined) ?? []) {
    if (!Object.hasOwn(value, name)) report(problems, path, `missing required field "${name}"`);
  }
  const properties = schema.properties as Record<string, Json | boolean> | undefined;
  if (properties) {
    for (const name of Object.keys(properties)) {
      if (Object.hasOwn(value, name)) {
        check(value[name], properties[name]!, pointer(path, name), problems);
      }
    }
  }
  const extra = schema.additionalProperties as Json | boolean | undefined;
  if (extra === undefined) return;
  for (const name of Object.keys(value)) {
    if (properties && Object.hasOwn(properties, name)) continue;
    // The full validator makes a URI fragment of every such name; a lone surrogate throws.
    if (!name.isWellFormed()) throw new NotSimple();
    if (extra === false) report(problems, path, `unknown field "${name}"`);
    else check(value[name], extra, pointer(path, name), problems);
  }
}

function checkArray(value: unknown[], schema: Json, path: string, problems: Problems): void {
  const { maxItems, minItems, items } = schema as {
    maxItems?: number;
    minItems?: number;
    items?: Json | boolean;
  };
  if (maxItems !== undefined && value.length > maxItems) {
    report(problems, path, `must have at most ${maxItems} items (has ${value.length})`);
  }
  if (minItems !== undefined && value.length < minItems) {
    report(problems, path, `must have at least ${minItems} items (has ${value.length})`);
  }
  if (items !== undefined) {
    for (let i = 0; i < value.length; i++) check(value[i], items, `${path}/${i}`, problems);
  }
  if (schema.uniqueItems === true) {
    const pair = firstDuplicate(value);
    if (pair) {
      report(problems, path, `items must be unique (items ${pair[0]} and ${pair[1]} are equal)`);
    }
  }
}

function firstDuplicate(value: unknown[]): [number, number] | undefined {
  for (let i = 0; i < value.length; i++) {
    for (let j = i + 1; j < value.length; j++) {
      if (equal(value[i], value[j], 0)) return [i, j];
    }
  }
  return undefined;
}

/** JSON equality: numbers by value (so `1` equals `1.0`), objects regardless of key order. */
function equal(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (depth > MAX_VALUE_DEPTH) throw new NotSimple();
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((e, i) => equal(e, b[i], depth + 1));
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && equal((a as Json)[k], (b as Json)[k], depth + 1));
}

function checkNumber(value: number, schema: Json, path: string, problems: Problems): void {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = schema as Record<
    string,
    number | undefined
  >;
  if (minimum !== undefined && value < minimum) {
    report(problems, path, `must be >= ${minimum} (got ${value})`);
  }
  if (maximum !== undefined && value > maximum) {
    report(problems, path, `must be <= ${maximum} (got ${value})`);
  }
  if (exclusiveMinimum !== undefined && value <= exclusiveMinimum) {
    report(problems, path, `must be > ${exclusiveMinimum} (got ${value})`);
  }
  if (exclusiveMaximum !== undefined && value >= exclusiveMaximum) {
    report(problems, path, `must be < ${exclusiveMaximum} (got ${value})`);
  }
  if (multipleOf !== undefined && !isMultipleOf(value, multipleOf)) {
    report(problems, path, `must be a multiple of ${multipleOf} (got ${value})`);
  }
}

/**
 * Whether `value` is an integer multiple of `divisor` (finite, > 0), read as the decimal
 * numbers they are sent as: 0.3 is a multiple of 0.1 here, though not in binary floating point.
 */
function isMultipleOf(value: number, divisor: number): boolean {
  if (!Number.isFinite(value)) return false;
  const [v, ve] = decimal(value);
  const [d, de] = decimal(divisor);
  const e = Math.min(ve, de);
  return (v * 10n ** BigInt(ve - e)) % (d * 10n ** BigInt(de - e)) === 0n;
}

/** `|n|` as `digits × 10^exponent`, from the shortest digits that read back as `n`. */
function decimal(n: number): [bigint, number] {
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(Math.abs(n).toString());
  if (!m) throw new NotSimple();
  const fraction = m[2] ?? "";
  return [BigInt(m[1]! + fraction), Number(m[3] ?? 0) - fraction.length];
}

function checkString(value: string, schema: Json, path: string, problems: Problems): void {
  const { minLength, maxLength } = schema as Record<string, number | undefined>;
  if (minLength === undefined && maxLength === undefined) return;
  const length = codePoints(value);
  if (minLength !== undefined && length < minLength) {
    report(problems, path, `must be at least ${minLength} characters long (has ${length})`);
  }
  if (maxLength !== undefined && length > maxLength) {
    report(problems, path, `must be at most ${maxLength} characters long (has ${length})`);
  }
}

/** Length in code points: a surrogate pair counts once, a lone surrogate once. */
function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
  }
  return n;
}
