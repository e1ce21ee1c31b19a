/**
 * Server names and qualified tool routes (`mcp__<server>__<tool>`), built and parsed
 * only here.
 *
 * @module
 */

/** Longest qualified route in bytes. */
export const MAX_ROUTE_BYTES = 64;

const SERVER_NAME = /^[A-Za-z0-9_-]+$/;
const TOOL_NAME = /^[A-Za-z0-9_.-]+$/;

/** Returns why a server name is invalid, or undefined when it is valid. */
export function serverNameProblem(name: string): string | undefined {
  if (name.length === 0) return "is empty";
  if (!SERVER_NAME.test(name)) return "may contain only ASCII letters, digits, '_' and '-'";
  if (name.includes("__")) return "must not contain '__'";
  if (name.endsWith("_")) return "must not end with '_'";
  if (new TextEncoder().encode(`mcp__${name}__x`).length > MAX_ROUTE_BYTES) {
    return `is too long to form routes of at most ${MAX_ROUTE_BYTES} bytes`;
  }
  return undefined;
}

/**
 * Builds the qualified route of a tool, or returns the reason it cannot.
 *
 * @example
 * ```ts
 * import { toolRoute } from "./names.ts";
 * toolRoute("github", "create_issue"); // { route: "mcp__github__create_issue" }
 * ```
 */
export function toolRoute(server: string, tool: string): { route: string } | { problem: string } {
  if (tool.length === 0) return { problem: "tool name is empty" };
  if (!TOOL_NAME.test(tool)) {
    return { problem: "tool name has characters outside [A-Za-z0-9_.-]" };
  }
  if (tool.startsWith("_")) return { problem: "tool name starts with '_'" };
  if (tool.includes("__")) return { problem: "tool name contains '__'" };
  const route = `mcp__${server}__${tool}`;
  const bytes = new TextEncoder().encode(route).length;
  if (bytes > MAX_ROUTE_BYTES) {
    return { problem: `route would be ${bytes} bytes, over ${MAX_ROUTE_BYTES}` };
  }
  return { route };
}

/** Splits `mcp__<server>__<tool>`; undefined when the text is not a route. */
export function parseRoute(text: string): { server: string; tool: string } | undefined {
  if (!text.startsWith("mcp__")) return undefined;
  const rest = text.slice(5);
  const sep = rest.indexOf("__");
  if (sep <= 0) return undefined;
  const server = rest.slice(0, sep);
  const tool = rest.slice(sep + 2);
  if (tool.length === 0 || serverNameProblem(server)) return undefined;
  return { server, tool };
}

/** A tool that could not be advertised, and why. */
export interface RejectedTool {
  name: string;
  problem: string;
}

/**
 * Keeps the tools that form valid, unique routes; reports the others. Two tools that
 * would form the same route are both rejected: neither can be addressed unambiguously.
 */
export function partitionTools<T extends { name: string }>(
  server: string,
  tools: readonly T[],
): { accepted: T[]; rejected: RejectedTool[] } {
  const counts = new Map<string, number>();
  for (const t of tools) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
  const accepted: T[] = [];
  const rejected: RejectedTool[] = [];
  const seenDuplicates = new Set<string>();
  for (const t of tools) {
    const r = toolRoute(server, t.name);
    if ("problem" in r) {
      rejected.push({ name: t.name, problem: r.problem });
    } else if ((counts.get(t.name) ?? 0) > 1) {
      if (!seenDuplicates.has(t.name)) {
        seenDuplicates.add(t.name);
        rejected.push({ name: t.name, problem: "more than one tool has this name" });
      }
    } else {
      accepted.push(t);
    }
  }
  return { accepted, rejected };
}
