/**
 * Validates tool arguments against a tool's `inputSchema` before anything is sent.
 * Most schemas are in the simple subset of `simple_schema.ts`, checked without a library;
 * only the others load `@cfworker/json-schema` (no code generation, small, well kept),
 * since importing any npm package boots Deno's Node compatibility layer. `call` imports
 * this module while the server boots, so no other command pays for it.
 *
 * Dialects: 2020-12 when `$schema` is absent (MCP 2025-11-25), and draft-04, draft-07
 * and 2019-09 when named (many real servers send draft-07). Anything else is a clear
 * error; `--no-validate` sends as is.
 *
 * @module
 */

import { ArgumentError } from "../errors.ts";
import { type ArgumentProblem, type Dialect, validateSimple } from "./simple_schema.ts";

export type { ArgumentProblem, Dialect };

const DIALECTS: [RegExp, Dialect][] = [
  [/^https?:\/\/json-schema\.org\/draft-04\/schema#?$/, "4"],
  [/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/, "7"],
  [/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/, "2019-09"],
  [/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/, "2020-12"],
];

/** Picks the dialect from `$schema`, or throws ArgumentError for an unsupported one. */
export function dialectOf(schema: Record<string, unknown>): Dialect {
  const declared = schema.$schema;
  if (declared === undefined) return "2020-12";
  if (typeof declared === "string") {
    for (const [re, d] of DIALECTS) if (re.test(declared)) return d;
  }
  throw new ArgumentError(
    `the tool's inputSchema uses an unsupported JSON Schema dialect: ${String(declared)}`,
    { hint: "supported: draft-04, draft-07, 2019-09, 2020-12; --no-validate sends as is" },
  );
}

/**
 * Returns the problems of `args` against `schema` (empty when valid). A simple schema is
 * checked on the spot; any other loads the full validator first.
 *
 * @example
 * ```ts ignore
 * import { validateArguments } from "./schema_validate.ts";
 * await validateArguments({ type: "object", required: ["a"] }, {});
 * // [{ path: "", message: 'missing required field "a"' }]
 * ```
 */
export async function validateArguments(
  schema: Record<string, unknown>,
  args: unknown,
): Promise<ArgumentProblem[]> {
  const dialect = dialectOf(schema);
  return validateSimple(schema, args, dialect) ?? await validateFully(schema, args);
}

// Errors that only say "a subschema had errors"; the errors they wrap follow them.
const WRAPPERS = new Set([
  "properties",
  "additionalProperties",
  "unevaluatedProperties",
  "allOf",
  "$ref",
  "items",
  "anyOf",
  "oneOf",
]);

/**
 * Returns the problems of `args` against `schema` found by the full validator, whatever the
 * schema. {@linkcode validateArguments} uses it for schemas outside the simple subset; tests
 * compare the two.
 *
 * @example
 * ```ts ignore
 * import { validateFully } from "./schema_validate.ts";
 * await validateFully({ type: "object", properties: { a: { pattern: "^x" } } }, { a: "y" });
 * // [{ path: "/a", message: "String does not match pattern." }]
 * ```
 */
export async function validateFully(
  schema: Record<string, unknown>,
  args: unknown,
): Promise<ArgumentProblem[]> {
  const dialect = dialectOf(schema);
  let Validator;
  try {
    ({ Validator } = await import("@cfworker/json-schema"));
  } catch (e) {
    // Loaded on first need now, so a missing package shows up here rather than at start.
    throw new ArgumentError(
      `the JSON Schema validator could not be loaded (${(e as Error).message})`,
      { hint: "--no-validate sends the arguments as is" },
    );
  }
  let result;
  try {
    result = new Validator(schema as never, dialect, false).validate(args);
  } catch (e) {
    // A `$ref` cycle or a broken schema: the server's fault, said plainly.
    throw new ArgumentError(
      `the tool's inputSchema cannot be used for validation (${(e as Error).message})`,
      { hint: "--no-validate sends the arguments as is" },
    );
  }
  if (result.valid) return [];
  const errors = result.errors;
  const problems = new Map<string, ArgumentProblem>();
  const add = (path: string, message: string) =>
    problems.set(`${path} ${message}`, { path, message });
  for (let i = 0; i < errors.length; i++) {
    const e = errors[i]!;
    const path = pointerOf(e.instanceLocation);
    const next = errors[i + 1];
    const child = next?.keyword === "false" ? pointerOf(next.instanceLocation) : undefined;
    if (
      (e.keyword === "additionalProperties" || e.keyword === "unevaluatedProperties") &&
      child !== undefined && child.slice(0, child.lastIndexOf("/")) === path
    ) {
      // A field no schema allows: say "unknown field" here, not "false schema" at the field.
      add(path, `unknown field "${lastKey(child)}"`);
      i++;
      continue;
    }
    // Keep the leaf errors; the wrappers only repeat them.
    if (WRAPPERS.has(e.keyword) && errors.length > 1) continue;
    add(path, friendly(e.keyword, e.error));
  }
  return [...problems.values()];
}

/** The validator's `#/a%20b` location as the JSON pointer `/a b`. */
function pointerOf(location: string): string {
  const raw = location.replace(/^#/, "");
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function lastKey(pointer: string): string {
  const segment = pointer.slice(pointer.lastIndexOf("/") + 1);
  return segment.replaceAll("~1", "/").replaceAll("~0", "~");
}

function friendly(keyword: string, error: string): string {
  if (keyword === "required") {
    const m = error.match(/required property "(.*)"\.$/);
    if (m) return `missing required field "${m[1]}"`;
  }
  if (keyword === "false") return "must not be present";
  const type = error.match(/^Instance type "(\w+)" is invalid\. Expected "(.*)"\.$/);
  if (type) return `expected ${type[2]!.split('", "').join(" or ")}, got ${type[1]}`;
  return error.replace(/^Instance /, "value ");
}

/** Formats problems as one message, one line each. */
export function formatProblems(tool: string, problems: ArgumentProblem[]): string {
  const lines = problems.map((p) => {
    const field = p.path ? p.path.slice(1).replaceAll("/", ".") : "";
    if (p.message.startsWith("missing required field") || p.message.startsWith("unknown field")) {
      const inner = field ? ` in ${field}` : "";
      return `  - ${p.message}${inner}`;
    }
    return `  - ${field || "(arguments)"}: ${p.message}`;
  });
  return `invalid arguments for ${tool}:\n${lines.join("\n")}`;
}
