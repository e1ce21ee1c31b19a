/**
 * Validates tool arguments against a tool's `inputSchema` before anything is sent.
 * The validator (`@cfworker/json-schema`: no code generation, small, well kept) comes
 * in with this module, which only `call` imports — and it starts that import while the
 * server boots, so no other command pays for it and `call` barely does.
 *
 * Dialects: 2020-12 when `$schema` is absent (MCP 2025-11-25), and draft-04, draft-07
 * and 2019-09 when named (many real servers send draft-07). Anything else is a clear
 * error; `--no-validate` sends as is.
 *
 * @module
 */

import { Validator } from "@cfworker/json-schema";
import { ArgumentError } from "../errors.ts";

/** Dialects the validator supports. */
export type Dialect = "4" | "7" | "2019-09" | "2020-12";

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

/** One problem found in the arguments. */
export interface ArgumentProblem {
  /** JSON pointer to the field, e.g. `/filter/limit` (empty for the whole object). */
  path: string;
  message: string;
}

/**
 * Returns the problems of `args` against `schema` (empty when valid).
 *
 * @example
 * ```ts ignore
 * import { validateArguments } from "./schema_validate.ts";
 * validateArguments({ type: "object", required: ["a"] }, {}); // [{ path: "", message: … }]
 * ```
 */
export function validateArguments(
  schema: Record<string, unknown>,
  args: unknown,
): ArgumentProblem[] {
  const dialect = dialectOf(schema);
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
  const problems = new Map<string, ArgumentProblem>();
  for (const e of result.errors) {
    // Keep the leaf errors; the wrappers ("properties", "allOf"…) only repeat them.
    if (["properties", "allOf", "$ref", "items", "anyOf", "oneOf"].includes(e.keyword)) {
      if (result.errors.length > 1) continue;
    }
    // additionalProperties: false reports each extra field twice; keep "unknown field".
    if (e.error === "False boolean schema." && result.errors.length > 1) continue;
    const path = e.instanceLocation.replace(/^#/, "");
    const message = friendly(e.keyword, e.error);
    problems.set(`${path} ${message}`, { path, message });
  }
  return [...problems.values()];
}

function friendly(keyword: string, error: string): string {
  if (keyword === "required") {
    const m = error.match(/required property "([^"]+)"/);
    if (m) return `missing required field "${m[1]}"`;
  }
  if (keyword === "additionalProperties") {
    const m = error.match(/Property "([^"]+)"/);
    if (m) return `unknown field "${m[1]}"`;
  }
  const type = error.match(/^Instance type "(\w+)" is invalid\. Expected "([^"]+)"/);
  if (type) return `expected ${type[2]}, got ${type[1]}`;
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
