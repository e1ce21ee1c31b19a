/**
 * A registry of live child processes, so that a second Ctrl-C — which exits at once —
 * still leaves no server behind.
 *
 * @module
 */

const live = new Set<Deno.ChildProcess>();

/** Records a spawned child until it is reaped. */
export function trackChild(child: Deno.ChildProcess): void {
  live.add(child);
  child.status.finally(() => live.delete(child));
}

/** Sends SIGKILL to every live child (last resort before an immediate exit). */
export function killAllChildren(): void {
  for (const child of live) {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }
}
