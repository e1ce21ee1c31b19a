/**
 * Ranking tools against a search query, simple enough to explain in one sentence: an
 * exact name match scores 1000; each query word then scores by the best place it
 * appears: 100 in the name, 10 in the title, 1 in the description.
 *
 * Words are split on `_`, `-`, `.`, spaces and other punctuation, and at camelCase
 * humps (`getTinyImage` → get, tiny, image), and compared without case. A word matches
 * when equal, or when one is a prefix of the other and the shorter has at least three
 * letters (`file` matches `files`, `read` matches `reading`).
 *
 * @module
 */

/** Score of an exact name match (`read_file`, `fs.read_file`, `mcp__fs__read_file`). */
export const EXACT_SCORE = 1000;
/** Score of a query word found in the name. */
export const NAME_SCORE = 100;
/** Score of a query word found in the title. */
export const TITLE_SCORE = 10;
/** Score of a query word found in the description. */
export const DESCRIPTION_SCORE = 1;

/**
 * Splits text into lower-case words.
 *
 * @example
 * ```ts
 * import { tokenize } from "./rank_tools.ts";
 * tokenize("getTinyImage read_file HTTPServer"); // ["get", "tiny", "image", "read", "file", "http", "server"]
 * ```
 */
export function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** What is ranked: one tool of one server. */
export interface Rankable {
  server: string;
  name: string;
  title?: string;
  description?: string;
}

function wordMatches(query: string, word: string): boolean {
  if (query === word) return true;
  const [short, long] = query.length <= word.length ? [query, word] : [word, query];
  return short.length >= 3 && long.startsWith(short);
}

function anyMatch(query: string, words: readonly string[]): boolean {
  return words.some((w) => wordMatches(query, w));
}

/**
 * The score of one tool for `query` (0: no match).
 *
 * @example
 * ```ts
 * import { scoreTool } from "./rank_tools.ts";
 * scoreTool("read file", { server: "fs", name: "read_file" }); // 1200
 * scoreTool("file", { server: "fs", name: "stat", description: "Info about a file" }); // 1
 * ```
 */
export function scoreTool(query: string, tool: Rankable): number {
  const q = query.trim().toLowerCase();
  const name = tool.name.toLowerCase();
  const queryWords = [...new Set(tokenize(query))];
  let score = 0;
  const exactForms = [name, `${tool.server}.${name}`.toLowerCase(), `mcp__${tool.server}__${name}`];
  // "read file" is an exact match for read_file too: same words, same order.
  if (
    exactForms.includes(q) ||
    (queryWords.length > 0 && tokenize(tool.name).join(" ") === queryWords.join(" "))
  ) {
    score += EXACT_SCORE;
  }
  const nameWords = tokenize(tool.name);
  const titleWords = tokenize(tool.title ?? "");
  const descriptionWords = tokenize(tool.description ?? "");
  for (const word of queryWords) {
    if (anyMatch(word, nameWords)) score += NAME_SCORE;
    else if (anyMatch(word, titleWords)) score += TITLE_SCORE;
    else if (anyMatch(word, descriptionWords)) score += DESCRIPTION_SCORE;
  }
  return score;
}

/** A ranked tool. */
export interface Ranked<T extends Rankable> {
  item: T;
  score: number;
}

/** Tools with a positive score, best first (ties by server, then name). */
export function rankTools<T extends Rankable>(query: string, tools: readonly T[]): Ranked<T>[] {
  return tools
    .map((item) => ({ item, score: scoreTool(query, item) }))
    .filter((r) => r.score > 0)
    .sort((a, b) =>
      b.score - a.score || compare(a.item.server, b.item.server) ||
      compare(a.item.name, b.item.name)
    );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
