/**
 * Finds a tool by name in a server's list, or explains why it cannot be used: an
 * unknown name gets the closest names; a name the border guard rejected says so.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import type { ToolInfo } from "../mcp/manager.ts";
import { closest } from "./args.ts";

/** Returns the tool named `name`, or throws UsageError (exit 2). */
export function findTool(
  server: string,
  name: string,
  tools: ToolInfo[],
  rejected: string[],
): ToolInfo {
  const tool = tools.find((t) => t.name === name);
  if (tool) return tool;
  if (rejected.includes(name)) {
    throw new UsageError(
      `tool '${name}' of server '${server}' cannot be addressed (invalid or duplicate name)`,
    );
  }
  const close = closest(name, tools.map((t) => t.name));
  throw new UsageError(
    `unknown tool '${name}' on server '${server}'${
      close.length ? `; did you mean ${close.map((c) => `'${c}'`).join(", ")}?` : ""
    }`,
    { hint: `'mcpctl list ${server}' shows its ${tools.length} tools` },
  );
}
