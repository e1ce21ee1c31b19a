/**
 * Error types shared by every layer. Each carries the process exit code that the CLI
 * uses when the error ends a command, so lower layers decide the class of a failure
 * and the CLI never guesses from message text.
 *
 * @module
 */

/** Exit codes, the contract documented in the README. */
export const ExitCode = {
  ok: 0,
  toolError: 1,
  usage: 2,
  server: 3,
  auth: 4,
  timeout: 5,
  interrupted: 130,
} as const;

/** One of the documented exit codes. */
export type ExitCodeValue = typeof ExitCode[keyof typeof ExitCode];

/**
 * Base class of every error mcpctl raises on purpose.
 *
 * @example
 * ```ts
 * import { McpctlError } from "./errors.ts";
 * try {
 *   throw new McpctlError("boom");
 * } catch (e) {
 *   if (e instanceof McpctlError) console.log(e.exitCode); // 3
 * }
 * ```
 */
export class McpctlError extends Error {
  override name = "McpctlError";
  /** Exit code used when this error ends the process. */
  exitCode: ExitCodeValue = ExitCode.server;
  /** Optional hint printed after the message, telling the user what to do. */
  hint: string | undefined;
  constructor(message: string, options?: ErrorOptions & { hint?: string }) {
    super(message, options);
    this.hint = options?.hint;
  }
}

/** A bad command line: unknown option, missing argument, unknown server or tool. Exit 2. */
export class UsageError extends McpctlError {
  override name = "UsageError";
  override exitCode: ExitCodeValue = ExitCode.usage;
}

/** A configuration file that cannot be read, parsed or validated. Exit 2. */
export class ConfigError extends McpctlError {
  override name = "ConfigError";
  override exitCode: ExitCodeValue = ExitCode.usage;
}

/**
 * A server from a project file that needs approval and has none: nothing of it was
 * run or sent. Exit 2, like any config matter.
 */
export class UntrustedError extends ConfigError {
  override name = "UntrustedError";
}

/** Tool arguments that fail to parse or validate. Exit 2. */
export class ArgumentError extends McpctlError {
  override name = "ArgumentError";
  override exitCode: ExitCodeValue = ExitCode.usage;
}

/** A server failed: it cannot start, broke the protocol, or the connection was lost. Exit 3. */
export class ServerError extends McpctlError {
  override name = "ServerError";
  override exitCode: ExitCodeValue = ExitCode.server;
}

/** The server sent something that breaks the protocol. Exit 3. */
export class ProtocolError extends ServerError {
  override name = "ProtocolError";
}

/** The connection closed (EOF, process exit, stream end) while work was pending. Exit 3. */
export class ConnectionClosedError extends ServerError {
  override name = "ConnectionClosedError";
}

/** A JSON-RPC error response from the server. Exit 3. */
export class RpcError extends ServerError {
  override name = "RpcError";
  /** JSON-RPC error code. */
  readonly code: number;
  /** JSON-RPC error data, untrusted. */
  readonly data: unknown;
  /** The error's own message, without the code prefix (what goes back on the wire). */
  readonly rpcMessage: string;
  constructor(code: number, message: string, data?: unknown) {
    super(`JSON-RPC error ${code}: ${message}`);
    this.code = code;
    this.data = data;
    this.rpcMessage = message;
  }
}

/** The server needs a sign-in, or the sign-in was refused. Exit 4. */
export class AuthRequiredError extends McpctlError {
  override name = "AuthRequiredError";
  override exitCode: ExitCodeValue = ExitCode.auth;
}

/** A wait ran past its limit. Exit 5. */
export class TimeoutError extends McpctlError {
  override name = "TimeoutError";
  override exitCode: ExitCodeValue = ExitCode.timeout;
}

/** The user interrupted (SIGINT, SIGTERM). Exit 130. */
export class InterruptedError extends McpctlError {
  override name = "InterruptedError";
  override exitCode: ExitCodeValue = ExitCode.interrupted;
}

/**
 * Maps any thrown value to an exit code: our errors carry theirs, anything else is a
 * server failure class (3) because it escaped every deliberate check.
 */
export function exitCodeOf(error: unknown): ExitCodeValue {
  return error instanceof McpctlError ? error.exitCode : ExitCode.server;
}
