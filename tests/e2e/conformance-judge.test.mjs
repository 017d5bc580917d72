// The conformance runner's verdicts on made-up suite results: an unlisted failure, a listed
// failure that passes now or no longer runs, and a listed scenario the revision does not score
// all fail the run; the real expected-failures file is well formed and names scored scenarios.

import { test } from "node:test";
import assert from "node:assert/strict";
import { REVISIONS, expectedFailures, judge, scoredScenarios } from "./conformance.mjs";

const check = (id, status) => ({ id, status, description: id });
const run = (entries) => new Map(Object.entries(entries));

test("scored checks must pass unless listed, and listed ones must still fail", () => {
  const scored = ["a", "b", "c"];
  const expected = [
    { scenario: "b", reason: "needs the suite's tools" },
    { scenario: "c", check: "c-2", reason: "needs the suite's tool" },
  ];
  const clean = judge("r", run({
    a: [check("a-1", "SUCCESS"), check("a-info", "INFO")],
    b: [check("b-1", "FAILURE")],
    c: [check("c-1", "WARNING"), check("c-2", "FAILURE")],
    extra: [check("x", "FAILURE")],
  }), scored, expected);
  assert.deepEqual(clean.problems, []);
  assert.match(clean.rows.find((r) => r.scenario === "extra").verdict, /not scored/);
  assert.match(clean.rows.find((r) => r.scenario === "c").verdict, /warnings: c-1/);

  const broken = judge("r", run({
    a: [check("a-1", "FAILURE")],
    b: [check("b-1", "SUCCESS")],
    c: [check("c-1", "SUCCESS")],
  }), scored, expected);
  assert.equal(broken.problems.length, 3, broken.problems.join("\n"));
  assert.match(broken.problems[0], /a: check a-1 failed/);
  assert.match(broken.problems[1], /b: .*passes now/);
  assert.match(broken.problems[2], /c: expected failing check c-2 did not run/);

  const stale = judge("r", run({ a: [], b: [check("b-1", "FAILURE")], c: [check("c-2", "WARNING")] }), scored, expected);
  assert.deepEqual(stale.problems, ["c: expected failing check c-2 passes now"]);
});

test("a scenario listed whole still fails the run when the server sent a message its schema refuses", () => {
  const expected = [{ scenario: "b", reason: "needs the suite's tools" }];
  const { problems } = judge("r", run({ b: [check("b-1", "FAILURE"), check("wire-schema-valid", "FAILURE")] }), ["b"], expected);
  assert.deepEqual(problems, ["b: wire-schema-valid failed: wire-schema-valid"]);
});

test("a scenario that did not run, or a listed one the revision does not score, is a problem", () => {
  const { problems } = judge("r", run({}), ["a"], [{ scenario: "zzz", reason: "typo" }]);
  assert.deepEqual(problems, [
    "zzz: listed as an expected failure, but r does not score it",
    "a: did not run (no checks.json)",
  ]);
});

test("the expected-failures file gives a reason for every entry and lists only scored scenarios", () => {
  for (const revision of REVISIONS) {
    const scored = scoredScenarios(revision);
    assert.ok(scored.length > 10, `${revision}: ${scored.length} scored scenarios`);
    for (const e of expectedFailures(revision)) {
      assert.ok(scored.includes(e.scenario), `${revision}: ${e.scenario} is not scored`);
      assert.ok(e.reason.length > 20, `${revision}: ${e.scenario} needs a real reason`);
    }
  }
});
