// Bitbucket cases: repositories and pull requests with paging `next`, commits, a diff and raw files as text, the
// `/2.0` prefix rule, projections, write verbs, every error shape the reference transport parses, truncation.

import { empty, json, pick, rng, sentence, text } from './fixtures.mjs';

const API = 'https://api.bitbucket.org/2.0';
const WEB = 'https://bitbucket.org';

const links = (ws, slug, extra = {}) => ({
  self: { href: `${API}/repositories/${ws}/${slug}` },
  html: { href: `${WEB}/${ws}/${slug}` },
  avatar: { href: `https://bytebucket.org/ravatar/%7B${slug}%7D?ts=default` },
  ...extra,
});

const account = (name, nick, uuid) => ({
  display_name: name,
  links: { self: { href: `${API}/users/%7B${uuid}%7D` }, avatar: { href: `https://avatar-management.services.atlassian.com/${uuid}/48` }, html: { href: `${WEB}/%7B${uuid}%7D/` } },
  type: 'user',
  uuid: `{${uuid}}`,
  account_id: `557058:${uuid}`,
  nickname: nick,
});

const alice = account('Alice Example', 'alice', '0c5f2d8e-1111-4a4a-9b9b-000000000001');
const bob = account('Bob Ñúñez', 'bob', '0c5f2d8e-2222-4a4a-9b9b-000000000002');

function repo(ws, slug, lang, isPrivate) {
  return {
    type: 'repository',
    full_name: `${ws}/${slug}`,
    links: links(ws, slug, { pullrequests: { href: `${API}/repositories/${ws}/${slug}/pullrequests` }, clone: [{ name: 'https', href: `https://bitbucket.org/${ws}/${slug}.git` }, { name: 'ssh', href: `git@bitbucket.org:${ws}/${slug}.git` }] }),
    name: slug,
    slug,
    description: slug === 'widget' ? 'The widget service: HTTP API, workers, "batteries" included' : '',
    scm: 'git',
    website: null,
    owner: { display_name: 'Acme Corp', type: 'team', uuid: '{acme-uuid}', username: ws },
    workspace: { type: 'workspace', uuid: '{acme-ws-uuid}', name: 'Acme Corp', slug: ws },
    is_private: isPrivate,
    project: { type: 'project', key: 'CORE', uuid: '{core-uuid}', name: 'Core' },
    fork_policy: 'no_public_forks',
    created_on: '2021-03-04T05:06:07.123456+00:00',
    updated_on: '2025-11-01T10:20:30.987654+00:00',
    size: 48213504,
    language: lang,
    uuid: `{repo-${slug}}`,
    mainbranch: { name: 'main', type: 'branch' },
    has_issues: false,
    has_wiki: false,
  };
}

const repos = {
  pagelen: 3,
  size: 7,
  values: [repo('acme', 'widget', 'rust', true), repo('acme', 'gadget', 'typescript', true), repo('acme', 'docs', '', false)],
  page: 1,
  next: `${API}/repositories/acme?page=2&pagelen=3`,
};

function pr(r, id) {
  const branch = `feature/${pick(r, ['login', 'cache', 'retry'])}-${id}`;
  return {
    comment_count: Math.floor(r() * 12),
    task_count: Math.floor(r() * 3),
    type: 'pullrequest',
    id,
    title: sentence(r, 3 + Math.floor(r() * 6)),
    description: `${sentence(r, 15)}\n\n* ${sentence(r, 4)}\n* ${sentence(r, 5)}`,
    state: pick(r, ['OPEN', 'OPEN', 'MERGED', 'DECLINED']),
    author: pick(r, [alice, bob]),
    source: { branch: { name: branch }, commit: { type: 'commit', hash: Math.floor(r() * 0xffffffffffff).toString(16).padStart(12, '0') }, repository: { type: 'repository', full_name: 'acme/widget', name: 'widget', uuid: '{repo-widget}' } },
    destination: { branch: { name: 'main' }, commit: { type: 'commit', hash: '4f2a9c1e0b7d' }, repository: { type: 'repository', full_name: 'acme/widget', name: 'widget', uuid: '{repo-widget}' } },
    merge_commit: null,
    close_source_branch: r() < 0.7,
    closed_by: null,
    reason: '',
    created_on: `2025-10-${String(1 + Math.floor(r() * 28)).padStart(2, '0')}T09:00:00.000000+00:00`,
    updated_on: '2025-11-02T15:30:00.000000+00:00',
    links: {
      self: { href: `${API}/repositories/acme/widget/pullrequests/${id}` },
      html: { href: `${WEB}/acme/widget/pull-requests/${id}` },
      diff: { href: `${API}/repositories/acme/widget/diff/acme/widget:${id}abc%0D4f2a9c1e0b7d?from_pullrequest_id=${id}` },
    },
    summary: { type: 'rendered', raw: 'x', markup: 'markdown', html: '<p>x</p>' },
  };
}

function prList(count, seed, page) {
  const r = rng(seed);
  const values = [];
  for (let i = 0; i < count; i += 1) values.push(pr(r, 400 - i));
  return { values, pagelen: count, size: 57, page, next: `${API}/repositories/acme/widget/pullrequests?state=OPEN&page=${page + 1}` };
}

const prs = prList(3, 3, 1);

const commits = {
  values: [
    { type: 'commit', hash: '4f2a9c1e0b7d5a6e8f90123456789abcdef01234', date: '2025-11-02T15:29:00+00:00', author: { type: 'author', raw: 'Alice Example <alice@example.com>', user: alice }, message: 'Fix login retry (#412)\n\nBackoff now caps at 30s.\n', summary: { type: 'rendered', raw: 'Fix login retry (#412)', markup: 'markdown', html: '<p>Fix login retry (#412)</p>' }, parents: [{ hash: '1a2b3c4d5e6f', type: 'commit' }], links: { self: { href: `${API}/repositories/acme/widget/commit/4f2a9c1e0b7d` } } },
    { type: 'commit', hash: '1a2b3c4d5e6f708192a3b4c5d6e7f80912345678', date: '2025-11-01T08:00:00+00:00', author: { type: 'author', raw: 'ci-bot <noreply@example.com>' }, message: 'chore: bump deps', summary: { type: 'rendered', raw: 'chore: bump deps', markup: 'markdown', html: '<p>chore: bump deps</p>' }, parents: [], links: { self: { href: `${API}/repositories/acme/widget/commit/1a2b3c4d5e6f` } } },
  ],
  pagelen: 2,
  next: `${API}/repositories/acme/widget/commits?ctx=abc&page=2`,
};

const diff = [
  'diff --git a/src/auth.rs b/src/auth.rs',
  'index 3b18e51..a9c2d77 100644',
  '--- a/src/auth.rs',
  '+++ b/src/auth.rs',
  '@@ -10,7 +10,8 @@ fn retry(n: u32) -> Duration {',
  '-    Duration::from_secs(2u64.pow(n))',
  '+    // cap: "30s", per RFC\\spec',
  '+    Duration::from_secs(2u64.pow(n).min(30))',
  ' }',
  '\tindented with tab: a,b',
  '',
].join('\n');

function bigDiff(seed) {
  const r = rng(seed);
  const lines = [];
  for (let f = 0; f < 40; f += 1) {
    lines.push(`diff --git a/src/mod${f}.rs b/src/mod${f}.rs`, `index ${f}aa..${f}bb 100644`, `--- a/src/mod${f}.rs`, `+++ b/src/mod${f}.rs`, `@@ -1,30 +1,30 @@`);
    for (let i = 0; i < 30; i += 1) lines.push(`${pick(r, ['+', '-', ' '])}    let v${i} = "${sentence(r, 4)}"; // ${i}`);
  }
  return `${lines.join('\n')}\n`;
}

const bbError = (message, detail, extra = {}) => ({ type: 'error', error: { message, ...(detail === undefined ? {} : { detail }), ...extra } });

/** The Bitbucket cases. */
export const bitbucketCases = [
  { name: 'repositories-no-prefix', tool: 'bb_get', args: { path: '/repositories/acme', queryParams: { pagelen: '3', role: 'member' } }, upstream: json(200, repos) },
  { name: 'repositories-with-prefix-json', tool: 'bb_get', args: { path: '/2.0/repositories/acme', outputFormat: 'json' }, upstream: json(200, repos) },
  { name: 'repositories-no-leading-slash', tool: 'bb_get', args: { path: 'repositories/acme', jq: 'values[*].full_name' }, upstream: json(200, repos) },
  { name: 'repositories-prefix-no-leading-slash', tool: 'bb_get', args: { path: '2.0/repositories/acme', jq: 'next' }, upstream: json(200, repos) },
  { name: 'repositories-jq-links', tool: 'bb_get', args: { path: '/repositories/acme', jq: 'values[0].links' }, upstream: json(200, repos) },
  { name: 'repositories-jq-tabular', tool: 'bb_get', args: { path: '/repositories/acme', jq: 'values[*].{name: name, private: is_private, lang: language, size: size}' }, upstream: json(200, repos) },
  { name: 'pullrequests-paging', tool: 'bb_get', args: { path: '/repositories/acme/widget/pullrequests', queryParams: { state: 'OPEN', q: 'title ~ "fix" AND state = "OPEN"', sort: '-updated_on', fields: '+values.participants,-values.summary' } }, upstream: json(200, prs) },
  { name: 'pullrequests-projection-json', tool: 'bb_get', args: { path: '/repositories/acme/widget/pullrequests', jq: '{next: next, prs: values[*].{id: id, title: title, state: state, author: author.display_name}}', outputFormat: 'json' }, upstream: json(200, prs) },
  { name: 'pullrequest-path-with-query', tool: 'bb_get', args: { path: '/repositories/acme/widget/pullrequests?state=MERGED', queryParams: { page: '2', 'ü': 'ß / ?' }, jq: 'values[0].id' }, upstream: json(200, prs) },
  { name: 'commits', tool: 'bb_get', args: { path: '/repositories/acme/widget/commits/main', queryParams: { exclude: 'release/*' } }, upstream: json(200, commits) },
  { name: 'commits-jq-messages', tool: 'bb_get', args: { path: '/repositories/acme/widget/commits/main', jq: 'values[*].message' }, upstream: json(200, commits) },
  { name: 'diff-text-plain', tool: 'bb_get', args: { path: '/repositories/acme/widget/diff/feature%2Flogin..main', queryParams: { context: '3' } }, upstream: text(200, diff, 'text/plain; charset=utf-8') },
  { name: 'diff-text-plain-json', tool: 'bb_get', args: { path: '/repositories/acme/widget/diff/feature%2Flogin..main', outputFormat: 'json' }, upstream: text(200, diff, 'text/plain; charset=utf-8') },
  { name: 'raw-file-text-plain', tool: 'bb_get', args: { path: '/repositories/acme/widget/src/main/README.md' }, upstream: text(200, '# Widget\n\nRun `cargo test`.\n\n- fast\n- "safe"\n', 'text/plain') },
  { name: 'raw-file-json-as-text-plain', tool: 'bb_get', args: { path: '/repositories/acme/widget/src/main/package.json' }, upstream: text(200, '{\n  "name": "widget",\n  "version": "1.0.0"\n}\n', 'text/plain') },
  { name: 'raw-file-json-content-type', tool: 'bb_get', args: { path: '/repositories/acme/widget/src/main/config.json' }, upstream: text(200, '{"name":"widget","version":"1.0.0","n":1.50}', 'application/json') },
  { name: 'raw-file-markdown-type', tool: 'bb_get', args: { path: '/repositories/acme/widget/src/main/CHANGELOG.md' }, upstream: text(200, '## 1.0.0\n- first: release, "yay"\n', 'text/markdown') },
  { name: 'raw-file-octet-stream-number', tool: 'bb_get', args: { path: '/repositories/acme/widget/src/main/VERSION' }, upstream: text(200, '2.10\n', 'application/octet-stream') },
  { name: 'text-plain-with-jq', tool: 'bb_get', args: { path: '/repositories/acme/widget/src/main/README.md', jq: 'length(@)' }, upstream: text(200, 'hello', 'text/plain') },
  { name: 'invalid-jq', tool: 'bb_get', args: { path: '/repositories/acme/widget', jq: 'links.[' }, upstream: json(200, { slug: 'widget', links: { html: { href: `${WEB}/acme/widget` } } }) },
  { name: 'invalid-jq-json', tool: 'bb_get', args: { path: '/repositories/acme/widget', jq: 'values[?', outputFormat: 'json' }, upstream: json(200, { slug: 'widget', links: { html: { href: `${WEB}/acme/widget` } } }) },
  { name: 'empty-text-plain-200', tool: 'bb_get', args: { path: '/repositories/acme/widget/src/main/EMPTY' }, upstream: text(200, '', 'text/plain') },
  { name: 'empty-body-200', tool: 'bb_get', args: { path: '/repositories/acme/widget/refs/branches/main' }, upstream: empty(200, { 'content-type': 'application/json' }) },
  { name: 'create-pr-post', tool: 'bb_post', args: { path: '/repositories/acme/widget/pullrequests', body: { title: 'Fix: login retry — "cap"', source: { branch: { name: 'feature/login' } }, destination: { branch: { name: 'main' } }, close_source_branch: true, reviewers: [{ uuid: '{0c5f2d8e-2222-4a4a-9b9b-000000000002}' }] }, jq: '{id: id, url: links.html.href}' }, upstream: json(201, pr(rng(9), 401)) },
  { name: 'comment-post-json', tool: 'bb_post', args: { path: '/2.0/repositories/acme/widget/pullrequests/401/comments', body: { content: { raw: 'Please add a test.\n\n```rust\nassert!(ok);\n```' }, inline: { path: 'src/auth.rs', to: 12 } }, outputFormat: 'json', jq: '{id: id, raw: content.raw}' }, upstream: json(201, { id: 555001, content: { raw: 'Please add a test.\n\n```rust\nassert!(ok);\n```', markup: 'markdown', html: '<p>Please add a test.</p>' }, inline: { path: 'src/auth.rs', to: 12, from: null } }) },
  { name: 'approve-post-no-body', tool: 'bb_post', args: { path: '/repositories/acme/widget/pullrequests/401/approve', body: {} }, upstream: json(200, { type: 'participant', role: 'REVIEWER', approved: true, state: 'approved', user: { display_name: 'Alice Example', nickname: 'alice' } }) },
  { name: 'update-pr-put', tool: 'bb_put', args: { path: '/repositories/acme/widget/pullrequests/401', body: { title: 'Updated title', description: 'Line 1\nLine 2' }, jq: 'title' }, upstream: json(200, { ...pr(rng(9), 401), title: 'Updated title' }) },
  { name: 'patch-200', tool: 'bb_patch', args: { path: '/repositories/acme/widget/environments/%7Benv%7D/changes', body: { change: { name: 'Staging' } } }, upstream: json(202, { status: 'accepted' }) },
  { name: 'delete-branch-204', tool: 'bb_delete', args: { path: '/repositories/acme/widget/refs/branches/feature%2Flogin' }, upstream: empty(204) },
  { name: 'delete-204-json', tool: 'bb_delete', args: { path: '/repositories/acme/widget/pullrequests/401/approve', outputFormat: 'json' }, upstream: empty(204) },
  // Errors: every shape transport.util.js parses, and every status branch.
  { name: 'error-400-bitbucket-shape', tool: 'bb_post', args: { path: '/repositories/acme/widget/pullrequests', body: { title: '' } }, upstream: json(400, bbError('Bad request', 'title: This field is required.', { fields: { title: ['This field is required.'] } })) },
  { name: 'error-400-bitbucket-no-detail', tool: 'bb_get', args: { path: '/repositories/acme/widget/pullrequests', queryParams: { q: 'state = ' } }, upstream: json(400, bbError('Invalid query: unexpected end of input')) },
  { name: 'error-400-error-without-type', tool: 'bb_get', args: { path: '/repositories/acme/widget/pullrequests' }, upstream: json(400, { error: { message: 'Invalid field name: nope', detail: 'ignored without type' } }) },
  { name: 'error-400-errors-array', tool: 'bb_get', args: { path: '/repositories/acme/widget/pipelines' }, upstream: json(400, { errors: [{ status: 400, code: 'INVALID_REQUEST_PARAMETER', title: 'Request parameter is invalid' }] }) },
  { name: 'error-400-message-only', tool: 'bb_get', args: { path: '/repositories/acme/widget/pipelines' }, upstream: json(400, { message: 'Plain message error' }) },
  { name: 'error-400-unparsed-json', tool: 'bb_get', args: { path: '/repositories/acme/widget/pipelines' }, upstream: json(400, { unexpected: 'shape', code: 17 }) },
  { name: 'error-401-text', tool: 'bb_get', args: { path: '/user' }, upstream: text(401, 'Unauthorized', 'text/plain', { 'www-authenticate': 'Basic realm="Bitbucket.org HTTP"' }) },
  { name: 'error-401-json', tool: 'bb_get', args: { path: '/user' }, upstream: json(401, bbError('Access token expired. Use your refresh token to obtain a new access token.')) },
  { name: 'error-403', tool: 'bb_delete', args: { path: '/repositories/acme/widget' }, upstream: json(403, bbError('Your credentials lack one or more required privilege scopes.', { granted: ['repository'], required: ['repository:delete'] })) },
  { name: 'error-404', tool: 'bb_get', args: { path: '/repositories/acme/nope' }, upstream: json(404, bbError('Repository acme/nope not found')) },
  { name: 'error-404-json-mode', tool: 'bb_get', args: { path: '/repositories/acme/nope', outputFormat: 'json' }, upstream: json(404, bbError('Repository acme/nope not found')) },
  { name: 'error-404-html', tool: 'bb_get', args: { path: '/nope' }, upstream: text(404, '<!DOCTYPE html><html><body>Page not found</body></html>', 'text/html') },
  { name: 'error-409', tool: 'bb_post', args: { path: '/repositories/acme/widget/pullrequests/401/merge', body: { merge_strategy: 'squash' } }, upstream: json(409, bbError('Merge conflict', 'Cannot merge: src/auth.rs has conflicts')) },
  { name: 'error-429-retry-after', tool: 'bb_get', args: { path: '/repositories/acme' }, upstream: json(429, bbError('Rate limit for this resource has been exceeded'), { 'retry-after': '60' }) },
  { name: 'error-429-no-retry-after', tool: 'bb_get', args: { path: '/repositories/acme' }, upstream: empty(429) },
  { name: 'error-500-json', tool: 'bb_get', args: { path: '/repositories/acme/widget' }, upstream: json(500, bbError('Something went wrong', undefined, { id: 'c0ffee' })) },
  { name: 'error-502-html', tool: 'bb_get', args: { path: '/repositories/acme/widget' }, upstream: text(502, '<html><body><h1>502 Bad Gateway</h1>\nThe server returned an invalid response.</body></html>', 'text/html') },
  { name: 'error-503-empty', tool: 'bb_get', args: { path: '/repositories/acme/widget' }, upstream: empty(503) },
  { name: 'error-content-length-over-limit', tool: 'bb_get', args: { path: '/repositories/acme/widget/src/main/big.bin' }, upstream: text(200, 'x', 'application/octet-stream', { 'content-length': '20971520' }) },
  // Truncation: a JSON list (saved-at line present) and a text diff (no saved file, so no saved-at line).
  { name: 'truncation-pullrequests-toon', tool: 'bb_get', args: { path: '/repositories/acme/widget/pullrequests', queryParams: { pagelen: '50' } }, upstream: json(200, prList(50, 31, 1)) },
  { name: 'truncation-diff-text', tool: 'bb_get', args: { path: '/repositories/acme/widget/diff/main..feature' }, upstream: text(200, bigDiff(41), 'text/plain') },
];
