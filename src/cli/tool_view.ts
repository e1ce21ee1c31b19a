/**
 * One tool shown in full (`describe`, `list --schema`, `search`): its signature, title,
 * description, annotations as unverified hints, and the schemas that passed the border
 * guard. Server text is stripped of terminal escapes in the human form.
 *
 * @module
 */

import type { ToolInfo } from "../mcp/manager.ts";
import { oneLine, stripTerminal } from "../mcp/sanitize.ts";
import { guardToolSchemas } from "../mcp/schema_guard.ts";
import { toolSignature } from "../mcp/signature.ts";

/** A tool as `describe --json` prints it. */
export interface ToolView {
  server: string;
  tool: string;
  route: string;
  title?: string;
  description?: string;
  signature: string;
  /** The server's annotations: hints, not verified. */
  annotations?: Record<string, unknown>;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  /** Why a schema was dropped, one line each. */
  notes?: string[];
}

/** Builds the view of one tool of `server`. */
export function toolView(server: string, tool: ToolInfo): ToolView {
  const guarded = guardToolSchemas(tool);
  const view: ToolView = {
    server,
    tool: tool.name,
    route: `mcp__${server}__${tool.name}`,
    signature: toolSignature(tool.name, guarded.inputSchema),
  };
  const title = displayTitle(tool);
  if (title !== undefined) view.title = title;
  if (typeof tool.description === "string" && tool.description !== "") {
    view.description = tool.description;
  }
  if (isObject(tool.annotations) && Object.keys(tool.annotations).length > 0) {
    view.annotations = tool.annotations;
  }
  if (guarded.inputSchema) view.inputSchema = guarded.inputSchema;
  if (guarded.outputSchema) view.outputSchema = guarded.outputSchema;
  if (guarded.notes.length > 0) view.notes = guarded.notes;
  return view;
}

/** Display name: `title`, else `annotations.title`; undefined when neither is set. */
export function displayTitle(tool: ToolInfo): string | undefined {
  if (typeof tool.title === "string" && tool.title !== "") return tool.title;
  const t = isObject(tool.annotations) ? tool.annotations.title : undefined;
  return typeof t === "string" && t !== "" ? t : undefined;
}

const HINT_WORDS: Record<string, [string, string]> = {
  readOnlyHint: ["read-only", "not read-only"],
  destructiveHint: ["destructive", "not destructive"],
  idempotentHint: ["idempotent", "not idempotent"],
  openWorldHint: ["open world", "closed world"],
};

/** The annotations as words, e.g. `read-only, idempotent`; undefined when there are none. */
export function hintText(annotations: Record<string, unknown> | undefined): string | undefined {
  if (!annotations) return undefined;
  const words: string[] = [];
  for (const [key, value] of Object.entries(annotations)) {
    if (key === "title") continue;
    const known = HINT_WORDS[key];
    if (known && typeof value === "boolean") words.push(value ? known[0] : known[1]);
    else words.push(`${oneLine(key, 40)}=${oneLine(JSON.stringify(value) ?? "", 60)}`);
  }
  return words.length > 0 ? words.join(", ") : undefined;
}

/** The human form of `describe`: readable, pretty-printed schemas. */
export function renderToolView(view: ToolView): string {
  const lines: string[] = [];
  const name = `${view.server}.${oneLine(view.tool, 128)}`;
  lines.push(view.title ? `${name}: ${oneLine(view.title, 120)}` : name);
  lines.push(`  ${stripTerminal(view.signature).replace(/\s+/g, " ")}`);
  lines.push(`  call: ${callExample(view)}`);
  const hints = hintText(view.annotations);
  if (hints) lines.push(`  hints from the server, not verified: ${hints}`);
  if (view.description) {
    lines.push("");
    for (const l of view.description.trimEnd().split("\n")) lines.push(l);
  }
  for (const note of view.notes ?? []) lines.push("", note);
  lines.push("", "input schema:");
  lines.push(view.inputSchema ? pretty(view.inputSchema) : "  (none shown)");
  if (view.outputSchema) lines.push("", "output schema:", pretty(view.outputSchema));
  return lines.join("\n") + "\n";
}

/** The compact form used by `search`: one block with one-line JSON schemas. */
export function renderCompact(view: ToolView, score: number): string {
  const lines: string[] = [];
  const name = `${view.server}.${oneLine(view.tool, 128)}`;
  lines.push(`${name}${view.title ? ` — ${oneLine(view.title, 120)}` : ""} (score ${score})`);
  lines.push(stripTerminal(view.signature).replace(/\s+/g, " "));
  if (view.description) lines.push(oneLine(view.description, 600));
  const hints = hintText(view.annotations);
  if (hints) lines.push(`hints (unverified): ${hints}`);
  for (const note of view.notes ?? []) lines.push(note);
  if (view.inputSchema) lines.push(`input: ${compact(view.inputSchema)}`);
  if (view.outputSchema) lines.push(`output: ${compact(view.outputSchema)}`);
  return lines.join("\n") + "\n";
}

/** `mcpctl call fx echo message=…`: the required arguments, then `[key=value…]` if more. */
export function callExample(view: ToolView): string {
  const schema = view.inputSchema ?? {};
  const properties = isObject(schema.properties) ? Object.keys(schema.properties) : [];
  const required = Array.isArray(schema.required)
    ? schema.required.filter((r): r is string => typeof r === "string")
    : [];
  const args = required.map((r) => `${oneLine(r, 60)}=…`);
  if (properties.some((p) => !required.includes(p)) || !view.inputSchema) {
    args.push("[key=value…]");
  }
  return ["mcpctl call", view.server, oneLine(view.tool, 128), ...args].join(" ");
}

function pretty(schema: Record<string, unknown>): string {
  return JSON.stringify(schema, null, 2);
}

function compact(schema: Record<string, unknown>): string {
  return JSON.stringify(schema);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
