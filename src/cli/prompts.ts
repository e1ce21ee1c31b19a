/**
 * `mcpctl prompts SERVER [NAME] [key=value...]`: without a name, lists the server's
 * prompts and their arguments (every page); with one, gets the prompt (`prompts/get`)
 * and prints its messages. Arguments are strings; unknown and missing required ones
 * are refused before anything is asked.
 *
 * @module
 */

import { ArgumentError, ExitCode, UsageError } from "../errors.ts";
import { type Client, isRecord } from "../mcp/client.ts";
import { listAll } from "../mcp/manager.ts";
import { oneLine } from "../mcp/sanitize.ts";
import { closest } from "./args.ts";
import type { CommandContext } from "./commands.ts";
import { withServer } from "./one_server.ts";
import { renderResult } from "./render_result.ts";

/** A prompt as listed by the server. */
interface PromptInfo {
  name: string;
  title?: string;
  description?: string;
  arguments: { name: string; description?: string; required: boolean }[];
}

/** Runs `prompts`. */
export async function run(ctx: CommandContext): Promise<number> {
  return await withServer(ctx, "prompts", async ({ entry, client, rest }) => {
    const [name, ...pairs] = rest;
    if (client.server?.capabilities.prompts === undefined) {
      if (name !== undefined) throw new UsageError(`server '${entry.name}' does not offer prompts`);
      if (ctx.values.json === true) await ctx.out.json([]);
      else if (ctx.values.quiet !== true) {
        await ctx.out.error(`mcpctl: server '${entry.name}' does not offer prompts\n`);
      }
      return ExitCode.ok;
    }
    const { items, warnings } = await listAll(client, "prompts/list", "prompts", {
      signal: ctx.signal,
    });
    if (ctx.values.quiet !== true) {
      for (const w of warnings) await ctx.out.error(`mcpctl: ${entry.name}: ${w}\n`);
    }
    const prompts = items.map(promptInfo).filter((p): p is PromptInfo => p !== undefined);
    if (name === undefined) {
      if (ctx.values.json === true) await ctx.out.json(items);
      else await ctx.out.result(renderListing(prompts));
      return ExitCode.ok;
    }
    const prompt = prompts.find((p) => p.name === name);
    if (!prompt) {
      const close = closest(name, prompts.map((p) => p.name));
      throw new UsageError(
        `unknown prompt '${name}' on server '${entry.name}'${
          close.length ? `; did you mean '${close[0]}'?` : ""
        }`,
        { hint: `'mcpctl prompts ${entry.name}' lists its ${prompts.length} prompts` },
      );
    }
    const args = promptArguments(prompt, pairs);
    return await getPrompt(ctx, client, prompt.name, args);
  });
}

function promptInfo(item: unknown): PromptInfo | undefined {
  if (!isRecord(item) || typeof item.name !== "string") return undefined;
  const args = Array.isArray(item.arguments) ? item.arguments.filter(isRecord) : [];
  return {
    name: item.name,
    ...(typeof item.title === "string" ? { title: item.title } : {}),
    ...(typeof item.description === "string" ? { description: item.description } : {}),
    arguments: args.filter((a) => typeof a.name === "string").map((a) => ({
      name: a.name as string,
      ...(typeof a.description === "string" ? { description: a.description } : {}),
      required: a.required === true,
    })),
  };
}

function renderListing(prompts: PromptInfo[]): string {
  if (prompts.length === 0) return "No prompts.\n";
  const lines: string[] = [];
  for (const p of prompts) {
    const args = p.arguments.map((a) => a.required ? a.name : `[${a.name}]`);
    const head = `${oneLine(p.name, 80)}(${args.map((a) => oneLine(a, 40)).join(", ")})`;
    const text = [p.title, p.description].filter((x): x is string => x !== undefined && x !== "")
      .map((x) => oneLine(x, 100));
    lines.push(`${head}${text.length ? `  ${text.join(" — ")}` : ""}`);
    for (const a of p.arguments) {
      if (a.description) lines.push(`  ${oneLine(a.name, 40)}: ${oneLine(a.description, 100)}`);
    }
  }
  return lines.join("\n") + "\n";
}

/** Parses `key=value` pairs against the prompt's declared arguments. */
function promptArguments(prompt: PromptInfo, pairs: string[]): Record<string, string> {
  const args: Record<string, string> = {};
  const known = prompt.arguments.map((a) => a.name);
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) {
      throw new ArgumentError(`prompt arguments are key=value pairs, not ${JSON.stringify(pair)}`);
    }
    const key = pair.slice(0, eq);
    if (!known.includes(key)) {
      const close = closest(key, known);
      throw new ArgumentError(
        `prompt '${prompt.name}' has no argument '${key}'${
          close.length ? `; did you mean '${close[0]}'?` : ""
        }`,
        { hint: known.length ? `its arguments: ${known.join(", ")}` : "it takes no arguments" },
      );
    }
    args[key] = pair.slice(eq + 1);
  }
  const missing = prompt.arguments.filter((a) => a.required && !(a.name in args));
  if (missing.length > 0) {
    throw new ArgumentError(
      `prompt '${prompt.name}' needs ${missing.map((a) => `${a.name}=…`).join(" ")}`,
      { hint: "nothing was sent" },
    );
  }
  return args;
}

async function getPrompt(
  ctx: CommandContext,
  client: Client,
  name: string,
  args: Record<string, string>,
): Promise<number> {
  const result = await client.request(
    "prompts/get",
    { name, ...(Object.keys(args).length ? { arguments: args } : {}) },
    { signal: ctx.signal },
  );
  if (ctx.values.json === true) {
    await ctx.out.json(result);
    return ExitCode.ok;
  }
  const messages = isRecord(result) && Array.isArray(result.messages)
    ? result.messages.filter(isRecord)
    : [];
  const saveDir = ctx.values["save-dir"] as string | undefined;
  const parts: string[] = [];
  for (const m of messages) {
    const role = typeof m.role === "string" ? oneLine(m.role, 20) : "?";
    const blocks = Array.isArray(m.content) ? m.content : [m.content];
    const body = await renderResult({ content: blocks }, {
      stem: name,
      ...(saveDir ? { dir: saveDir } : {}),
    });
    parts.push(`[${role}]\n${body}`);
  }
  await ctx.out.result(parts.length ? parts.join("\n") : "");
  if (parts.length === 0 && ctx.values.quiet !== true) {
    await ctx.out.error(`mcpctl: prompt '${name}' has no messages\n`);
  }
  return ExitCode.ok;
}
