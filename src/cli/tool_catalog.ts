/**
 * The tools of configured servers for one command run: read from the tool cache when
 * fresh, discovered (server started, `tools/list` followed to the end, server closed)
 * when missing, stale or refreshed, and written back to the cache. Within one run a
 * server is discovered at most once, and one that failed is not tried again.
 *
 * @module
 */

import { isBlocked } from "../config/trust.ts";
import type { ServerEntry } from "../config/types.ts";
import { UsageError } from "../errors.ts";
import type { Client } from "../mcp/client.ts";
import { type ConnectOptions, connectServer, listTools, type ToolInfo } from "../mcp/manager.ts";
import type { RejectedTool } from "../mcp/names.ts";
import {
  openToolCache,
  readCachedTools,
  type ToolCache,
  writeCachedTools,
} from "../mcp/tool_cache.ts";
import type { Redactor } from "../util/redact.ts";
import type { CommandContext } from "./commands.ts";

/** One server's tools, or why there are none. */
export type CatalogEntry =
  | {
    ok: true;
    entry: ServerEntry;
    tools: ToolInfo[];
    rejected: RejectedTool[];
    warnings: string[];
    /** True when the list came from the cache, not from the server just now. */
    cached: boolean;
  }
  | { ok: false; entry: ServerEntry; error: unknown };

/** Options of {@linkcode ToolCatalog}. */
export interface CatalogOptions {
  /** The cache; undefined when there is none (no home directory). */
  cache: ToolCache | undefined;
  /** How servers are connected. */
  connect: ConnectOptions;
  /** Ignore fresh cache entries (`--refresh`). */
  refresh?: boolean;
  /** The run's secrets: a server that echoes one in a tool never gets it into the cache. */
  secrets?: Redactor;
  /** Told when the cache cannot be written (the command goes on). */
  onCacheError?: (server: string, error: unknown) => void;
}

/**
 * Tools per server, cache first.
 *
 * @example
 * ```ts ignore
 * const catalog = new ToolCatalog({ cache, connect: connectOptions(ctx) });
 * const result = await catalog.tools(entry);
 * if (result.ok) console.log(result.tools.map((t) => t.name));
 * ```
 */
export class ToolCatalog {
  #options: CatalogOptions;
  #live = new Map<string, Promise<CatalogEntry>>();

  constructor(options: CatalogOptions) {
    this.#options = options;
  }

  /**
   * The tools of `entry`. With `fresh`, a cached list is not enough: the server is
   * asked (once per run; a failure is remembered).
   */
  async tools(entry: ServerEntry, options: { fresh?: boolean } = {}): Promise<CatalogEntry> {
    const live = this.#live.get(entry.name);
    if (live) return await live;
    const { cache, refresh } = this.#options;
    // A blocked project entry goes to the trust gate (it may be approved at a prompt),
    // never to a list cached for an identical definition from elsewhere.
    if (cache && !refresh && !options.fresh && !isBlocked(entry)) {
      const cached = await readCachedTools(cache, entry);
      if (cached) {
        return {
          ok: true,
          entry,
          tools: cached.tools,
          rejected: cached.rejected,
          warnings: cached.warnings,
          cached: true,
        };
      }
    }
    const discovery = this.#discover(entry);
    this.#live.set(entry.name, discovery);
    return await discovery;
  }

  async #discover(entry: ServerEntry): Promise<CatalogEntry> {
    let client: Client | undefined;
    try {
      client = await connectServer(entry, this.#options.connect);
      const listed = await listTools(
        client,
        entry.name,
        this.#options.connect.signal ? { signal: this.#options.connect.signal } : {},
      );
      const { cache } = this.#options;
      if (cache) {
        try {
          const stored = this.#options.secrets?.redactValue(listed) ?? listed;
          await writeCachedTools(cache, entry, stored);
        } catch (error) {
          this.#options.onCacheError?.(entry.name, error);
        }
      }
      return { ok: true, entry, ...listed, cached: false };
    } catch (error) {
      return { ok: false, entry, error };
    } finally {
      await client?.close();
    }
  }
}

/** The tool cache configured by the environment; a bad `MCPCTL_CACHE_TTL` is a usage error. */
export function commandCache(ctx: CommandContext): ToolCache | undefined {
  try {
    return openToolCache({ env: ctx.env });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Says on stderr that the cache could not be written (the command goes on). */
export function cacheWarning(ctx: CommandContext, server: string, error: unknown): void {
  if (ctx.values.quiet === true) return;
  const message = error instanceof Error ? error.message : String(error);
  void ctx.out.error(`mcpctl: ${server}: cannot write the tool cache: ${message}\n`);
}
