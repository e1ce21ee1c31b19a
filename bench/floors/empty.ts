// Floor: `deno run` of a script that does nothing. Intentionally empty.
