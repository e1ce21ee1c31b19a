/**
 * Reference (not a budget floor): the cheapest *Deno* client of the minimal stdio server.
 * Spawns the server given on the command line, writes initialize,
 * notifications/initialized and tools/call, reads stdout until the tools/call answer
 * (id 2) arrives, closes stdin and waits for the server to exit. No imports.
 *
 * Run it the way mcpctl runs (`deno run -q -P=mcpctl`) and the difference to mcpctl is
 * what mcpctl's own code costs; the difference to `raw_client.sh` is what any Deno-based
 * client costs (a second Deno start, in series with the server's).
 *
 * With `-n N` it runs N such clients concurrently (the reference for `list`).
 *
 * Usage: deno run -q -P=mcpctl bench/floors/deno_client.ts [-n N] SERVER_CMD [ARGS...]
 *
 * @module
 */

const REQUESTS = new TextEncoder().encode(
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",' +
    '"capabilities":{},"clientInfo":{"name":"deno-raw","version":"0"}}}\n' +
    '{"jsonrpc":"2.0","method":"notifications/initialized"}\n' +
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo",' +
    '"arguments":{"message":"hi"}}}\n',
);

/** One client: spawn, send, read the tools/call answer, close stdin, wait for exit. */
async function callOnce(cmd: string, args: string[]): Promise<string> {
  const child = new Deno.Command(cmd, {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(REQUESTS);
  const decoder = new TextDecoder();
  let text = "";
  let answer: string | undefined;
  for await (const chunk of child.stdout) {
    text += decoder.decode(chunk, { stream: true });
    answer = text.split("\n").find((line) => line.startsWith('{"jsonrpc":"2.0","id":2,'));
    if (answer !== undefined) break;
  }
  await writer.close();
  await child.status;
  if (answer === undefined) throw new Error("no tools/call answer");
  return JSON.parse(answer).result.content[0].text;
}

if (import.meta.main) {
  let argv = Deno.args;
  let n = 1;
  if (argv[0] === "-n") {
    n = Number(argv[1]);
    argv = argv.slice(2);
  }
  const [cmd, ...args] = argv;
  if (cmd === undefined || !(n >= 1)) {
    throw new Error("usage: deno_client.ts [-n N] SERVER_CMD [ARGS...]");
  }
  const texts = await Promise.all(Array.from({ length: n }, () => callOnce(cmd, args)));
  console.log(texts.join("\n"));
}
