/** mcpctl's version; kept equal to `version` in deno.json (a test checks). */
export const VERSION = "0.1.0";
