/**
 * Help text, generated from the command table.
 *
 * @module
 */

import type { OptionSpec } from "./args.ts";
import { COMMANDS, type CommandSpec, GLOBAL_OPTIONS } from "./commands.ts";

const EXIT_CODES = `Exit codes:
  0    success
  1    the tool reported an error (isError)
  2    usage, config or argument error
  3    server failure (cannot start, protocol error, connection lost)
  4    sign-in needed or refused
  5    timeout
  130  interrupted
`;

/** `mcpctl --help`. */
export function mainHelp(): string {
  const shown = COMMANDS.filter((c) => !c.hidden);
  const width = Math.max(...shown.map((c) => c.name.length));
  const commands = shown.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n");
  return `mcpctl: a command-line client for the Model Context Protocol

Usage: mcpctl COMMAND [OPTIONS]

Commands:
${commands}

Options:
${
    formatOptions([...GLOBAL_OPTIONS, {
      name: "version",
      short: "V",
      type: "boolean",
      description: "print version, Deno version and target",
    }])
  }

Run 'mcpctl COMMAND --help' for a command's options.

${EXIT_CODES}`;
}

/** `mcpctl COMMAND --help`. */
export function commandHelp(spec: CommandSpec): string {
  const usage = spec.usage.map((u, i) => `${i === 0 ? "Usage: " : "       "}mcpctl ${u}`);
  return `${usage.join("\n")}

${spec.summary}.
${spec.details ? `\n${spec.details}\n` : ""}
${
    spec.options.some((o) => !o.hidden)
      ? `Options:\n${formatOptions(spec.options)}\n\n`
      : ""
  }Global options:
${formatOptions(GLOBAL_OPTIONS)}
`;
}

function formatOptions(options: OptionSpec[]): string {
  const shown = options.filter((o) => !o.hidden);
  const left = shown.map((o) =>
    `${o.short ? `-${o.short}, ` : "    "}--${o.name}${
      o.type === "string" ? ` ${o.arg ?? "VALUE"}` : ""
    }`
  );
  const width = Math.max(...left.map((l) => l.length));
  return shown.map((o, i) => `  ${left[i]!.padEnd(width)}  ${o.description}`).join("\n");
}
