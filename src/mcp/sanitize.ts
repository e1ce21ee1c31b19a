/**
 * The terminal border guard: text from a server is stripped of escape sequences and
 * control characters before it reaches a human, so a malicious description cannot move
 * the cursor, retitle the window, hide text or write hyperlinks.
 *
 * @module
 */

// CSI (ESC [ … final), OSC (ESC ] … BEL or ST), DCS/SOS/PM/APC (ESC P|X|^|_ … ST),
// other two-byte ESC sequences, and 8-bit C1 forms of the same.
const ESCAPES = new RegExp(
  [
    "\\x1b\\[[0-?]*[ -/]*[@-~]",
    "\\x9b[0-?]*[ -/]*[@-~]",
    "\\x1b\\][^\\x07\\x1b\\x9c]*(?:\\x07|\\x1b\\\\|\\x9c)?",
    "\\x9d[^\\x07\\x1b\\x9c]*(?:\\x07|\\x1b\\\\|\\x9c)?",
    "\\x1b[PX^_][^\\x1b\\x9c]*(?:\\x1b\\\\|\\x9c)?",
    "[\\x90\\x98\\x9e\\x9f][^\\x1b\\x9c]*(?:\\x1b\\\\|\\x9c)?",
    "\\x1b[ -/]*[0-~]?",
  ].join("|"),
  "g",
);
// C0 controls but TAB and LF, DEL, C1 controls, and bidi overrides that can reorder text.
// deno-lint-ignore no-control-regex -- matching control characters is the point
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Removes escape sequences and control characters; keeps newlines and tabs.
 *
 * @example
 * ```ts
 * import { stripTerminal } from "./sanitize.ts";
 * stripTerminal("\x1b[31mred\x1b[0m\x07"); // "red"
 * ```
 */
export function stripTerminal(text: string): string {
  return text.replace(ESCAPES, "").replace(CONTROLS, "");
}

/** Like {@linkcode stripTerminal}, and folds the text onto one line (for listings). */
export function oneLine(text: string, max = 120): string {
  const line = stripTerminal(text).replace(/\s+/g, " ").trim();
  return line.length > max ? line.slice(0, max - 1) + "…" : line;
}
