/**
 * mcpctl: a command-line client for the Model Context Protocol.
 *
 * @module
 */

import { main } from "./src/cli/main.ts";

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
