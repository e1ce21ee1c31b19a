/**
 * The command table: names, options and help text of every command, with a loader that
 * imports the command's module only when it runs. Help and completions are generated
 * from this table.
 *
 * @module
 */

import type { OptionSpec, OptionValues } from "./args.ts";
import { SIGN_IN_OPTIONS } from "./sign_in.ts";
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
  /** Left out of help and of completions (internal commands). */
  hidden?: boolean;
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

/** Options of every command that connects to servers. */
export const CONNECT_OPTIONS: OptionSpec[] = [
  {
    name: "root",
    type: "string",
    multiple: true,
    arg: "DIR",
    description: "offer DIR to servers as a root, besides the working directory (repeatable)",
  },
  {
    name: "trust-project",
    type: "boolean",
    description:
      "approve every project-file server for this run, storing nothing (CI; MCPCTL_TRUST_PROJECT=1)",
  },
];

/** `--login` and the sign-in options, for commands that may sign in inline. */
const LOGIN_OPTIONS: OptionSpec[] = [
  {
    name: "login",
    type: "boolean",
    description: "sign in inline where a server asks (may open a browser)",
  },
  ...SIGN_IN_OPTIONS,
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
      {
        name: "schema",
        type: "boolean",
        description: "show every tool in full: signature, hints and schemas",
      },
      ...CONNECT_OPTIONS,
      ...LOGIN_OPTIONS,
      {
        name: "elicitation",
        type: "string",
        arg: "POLICY",
        description:
          "answer servers asking for input: decline (default), cancel or accept-defaults; without it a terminal prompts",
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
      ...CONNECT_OPTIONS,
      ...LOGIN_OPTIONS,
      {
        name: "elicitation",
        type: "string",
        arg: "POLICY",
        description:
          "answer servers asking for input: decline (default), cancel or accept-defaults; without it a terminal prompts",
      },
    ],
    load: () => import("./call.ts"),
  },
  {
    name: "describe",
    summary: "show one tool in full: signature, description, hints and schemas",
    usage: [
      "describe SERVER TOOL | SERVER.TOOL | mcp__SERVER__TOOL [--json]",
      "describe --stdio CMD | --url URL TOOL",
    ],
    details: "Reads the tool cache (see 'mcpctl search --help'); starts the server only when\n" +
      "its entry is missing or stale, or with --refresh. Annotations are hints from the\n" +
      "server, not verified. Schemas that cannot be validated are dropped and said so.",
    options: [
      ...ADHOC_OPTIONS,
      { name: "refresh", type: "boolean", description: "ask the server, ignoring the cache" },
      ...CONNECT_OPTIONS,
    ],
    load: () => import("./describe.ts"),
  },
  {
    name: "search",
    summary: "find tools across all enabled servers, with their schemas",
    usage: ["search QUERY... [--budget TOKENS] [--limit N] [--json]"],
    details: "Ranks tools by name, title and description: an exact name match first, then\n" +
      "matching words in the name, then in the title, then in the description (words split\n" +
      "on _ - . space and camelCase; 'file' also matches 'files'). Prints the best matches\n" +
      "with full schemas while the whole output fits the budget (tokens estimated as\n" +
      "characters / 4; --json too).\n\n" +
      "Tool lists are cached per server for 24 h (MCPCTL_CACHE_TTL seconds; 0 disables) under\n" +
      "$MCPCTL_HOME/cache, else $XDG_STATE_HOME/mcpctl/cache or ~/.local/state/mcpctl/cache\n" +
      "(%LOCALAPPDATA%\\mcpctl\\cache on Windows). Changing a server's command, args, env,\n" +
      "cwd, url or headers invalidates its entry; only missing or stale servers are started.",
    options: [
      {
        name: "budget",
        type: "string",
        arg: "TOKENS",
        description: "most tokens of output, estimated as characters / 4 (default 2000)",
      },
      { name: "limit", type: "string", arg: "N", description: "show at most N matches" },
      { name: "refresh", type: "boolean", description: "ask every server, ignoring the cache" },
      ...CONNECT_OPTIONS,
    ],
    load: () => import("./search.ts"),
  },
  {
    name: "resources",
    summary: "list a server's resources and templates, or read one",
    usage: ["resources SERVER [--json]", "resources SERVER URI [--save-dir DIR] [--json]"],
    details: "Text contents are printed; binary contents are saved as files and their paths\n" +
      "printed.",
    options: [
      ...ADHOC_OPTIONS,
      {
        name: "save-dir",
        type: "string",
        arg: "DIR",
        description: "where binary contents are saved (default: a new temp dir)",
      },
      ...CONNECT_OPTIONS,
    ],
    load: () => import("./resources.ts"),
  },
  {
    name: "prompts",
    summary: "list a server's prompts, or get one with arguments",
    usage: ["prompts SERVER [--json]", "prompts SERVER NAME [key=value...] [--json]"],
    details: "Prompt arguments are strings; required ones are checked before asking.",
    options: [
      ...ADHOC_OPTIONS,
      {
        name: "save-dir",
        type: "string",
        arg: "DIR",
        description: "where images, audio and blobs in messages are saved",
      },
      ...CONNECT_OPTIONS,
    ],
    load: () => import("./prompts.ts"),
  },
  {
    name: "ping",
    summary: "check that a server answers, and how fast",
    usage: ["ping SERVER [--json]", "ping --stdio CMD | --url URL"],
    details: "Prints the round-trip time of one ping after connecting. Exit 5 on timeout.",
    options: [...ADHOC_OPTIONS, ...CONNECT_OPTIONS],
    load: () => import("./ping.ts"),
  },
  {
    name: "config",
    summary: "show the resolved servers and the file each came from",
    usage: ["config [--json]"],
    details: "Header values, environment values and secrets are shown as <redacted>.",
    options: [],
    load: () => import("./config_show.ts"),
  },
  {
    name: "completions",
    summary: "print a shell completion script (bash, zsh or fish)",
    usage: ["completions bash | zsh | fish"],
    details: "bash:  source <(mcpctl completions bash)      (or save it in\n" +
      "       ~/.local/share/bash-completion/completions/mcpctl)\n" +
      'zsh:   mcpctl completions zsh > "${fpath[1]}/_mcpctl"\n' +
      "fish:  mcpctl completions fish > ~/.config/fish/completions/mcpctl.fish\n\n" +
      "Server names come from the config, tool names from the tool cache: completing\n" +
      "never starts a server ('mcpctl search' or 'describe' fills the cache).",
    options: [],
    load: () => import("./completions.ts"),
  },
  {
    name: "__complete",
    summary: "completion candidates (used by the completion scripts)",
    usage: ["__complete servers | tools SERVER"],
    hidden: true,
    options: [],
    load: () => import("./complete_words.ts"),
  },
  {
    name: "login",
    summary: "sign in to a server (OAuth in the browser) and store its tokens",
    usage: ["login SERVER [--scope S] [--no-browser]", "login --url URL"],
    details: "Opens a browser only here or with --login. A client secret, when a server needs\n" +
      "one, comes from the config entry's oauth.clientSecret or MCPCTL_OAUTH_CLIENT_SECRET.\n" +
      "--timeout bounds the wait for the browser (default 5 minutes).",
    options: [
      ...ADHOC_OPTIONS.filter((o) => o.name === "url" || o.name === "name"),
      ...SIGN_IN_OPTIONS,
      ...CONNECT_OPTIONS.filter((o) => o.name === "trust-project"),
    ],
    load: () => import("./login.ts"),
  },
  {
    name: "logout",
    summary: "revoke a server's tokens and remove them",
    usage: ["logout SERVER [--all] [--local]", "logout --url URL"],
    details: "Asks the authorization server to revoke the tokens (RFC 7009) when it offers a\n" +
      "revocation endpoint, for at most 10 s, then removes them locally whatever it answers.",
    options: [
      ...ADHOC_OPTIONS.filter((o) => o.name === "url" || o.name === "name"),
      ...CONNECT_OPTIONS.filter((o) => o.name === "trust-project"),
      { name: "all", type: "boolean", description: "also forget the cached client registration" },
      {
        name: "local",
        type: "boolean",
        description: "only remove the tokens here; do not ask the server to revoke them",
      },
    ],
    load: () => import("./logout.ts"),
  },
  {
    name: "trust",
    summary: "approve what project config files ask to run or send",
    usage: [
      "trust [SERVER...] [--yes]",
      "trust [SERVER...] --list [--json]",
      "trust [SERVER...] --revoke",
    ],
    details: "A project file (mcpctl.json, .mcp.json … found walking up from the working\n" +
      "directory) is hostile until approved: a server in it that runs a program (command,\n" +
      "tokenCommand), reads a variable (${VAR}, {env:VAR}) anywhere, has oauth settings, or\n" +
      "replaces a server of the global file is blocked until approved here or at a terminal\n" +
      "prompt. trust shows every field of what it approves, then asks (off a terminal: --yes).\n" +
      "Editing any of those fields needs a new approval.",
    options: [
      { name: "list", type: "boolean", description: "show project servers and their approval" },
      { name: "revoke", type: "boolean", description: "withdraw approvals" },
      {
        name: "yes",
        short: "y",
        type: "boolean",
        description: "approve without asking (needed off a terminal)",
      },
    ],
    load: () => import("./trust.ts"),
  },
];
