/**
 * A small, table-driven argument parser. It costs nothing at start-up (no import), and
 * the same tables generate help and shell completions, so they never disagree.
 *
 * @module
 */

import { UsageError } from "../errors.ts";

/** One option of a command. */
export interface OptionSpec {
  /** Long name without dashes, e.g. `timeout`. */
  name: string;
  /** One-letter alias. */
  short?: string;
  /** Whether it takes a value. */
  type: "boolean" | "string";
  /** May be given more than once (values collected in order). */
  multiple?: boolean;
  /** Placeholder shown in help, e.g. `MS`. */
  arg?: string;
  /** Help text. */
  description: string;
  /** Hidden from help and completions. */
  hidden?: boolean;
}

/** Parsed option values, by long name. */
export type OptionValues = Record<string, string | boolean | string[] | undefined>;

/** The result of parsing. */
export interface ParsedArgs {
  values: OptionValues;
  positionals: string[];
}

/**
 * Parses `args` against `options`. Accepts `--name value`, `--name=value`, `-x value`,
 * grouped short booleans (`-vq`) and `--` to end options.
 *
 * @example
 * ```ts
 * import { parseArguments } from "./args.ts";
 * parseArguments(["list", "--timeout", "5"], [{ name: "timeout", type: "string", description: "" }], "mcpctl");
 * // { values: { timeout: "5" }, positionals: ["list"] }
 * ```
 */
export function parseArguments(
  args: readonly string[],
  options: readonly OptionSpec[],
  command: string,
): ParsedArgs {
  const byLong = new Map(options.map((o) => [o.name, o]));
  const byShort = new Map(options.filter((o) => o.short).map((o) => [o.short!, o]));
  const values: OptionValues = {};
  const positionals: string[] = [];
  const set = (spec: OptionSpec, value: string | boolean) => {
    if (spec.multiple) {
      const list = (values[spec.name] as string[] | undefined) ?? [];
      list.push(String(value));
      values[spec.name] = list;
    } else {
      values[spec.name] = value;
    }
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--") && arg.length > 2) {
      const eq = arg.indexOf("=");
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const spec = byLong.get(name);
      if (!spec) throw unknownOption(`--${name}`, options, command);
      if (spec.type === "boolean") {
        if (eq !== -1) {
          throw new UsageError(`option --${name} takes no value`, { hint: helpHint(command) });
        }
        set(spec, true);
      } else if (eq !== -1) {
        set(spec, arg.slice(eq + 1));
      } else {
        const next = args[++i];
        if (next === undefined) throw missingValue(spec, command);
        set(spec, next);
      }
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1 && !/^-\d/.test(arg)) {
      for (let j = 1; j < arg.length; j++) {
        const spec = byShort.get(arg[j]!);
        if (!spec) throw unknownOption(`-${arg[j]}`, options, command);
        if (spec.type === "boolean") {
          set(spec, true);
          continue;
        }
        const rest = arg.slice(j + 1);
        if (rest) set(spec, rest);
        else {
          const next = args[++i];
          if (next === undefined) throw missingValue(spec, command);
          set(spec, next);
        }
        break;
      }
      continue;
    }
    positionals.push(arg);
  }
  return { values, positionals };
}

function helpHint(command: string): string {
  return `see '${command} --help'`;
}

function missingValue(spec: OptionSpec, command: string): UsageError {
  return new UsageError(`option --${spec.name} needs a value (${spec.arg ?? "VALUE"})`, {
    hint: helpHint(command),
  });
}

function unknownOption(flag: string, options: readonly OptionSpec[], command: string): UsageError {
  const names = options.filter((o) => !o.hidden).map((o) => `--${o.name}`);
  const close = closest(flag, names);
  return new UsageError(
    `unknown option ${flag} for '${command}'${close.length ? `; did you mean ${close[0]}?` : ""}`,
    { hint: helpHint(command) },
  );
}

/**
 * The candidates closest to `word` by edit distance (at most a third of its length),
 * best first.
 */
export function closest(word: string, candidates: readonly string[], max = 3): string[] {
  const limit = Math.max(2, Math.floor(word.length / 3));
  return candidates
    .map((c) => ({ c, d: distance(word.toLowerCase(), c.toLowerCase()) }))
    .filter(({ c, d }) =>
      d <= limit || c.toLowerCase().includes(word.toLowerCase()) ||
      word.toLowerCase().includes(c.toLowerCase())
    )
    .sort((a, b) => a.d - b.d)
    .slice(0, max)
    .map(({ c }) => c);
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(
        prev[j]! + 1,
        cur[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** Reads a non-negative integer option (milliseconds, ports). */
export function intOption(values: OptionValues, name: string): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== "string" || !/^\d+$/.test(v) || !Number.isSafeInteger(n)) {
    throw new UsageError(`option --${name} must be a whole number, not ${JSON.stringify(v)}`);
  }
  return n;
}

/** Splits a command line the way a POSIX shell would for simple quoting. */
export function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let has = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      has = true;
    } else if (c === "\\" && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) out.push(cur);
      cur = "";
      has = false;
    } else {
      cur += c;
    }
  }
  if (quote) throw new UsageError(`unterminated ${quote} in ${JSON.stringify(line)}`);
  if (has || cur) out.push(cur);
  return out;
}
