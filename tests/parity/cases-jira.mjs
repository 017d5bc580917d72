// Jira cases: real-shaped REST v3 bodies (issue with ADF, JQL search, myself, transitions, createmeta), projections,
// query strings, write verbs, empty and non-JSON bodies, every error branch of the reference transport, truncation.

import { empty, json, pick, rng, sentence, text } from './fixtures.mjs';

const SITE = 'https://parity-site.atlassian.net';

const user = (id, name, email) => ({
  self: `${SITE}/rest/api/3/user?accountId=${id}`,
  accountId: id,
  emailAddress: email,
  avatarUrls: {
    '48x48': `https://secure.gravatar.com/avatar/${id.slice(-6)}?d=mm&s=48`,
    '24x24': `https://secure.gravatar.com/avatar/${id.slice(-6)}?d=mm&s=24`,
    '16x16': `https://secure.gravatar.com/avatar/${id.slice(-6)}?d=mm&s=16`,
    '32x32': `https://secure.gravatar.com/avatar/${id.slice(-6)}?d=mm&s=32`,
  },
  displayName: name,
  active: true,
  timeZone: 'Europe/Berlin',
  accountType: 'atlassian',
});

const alice = user('5b10a2844c20165700ede21g', 'Alice Example', 'alice@example.com');
const bob = user('5b10ac8d82e05b22cc7d4ef5', 'Bob Ñúñez', 'bob@example.com');

const status = (id, name, catKey, catName, color) => ({
  self: `${SITE}/rest/api/3/status/${id}`,
  description: '',
  iconUrl: `${SITE}/`,
  name,
  id: String(id),
  statusCategory: { self: `${SITE}/rest/api/3/statuscategory/${catKey.length}`, id: catKey.length, key: catKey, colorName: color, name: catName },
});

const adfDescription = {
  type: 'doc',
  version: 1,
  content: [
    { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Steps to reproduce' }] },
    {
      type: 'orderedList',
      attrs: { order: 1 },
      content: [
        { type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Open the login page' }] }] },
        {
          type: 'listItem',
          content: [{ type: 'paragraph', content: [
            { type: 'text', text: 'Enter ' },
            { type: 'text', text: 'user@example.com', marks: [{ type: 'code' }] },
            { type: 'text', text: ' and a wrong password, 3 times' },
          ] }],
        },
      ],
    },
    { type: 'paragraph', content: [
      { type: 'text', text: 'Expected: "account locked" banner. Actual: HTTP 500 — see ' },
      { type: 'text', text: 'log', marks: [{ type: 'link', attrs: { href: 'https://logs.example.com/q?id=42&x=1' } }] },
      { type: 'text', text: '.' },
    ] },
    { type: 'codeBlock', attrs: { language: 'json' }, content: [{ type: 'text', text: '{\n  "error": "internal",\n\t"code": 500\n}' }] },
    { type: 'paragraph', content: [{ type: 'mention', attrs: { id: bob.accountId, text: '@Bob Ñúñez', accessLevel: '' } }, { type: 'text', text: ' please check 🙏' }] },
  ],
};

const issue = {
  expand: 'renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations',
  id: '10123',
  self: `${SITE}/rest/api/3/issue/10123`,
  key: 'PROJ-123',
  fields: {
    statuscategorychangedate: '2025-11-03T09:12:44.102+0100',
    issuetype: { self: `${SITE}/rest/api/3/issuetype/10004`, id: '10004', description: 'A problem which impairs or prevents the functions of the product.', iconUrl: `${SITE}/rest/api/2/universal_avatar/view/type/issuetype/avatar/10303?size=medium`, name: 'Bug', subtask: false, avatarId: 10303, hierarchyLevel: 0 },
    timespent: null,
    project: { self: `${SITE}/rest/api/3/project/10000`, id: '10000', key: 'PROJ', name: 'Project Phoenix', projectTypeKey: 'software', simplified: false },
    fixVersions: [],
    aggregatetimespent: null,
    resolution: null,
    customfield_10020: [{ id: 7, name: 'PROJ Sprint 12', state: 'active', boardId: 1, goal: '', startDate: '2025-10-27T08:00:00.000Z', endDate: '2025-11-10T08:00:00.000Z' }],
    customfield_10016: 5.0,
    labels: ['backend', 'login', 'p1'],
    timeestimate: 7200,
    versions: [],
    issuelinks: [],
    assignee: alice,
    updated: '2025-11-04T17:30:01.555+0100',
    status: status(3, 'In Progress', 'indeterminate', 'In Progress', 'yellow'),
    components: [{ self: `${SITE}/rest/api/3/component/10001`, id: '10001', name: 'auth' }],
    description: adfDescription,
    summary: 'Login fails with 500 after 3 wrong passwords',
    creator: bob,
    subtasks: [],
    reporter: bob,
    priority: { self: `${SITE}/rest/api/3/priority/2`, iconUrl: `${SITE}/images/icons/priorities/high.svg`, name: 'High', id: '2' },
    environment: null,
    duedate: null,
    watches: { self: `${SITE}/rest/api/3/issue/PROJ-123/watchers`, watchCount: 2, isWatching: false },
  },
};

function searchBody(count, seed, withDescription) {
  const r = rng(seed);
  const issues = [];
  for (let i = 0; i < count; i += 1) {
    const id = 20000 + i;
    const fields = {
      summary: sentence(r, 4 + Math.floor(r() * 8)),
      status: { name: pick(r, ['To Do', 'In Progress', 'In Review', 'Done']), id: String(1 + Math.floor(r() * 5)) },
      assignee: r() < 0.3 ? null : { displayName: pick(r, ['Alice Example', 'Bob Ñúñez', 'Chen Wei', 'Dana O\'Neil']), accountId: `5b10${Math.floor(r() * 1e8)}` },
      priority: { name: pick(r, ['Highest', 'High', 'Medium', 'Low']) },
      created: `2025-10-${String(1 + Math.floor(r() * 28)).padStart(2, '0')}T${String(Math.floor(r() * 24)).padStart(2, '0')}:15:00.000+0000`,
      labels: r() < 0.5 ? [] : [pick(r, ['backend', 'frontend', 'infra']), pick(r, ['p1', 'p2', 'needs-triage'])],
      customfield_10016: r() < 0.2 ? null : Math.round(r() * 130) / 10,
    };
    if (withDescription) fields.description = { type: 'doc', version: 1, content: [{ type: 'paragraph', content: [{ type: 'text', text: sentence(r, 12) }] }] };
    issues.push({ expand: 'operations,versionedRepresentations,editmeta,changelog,renderedFields', id: String(id), self: `${SITE}/rest/api/3/issue/${id}`, key: `PROJ-${id - 19000}`, fields });
  }
  return { issues, nextPageToken: 'CAEaAggD', isLast: false };
}

const search5 = searchBody(5, 7, false);

const transitions = {
  expand: 'transitions',
  transitions: [
    { id: '11', name: 'To Do', to: status(10000, 'To Do', 'new', 'To Do', 'blue-gray'), hasScreen: false, isGlobal: true, isInitial: false, isAvailable: true, isConditional: false, isLooped: false },
    { id: '21', name: 'In Progress', to: status(3, 'In Progress', 'indeterminate', 'In Progress', 'yellow'), hasScreen: false, isGlobal: true, isInitial: false, isAvailable: true, isConditional: false, isLooped: false },
    { id: '31', name: 'Done', to: status(10001, 'Done', 'done', 'Done', 'green'), hasScreen: true, isGlobal: true, isInitial: false, isAvailable: true, isConditional: false, isLooped: false },
  ],
};

// createmeta fields are keyed by field id; Jira also returns allowedValues keyed objects whose keys look like integers.
const createmetaBody = `{"maxResults":50,"startAt":0,"total":4,"isLast":true,"fields":[{"required":true,"schema":{"type":"issuetype","system":"issuetype"},"name":"Issue Type","fieldId":"issuetype","hasDefaultValue":false,"operations":[],"allowedValues":[{"self":"${SITE}/rest/api/3/issuetype/10004","id":"10004","name":"Bug","subtask":false}]},{"required":false,"schema":{"type":"array","items":"option","custom":"com.atlassian.jira.plugin.system.customfieldtypes:multiselect","customId":10050},"name":"Platforms","fieldId":"customfield_10050","hasDefaultValue":false,"operations":["add","set","remove"],"allowedValues":[{"self":"${SITE}/rest/api/3/customFieldOption/10100","value":"iOS","id":"10100"},{"self":"${SITE}/rest/api/3/customFieldOption/10101","value":"Android","id":"10101"}]},{"required":false,"schema":{"type":"number","custom":"com.atlassian.jira.plugin.system.customfieldtypes:float","customId":10016},"name":"Story point estimate","fieldId":"customfield_10016","hasDefaultValue":true,"defaultValue":1.0,"operations":["set"]},{"required":false,"schema":{"type":"option-with-child"},"name":"Region","fieldId":"customfield_10060","hasDefaultValue":false,"operations":["set"],"cascade":{"zeta":"last","10":"ten","2":"two","alpha":{"1":"one","01":"zero-one","-1":"minus-one","4294967295":"too-big","4294967294":"max-index"}}}]}`;

const numbersBody = '{"int":100,"one":1.0,"half":0.50,"exp":1e2,"big":12345678901234567890,"huge":1e21,"justBelow":999999999999999999999,"tiny":1.5e-7,"small":0.000001,"smaller":0.0000001,"negZero":-0,"negExp":-2.5E+3,"frac":0.1,"list":[1.10,2.00,3e0],"nested":{"ratio":0.333333333333333333333}}';

const quotingBody = JSON.stringify({
  key: 'PROJ-7',
  values: {
    empty: '',
    space: ' padded ',
    nbsp: '\u00a0nbsp',
    yes: 'true',
    no: 'false',
    nil: 'null',
    num: '123',
    numExp: '1e5',
    leadingZero: '007',
    negative: '-5',
    dash: '- item',
    colon: 'a: b',
    comma: 'a,b',
    quote: 'say "hi"',
    backslash: 'C:\\path',
    brackets: '[x]',
    braces: '{y}',
    newline: 'line1\nline2',
    tab: 'a\tb',
    cr: 'a\rb',
    ctrl: 'bell\u0007',
    hash: '#tag',
    unicode: 'Größe データ 🚀',
    plain: 'hello world',
  },
  'weird key': 1,
  'dotted.key': 2,
  '1abc': 3,
  'with-dash': 4,
  tags: ['a', 'b c', '', 'true', '1', '-x', 'd,e'],
  matrix: [[1, 2], [3, 4], []],
  mixed: [1, 'two', { three: 3 }, [4], null, true],
  records: [{ id: 1, name: 'a' }, { id: 2, name: 'b,c' }],
  uneven: [{ id: 1, name: 'a' }, { id: 2 }],
  nestedRecords: [{ id: 1, meta: { x: 1 } }, { id: 2, meta: { x: 2 } }],
  emptyObj: {},
  emptyArr: [],
});

const bigSearch = searchBody(80, 99, true);

/** The Jira cases. */
export const jiraCases = [
  { name: 'get-issue-toon', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123' }, upstream: json(200, issue) },
  { name: 'get-issue-json', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123', outputFormat: 'json' }, upstream: json(200, issue) },
  { name: 'get-issue-explicit-toon', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123', outputFormat: 'toon', jq: 'fields.description' }, upstream: json(200, issue) },
  { name: 'get-issue-jq-multiselect', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123', jq: '{key: key, summary: fields.summary, status: fields.status.name, assignee: fields.assignee.displayName}' }, upstream: json(200, issue) },
  { name: 'get-issue-jq-string', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123', jq: 'key' }, upstream: json(200, issue) },
  { name: 'get-issue-jq-string-json', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123', jq: 'fields.summary', outputFormat: 'json' }, upstream: json(200, issue) },
  { name: 'get-issue-jq-null', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123', jq: 'fields.nonexistent' }, upstream: json(200, issue) },
  { name: 'get-issue-jq-null-json', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123', jq: 'fields.nonexistent', outputFormat: 'json' }, upstream: json(200, issue) },
  { name: 'get-issue-jq-empty-string', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123', jq: '' }, upstream: json(200, { key: 'PROJ-1', fields: { summary: 'jq empty means no filter' } }) },
  { name: 'get-issue-jq-whitespace', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123', jq: '   ' }, upstream: json(200, { key: 'PROJ-1', fields: { summary: 'blank jq means no filter' } }) },
  { name: 'search-keys', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', queryParams: { jql: 'project = PROJ ORDER BY created DESC', maxResults: '5', fields: 'summary,status' }, jq: 'issues[*].key' }, upstream: json(200, search5) },
  { name: 'search-keys-json', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', queryParams: { jql: 'project = PROJ', maxResults: '5' }, jq: 'issues[*].key', outputFormat: 'json' }, upstream: json(200, search5) },
  { name: 'search-projection-tabular', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', queryParams: { jql: 'project = PROJ' }, jq: 'issues[*].{key: key, summary: fields.summary}' }, upstream: json(200, search5) },
  { name: 'search-projection-json', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', queryParams: { jql: 'project = PROJ' }, jq: 'issues[*].{key: key, summary: fields.summary, status: fields.status.name, points: fields.customfield_10016}', outputFormat: 'json' }, upstream: json(200, search5) },
  { name: 'search-full-toon', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', queryParams: { jql: 'project = PROJ', maxResults: '5' } }, upstream: json(200, search5) },
  { name: 'search-jq-functions', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', jq: 'issues[?fields.assignee != null] | sort_by(@, &key)[*].{k: key, who: fields.assignee.displayName, n: length(fields.labels)}' }, upstream: json(200, search5) },
  { name: 'search-query-unicode-reserved', tool: 'jira_get', args: { path: '/rest/api/3/search/jql?validateQuery=strict', queryParams: { jql: 'summary ~ "café & crème" AND labels = "a+b/c?d=e#f" AND text ~ \'50%\'', fields: '*all,-comment', expand: 'renderedFields names', 'key with space': 'ü 🚀 ~*()!\'' } }, upstream: json(200, { issues: [], isLast: true }) },
  { name: 'search-query-empty-map', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', queryParams: {} }, upstream: json(200, { issues: [], isLast: true }) },
  { name: 'myself-no-leading-slash', tool: 'jira_get', args: { path: 'rest/api/3/myself' }, upstream: json(200, { ...alice, locale: 'en_US', groups: { size: 3, items: [] }, applicationRoles: { size: 1, items: [] }, expand: 'groups,applicationRoles' }) },
  { name: 'transitions', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123/transitions' }, upstream: json(200, transitions) },
  { name: 'transitions-jq-tabular', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123/transitions', jq: 'transitions[*].{id: id, name: name, to: to.name, screen: hasScreen}' }, upstream: json(200, transitions) },
  { name: 'createmeta-nested-integer-keys', tool: 'jira_get', args: { path: '/rest/api/3/issue/createmeta/PROJ/issuetypes/10004' }, upstream: json(200, createmetaBody) },
  { name: 'createmeta-nested-integer-keys-json', tool: 'jira_get', args: { path: '/rest/api/3/issue/createmeta/PROJ/issuetypes/10004', outputFormat: 'json' }, upstream: json(200, createmetaBody) },
  { name: 'number-literals-toon', tool: 'jira_get', args: { path: '/rest/api/3/field/numbers' }, upstream: json(200, numbersBody) },
  { name: 'number-literals-json', tool: 'jira_get', args: { path: '/rest/api/3/field/numbers', outputFormat: 'json' }, upstream: json(200, numbersBody) },
  { name: 'duplicate-keys', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-5', outputFormat: 'json' }, upstream: json(200, '{"b":1,"a":2,"b":3,"2":"x","1":"y","2":"z"}') },
  { name: 'duplicate-keys-toon', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-5' }, upstream: json(200, '{"b":1,"a":2,"b":3,"2":"x","1":"y","2":"z"}') },
  { name: 'string-quoting-toon', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-7/properties/quoting' }, upstream: json(200, quotingBody) },
  { name: 'string-quoting-json', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-7/properties/quoting', outputFormat: 'json' }, upstream: json(200, quotingBody) },
  { name: 'root-array', tool: 'jira_get', args: { path: '/rest/api/3/priority' }, upstream: json(200, [{ self: `${SITE}/rest/api/3/priority/1`, name: 'Highest', id: '1' }, { self: `${SITE}/rest/api/3/priority/2`, name: 'High', id: '2' }]) },
  { name: 'root-scalar-body', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-1/properties/count' }, upstream: json(200, '42') },
  { name: 'pretty-printed-body', tool: 'jira_get', args: { path: '/rest/api/3/serverInfo', outputFormat: 'json' }, upstream: json(200, '{\n  "baseUrl" : "https://parity-site.atlassian.net",\n  "version" : "1001.0.0-SNAPSHOT",\n  "versionNumbers" : [ 1001, 0, 0 ],\n  "deploymentType" : "Cloud",\n  "buildNumber" : 100301\n}\n') },
  { name: 'json-with-text-plain-type', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-2' }, upstream: text(200, '{"key":"PROJ-2","note":"JSON sent as text/plain"}', 'text/plain;charset=UTF-8') },
  { name: 'non-json-html-body', tool: 'jira_get', args: { path: '/secure/ViewProfile.jspa' }, upstream: text(200, '<!DOCTYPE html>\n<html><body><h1>Profile</h1>\n<p>a: b, "c"</p></body></html>\n', 'text/html;charset=UTF-8') },
  { name: 'non-json-body-json-mode', tool: 'jira_get', args: { path: '/secure/ViewProfile.jspa', outputFormat: 'json' }, upstream: text(200, 'line one\nline "two"\ttabbed\n', 'text/plain') },
  { name: 'non-json-body-with-jq', tool: 'jira_get', args: { path: '/secure/ViewProfile.jspa', jq: 'length(@)' }, upstream: text(200, 'plain text', 'text/plain') },
  { name: 'empty-body-200', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-1/watchers' }, upstream: empty(200, { 'content-type': 'application/json' }) },
  { name: 'empty-body-200-json', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-1/watchers', outputFormat: 'json' }, upstream: empty(200, { 'content-type': 'application/json' }) },
  { name: 'whitespace-body-200', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-1/votes', outputFormat: 'json' }, upstream: text(200, ' \n\t ', 'application/json') },
  { name: 'create-issue-post', tool: 'jira_post', args: { path: '/rest/api/3/issue', body: { fields: { project: { key: 'PROJ' }, summary: 'Crème brûlée "quoted" summary', issuetype: { name: 'Task' }, labels: ['a', 'b'], customfield_10016: 2.5, description: { type: 'doc', version: 1, content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Line 1\nLine 2 🚀' }] }] } } }, jq: '{key: key, id: id}' }, upstream: json(201, { id: '10200', key: 'PROJ-200', self: `${SITE}/rest/api/3/issue/10200` }) },
  { name: 'add-comment-post-json', tool: 'jira_post', args: { path: '/rest/api/3/issue/PROJ-123/comment', queryParams: { expand: 'renderedBody' }, body: { body: { type: 'doc', version: 1, content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Looks good' }] }] }, visibility: { type: 'role', value: 'Developers' } }, outputFormat: 'json' }, upstream: json(201, { self: `${SITE}/rest/api/3/issue/10123/comment/10500`, id: '10500', author: { accountId: alice.accountId, displayName: alice.displayName }, created: '2025-11-05T10:00:00.000+0000', jsdPublic: true }) },
  { name: 'transition-post-204', tool: 'jira_post', args: { path: '/rest/api/3/issue/PROJ-123/transitions', body: { transition: { id: '31' } } }, upstream: empty(204) },
  { name: 'post-empty-object-body', tool: 'jira_post', args: { path: '/rest/api/3/issue/PROJ-123/notify', body: {} }, upstream: empty(204) },
  { name: 'update-issue-put-204', tool: 'jira_put', args: { path: '/rest/api/3/issue/PROJ-123', queryParams: { notifyUsers: 'false' }, body: { fields: { summary: 'New title', labels: [] }, update: { labels: [{ add: 'triaged' }] } } }, upstream: empty(204) },
  { name: 'put-property-200-empty', tool: 'jira_put', args: { path: 'rest/api/3/issue/PROJ-123/properties/flag', body: { value: true, nested: { n: 1.5 } }, outputFormat: 'json' }, upstream: empty(200) },
  { name: 'patch-comment', tool: 'jira_patch', args: { path: '/rest/api/3/issue/PROJ-123/comment/10500', body: { body: { type: 'doc', version: 1, content: [] } } }, upstream: json(200, { id: '10500', updated: '2025-11-05T11:00:00.000+0000' }) },
  { name: 'delete-issue-204', tool: 'jira_delete', args: { path: '/rest/api/3/issue/PROJ-9', queryParams: { deleteSubtasks: 'true' } }, upstream: empty(204) },
  { name: 'delete-issue-204-json', tool: 'jira_delete', args: { path: '/rest/api/3/issue/PROJ-9', outputFormat: 'json' }, upstream: empty(204) },
  { name: 'delete-with-body-ignored', tool: 'jira_delete', args: { path: '/rest/api/3/issue/PROJ-9/watchers', queryParams: { accountId: alice.accountId }, body: { ignored: true } }, upstream: empty(204) },
  { name: 'invalid-jq-toon', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123', jq: 'issues[*.key' }, upstream: json(200, { key: 'PROJ-123', fields: { summary: 'Short', labels: ['x'] } }) },
  { name: 'invalid-jq-json', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123', jq: 'fields.{', outputFormat: 'json' }, upstream: json(200, { key: 'PROJ-123', fields: { summary: 'Short', labels: ['x'] } }) },
  { name: 'jq-type-error', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-123', jq: 'length(key_number)' }, upstream: json(200, { key: 'PROJ-123', key_number: 123 }) },
  // Errors: every branch of transport.util.js and error-handler.util.js.
  { name: 'error-400-field-errors', tool: 'jira_post', args: { path: '/rest/api/3/issue', body: { fields: { summary: '' } } }, upstream: json(400, { errorMessages: [], errors: { summary: 'You must specify a summary of the issue.', issuetype: 'Specify an issue type' } }) },
  { name: 'error-400-jql', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', queryParams: { jql: 'project = ' } }, upstream: json(400, { errorMessages: ["Error in the JQL Query: Expecting either a value, list or function but got 'EOF'. You must enter something to search for. (line 1, character 10)"], errors: {}, warningMessages: [] }) },
  { name: 'error-400-jql-errors-key', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', queryParams: { jql: 'foo = bar' } }, upstream: json(400, { errorMessages: [], errors: { jql: "Field 'foo' does not exist or you do not have permission to view it." } }) },
  { name: 'error-400-messages-and-warnings', tool: 'jira_get', args: { path: '/rest/api/3/issue/bulkfetch' }, upstream: json(400, { errorMessages: ['Bad input one.', 'Bad input two.'], errors: {}, warningMessages: ['Deprecated parameter used.'] }) },
  { name: 'error-400-atlassian-errors-array', tool: 'jira_get', args: { path: '/rest/api/3/workflow/search' }, upstream: json(400, { errors: [{ status: 400, code: 'INVALID_REQUEST_PARAMETER', title: 'Request parameter is invalid', detail: 'maxResults must be <= 50' }] }) },
  { name: 'error-400-message-only', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-1' }, upstream: json(400, { message: 'Something was wrong with the request', 'status-code': 400 }) },
  { name: 'error-400-empty-body', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-1' }, upstream: empty(400) },
  { name: 'error-400-invalid-json', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-1' }, upstream: text(400, '{"errorMessages": [broken', 'application/json') },
  { name: 'error-401-text', tool: 'jira_get', args: { path: '/rest/api/3/myself' }, upstream: text(401, 'Client must be authenticated to access this resource.', 'text/plain;charset=UTF-8', { 'www-authenticate': 'OAuth realm="https%3A%2F%2Fparity-site.atlassian.net"' }) },
  { name: 'error-401-json', tool: 'jira_get', args: { path: '/rest/api/3/myself' }, upstream: json(401, { message: 'Client must be authenticated to access this resource.', 'status-code': 401 }) },
  { name: 'error-403', tool: 'jira_delete', args: { path: '/rest/api/3/project/PROJ' }, upstream: json(403, { errorMessages: ['You do not have permission to delete projects.'], errors: {} }) },
  { name: 'error-404', tool: 'jira_get', args: { path: '/rest/api/3/issue/NOPE-1' }, upstream: json(404, { errorMessages: ['Issue does not exist or you do not have permission to see it.'], errors: {} }) },
  { name: 'error-404-json-mode', tool: 'jira_get', args: { path: '/rest/api/3/issue/NOPE-1', outputFormat: 'json', jq: 'key' }, upstream: json(404, { errorMessages: ['Issue does not exist or you do not have permission to see it.'], errors: {} }) },
  { name: 'error-404-html', tool: 'jira_get', args: { path: '/rest/api/9/unknown' }, upstream: text(404, '<html><head><title>Oops</title></head><body>Not found</body></html>', 'text/html') },
  { name: 'error-409', tool: 'jira_put', args: { path: '/rest/api/3/issue/PROJ-123', body: { fields: { summary: 'x' } } }, upstream: json(409, { errorMessages: ['The issue is locked and currently being edited by another user.'], errors: {} }) },
  { name: 'error-409-plain', tool: 'jira_post', args: { path: '/rest/api/3/version', body: { name: '1.0', projectId: 10000 } }, upstream: json(409, { errorMessages: ['A version with this name already exists in this project.'], errors: {} }) },
  { name: 'error-422-field', tool: 'jira_post', args: { path: '/rest/api/3/issue/PROJ-1/worklog', body: { timeSpentSeconds: -1 } }, upstream: json(422, { errorMessages: ['Field timeSpentSeconds is invalid.'] }) },
  { name: 'error-429-retry-after', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', queryParams: { jql: 'project = PROJ' } }, upstream: json(429, { errorMessages: ['Rate limit exceeded.'] }, { 'retry-after': '30', 'x-ratelimit-remaining': '0' }) },
  { name: 'error-429-no-retry-after', tool: 'jira_get', args: { path: '/rest/api/3/search/jql' }, upstream: empty(429) },
  { name: 'error-500-json', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-1' }, upstream: json(500, { message: 'java.lang.NullPointerException', 'status-code': 500, 'stack-trace': '' }) },
  { name: 'error-502-html', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-1' }, upstream: text(502, '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n', 'text/html') },
  { name: 'error-503-empty', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-1' }, upstream: empty(503, { 'retry-after': '120' }) },
  { name: 'error-503-empty-status-text', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-1' }, upstream: { ...empty(503), statusText: '' } },
  { name: 'error-504-array-body', tool: 'jira_get', args: { path: '/rest/api/3/issue/PROJ-1' }, upstream: json(504, ['upstream', 'timeout']) },
  // Truncation: a large search renders past 40,000 characters (TOON and JSON); the saved-at line is volatile.
  { name: 'truncation-search-toon', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', queryParams: { jql: 'project = PROJ', maxResults: '80' } }, upstream: json(200, bigSearch) },
  { name: 'truncation-search-json', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', queryParams: { jql: 'project = PROJ', maxResults: '80' }, outputFormat: 'json' }, upstream: json(200, bigSearch) },
  { name: 'truncation-search-projected', tool: 'jira_get', args: { path: '/rest/api/3/search/jql', jq: 'issues[*].{key: key, summary: fields.summary, status: fields.status.name, description: fields.description}' }, upstream: json(200, bigSearch) },
];
