/**
 * Variable expansion in config values: `${VAR}`, `${VAR:-default}` and `{env:VAR}`.
 * `$${` writes a literal `${`. Expansion is one pass: a value that came from the
 * environment is never expanded again.
 *
 * @module
 */

/** A variable that was referenced but not set. */
export class MissingVariableError extends Error {
  override name = "MissingVariableError";
  readonly variable: string;
  constructor(variable: string) {
    super(`environment variable ${variable} is not set`);
    this.variable = variable;
  }
}

const PATTERN =
  /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Expands variables in `text` using `lookup`. Throws MissingVariableError for the first
 * unset variable without a default.
 *
 * @example
 * ```ts
 * import { expandVariables } from "./expand.ts";
 * expandVariables("Bearer ${TOKEN}", (n) => ({ TOKEN: "t" } as Record<string, string>)[n]);
 * // "Bearer t"
 * ```
 */
export function expandVariables(
  text: string,
  lookup: (name: string) => string | undefined,
): string {
  return text.replace(PATTERN, (match, braced?: string, fallback?: string, env?: string) => {
    if (match === "$${") return "${";
    const name = (braced ?? env)!;
    const value = lookup(name);
    if (value !== undefined && !(fallback !== undefined && value === "")) return value;
    if (fallback !== undefined) return fallback;
    throw new MissingVariableError(name);
  });
}

/**
 * The variables `text` refers to, in order, as {@linkcode expandVariables} would read
 * them (a `$${` escape refers to none). The trust rule uses it: a reference anywhere in
 * a project entry needs approval.
 *
 * @example
 * ```ts
 * import { referencedVariables } from "./expand.ts";
 * referencedVariables("${A}/{env:B}/${C:-x}/$${D}"); // ["A", "B", "C"]
 * ```
 */
export function referencedVariables(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(PATTERN)) {
    const name = m[1] ?? m[3];
    if (name !== undefined) names.push(name);
  }
  return names;
}
