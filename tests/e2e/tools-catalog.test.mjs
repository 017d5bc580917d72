// The vendor tools as an MCP client lists them from the worker in workerd: all 18 names, input
// schemas with the arguments of docs/tools.md, and annotations (reads read-only and idempotent, deletes
// destructive, every tool open-world).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startStack } from "./tools-common.mjs";

const VERBS = ["get", "post", "put", "patch", "delete"];
const ATLASSIAN = ["jira", "conf", "bb"].flatMap((p) => VERBS.map((v) => `${p}_${v}`));
const EXPECTED = ["github_list_workflow_runs", "github_list_workflow_jobs", "circleci_get", ...ATLASSIAN];

let stack;
let tools;
before(async () => {
  stack = await startStack();
  ({ tools } = await (await stack.client()).listTools());
});
after(() => stack?.close());

const byName = (name) => tools.find((t) => t.name === name);

test("all 18 vendor tools are listed, each once", () => {
  const names = tools.map((t) => t.name);
  for (const name of EXPECTED) assert.ok(names.includes(name), `${name} is listed`);
  assert.equal(new Set(names).size, names.length);
  assert.equal(EXPECTED.length, 18);
});

test("every tool has a description that teaches its use and an object input schema", () => {
  for (const name of EXPECTED) {
    const tool = byName(name);
    assert.ok(tool.description.length >= 200, `${name}: a description long enough to teach (got ${tool.description.length} chars)`);
    assert.match(tool.description, /jq|JMESPath/i, `${name}: the description explains the jq argument`);
    assert.equal(tool.inputSchema.type, "object");
    for (const arg of ["jq", "outputFormat"]) assert.ok(tool.inputSchema.properties?.[arg], `${name} takes ${arg}`);
    assert.deepEqual([...tool.inputSchema.properties.outputFormat.enum].sort(), ["json", "toon"], `${name}: outputFormat is toon|json`);
  }
});

test("arguments follow the issue: required paths, bodies for writes, GitHub and CircleCI specifics", () => {
  for (const name of ATLASSIAN) {
    const schema = byName(name).inputSchema;
    assert.ok(schema.required.includes("path"), `${name} requires path`);
    assert.ok(schema.properties.queryParams, `${name} takes queryParams`);
    const writes = /_(post|put|patch)$/.test(name);
    assert.equal(schema.required.includes("body"), writes, `${name}: body is required exactly for post/put/patch`);
    if (writes) assert.equal(schema.properties.body.type, "object");
  }
  const runs = byName("github_list_workflow_runs").inputSchema;
  assert.deepEqual([...runs.required].sort(), ["owner", "repo"]);
  for (const arg of ["workflowId", "branch", "status", "event", "actor", "perPage", "page"]) assert.ok(runs.properties[arg], `runs take ${arg}`);
  assert.equal(runs.properties.perPage.minimum, 1);
  assert.equal(runs.properties.perPage.maximum, 100);
  const jobs = byName("github_list_workflow_jobs").inputSchema;
  assert.deepEqual([...jobs.required].sort(), ["owner", "repo", "runId"]);
  assert.deepEqual([...jobs.properties.filter.enum].sort(), ["all", "latest"]);
  const circle = byName("circleci_get").inputSchema;
  assert.deepEqual(circle.required, ["path"]);
  assert.equal(circle.properties.fresh.type, "boolean");
});

test("annotations: reads are read-only and idempotent, deletes destructive, all open-world", () => {
  for (const name of EXPECTED) {
    const a = byName(name).annotations ?? {};
    assert.equal(a.openWorldHint, true, `${name} is open-world`);
    const read = name.startsWith("github_") || name === "circleci_get" || name.endsWith("_get");
    if (read) {
      assert.equal(a.readOnlyHint, true, `${name} is read-only`);
      assert.equal(a.idempotentHint, true, `${name} is idempotent`);
    } else {
      assert.notEqual(a.readOnlyHint, true, `${name} writes`);
    }
    if (name.endsWith("_delete")) assert.equal(a.destructiveHint, true, `${name} is destructive`);
  }
});
