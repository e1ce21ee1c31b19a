/**
 * A one-line progress bar on stderr, drawn only when stderr is a terminal.
 *
 * @module
 */

import type { Progress } from "../mcp/client.ts";
import { oneLine } from "../mcp/sanitize.ts";
import type { Output } from "./output.ts";

/** Draws progress notifications; `clear()` removes the line. */
export interface ProgressDisplay {
  update(p: Progress): void;
  clear(): Promise<void>;
}

/** Creates a progress display; a no-op unless `enabled`. */
export function createProgress(out: Output, enabled: boolean, label: string): ProgressDisplay {
  if (!enabled) return { update() {}, clear: () => Promise.resolve() };
  let drawn = false;
  let pending = Promise.resolve();
  const width = 24;
  return {
    update(p) {
      let bar: string;
      if (p.total !== undefined && p.total > 0) {
        const frac = Math.max(0, Math.min(1, p.progress / p.total));
        const filled = Math.round(frac * width);
        bar = `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${Math.round(frac * 100)}%`;
      } else {
        bar = `[${p.progress}]`;
      }
      const msg = p.message ? ` ${oneLine(p.message, 60)}` : "";
      drawn = true;
      pending = pending.then(() => out.status(`${label} ${bar}${msg}`));
    },
    async clear() {
      await pending;
      if (drawn) await out.status("");
    },
  };
}
