/**
 * Config text shown to a person: JSON-quoted with every character a terminal could act
 * on escaped, so a value from a hostile file is shown exactly and cannot move the
 * cursor, erase lines or reorder text. Also the one test for control characters in
 * names (server, env and header names, programs, directories).
 *
 * @module
 */

// C0 (tab and newline included), DEL, C1, line/paragraph separators and bidi controls.
// deno-lint-ignore no-control-regex -- matching control characters is the point
const CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
// What JSON.stringify leaves as is but a terminal could act on.
const UNSAFE_IN_JSON = /[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Whether `text` contains a control character (see the module doc). */
export function hasControl(text: string): boolean {
  return CONTROL.test(text);
}

/**
 * `value` as JSON, with C1 controls, DEL and bidi controls written as `\uXXXX` too
 * (JSON.stringify escapes only C0): safe on any terminal, and exact.
 *
 * @example
 * ```ts
 * import { quote } from "./quote.ts";
 * quote("a\x1b[2Jb"); // "\"a\\u001b[2Jb\""
 * ```
 */
export function quote(value: unknown): string {
  return (JSON.stringify(value) ?? "null").replace(
    UNSAFE_IN_JSON,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
