/**
 * `mcpctl resources SERVER [URI]`: without a URI, lists the server's resources and
 * resource templates (every page); with one, reads it (`resources/read`): text is
 * printed, binary contents are saved as files like `call` saves them.
 *
 * @module
 */

import { ExitCode, RpcError, UsageError } from "../errors.ts";
import { type Client, isRecord } from "../mcp/client.ts";
import { listAll } from "../mcp/manager.ts";
import { oneLine } from "../mcp/sanitize.ts";
import type { CommandContext } from "./commands.ts";
import { withServer } from "./one_server.ts";
import { renderResult } from "./render_result.ts";

/** JSON-RPC "method not found". */
const METHOD_NOT_FOUND = -32601;

/** Runs `resources`. */
export async function run(ctx: CommandContext): Promise<number> {
  return await withServer(ctx, "resources", async ({ entry, client, rest }) => {
    const [uri, extra] = rest;
    if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'`);
    if (client.server?.capabilities.resources === undefined) {
      if (uri !== undefined) {
        throw new UsageError(`server '${entry.name}' does not offer resources`);
      }
      if (ctx.values.json === true) await ctx.out.json({ resources: [], resourceTemplates: [] });
      else if (ctx.values.quiet !== true) {
        await ctx.out.error(`mcpctl: server '${entry.name}' does not offer resources\n`);
      }
      return ExitCode.ok;
    }
    if (uri === undefined) return await listResources(ctx, client, entry.name);
    return await readResource(ctx, client, uri);
  });
}

async function listResources(ctx: CommandContext, client: Client, server: string): Promise<number> {
  const signal = { signal: ctx.signal };
  const resources = await listAll(client, "resources/list", "resources", signal);
  let templates: { items: unknown[]; warnings: string[] } = { items: [], warnings: [] };
  try {
    templates = await listAll(client, "resources/templates/list", "resourceTemplates", signal);
  } catch (error) {
    // Templates are optional: a server without them may not know the method.
    if (!(error instanceof RpcError && error.code === METHOD_NOT_FOUND)) throw error;
  }
  const items = resources.items.filter(isRecord);
  const templateItems = templates.items.filter(isRecord);
  if (ctx.values.json === true) {
    await ctx.out.json({ resources: items, resourceTemplates: templateItems });
  } else {
    await ctx.out.result(renderListing(items, templateItems));
  }
  if (ctx.values.quiet !== true) {
    for (const w of [...resources.warnings, ...templates.warnings]) {
      await ctx.out.error(`mcpctl: ${server}: ${w}\n`);
    }
  }
  return ExitCode.ok;
}

function renderListing(
  resources: Record<string, unknown>[],
  templates: Record<string, unknown>[],
): string {
  const lines: string[] = [];
  const line = (item: Record<string, unknown>, key: string) => {
    const uri = typeof item[key] === "string" ? oneLine(item[key] as string, 200) : "?";
    const name = typeof item.title === "string"
      ? item.title
      : typeof item.name === "string"
      ? item.name
      : "";
    const mime = typeof item.mimeType === "string" ? ` (${oneLine(item.mimeType, 60)})` : "";
    const description = typeof item.description === "string"
      ? ` — ${oneLine(item.description, 100)}`
      : "";
    return `  ${uri}  ${oneLine(name, 80)}${mime}${description}`.trimEnd();
  };
  lines.push(`Resources (${resources.length}):`);
  for (const r of resources) lines.push(line(r, "uri"));
  if (templates.length > 0) {
    lines.push(`Resource templates (${templates.length}):`);
    for (const t of templates) lines.push(line(t, "uriTemplate"));
  }
  return lines.join("\n") + "\n";
}

async function readResource(ctx: CommandContext, client: Client, uri: string): Promise<number> {
  const result = await client.request("resources/read", { uri }, { signal: ctx.signal });
  if (ctx.values.json === true) {
    await ctx.out.json(result);
    return ExitCode.ok;
  }
  const contents = isRecord(result) && Array.isArray(result.contents)
    ? result.contents.filter(isRecord)
    : [];
  const [only] = contents;
  if (contents.length === 1 && typeof only!.text === "string") {
    const text = only!.text;
    await ctx.out.result(text.endsWith("\n") || text === "" ? text : text + "\n");
    return ExitCode.ok;
  }
  // Several contents, or binary ones: each is shown under its URI, blobs saved as files.
  const blocks = contents.map((resource) => ({ type: "resource", resource }));
  const saveDir = ctx.values["save-dir"] as string | undefined;
  await ctx.out.result(
    await renderResult({ content: blocks }, {
      stem: stemOf(uri),
      ...(saveDir ? { dir: saveDir } : {}),
    }),
  );
  return ExitCode.ok;
}

/** A file name stem from a URI: its last two path segments, without an extension. */
function stemOf(uri: string): string {
  let segments = uri.replace(/[?#].*$/, "").replace(/^[a-z][a-z0-9+.-]*:\/*/i, "")
    .split("/").filter(Boolean);
  if (segments.length > 1) segments = segments.slice(1);
  const stem = segments.slice(-2).join("-").replace(/\.[A-Za-z0-9]{1,8}$/, "");
  return stem || "resource";
}
