// Structured output in workerd through the official TypeScript client, in both modes: one worker
// with MCP_STRUCTURED_OUTPUT=true and one without it, against one fake upstream. Every example of
// docs/structured-output.md goes through `client.callTool` after `listTools`, where the SDK validates
// structuredContent against the tool's outputSchema with Ajv and throws on a mismatch; a control
// shows that check is live. Flag off: no outputSchema, no structuredContent, and the bytes of
// tools/list and of every result equal the flag-on ones without those members.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { startStack, PRINCIPALS } from "./tools-common.mjs";
import { cached, eventually } from "./worker.mjs";
import {
  REPO, ONE_RUN_REPO, ONE_RUN_ID, EMPTY_204_PATH, SCHEMA_TOOLS, addStructuredRoutes, recordingClient,
  textOf, maskIds, maskClock,
} from "./structured-common.mjs";

const RUNS = "github_list_workflow_runs";
const JOBS = "github_list_workflow_jobs";
const PIPELINES = "/project/gh/octo-org/hello-world/pipeline";
const DIFF = "/repositories/acme/widgets/diff/main..topic-3";
const RAW_FILE = "/repositories/acme/widgets/src/main/README.md";

let upstream;
let on;
let off;
let onWire;
let offWire;

before(async () => {
  upstream = await startFakeUpstream();
  addStructuredRoutes(upstream);
  // Off is the default: the worker is started without the setting, as an existing deployment is.
  [on, off] = await Promise.all([
    startStack({ upstream, listTools: true, vars: { MCP_STRUCTURED_OUTPUT: "true" } }),
    startStack({ upstream, listTools: true }),
  ]);
  [onWire, offWire] = await Promise.all([recordingClient(on.worker.mcpUrl), recordingClient(off.worker.mcpUrl)]);
});

after(async () => {
  await onWire?.close();
  await offWire?.close();
  await on?.close();
  await off?.close();
  await upstream?.close();
});

/**
 * Calls through the flag-on worker: a successful result with structuredContent, returned with
 * its text; the SDK has already validated it against the listed outputSchema.
 */
async function structured(name, args, principal) {
  const r = await on.call(name, args, principal);
  assert.equal(r.isError, false, `${name}: ${r.text}`);
  assert.ok(r.result.structuredContent, `${name} carries structuredContent`);
  return { sc: r.result.structuredContent, text: r.text, result: r.result };
}

test("tools/list: the six read tools advertise an object outputSchema, nothing else does, and flag off advertises none", async () => {
  const [listOn, listOff] = await Promise.all([(await on.client()).listTools(), (await off.client()).listTools()]);
  const withSchema = listOn.tools.filter((t) => t.outputSchema).map((t) => t.name).sort();
  assert.deepEqual(withSchema, [...SCHEMA_TOOLS].sort());
  for (const tool of listOn.tools.filter((t) => t.outputSchema)) {
    const s = tool.outputSchema;
    assert.equal(s.type, "object", `${tool.name}: the root is an object`);
    assert.equal(s.$schema, undefined, `${tool.name}: no $schema`);
    assert.ok(s.properties && "data" in s.properties, `${tool.name}: declares data`);
    assert.equal(s.properties.data.type, undefined, `${tool.name}: data has no declared type`);
    assert.ok(s.required?.includes("data"), `${tool.name}: data is required`);
    assert.ok(!s.required?.includes("incomplete"), `${tool.name}: incomplete is optional`);
    const json = JSON.stringify(s);
    for (const keyword of ["$defs", "definitions", "prefixItems", "$dynamicRef", "dependentRequired", "unevaluatedProperties", "$ref"]) {
      assert.ok(!json.includes(`"${keyword}"`), `${tool.name}: ${keyword} means different things in draft-07 and 2020-12`);
    }
  }
  // The metadata is typed exactly: what the SDK's own Ajv validator accepts and refuses.
  const ajv = new AjvJsonSchemaValidator();
  const accepts = (name, value) => ajv.getValidator(listOn.tools.find((t) => t.name === name).outputSchema)(value).valid;
  const size = { reason: "size", bytes: 300000, limitBytes: 16384, artifactId: "0b7c9f5e-3f51-4d2a-9a52-6a3f3c8f2b10" };
  for (const name of [RUNS, JOBS]) {
    assert.ok(accepts(name, { data: { any: ["thing"] }, nextPage: null }), name);
    assert.ok(accepts(name, { data: "text", nextPage: 1 }), name);
    assert.ok(accepts(name, { data: null, nextPage: 2, incomplete: size }), name);
    assert.ok(accepts(name, { data: null, nextPage: 2, incomplete: { ...size, artifactId: null } }), name);
    assert.ok(!accepts(name, { data: [], nextPage: 0 }), `${name}: nextPage minimum 1`);
    assert.ok(!accepts(name, { data: [], nextPage: 1.5 }), `${name}: nextPage is an integer`);
    assert.ok(!accepts(name, { data: [], nextPage: "2" }), `${name}: nextPage is an integer`);
    assert.ok(!accepts(name, { data: [] }), `${name}: nextPage is required`);
    assert.ok(!accepts(name, { nextPage: null }), `${name}: data is required`);
    assert.ok(!accepts(name, { data: null, nextPage: 2, incomplete: { ...size, reason: "other" } }), name);
    assert.ok(!accepts(name, { data: null, nextPage: 2, incomplete: { reason: "size" } }), `${name}: incomplete's fields are required`);
  }
  const cache = { hit: false, ageMs: 0, fetchedAt: "2026-01-01T00:00:00.000Z" };
  assert.ok(accepts("circleci_get", { data: {}, cache }));
  assert.ok(!accepts("circleci_get", { data: {} }), "cache is required");
  assert.ok(!accepts("circleci_get", { data: {}, cache: { ...cache, hit: "no" } }));
  assert.ok(!accepts("circleci_get", { data: {}, cache: { ...cache, ageMs: -1 } }));
  assert.ok(!accepts("circleci_get", { data: {}, cache: { ...cache, ageMs: 1.5 } }));
  assert.ok(!accepts("circleci_get", { data: {}, cache: { hit: true, ageMs: 3 } }), "fetchedAt is required");
  for (const name of ["jira_get", "conf_get", "bb_get"]) {
    assert.ok(accepts(name, { data: "diff --git" }), name);
    assert.ok(accepts(name, { data: null, incomplete: size }), name);
    assert.ok(!accepts(name, { data: {}, nextPage: null }), `${name}: no metadata beside data`);
    assert.ok(!accepts(name, { data: {}, cache }), `${name}: no metadata beside data`);
  }
  // artifact_read is there whatever the flag; flag off advertises no schema at all.
  assert.ok(listOn.tools.some((t) => t.name === "artifact_read"));
  assert.ok(listOff.tools.some((t) => t.name === "artifact_read"));
  assert.deepEqual(listOff.tools.filter((t) => t.outputSchema).map((t) => t.name), []);
  assert.deepEqual(listOff.tools.map((t) => t.name), listOn.tools.map((t) => t.name));
});

test("the SDK's Ajv check is live: a reply whose structuredContent breaks the schema makes callTool throw", async () => {
  const tampered = await recordingClient(on.worker.mcpUrl, "alice", {
    mutate: (message) => {
      if (message?.result?.structuredContent) message.result.structuredContent.nextPage = 0;
      return message;
    },
  });
  try {
    await assert.rejects(tampered.client.callTool({ name: RUNS, arguments: { ...REPO, perPage: 1 } }), /output schema/i);
    // ...and one without structuredContent at all.
    const stripped = await recordingClient(on.worker.mcpUrl, "alice", {
      mutate: (message) => { if (message?.result) delete message.result.structuredContent; return message; },
    });
    await assert.rejects(stripped.client.callTool({ name: "jira_get", arguments: { path: "/rest/api/3/myself" } }), /structured content/i);
    await stripped.close();
  } finally {
    await tampered.close();
  }
});

test("paged, the issue's examples: an empty page, a jq projection with one run, more to come", async () => {
  const empty = await structured(RUNS, { ...REPO, actor: "nobody", outputFormat: "json" });
  assert.deepEqual(empty.sc, { data: { total_count: 0, workflow_runs: [] }, nextPage: null });
  assert.equal(JSON.stringify(empty.sc), '{"data":{"total_count":0,"workflow_runs":[]},"nextPage":null}');
  assert.deepEqual(JSON.parse(empty.text), empty.sc, "JSON text equals structuredContent");

  for (const outputFormat of ["json", "toon"]) {
    const one = await structured(RUNS, { ...ONE_RUN_REPO, jq: "workflow_runs[*].id", outputFormat });
    assert.equal(JSON.stringify(one.sc), `{"data":[${ONE_RUN_ID}],"nextPage":null}`, outputFormat);
  }

  const more = await structured(RUNS, { ...REPO, perPage: 3, jq: "workflow_runs[*].id", outputFormat: "json" });
  assert.deepEqual(more.sc, { data: [250, 249, 248], nextPage: 2 });
  assert.deepEqual(JSON.parse(more.text), more.sc);
  const toon = await structured(RUNS, { ...REPO, perPage: 3, jq: "workflow_runs[*].id" });
  assert.match(toon.text, /^nextPage: 2$/m, "nextPage is the value the text shows");
  assert.deepEqual(toon.sc, more.sc, "the format changes the text, not the value");

  const last = await structured(RUNS, { ...REPO, perPage: 100, page: 3, jq: "workflow_runs[*].id" });
  assert.equal(last.sc.nextPage, null);
  assert.equal(last.sc.data.length, 50);
});

test("paged: github_list_workflow_jobs and the whole upstream body", async () => {
  const jobs = await structured(JOBS, { ...REPO, runId: 249, outputFormat: "json" });
  assert.deepEqual(Object.keys(jobs.sc), ["data", "nextPage"]);
  assert.equal(jobs.sc.nextPage, null);
  assert.deepEqual(jobs.sc.data.jobs.map((j) => j.name), ["build", "test", "lint"]);
  assert.deepEqual(JSON.parse(jobs.text), jobs.sc);
  const matrix = await structured(JOBS, { ...REPO, runId: 240, perPage: 10, jq: "jobs[*].name" });
  assert.equal(matrix.sc.nextPage, 2, "25 matrix jobs in pages of 10");
  assert.equal(matrix.sc.data.length, 10);
});

test("circleci_get: data, cache {hit, ageMs, fetchedAt}, and CircleCI's own next_page_token continuation", async () => {
  const first = await structured("circleci_get", { path: PIPELINES, outputFormat: "json" });
  assert.deepEqual(Object.keys(first.sc), ["data", "cache"]);
  assert.deepEqual(Object.keys(first.sc.cache).sort(), ["ageMs", "fetchedAt", "hit"]);
  assert.equal(first.sc.cache.hit, false);
  assert.ok(Number.isInteger(first.sc.cache.ageMs) && first.sc.cache.ageMs >= 0);
  assert.equal(typeof first.sc.cache.fetchedAt, "string");
  assert.deepEqual(JSON.parse(first.text), first.sc);
  const token = first.sc.data.next_page_token;
  assert.equal(typeof token, "string", "the passthrough keeps CircleCI's paging field");
  const next = await structured("circleci_get", { path: PIPELINES, queryParams: { "page-token": token }, jq: "items[*].number" });
  assert.ok(Array.isArray(next.sc.data) && next.sc.data.length > 0);
  assert.ok(!first.sc.data.items.some((p) => next.sc.data.includes(p.number)), "the next page holds other pipelines");
  // A cacheable path (pipeline lists are live, never cached) a moment later: the same body, hit true.
  const project = "/project/gh/octo-org/structured-e2e";
  const miss = await cached(on.worker.mf, () => structured("circleci_get", { path: project, outputFormat: "json" }));
  await eventually(() => Date.now() - Date.parse(miss.sc.cache.fetchedAt) >= 100, "100 ms since the first read");
  const hit = await structured("circleci_get", { path: project, outputFormat: "json" });
  assert.equal(miss.sc.cache.hit, false);
  assert.equal(hit.sc.cache.hit, true);
  assert.equal(hit.sc.cache.fetchedAt, miss.sc.cache.fetchedAt);
  assert.ok(hit.sc.cache.ageMs >= 100, `ageMs ${hit.sc.cache.ageMs}`);
  assert.deepEqual(hit.sc.data, miss.sc.data);
  assert.deepEqual(JSON.parse(hit.text), hit.sc);
});

test("Atlassian reads: {data} only; the text is the bare body and equals data", async () => {
  const calls = [
    ["jira_get", { path: "/rest/api/3/issue/PROJ-7" }],
    ["jira_get", { path: "/rest/api/3/search/jql", queryParams: { jql: "project = PROJ", maxResults: "3" }, jq: "issues[*].key" }],
    ["conf_get", { path: "/wiki/api/v2/pages", queryParams: { limit: "2" } }],
    ["bb_get", { path: "/repositories/acme", queryParams: { pagelen: "2" } }],
  ];
  for (const [name, args] of calls) {
    const r = await structured(name, { ...args, outputFormat: "json" });
    assert.deepEqual(Object.keys(r.sc), ["data"], `${name} ${args.path}: no metadata beside data`);
    assert.deepEqual(JSON.parse(r.text), r.sc.data, `${name} ${args.path}: JSON.parse(text) equals data`);
  }
  const keys = await structured("jira_get", { path: "/rest/api/3/search/jql", queryParams: { jql: "project = PROJ", maxResults: "3" }, jq: "issues[*].key" });
  assert.deepEqual(keys.sc, { data: ["PROJ-1", "PROJ-2", "PROJ-3"] });
});

test("Atlassian text endpoints give data as a string identical to the text block's value; an empty 204 gives {data: {}}", async () => {
  for (const path of [DIFF, RAW_FILE]) {
    const direct = await (await fetch(`${upstream.url}/2.0${path}`)).text();
    for (const outputFormat of ["toon", "json"]) {
      const r = await structured("bb_get", { path, outputFormat });
      assert.deepEqual(r.sc, { data: direct }, `${path} ${outputFormat}: data is the body as text`);
      assert.equal(r.text, JSON.stringify(direct), `${path} ${outputFormat}: the text block is that string, quoted`);
    }
  }
  for (const outputFormat of ["toon", "json"]) {
    const r = await structured("jira_get", { path: EMPTY_204_PATH, outputFormat });
    assert.deepEqual(r.sc, { data: {} }, outputFormat);
  }
});

test("errors carry isError and no structuredContent, with the same text and _meta in both modes", async () => {
  const failing = [
    [RUNS, { ...REPO, workflowId: "missing.yml" }],
    ["jira_get", { path: "/rest/api/3/issue/NOPE-1" }],
    ["circleci_get", { path: "/no/such/resource" }],
    ["bb_get", { path: "/repositories/missing-ws" }],
    [JOBS, { ...REPO, runId: 1, filter: "newest" }],
  ];
  for (const [name, args] of failing) {
    const [a, b] = await Promise.all([on.call(name, args), off.call(name, args)]);
    assert.equal(a.isError, true, `${name} ${JSON.stringify(args)} fails`);
    assert.equal(a.result.structuredContent, undefined, `${name}: an error has no structuredContent`);
    assert.equal(b.isError, true);
    assert.deepEqual(a.result.content, b.result.content, `${name}: the error envelope is unchanged`);
    assert.deepEqual(a.result._meta, b.result._meta, `${name}: _meta is the same with the flag on or off`);
  }
});

test("write verbs and the other tools answer text only even with the flag on", async () => {
  const r = await on.call("bb_delete", { path: "/repositories/acme/widgets/refs/branches/topic" });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.result.structuredContent, undefined);
  const created = await on.call("jira_post", { path: "/rest/api/3/issue", body: { fields: { summary: "x", project: { key: "PROJ" } } } });
  assert.equal(created.isError, false, created.text);
  assert.equal(created.result.structuredContent, undefined);
});

// One table for the byte comparison: every shape of result the six tools give, in both formats.
const COMPARED = [
  [RUNS, { ...REPO, actor: "nobody", outputFormat: "json" }],
  [RUNS, { ...ONE_RUN_REPO, jq: "workflow_runs[*].id" }],
  [RUNS, { ...REPO, perPage: 3 }],
  [RUNS, { ...REPO, perPage: 100, outputFormat: "json" }],
  [RUNS, { ...REPO, perPage: 2, jq: "workflow_runs[?" }],
  [JOBS, { ...REPO, runId: 240, perPage: 5 }],
  ["circleci_get", { path: "/me", outputFormat: "json" }],
  ["circleci_get", { path: PIPELINES, jq: "items[*].id" }],
  ["jira_get", { path: "/rest/api/3/issue/PROJ-3" }],
  ["jira_get", { path: EMPTY_204_PATH, outputFormat: "json" }],
  ["conf_get", { path: "/wiki/api/v2/pages", queryParams: { limit: "3" }, outputFormat: "json" }],
  ["bb_get", { path: DIFF }],
  ["bb_get", { path: RAW_FILE, outputFormat: "json" }],
  ["bb_get", { path: "/repositories/missing-ws" }],
  ["bb_post", { path: "/repositories/acme/widgets/pullrequests", body: { title: "Add CI", source: { branch: { name: "ci" } } } }],
  ["jira_put", { path: "/rest/api/3/issue/PROJ-2", body: { fields: { summary: "y" } } }],
];

test("flag off is byte-identical: tools/list without outputSchema, every result without structuredContent", async () => {
  const listed = await Promise.all([onWire.client.listTools(), offWire.client.listTools()]);
  assert.ok(listed[0].tools.length > 0);
  const strip = (raw, member, where) => {
    const message = JSON.parse(raw);
    for (const item of where(message)) delete item[member];
    return JSON.stringify(message);
  };
  const listOff = offWire.last("tools/list");
  assert.equal(JSON.stringify(JSON.parse(listOff)), listOff, "the reply is compact JSON, so re-serializing it compares bytes");
  assert.equal(strip(onWire.last("tools/list"), "outputSchema", (m) => m.result.tools), listOff);
  assert.ok(!listOff.includes('"outputSchema"'));

  let structuredSeen = 0;
  for (const [name, args] of COMPARED) {
    const [a, b] = await Promise.all([
      onWire.client.callTool({ name, arguments: args }),
      offWire.client.callTool({ name, arguments: args }),
    ]);
    const rawOn = onWire.last("tools/call");
    const rawOff = offWire.last("tools/call");
    assert.ok(!rawOff.includes('"structuredContent"'), `${name}: flag off has no structuredContent`);
    assert.equal(b.structuredContent, undefined);
    assert.equal(JSON.stringify(JSON.parse(rawOff)), rawOff, `${name}: compact JSON`);
    if (a.structuredContent) structuredSeen++;
    const stripped = strip(rawOn, "structuredContent", (m) => [m.result]);
    // Two workers' artifact ids and CircleCI fetch times differ; everything else must match.
    assert.equal(maskClock(maskIds(stripped)), maskClock(maskIds(rawOff)), `${name} ${JSON.stringify(args)}: same bytes`);
    assert.equal(maskClock(maskIds(textOf(a))), maskClock(maskIds(textOf(b))));
  }
  assert.ok(structuredSeen >= 10, `the flag-on side carried structuredContent (${structuredSeen} results)`);
});

test("the default bound (262144 bytes) sends the ~300 KB page to an artifact; the truncated text is as before and names it", async () => {
  const r = await structured(RUNS, { ...REPO, perPage: 100, outputFormat: "json" });
  assert.match(r.text, /Response Truncated/);
  assert.ok(r.text.length <= 42_000, "the text is cut for the model as before");
  assert.equal(r.sc.nextPage, 2);
  assert.equal(r.sc.data, null);
  assert.equal(r.sc.incomplete.reason, "size");
  assert.equal(r.sc.incomplete.limitBytes, 262144, "the default MCP_STRUCTURED_MAX_BYTES");
  assert.ok(r.sc.incomplete.bytes > 262144, `${r.sc.incomplete.bytes} bytes`);
  assert.ok(r.text.includes(r.sc.incomplete.artifactId), "the text names the same artifact");
  const flagOff = await off.call(RUNS, { ...REPO, perPage: 100, outputFormat: "json" });
  assert.equal(maskIds(r.result.content[0].text), maskIds(flagOff.result.content[0].text), "the text does not depend on the flag");
  on.assertNoSecrets();
  off.assertNoSecrets();
});

test("a client that negotiated 2025-03-26 (before structuredContent existed) gets the same text only", async () => {
  const post = async (body, version) => {
    const res = await fetch(on.worker.mcpUrl, {
      method: "POST",
      headers: {
        "Content-Type": "application/json", Accept: "application/json, text/event-stream",
        Authorization: `Bearer ${PRINCIPALS.alice}`, ...(version ? { "MCP-Protocol-Version": version } : {}),
      },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200);
    return res.json();
  };
  const init = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "old", version: "1" } } });
  assert.equal(init.result.protocolVersion, "2025-03-26");
  const args = { ...REPO, perPage: 3, jq: "workflow_runs[*].id", outputFormat: "json" };
  const old = await post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: RUNS, arguments: args } }, "2025-03-26");
  assert.notEqual(old.result.isError, true, old.result.content?.[0]?.text);
  assert.equal("structuredContent" in old.result, false);
  const current = await structured(RUNS, args);
  assert.equal(old.result.content[0].text, current.text);
  assert.deepEqual(JSON.parse(old.result.content[0].text), current.sc);
});
