/**
 * Human rendering of a `CallToolResult`: text blocks as they are (stripped of terminal
 * escapes), `structuredContent` as pretty JSON when there is no text, images, audio
 * and blobs saved as files with their paths printed, resource links by URI.
 *
 * @module
 */

import { isRecord } from "../mcp/client.ts";
import { stripTerminal } from "../mcp/sanitize.ts";

/** Where binary content is saved. */
export interface SaveTarget {
  /** Directory, created on first use (a fresh temp dir when not given). */
  dir?: string;
  /** File name stem, e.g. the tool name. */
  stem: string;
}

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/mpeg": "mp3",
  "audio/ogg": "ogg",
  "audio/webm": "webm",
  "application/pdf": "pdf",
  "application/json": "json",
  "text/plain": "txt",
};

/** Renders a result for a person; returns the text for stdout. */
export async function renderResult(result: unknown, target: SaveTarget): Promise<string> {
  if (!isRecord(result)) return JSON.stringify(result, null, 2) + "\n";
  const content = Array.isArray(result.content) ? result.content : [];
  const parts: string[] = [];
  let saver: Saver | undefined;
  const save = async (data: string, mime: string, kind: string) => {
    saver ??= new Saver(target);
    try {
      return await saver.save(data, mime, kind);
    } catch (e) {
      if (!(e instanceof DOMException)) throw e;
      return { path: "not saved: the data is not valid base64", bytes: 0 };
    }
  };
  let hasText = false;
  for (const block of content) {
    if (!isRecord(block)) continue;
    switch (block.type) {
      case "text":
        if (typeof block.text === "string") {
          hasText = true;
          parts.push(block.text);
        }
        break;
      case "image":
      case "audio": {
        const mime = typeof block.mimeType === "string" ? block.mimeType : "";
        if (typeof block.data !== "string") break;
        const { path, bytes } = await save(block.data, mime, block.type);
        parts.push(
          `[${block.type} saved: ${path} (${safe(mime) || "unknown type"}, ${bytes} bytes)]`,
        );
        break;
      }
      case "resource_link": {
        const uri = typeof block.uri === "string" ? block.uri : "?";
        const extra = [block.name, block.mimeType].filter((x) => typeof x === "string");
        parts.push(
          `[resource link: ${safe(uri)}${
            extra.length ? ` (${extra.map((x) => safe(x as string)).join(", ")})` : ""
          }]`,
        );
        break;
      }
      case "resource": {
        const r = isRecord(block.resource) ? block.resource : {};
        const uri = typeof r.uri === "string" ? r.uri : "?";
        const mime = typeof r.mimeType === "string" ? r.mimeType : "";
        if (typeof r.text === "string") {
          hasText = true;
          parts.push(`[resource: ${safe(uri)}]\n${r.text}`);
        } else if (typeof r.blob === "string") {
          const { path, bytes } = await save(r.blob, mime, "resource");
          parts.push(
            `[resource: ${safe(uri)} saved: ${path} (${
              safe(mime) || "unknown type"
            }, ${bytes} bytes)]`,
          );
        } else {
          parts.push(`[resource: ${safe(uri)}]`);
        }
        break;
      }
      default:
        parts.push(`[${safe(String(block.type))} content]`);
    }
  }
  if (!hasText && result.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent, null, 2));
  }
  if (parts.length === 0) return "";
  return parts.map((p) => p.endsWith("\n") ? p : p + "\n").join("");
}

function safe(s: string): string {
  return stripTerminal(s).replace(/\s+/g, " ");
}

class Saver {
  #dir: string | undefined;
  #count = 0;
  constructor(readonly target: SaveTarget) {}

  async save(data: string, mime: string, kind: string): Promise<{ path: string; bytes: number }> {
    this.#dir ??= await this.#ensureDir();
    const bytes = decodeBase64(data);
    const ext = EXTENSIONS[mime.toLowerCase().split(";")[0]!.trim()] ?? "bin";
    const stem = this.target.stem.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 60) || kind;
    let path: string;
    while (true) {
      this.#count++;
      path = `${this.#dir}/${stem}-${this.#count}.${ext}`;
      try {
        // createNew: never overwrite a file already in a user-given directory.
        await Deno.writeFile(path, bytes, { createNew: true, mode: 0o644 });
        break;
      } catch (e) {
        if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      }
    }
    return { path, bytes: bytes.length };
  }

  async #ensureDir(): Promise<string> {
    if (this.target.dir !== undefined) {
      await Deno.mkdir(this.target.dir, { recursive: true });
      return this.target.dir;
    }
    return await Deno.makeTempDir({ prefix: "mcpctl-" });
  }
}

/** Decodes base64 (standard or URL-safe, padding optional). */
export function decodeBase64(data: string): Uint8Array {
  const clean = data.replace(/\s+/g, "").replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(clean + "=".repeat((4 - clean.length % 4) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
