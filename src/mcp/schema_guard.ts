/**
 * The border guard for JSON Schemas that servers send (`inputSchema`, `outputSchema`):
 * before a schema is shown to a person or handed to an agent, it is checked to be
 * something a validator can use. A schema that is not, is dropped whole and the reason
 * said, so nobody relies on a schema that cannot hold.
 *
 * Dropped: a schema that is not a JSON object, or whose `type` is not `"object"`; one
 * nested deeper than {@linkcode MAX_SCHEMA_DEPTH} or larger than
 * {@linkcode MAX_SCHEMA_CHARS} serialized; a `$ref` to anything outside the document
 * (another URL or file); a `$ref` that resolves to nothing; and a `$ref` cycle: references
 * (and in-place applicators such as `allOf`) that lead back to the same schema for the
 * same value, which no validator can ever finish. Recursion through subschemas (a tree
 * node whose `children` items refer back to the node) is valid JSON Schema and is kept.
 *
 * @module
 */

/** Deepest nesting of objects and arrays kept. */
export const MAX_SCHEMA_DEPTH = 32;

/** Largest schema kept, in characters of its compact JSON form. */
export const MAX_SCHEMA_CHARS = 100_000;

/** The outcome of guarding one schema: the schema, or why it was dropped. */
export type GuardedSchema =
  | { schema: Record<string, unknown>; dropped?: undefined }
  | { schema?: undefined; dropped: string };

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Checks one schema as described in the module doc.
 *
 * @example
 * ```ts
 * import { guardSchema } from "./schema_guard.ts";
 * guardSchema({ type: "object", properties: { a: { type: "string" } } }).schema; // kept
 * guardSchema({ $ref: "https://example.com/s.json" }).dropped;
 * // "$ref to an external document (https://example.com/s.json)"
 * ```
 */
export function guardSchema(schema: unknown): GuardedSchema {
  if (!isObject(schema)) {
    return { dropped: `not a JSON object (${schema === null ? "null" : kindOf(schema)})` };
  }
  if (schema.type !== undefined && schema.type !== "object") {
    return { dropped: `not an object schema (type ${short(JSON.stringify(schema.type))})` };
  }
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch {
    return { dropped: "cannot be serialized as JSON" };
  }
  if (text.length > MAX_SCHEMA_CHARS) {
    return { dropped: `too large (${text.length} characters, over ${MAX_SCHEMA_CHARS})` };
  }
  const refs: string[] = [];
  const anchors = new Map<string, Json>();
  const depth = walk(schema, 1, refs, anchors);
  if (depth > MAX_SCHEMA_DEPTH) {
    return { dropped: `nested too deep (over ${MAX_SCHEMA_DEPTH} levels)` };
  }
  for (const ref of refs) {
    if (!ref.startsWith("#")) return { dropped: `$ref to an external document (${short(ref)})` };
    if (resolveLocal(schema, ref, anchors) === undefined) {
      return { dropped: `$ref to nothing (${short(ref)})` };
    }
  }
  const cycle = findRefCycle(schema, anchors);
  if (cycle) {
    const loop = cycle.length > 0 ? ` (${[...cycle, cycle[0]!].map(short).join(" → ")})` : "";
    return { dropped: `$ref cycle${loop}` };
  }
  return { schema };
}

const REF_KEYS = ["$ref", "$dynamicRef", "$recursiveRef"];

/** Records every reference and anchor; returns the deepest level reached. */
function walk(node: unknown, level: number, refs: string[], anchors: Map<string, Json>): number {
  if (level > MAX_SCHEMA_DEPTH) return level;
  if (Array.isArray(node)) {
    let max = level;
    for (const x of node) max = Math.max(max, walk(x, level + 1, refs, anchors));
    return max;
  }
  if (!isObject(node)) return level - 1;
  let max = level;
  for (const [key, value] of Object.entries(node)) {
    if (REF_KEYS.includes(key) && typeof value === "string") refs.push(value);
    if ((key === "$anchor" || key === "$dynamicAnchor") && typeof value === "string") {
      anchors.set(value, node);
    }
    // Values under `const`, `enum`, `default` and `examples` are data, not schemas.
    if (["const", "enum", "default", "examples"].includes(key)) continue;
    max = Math.max(max, walk(value, level + 1, refs, anchors));
  }
  return max;
}

/**
 * The subschemas a validator applies to the same instance as `node` (references and
 * in-place applicators). A cycle along these never reaches a deeper part of the
 * instance, so it never ends.
 */
function inPlace(root: Json, node: Json, anchors: Map<string, Json>): [string, Json][] {
  const out: [string, Json][] = [];
  for (const key of REF_KEYS) {
    const ref = node[key];
    if (typeof ref !== "string") continue;
    const target = resolveLocal(root, ref, anchors);
    if (isObject(target)) out.push([ref, target]);
  }
  for (const key of ["allOf", "anyOf", "oneOf"]) {
    const list = node[key];
    if (Array.isArray(list)) { for (const x of list) if (isObject(x)) out.push(["", x]); }
  }
  for (const key of ["not", "if", "then", "else"]) {
    const x = node[key];
    if (isObject(x)) out.push(["", x]);
  }
  for (const key of ["dependentSchemas", "dependencies"]) {
    const map = node[key];
    if (isObject(map)) { for (const x of Object.values(map)) if (isObject(x)) out.push(["", x]); }
  }
  return out;
}

/** Finds a cycle of in-place references; returns the references along it. */
function findRefCycle(root: Json, anchors: Map<string, Json>): string[] | undefined {
  const done = new Set<Json>();
  const onPath = new Map<Json, number>();
  const path: string[] = [];
  const visit = (node: Json): string[] | undefined => {
    if (done.has(node)) return undefined;
    if (onPath.has(node)) return path.slice(onPath.get(node)).filter((r) => r !== "");
    onPath.set(node, path.length);
    for (const [ref, next] of inPlace(root, node, anchors)) {
      path.push(ref);
      const found = visit(next);
      path.pop();
      if (found) return found;
    }
    onPath.delete(node);
    done.add(node);
    return undefined;
  };
  const all: Json[] = [];
  collect(root, all);
  for (const node of all) {
    const found = visit(node);
    if (found) return found;
  }
  return undefined;
}

function collect(node: unknown, into: Json[]): void {
  if (Array.isArray(node)) {
    for (const x of node) collect(x, into);
  } else if (isObject(node)) {
    into.push(node);
    for (const [key, value] of Object.entries(node)) {
      if (!["const", "enum", "default", "examples"].includes(key)) collect(value, into);
    }
  }
}

/** Resolves `#`, `#/json/pointer` or `#anchor` inside `root`. */
function resolveLocal(root: Json, ref: string, anchors: Map<string, Json>): unknown {
  if (ref === "#" || ref === "#/") return root;
  if (!ref.startsWith("#/")) return anchors.get(ref.slice(1));
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    let part: string;
    try {
      part = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    } catch {
      return undefined;
    }
    if (Array.isArray(node)) {
      if (!/^\d+$/.test(part)) return undefined;
      node = node[Number(part)];
    } else if (isObject(node) && Object.hasOwn(node, part)) {
      node = node[part];
    } else {
      return undefined;
    }
    if (node === undefined) return undefined;
  }
  return node;
}

function kindOf(v: unknown): string {
  return Array.isArray(v) ? "array" : typeof v;
}

function short(s: string): string {
  return s.length > 80 ? s.slice(0, 79) + "…" : s;
}

/** A tool's schemas after the guard, with a note for each one dropped. */
export interface GuardedToolSchemas {
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  /** One line per dropped schema, e.g. `input schema dropped: $ref cycle (#/$defs/a → …)`. */
  notes: string[];
}

/**
 * Guards both schemas of a tool. A missing `outputSchema` is simply absent, not dropped.
 *
 * @example
 * ```ts
 * import { guardToolSchemas } from "./schema_guard.ts";
 * guardToolSchemas({ inputSchema: { type: "string" } }).notes;
 * // ['input schema dropped: not an object schema (type "string")']
 * ```
 */
export function guardToolSchemas(
  tool: { inputSchema?: unknown; outputSchema?: unknown },
): GuardedToolSchemas {
  const out: GuardedToolSchemas = { notes: [] };
  const input = guardSchema(tool.inputSchema);
  if (input.schema) out.inputSchema = input.schema;
  else out.notes.push(`input schema dropped: ${input.dropped}`);
  if (tool.outputSchema !== undefined) {
    const output = guardSchema(tool.outputSchema);
    if (output.schema) out.outputSchema = output.schema;
    else out.notes.push(`output schema dropped: ${output.dropped}`);
  }
  return out;
}
