import assert from "node:assert/strict";
import { absolutePath, fileUri, listRoots, rootsClientOptions } from "../../src/cli/roots.ts";

Deno.test("roots: file URIs are percent-encoded, Windows drives kept", () => {
  assert.equal(fileUri("/tmp/a b/c#d%e", "linux"), "file:///tmp/a%20b/c%23d%25e");
  assert.equal(fileUri("/", "linux"), "file:///");
  assert.equal(fileUri("C:\\Users\\me x", "windows"), "file:///C:/Users/me%20x");
});

Deno.test("roots: paths resolved against the working directory", () => {
  assert.equal(absolutePath("/work/p", "../data/./x", "linux"), "/work/data/x");
  assert.equal(absolutePath("/work", "/abs//y/", "linux"), "/abs/y");
  assert.equal(absolutePath("/", "../..", "linux"), "/");
  assert.equal(absolutePath("C:\\w", "..\\d", "windows"), "C:\\d");
});

Deno.test("roots: working directory first, --root added, duplicates once, missing refused", async () => {
  const roots = listRoots({
    cwd: "/work",
    extra: ["../data", "/work", "/data/"],
    os: "linux",
    isDirectory: () => true,
  });
  assert.deepEqual(roots, [
    { uri: "file:///work", name: "work" },
    { uri: "file:///data", name: "data" },
  ]);
  assert.throws(
    () => listRoots({ cwd: "/w", extra: ["nope"], os: "linux", isDirectory: () => false }),
    /--root nope: not an existing directory/,
  );
  const options = rootsClientOptions(roots);
  assert.deepEqual(options.capabilities, { roots: {} });
  assert.deepEqual(await options.requestHandlers!["roots/list"]!(undefined, { server: "s" }), {
    roots,
  });
});
