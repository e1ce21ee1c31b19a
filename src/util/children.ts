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

/**
 * Sends SIGKILL to every live child, and to the process group it leads if it leads one
 * (stdio servers do), as a last resort before an immediate exit.
 */
export function killAllChildren(): void {
  for (const child of live) {
    if (Deno.build.os !== "windows") {
      try {
        Deno.kill(-child.pid, "SIGKILL");
      } catch { /* not a group leader, or already gone */ }
    }
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }
}
