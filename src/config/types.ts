/**
 * Resolved configuration types: what the loader hands to the rest of the program.
 *
 * @module
 */

/** Transport chosen for a server. */
export type TransportKind = "stdio" | "http" | "sse";

/** OAuth settings of one server entry (all optional). */
export interface OAuthSettings {
  clientId?: string;
  clientSecret?: string;
  clientMetadataUrl?: string;
  scope?: string;
  callbackPort?: number;
  grant?: "authorization_code" | "client_credentials";
  privateKey?: string;
  signingAlgorithm?: string;
  tokenEndpointAuthMethod?: string;
}

/** One server as resolved from config or from `--stdio`/`--url`. */
export interface ServerEntry {
  /** Server name (validated: `[A-Za-z0-9_-]`, no `__`, not ending in `_`). */
  name: string;
  /** Where it came from: a file path, or `command line`. */
  source: string;
  /** Transport; `http` when only a URL is known (legacy SSE fallback happens at connect). */
  type: TransportKind;
  /** True when the type was given explicitly (an explicit `http` never falls back to SSE). */
  typeExplicit: boolean;
  /** Whether the entry is enabled. */
  enabled: boolean;
  /** stdio: program to run. */
  command?: string;
  /** stdio: its arguments. */
  args: string[];
  /** stdio: environment added to the inherited one. */
  env: Record<string, string>;
  /** stdio: working directory. */
  cwd?: string;
  /** http/sse: server URL. */
  url?: string;
  /** http/sse: extra request headers (values are secrets: never printed). */
  headers: Record<string, string>;
  /** Request timeout in ms for this server, when set. */
  timeoutMs?: number;
  /** Largest accepted message in bytes (stdio line, HTTP body); default 1 MiB. */
  maxMessageBytes?: number;
  /** OAuth settings. */
  oauth?: OAuthSettings;
  /** A command that prints a bearer token. */
  tokenCommand?: string[];
  /**
   * Set for entries declared in a project file (any file found by walking up from the
   * working directory): what the trust rule decided about it. While it is blocked
   * nothing in it is expanded, run or sent.
   */
  project?: ProjectOrigin;
  /** Set when the entry cannot be used (e.g. a missing variable); the server is `failed`. */
  error?: string;
  /**
   * The variables expanded into this entry, by name, with their values: secrets, for
   * the redactor (`src/util/redact.ts`). Absent when nothing was expanded.
   */
  variables?: Record<string, string>;
  /** The runtime fields as written, before variable expansion (what `mcpctl config` shows). */
  written?: WrittenFields;
}

/** The fields of an entry that variables can be expanded into, as written in the file. */
export interface WrittenFields {
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  url?: string;
  headers: Record<string, string>;
  oauth?: OAuthSettings;
  tokenCommand?: string[];
}

/** One entry as written in a file: not yet expanded. */
export interface RawEntry {
  name: string;
  source: string;
  type?: TransportKind;
  enabled: boolean;
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  url?: string;
  headers: Record<string, string>;
  timeoutMs?: number;
  maxMessageBytes?: number;
  oauth?: OAuthSettings;
  tokenCommand?: string[];
}

/** How an approval was given. */
export type Approval = "stored" | "switch" | "prompt";

/** The trust state of an entry declared in a project file (see `trust.ts`). */
export interface ProjectOrigin {
  /** The project file, as found walking up (a symlink is not resolved to name it). */
  file: string;
  /** The entry as written, before variable expansion: what is shown and approved. */
  raw: RawEntry;
  /** Why it needs approval, one phrase each; empty when it needs none. */
  needs: string[];
  /** SHA-256 (hex) of every field that can run or send, as written. */
  digest: string;
  /** How it was approved; absent while not approved. */
  approval?: Approval;
}

/** Default frame / message limit: 1 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;
