/**
 * The command table: names, options and help text of every command, with a loader that
 * imports the command's module only when it runs. Help and completions are generated
 * from this table.
 *
 * @module
 */

import type { OptionSpec, OptionValues } from "./args.ts";
import type { Output } from "./output.ts";

/** What a command module receives. */
export interface CommandContext {
  /** Parsed options (global and the command's own). */
  values: OptionValues;
  /** Positional arguments after the command name. */
  positionals: string[];
  /** Output streams. */
  out: Output;
  /** Aborted on SIGINT/SIGTERM; its reason is an InterruptedError. */
  signal: AbortSignal;
  /** Environment lookup. */
  env: (name: string) => string | undefined;
  /** Working directory. */
  cwd: string;
}

/** A command module. */
export interface CommandModule {
  /** Runs the command; returns the exit code. */
  run(ctx: CommandContext): Promise<number>;
}

/** One command's definition. */
export interface CommandSpec {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** Usage line(s) after `mcpctl `. */
  usage: string[];
  /** More help text. */
  details?: string;
  options: OptionSpec[];
  load(): Promise<CommandModule>;
}

/** Options every command accepts. */
export const GLOBAL_OPTIONS: OptionSpec[] = [
  {
    name: "config",
    short: "c",
    type: "string",
    arg: "PATH",
    description: "read only this config file (also MCPCTL_CONFIG)",
  },
  {
    name: "timeout",
    short: "t",
    type: "string",
    arg: "MS",
    description: "request timeout in milliseconds (default 60000)",
  },
  { name: "json", type: "boolean", description: "machine-readable output on stdout" },
  {
    name: "verbose",
    short: "v",
    type: "boolean",
    description: "diagnostics and server stderr on stderr",
  },
  { name: "quiet", short: "q", type: "boolean", description: "no progress or notices on stderr" },
  { name: "help", short: "h", type: "boolean", description: "show help" },
];

/** Options that name an ad-hoc server instead of a config entry. */
export const ADHOC_OPTIONS: OptionSpec[] = [
  {
    name: "stdio",
    type: "string",
    arg: "CMD",
    description: 'ad-hoc stdio server, e.g. --stdio "npx -y server"',
  },
  {
    name: "env",
    short: "e",
    type: "string",
    multiple: true,
    arg: "K=V",
    description: "environment for --stdio (repeatable)",
  },
  { name: "url", type: "string", arg: "URL", description: "ad-hoc HTTP server" },
  {
    name: "header",
    short: "H",
    type: "string",
    multiple: true,
    arg: '"K: V"',
    description: "request header for --url (repeatable)",
  },
  {
    name: "name",
    type: "string",
    arg: "NAME",
    description: "name of the ad-hoc server (default adhoc)",
  },
];

/** Every command, in help order. */
export const COMMANDS: CommandSpec[] = [
  {
    name: "list",
    summary: "connect servers and list their status and tools",
    usage: ["list [SERVER...] [--json] [--strict]", "list --stdio CMD | --url URL"],
    details:
      "Connects the selected enabled servers in parallel. Exit 0 when the listing ran; with\n" +
      "--strict, non-zero when a selected enabled server is not connected (see exit codes).",
    options: [
      ...ADHOC_OPTIONS,
      {
        name: "strict",
        type: "boolean",
        description: "exit non-zero unless every selected server connects",
      },
    ],
    load: () => import("./list.ts"),
  },
  {
    name: "call",
    summary: "call one tool and print its result",
    usage: [
      "call SERVER TOOL [key=value | key:=JSON | key=@file ...]",
      "call SERVER.TOOL ... | call mcp__SERVER__TOOL ...",
      "call --stdio CMD | --url URL TOOL [key=value...]",
    ],
    details: "Arguments are typed by the tool's inputSchema and validated before sending.\n" +
      "Exit 1 when the tool reports isError; 2 for bad arguments (nothing is sent).",
    options: [
      ...ADHOC_OPTIONS,
      {
        name: "args",
        type: "string",
        arg: "JSON|-",
        description: "arguments as a JSON object (- reads stdin); key=value pairs win",
      },
      {
        name: "no-validate",
        type: "boolean",
        description: "send the arguments without schema validation",
      },
      {
        name: "dry-run",
        type: "boolean",
        description: "validate and print the request without sending it",
      },
      {
        name: "save-dir",
        type: "string",
        arg: "DIR",
        description: "where images, audio and blobs are saved (default: a new temp dir)",
      },
      {
        name: "max-time",
        type: "string",
        arg: "MS",
        description: "bound on the whole call, even while progress arrives",
      },
      {
        name: "log-level",
        type: "string",
        arg: "LEVEL",
        description: "ask the server to send logs at LEVEL (shown with --verbose)",
      },
    ],
    load: () => import("./call.ts"),
  },
];
