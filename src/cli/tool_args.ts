/**
 * Tool arguments from the command line, read according to the tool's `inputSchema`:
 *
 * - `key=value`: typed by the schema (a string field stays a string even when it looks
 *   like a number; number/integer/boolean parsed; array/object fields take JSON; a
 *   scalar for an array field is wrapped; no schema type: JSON if it parses, else string)
 * - `key:=JSON`: raw JSON; `key:=@file.json` JSON read from a file
 * - `key=@path`: the file's contents as a string; `key=@@x` is the literal `@x`
 * - dotted keys build nested objects: `filter.limit=5`
 * - a key given twice for an array field collects both values
 *
 * @module
 */

import { ArgumentError } from "../errors.ts";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Schema = Record<string, unknown>;

/** Reads files for `@path` values (injected in tests). */
export type ReadText = (path: string) => Promise<string>;

/**
 * Parses `key=value` pairs into an arguments object, typed by `schema`.
 *
 * @example
 * ```ts
 * import { parseToolArgs } from "./tool_args.ts";
 * const schema = { type: "object", properties: { ts: { type: "string" }, n: { type: "integer" } } };
 * await parseToolArgs(["ts=1712345678.000100", "n=5"], schema);
 * // { ts: "1712345678.000100", n: 5 }
 * ```
 */
export async function parseToolArgs(
  pairs: readonly string[],
  schema: Schema | undefined,
  options: { base?: Record<string, unknown>; readText?: ReadText } = {},
): Promise<Record<string, unknown>> {
  const readText = options.readText ?? ((p: string) => Deno.readTextFile(p));
  const out: Record<string, unknown> = structuredClone(options.base ?? {});
  const given = new Set<string>();
  for (const pair of pairs) {
    const { path, raw, value } = splitPair(pair, schema);
    const field = schemaAt(schema, path);
    let parsed: unknown;
    if (raw) {
      const text = value.startsWith("@") && !value.startsWith("@@")
        ? await readFile(value.slice(1), pair, readText)
        : value.startsWith("@@")
        ? value.slice(1)
        : value;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new ArgumentError(`${path.join(".")}: value after ':=' is not valid JSON`);
      }
    } else {
      const text = value.startsWith("@@")
        ? value.slice(1)
        : value.startsWith("@")
        ? await readFile(value.slice(1), pair, readText)
        : value;
      parsed = coerce(text, field, path);
    }
    const key = path.join("\u0000");
    const existing = getPath(out, path);
    if (given.has(key) && types(field).includes("array")) {
      const list = Array.isArray(existing) ? existing : [existing];
      parsed = [...list, ...(Array.isArray(parsed) ? parsed : [parsed])];
    }
    given.add(key);
    setPath(out, path, parsed);
  }
  return out;
}

function splitPair(pair: string, schema: Schema | undefined) {
  const eq = pair.indexOf("=");
  if (eq <= 0) {
    throw new ArgumentError(
      `argument ${JSON.stringify(pair)} is not key=value, key:=JSON or key=@file`,
    );
  }
  const raw = pair[eq - 1] === ":";
  const key = pair.slice(0, raw ? eq - 1 : eq);
  if (key === "") throw new ArgumentError(`argument ${JSON.stringify(pair)} has an empty key`);
  const props = properties(schema);
  // A property whose own name has dots wins over nesting.
  const path = props && key in props ? [key] : key.split(".");
  if (path.some((p) => p === "")) {
    throw new ArgumentError(`argument key ${JSON.stringify(key)} has an empty segment`);
  }
  for (const p of path) {
    if (p === "__proto__" || p === "constructor" || p === "prototype") {
      throw new ArgumentError(`argument key ${JSON.stringify(key)} is not allowed`);
    }
  }
  return { path, raw, value: pair.slice(eq + 1) };
}

async function readFile(path: string, pair: string, readText: ReadText): Promise<string> {
  try {
    return await readText(path);
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
    throw new ArgumentError(`${pair.slice(0, pair.indexOf("="))}: cannot read ${path}: ${why}`);
  }
}

/** The declared types of a schema node (`type` string or list; `const`/`enum` inferred). */
function types(schema: Schema | undefined): string[] {
  if (!schema) return [];
  const t = schema.type;
  if (typeof t === "string") return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === "string");
  const alts = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(alts)) {
    return [...new Set(alts.flatMap((a) => types(isSchema(a) ? a : undefined)))];
  }
  return [];
}

function coerce(text: string, schema: Schema | undefined, path: string[]): unknown {
  const ts = types(schema);
  const name = path.join(".");
  if (ts.length === 0) return jsonOrString(text);
  if (ts.length === 1 || !ts.includes("string")) {
    for (const t of ts) {
      const v = coerceTo(t, text, schema);
      if (v !== NO) return v;
    }
    if (ts.length === 1) {
      // Leave it as a string: validation names the field and the expected type.
      return text;
    }
    throw new ArgumentError(`${name}: ${JSON.stringify(text)} is not a ${ts.join(" or ")}`);
  }
  // The field accepts a string: only take JSON when it is clearly another allowed type.
  const parsed = jsonOrString(text);
  return typeof parsed !== "string" && ts.includes(jsonType(parsed)) ? parsed : text;
}

const NO = Symbol("no");

function coerceTo(type: string, text: string, schema: Schema | undefined): unknown {
  switch (type) {
    case "string":
      return text;
    case "number": {
      const n = Number(text);
      return text.trim() !== "" && Number.isFinite(n) ? n : NO;
    }
    case "integer": {
      const n = Number(text);
      return text.trim() !== "" && Number.isInteger(n) ? n : NO;
    }
    case "boolean":
      return text === "true" ? true : text === "false" ? false : NO;
    case "null":
      return text === "null" ? null : NO;
    case "array": {
      const trimmed = text.trim();
      if (trimmed.startsWith("[")) {
        try {
          return JSON.parse(trimmed);
        } catch { /* fall through: wrap as a scalar */ }
      }
      const items = schema && isSchema(schema.items) ? schema.items : undefined;
      return [coerce(text, items, [])];
    }
    case "object": {
      try {
        const v = JSON.parse(text);
        return v !== null && typeof v === "object" && !Array.isArray(v) ? v : NO;
      } catch {
        return NO;
      }
    }
  }
  return NO;
}

function jsonType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function jsonOrString(text: string): Json {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function isSchema(v: unknown): v is Schema {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function properties(schema: Schema | undefined): Record<string, unknown> | undefined {
  return schema && isSchema(schema.properties) ? schema.properties : undefined;
}

/** Follows `properties` (and local `$ref`s, a bounded number of times) down `path`. */
function schemaAt(root: Schema | undefined, path: string[]): Schema | undefined {
  let node = root;
  for (const key of path) {
    node = deref(root, node);
    const props = properties(node);
    const next = props?.[key];
    node = isSchema(next) ? next : undefined;
    if (!node) return undefined;
  }
  return deref(root, node);
}

function deref(root: Schema | undefined, node: Schema | undefined): Schema | undefined {
  let cur = node;
  for (let i = 0; i < 8 && cur && typeof cur.$ref === "string"; i++) {
    const ref = cur.$ref as string;
    if (!ref.startsWith("#/")) return cur;
    let target: unknown = root;
    for (const part of ref.slice(2).split("/")) {
      const key = part.replaceAll("~1", "/").replaceAll("~0", "~");
      target = isSchema(target) ? target[key] : undefined;
    }
    cur = isSchema(target) ? target : undefined;
  }
  return cur;
}

function getPath(obj: Record<string, unknown>, path: string[]): unknown {
  let cur: unknown = obj;
  for (const k of path) cur = isSchema(cur) ? cur[k] : undefined;
  return cur;
}

function setPath(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let cur = obj;
  for (const k of path.slice(0, -1)) {
    const next = cur[k];
    if (!isSchema(next)) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[path.at(-1)!] = value;
}
