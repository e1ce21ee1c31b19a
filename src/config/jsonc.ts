/**
 * JSONC parsing on a budget: plain JSON goes straight to `JSON.parse`; comments and
 * trailing commas are removed by a small scanner first. Only when the text is still not
 * valid is `jsonc-parser` loaded, to report the error's line and column precisely —
 * so reading a valid config costs no dependency import at start-up.
 *
 * @module
 */

import { ConfigError } from "../errors.ts";

/**
 * Parses JSON with comments and trailing commas. Throws ConfigError naming
 * `file:line:column` on a syntax error.
 *
 * @example
 * ```ts
 * import { parseJsonc } from "./jsonc.ts";
 * await parseJsonc('{"a": 1, // one\n}', "x.jsonc"); // { a: 1 }
 * ```
 */
export async function parseJsonc(text: string, file: string): Promise<unknown> {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch { /* not plain JSON: try JSONC */ }
  try {
    return JSON.parse(stripJsonc(body));
  } catch {
    throw await locateError(body, file);
  }
}

/**
 * Replaces comments with spaces and drops trailing commas, keeping string contents
 * intact. The result is valid JSON exactly when the input is valid JSONC.
 */
export function stripJsonc(text: string): string {
  let out = "";
  let i = 0;
  const n = text.length;
  // Index in `out` of a comma that may turn out to be trailing.
  let pendingComma = -1;
  while (i < n) {
    const c = text[i]!;
    if (c === '"') {
      const start = i++;
      while (i < n && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      i++;
      out += text.slice(start, i);
      pendingComma = -1;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < n && text[i] !== "\n") i++;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? n : end + 2;
      out += " ";
    } else if (c === ",") {
      pendingComma = out.length;
      out += c;
      i++;
    } else if ((c === "}" || c === "]") && pendingComma !== -1) {
      out = out.slice(0, pendingComma) + " " + out.slice(pendingComma + 1) + c;
      pendingComma = -1;
      i++;
    } else {
      if (c !== " " && c !== "\t" && c !== "\n" && c !== "\r") pendingComma = -1;
      out += c;
      i++;
    }
  }
  return out;
}

async function locateError(text: string, file: string): Promise<ConfigError> {
  const { parse, printParseErrorCode } = await import("jsonc-parser");
  const errors: { error: number; offset: number; length: number }[] = [];
  parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (!first) return new ConfigError(`${file}: invalid JSON`);
  const { line, column } = position(text, first.offset);
  return new ConfigError(
    `${file}:${line}:${column}: ${describe(printParseErrorCode(first.error as never))}`,
  );
}

function describe(code: string): string {
  // "CommaExpected" -> "comma expected"
  return code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

function position(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}
