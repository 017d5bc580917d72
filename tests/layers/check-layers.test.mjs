// scripts/check-layers.mjs on two fixture crates (both compile with rustc): `acyclic` has layers
// that point one way and, in `store.rs`, every kind of `crate::` text that is not a production
// import (comments, strings, chars, `#[cfg(test)]` items); `cycle` has two cycles, each closed by a
// path form other than a plain `use crate::x` (grouped use, inline path, `super::` from a
// top-level file, `super::` from a `mod.rs` file); `files` has no module cycle but one circle
// between sibling files, closed by an inline `super::` path and a nested `use` group, beside a
// parent and child that name each other (no circle) and a sibling named only in a test; both
// kinds fail the run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const check = (dir) =>
  spawnSync(process.execPath, ["scripts/check-layers.mjs", dir], {
    cwd: root,
    encoding: "utf8",
  });

test("a crate whose layers point one way passes", () => {
  const run = check("tests/layers/acyclic/src");
  assert.equal(run.stdout.trim(), "no import cycle between the 3 top-level modules");
  assert.equal(run.status, 0);
});

test("a crate with cycles fails and names each cycle with the lines that close it", () => {
  const run = check("tests/layers/cycle/src");
  assert.equal(run.status, 1);
  assert.equal(
    run.stdout.trim(),
    [
      "cycle: config -> policy -> config",
      "  modules in it: config, policy",
      "  config -> policy  (tests/layers/cycle/src/config.rs:2)",
      "  policy -> config  (tests/layers/cycle/src/policy.rs:8)",
      "cycle: registry -> tools -> registry",
      "  modules in it: registry, tools",
      "  registry -> tools  (tests/layers/cycle/src/registry.rs:4)",
      "  tools -> registry  (tests/layers/cycle/src/tools/mod.rs:2)",
    ].join("\n"),
  );
});

test("a directory that cannot be read is an error of its own", () => {
  const run = check("tests/layers/no-such-dir");
  assert.equal(run.status, 2);
  assert.match(run.stderr, /cannot read tests\/layers\/no-such-dir/);
});

const filesCircle = [
  "no import cycle between the 2 top-level modules",
  "file circle: tests/layers/files/src/query/eval.rs -> tests/layers/files/src/query/funcs.rs -> tests/layers/files/src/query/eval.rs",
  "  files in it: tests/layers/files/src/query/eval.rs, tests/layers/files/src/query/funcs.rs",
  "  tests/layers/files/src/query/eval.rs -> tests/layers/files/src/query/funcs.rs  (tests/layers/files/src/query/eval.rs:9)",
  "  tests/layers/files/src/query/funcs.rs -> tests/layers/files/src/query/eval.rs  (tests/layers/files/src/query/funcs.rs:2)",
];

test("a circle between files of one module fails and names the lines that close it", () => {
  const run = check("tests/layers/files/src");
  assert.equal(run.stdout.trim(), [...filesCircle, "1 file circle(s) inside a module"].join("\n"));
  assert.equal(run.status, 1);
});

test("module cycles are not repeated as file circles", () => {
  const cycle = check("tests/layers/cycle/src");
  assert.doesNotMatch(cycle.stdout, /file circle/);
});
