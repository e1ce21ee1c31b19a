/**
 * One-line signatures of tools, read from their input schemas:
 * `read_file(path: string, [limit: integer])`. Optional parameters are in brackets;
 * types come from the schema (`string[]`, `"a"|"b"`, `integer|null`, `object`).
 * Names and types are server-supplied: callers strip terminal escapes before showing them.
 *
 * @module
 */

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Longest type text before it is shortened with `…`. */
const MAX_TYPE_CHARS = 40;

/**
 * The signature of a tool.
 *
 * @example
 * ```ts
 * import { toolSignature } from "./signature.ts";
 * toolSignature("read_file", {
 *   type: "object",
 *   properties: { path: { type: "string" }, limit: { type: "integer" } },
 *   required: ["path"],
 * }); // "read_file(path: string, [limit: integer])"
 * ```
 */
export function toolSignature(name: string, inputSchema: Json | undefined): string {
  if (!inputSchema) return `${name}(…)`;
  const properties = isObject(inputSchema.properties) ? inputSchema.properties : {};
  const required = new Set(
    Array.isArray(inputSchema.required)
      ? inputSchema.required.filter((x): x is string => typeof x === "string")
      : [],
  );
  const params = Object.entries(properties).map(([key, schema]) => {
    const text = `${key}: ${typeOf(inputSchema, schema, 0)}`;
    return required.has(key) ? text : `[${text}]`;
  });
  const more = inputSchema.additionalProperties;
  if (isObject(more) || more === true) params.push("[…]");
  return `${name}(${params.join(", ")})`;
}

/** A short type name for one property schema. */
export function typeOf(root: Json, schema: unknown, depth: number): string {
  const text = typeText(root, schema, depth);
  return text.length > MAX_TYPE_CHARS ? text.slice(0, MAX_TYPE_CHARS - 1) + "…" : text;
}

function typeText(root: Json, schema: unknown, depth: number): string {
  if (schema === true || schema === undefined) return "any";
  if (schema === false) return "never";
  if (!isObject(schema) || depth > 4) return "any";
  if (typeof schema.$ref === "string" && Object.keys(schema).length === 1) {
    const target = resolvePointer(root, schema.$ref);
    if (target !== undefined) return typeText(root, target, depth + 1);
    return schema.$ref.split("/").pop() || "any";
  }
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum.map(literal).join("|");
  }
  for (const key of ["anyOf", "oneOf"]) {
    const list = schema[key];
    if (Array.isArray(list) && list.length > 0) {
      return unique(list.map((s) => typeText(root, s, depth + 1))).join("|");
    }
  }
  const types = Array.isArray(schema.type)
    ? schema.type.filter((t): t is string => typeof t === "string")
    : typeof schema.type === "string"
    ? [schema.type]
    : [];
  if (types.length === 0) {
    if (isObject(schema.properties)) return "object";
    if (schema.items !== undefined) return `${typeText(root, schema.items, depth + 1)}[]`;
    return "any";
  }
  return unique(types.map((t) => {
    if (t === "array") {
      const items = Array.isArray(schema.items) ? undefined : schema.items;
      if (items === undefined) return "array";
      const inner = typeText(root, items, depth + 1);
      return inner.includes("|") ? `(${inner})[]` : `${inner}[]`;
    }
    return t;
  })).join("|");
}

function literal(v: unknown): string {
  return JSON.stringify(v) ?? "null";
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}

function resolvePointer(root: Json, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const part = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (!isObject(node) || !Object.hasOwn(node, part)) return undefined;
    node = node[part];
  }
  return node;
}
