/**
 * The form side of elicitation: reads the flat `requestedSchema` of an
 * `elicitation/create` request into fields, parses what a person types for each field,
 * checks values against the field's bounds, and collects defaults (SEP-1034).
 *
 * Supported (MCP 2025-06-18 and 2025-11-25): `string` (minLength, maxLength, pattern,
 * format email/uri/date/date-time), `number` and `integer` (minimum, maximum),
 * `boolean`, single-select enums (`enum`, `oneOf` const/title, legacy `enumNames`) and
 * multi-select arrays (`items.enum`, `items.anyOf`/`items.oneOf` const/title, with
 * minItems/maxItems).
 *
 * @module
 */

import { isRecord } from "../mcp/client.ts";

/** A value a field can hold in the reply's `content`. */
export type FieldValue = string | number | boolean | string[];

/** The kind of input a field takes. */
export type FieldKind = "string" | "number" | "integer" | "boolean" | "enum" | "multi";

/** String formats mcpctl checks. */
export type StringFormat = "email" | "uri" | "date" | "date-time";

/** One choice of an enum or a multi-select field. */
export interface Choice {
  /** The value sent back. */
  value: string;
  /** What a person sees, when the server gave a title. */
  label?: string;
}

/** One field of an elicitation form. */
export interface Field {
  /** Property name (the key in `content`). */
  name: string;
  kind: FieldKind;
  title?: string;
  description?: string;
  required: boolean;
  /** The server's default, only when it is a valid value for the field. */
  default?: FieldValue;
  /** Choices of `enum` and `multi` fields, in the server's order. */
  choices?: Choice[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: StringFormat;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
}

/** A schema mcpctl cannot present as a form. */
export class SchemaProblem extends Error {
  override name = "SchemaProblem";
}

const FORMATS: readonly string[] = ["email", "uri", "date", "date-time"];

/**
 * Reads `requestedSchema` into fields, in property order.
 *
 * @throws {SchemaProblem} when the schema is not a flat object of supported fields.
 *
 * @example
 * ```ts
 * import { parseRequestedSchema } from "./elicitation_schema.ts";
 * const [f] = parseRequestedSchema({
 *   type: "object",
 *   properties: { age: { type: "integer", minimum: 0, default: 30 } },
 * });
 * // f: { name: "age", kind: "integer", required: false, minimum: 0, default: 30 }
 * ```
 */
export function parseRequestedSchema(schema: unknown): Field[] {
  if (!isRecord(schema)) throw new SchemaProblem("requestedSchema is not an object");
  if (schema.type !== undefined && schema.type !== "object") {
    throw new SchemaProblem('requestedSchema must have type "object"');
  }
  const properties = schema.properties ?? {};
  if (!isRecord(properties)) throw new SchemaProblem("requestedSchema.properties is not an object");
  const required = Array.isArray(schema.required)
    ? schema.required.filter((r): r is string => typeof r === "string")
    : [];
  const fields: Field[] = [];
  for (const [name, raw] of Object.entries(properties)) {
    if (!isRecord(raw)) throw new SchemaProblem(`field "${name}" has no schema object`);
    const field = readField(name, raw, required.includes(name));
    if (raw.default !== undefined && checkValue(field, raw.default as FieldValue) === undefined) {
      field.default = raw.default as FieldValue;
    }
    fields.push(field);
  }
  return fields;
}

function readField(name: string, raw: Record<string, unknown>, required: boolean): Field {
  const field: Field = { name, kind: "string", required };
  if (typeof raw.title === "string") field.title = raw.title;
  if (typeof raw.description === "string") field.description = raw.description;
  const type = raw.type;
  if (type === "array") {
    field.kind = "multi";
    const items = isRecord(raw.items) ? raw.items : {};
    field.choices = choicesOf(items, items.anyOf ?? items.oneOf);
    if (field.choices.length === 0) {
      throw new SchemaProblem(`field "${name}": arrays need items with enum or anyOf choices`);
    }
    const min = count(raw.minItems);
    const max = count(raw.maxItems);
    if (min !== undefined) field.minItems = min;
    if (max !== undefined) field.maxItems = max;
    return field;
  }
  if (type === "string" || (type === undefined && (raw.enum ?? raw.oneOf) !== undefined)) {
    if (raw.enum !== undefined || raw.oneOf !== undefined) {
      field.kind = "enum";
      field.choices = choicesOf(raw, raw.oneOf);
      if (field.choices.length === 0) throw new SchemaProblem(`field "${name}": empty enum`);
      return field;
    }
    const min = count(raw.minLength);
    const max = count(raw.maxLength);
    if (min !== undefined) field.minLength = min;
    if (max !== undefined) field.maxLength = max;
    if (typeof raw.pattern === "string") field.pattern = raw.pattern;
    if (typeof raw.format === "string" && FORMATS.includes(raw.format)) {
      field.format = raw.format as StringFormat;
    }
    return field;
  }
  if (type === "number" || type === "integer") {
    field.kind = type;
    if (typeof raw.minimum === "number") field.minimum = raw.minimum;
    if (typeof raw.maximum === "number") field.maximum = raw.maximum;
    return field;
  }
  if (type === "boolean") {
    field.kind = "boolean";
    return field;
  }
  throw new SchemaProblem(
    `field "${name}" has unsupported type ${JSON.stringify(type ?? null)}`,
  );
}

// `enum` (+ legacy `enumNames`), or a list of `{const, title}` options.
function choicesOf(raw: Record<string, unknown>, options: unknown): Choice[] {
  if (Array.isArray(options)) {
    const choices: Choice[] = [];
    for (const o of options) {
      if (!isRecord(o) || typeof o.const !== "string") continue;
      choices.push(
        typeof o.title === "string" ? { value: o.const, label: o.title } : {
          value: o.const,
        },
      );
    }
    return choices;
  }
  if (!Array.isArray(raw.enum)) return [];
  const names: unknown[] = Array.isArray(raw.enumNames) ? raw.enumNames : [];
  const choices: Choice[] = [];
  raw.enum.forEach((value: unknown, i: number) => {
    if (typeof value !== "string") return;
    const label = names[i];
    choices.push(typeof label === "string" ? { value, label } : { value });
  });
  return choices;
}

function count(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}

/**
 * Checks a value against a field: type, bounds, format, pattern, choices. Returns a
 * short problem for a person, or undefined when the value is fine.
 *
 * @example
 * ```ts
 * import { checkValue } from "./elicitation_schema.ts";
 * checkValue({ name: "n", kind: "integer", required: true, maximum: 9 }, 12);
 * // "must be at most 9"
 * ```
 */
export function checkValue(field: Field, value: FieldValue): string | undefined {
  switch (field.kind) {
    case "boolean":
      return typeof value === "boolean" ? undefined : "must be yes or no";
    case "number":
    case "integer": {
      if (typeof value !== "number" || !Number.isFinite(value)) return "must be a number";
      if (field.kind === "integer" && !Number.isInteger(value)) return "must be a whole number";
      if (field.minimum !== undefined && value < field.minimum) {
        return `must be at least ${field.minimum}`;
      }
      if (field.maximum !== undefined && value > field.maximum) {
        return `must be at most ${field.maximum}`;
      }
      return undefined;
    }
    case "enum":
      return typeof value === "string" && field.choices!.some((c) => c.value === value)
        ? undefined
        : "must be one of the choices";
    case "multi": {
      if (!Array.isArray(value)) return "must be a list of choices";
      if (value.some((v) => !field.choices!.some((c) => c.value === v))) {
        return "must contain only the listed choices";
      }
      if (new Set(value).size !== value.length) return "must not repeat a choice";
      if (field.minItems !== undefined && value.length < field.minItems) {
        return `choose at least ${field.minItems}`;
      }
      if (field.maxItems !== undefined && value.length > field.maxItems) {
        return `choose at most ${field.maxItems}`;
      }
      return undefined;
    }
    case "string":
      return typeof value === "string" ? checkString(field, value) : "must be text";
  }
}

function checkString(field: Field, value: string): string | undefined {
  const length = [...value].length;
  if (field.minLength !== undefined && length < field.minLength) {
    return `must be at least ${field.minLength} characters`;
  }
  if (field.maxLength !== undefined && length > field.maxLength) {
    return `must be at most ${field.maxLength} characters`;
  }
  if (field.format !== undefined && !FORMAT_CHECKS[field.format](value)) {
    return `must be ${FORMAT_NAMES[field.format]}`;
  }
  if (field.pattern !== undefined) {
    let re: RegExp | undefined;
    try {
      re = new RegExp(field.pattern, "u");
    } catch { /* a pattern we cannot compile is not enforced */ }
    if (re && !re.test(value)) return `must match the pattern ${field.pattern}`;
  }
  return undefined;
}

const FORMAT_NAMES: Record<StringFormat, string> = {
  "email": "an email address",
  "uri": "a URI (scheme:…)",
  "date": "a date (YYYY-MM-DD)",
  "date-time": "a date and time (YYYY-MM-DDTHH:MM:SSZ)",
};

const FORMAT_CHECKS: Record<StringFormat, (v: string) => boolean> = {
  "email": (v) => /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)*$/.test(v),
  "uri": (v) => /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/.test(v),
  "date": (v) => isDate(v),
  "date-time": (v) => {
    const m = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/
      .exec(v);
    if (!m || !isDate(m[1]!)) return false;
    const [hh, mm, ss] = [Number(m[2]), Number(m[3]), Number(m[4])];
    const offsetOk = m[7] === undefined || (Number(m[7]) < 24 && Number(m[8]) < 60);
    return hh < 24 && mm < 60 && ss <= 60 && offsetOk;
  },
};

function isDate(v: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const YES = ["y", "yes", "true", "1", "on"];
const NO = ["n", "no", "false", "0", "off"];

/**
 * Parses what a person typed (non-empty, already trimmed) into a value of the field's
 * type and checks it. Enum choices can be typed by number, value or label; multi-select
 * takes a comma-separated list of those.
 *
 * @example
 * ```ts
 * import { parseInput } from "./elicitation_schema.ts";
 * parseInput({ name: "ok", kind: "boolean", required: true }, "yes"); // { value: true }
 * ```
 */
export function parseInput(
  field: Field,
  text: string,
): { value: FieldValue } | { problem: string } {
  let value: FieldValue;
  switch (field.kind) {
    case "boolean": {
      const word = text.toLowerCase();
      if (YES.includes(word)) value = true;
      else if (NO.includes(word)) value = false;
      else return { problem: "answer yes or no" };
      break;
    }
    case "number":
    case "integer":
      if (!DECIMAL.test(text)) return { problem: "must be a number" };
      value = Number(text);
      break;
    case "enum": {
      const choice = pickChoice(field.choices!, text);
      if (choice === undefined) return { problem: `choose 1-${field.choices!.length}` };
      value = choice;
      break;
    }
    case "multi": {
      const picked: string[] = [];
      for (const part of text.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
        const choice = pickChoice(field.choices!, part);
        if (choice === undefined) {
          return { problem: `"${part}" is not a choice (1-${field.choices!.length})` };
        }
        if (!picked.includes(choice)) picked.push(choice);
      }
      value = picked;
      break;
    }
    case "string":
      value = text;
      break;
  }
  const problem = checkValue(field, value);
  return problem === undefined ? { value } : { problem };
}

function pickChoice(choices: Choice[], text: string): string | undefined {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (n >= 1 && n <= choices.length) return choices[n - 1]!.value;
  }
  const exact = choices.find((c) => c.value === text);
  if (exact) return exact.value;
  const lower = text.toLowerCase();
  return choices.find((c) => c.label?.toLowerCase() === lower || c.value.toLowerCase() === lower)
    ?.value;
}

/**
 * The reply content made of every field's default (fields without one are left out),
 * or the required fields that have no default.
 *
 * @example
 * ```ts
 * import { defaultsContent } from "./elicitation_schema.ts";
 * defaultsContent([{ name: "n", kind: "string", required: true, default: "x" }]);
 * // { content: { n: "x" } }
 * ```
 */
export function defaultsContent(
  fields: Field[],
): { content: Record<string, FieldValue> } | { missing: string[] } {
  const content: Record<string, FieldValue> = {};
  const missing: string[] = [];
  for (const f of fields) {
    if (f.default !== undefined) content[f.name] = f.default;
    else if (f.required) missing.push(f.name);
  }
  return missing.length > 0 ? { missing } : { content };
}

/**
 * A short description of what a field takes, for the prompt: type and bounds.
 *
 * @example
 * ```ts
 * import { describeField } from "./elicitation_schema.ts";
 * describeField({ name: "n", kind: "integer", required: true, minimum: 1, maximum: 9 });
 * // "whole number, 1 to 9"
 * ```
 */
export function describeField(field: Field): string {
  const parts: string[] = [];
  switch (field.kind) {
    case "boolean":
      parts.push("yes/no");
      break;
    case "number":
    case "integer":
      parts.push(field.kind === "integer" ? "whole number" : "number");
      if (field.minimum !== undefined && field.maximum !== undefined) {
        parts.push(`${field.minimum} to ${field.maximum}`);
      } else if (field.minimum !== undefined) parts.push(`at least ${field.minimum}`);
      else if (field.maximum !== undefined) parts.push(`at most ${field.maximum}`);
      break;
    case "enum":
      parts.push("choose one");
      break;
    case "multi":
      parts.push("choose any, comma-separated");
      if (field.minItems !== undefined) parts.push(`at least ${field.minItems}`);
      if (field.maxItems !== undefined) parts.push(`at most ${field.maxItems}`);
      break;
    case "string":
      parts.push(field.format !== undefined ? FORMAT_NAMES[field.format] : "text");
      if (field.minLength !== undefined) parts.push(`at least ${field.minLength} characters`);
      if (field.maxLength !== undefined) parts.push(`at most ${field.maxLength} characters`);
      break;
  }
  if (!field.required) parts.push("optional");
  return parts.join(", ");
}
