// Seeded generators of JSON texts for the render differential tests and the render benchmark:
// random nested values full of the renderers' hard cases, and real-shaped GitHub, CircleCI, Jira,
// Confluence and Bitbucket responses. Everything is a JSON *text*, so number spellings (`-0`,
// `1E+2`, `1.50`), duplicate keys and key order reach both sides exactly as written.

/** mulberry32: a small, fast, seedable PRNG returning floats in [0, 1). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const int = (rng, n) => Math.floor(rng() * n);
const pick = (rng, xs) => xs[int(rng, xs.length)];
const chance = (rng, p) => rng() < p;
const str = (s) => JSON.stringify(s);

const HARD_STRINGS = [
  '', ' ', '  ', ' padded', 'padded ', '\u00a0nbsp', 'ideo\u3000', '\ufeffbom', 'nel\u0085',
  '\u2028ls', 'ps\u2029', '\u200bzero-width', 'true', 'false', 'null', 'True', 'NULL', '0', '123',
  '-5', '1.5', '1.', '.5', '1e5', '1E-7', '1e+21', '05', '007', '0.0', '-0', '1_000', '0x1f',
  'Infinity', 'NaN', '-', '--', '-x', '- item', 'a-b', 'a,b', 'a:b', 'http://x.y/z?q=1&r=2',
  '[x]', '{y}', 'quo"te', 'back\\slash', 'line\nbreak', 'cr\rx', 'tab\tx', '\u0001ctrl',
  '\u001f', '\u007f', '\b\f', 'é', '日本語', '😀', 'a😀b', '😀 ', ' 😀', '#hash', 'a b c',
  'trailing.', '@user', 'x|y', 'semi;colon', "it's", 'a=b', '<p>html</p>', '%20', '~tilde',
];
const HARD_KEYS = [
  'id', 'name', '_under', 'a.b', 'a-b', 'with space', '', '0', '1', '2', '10', '4294967294',
  '4294967295', '01', '-1', '1.5', '1e3', 'true', 'null', '__proto__', 'key:colon', 'q"k', 'é',
  '😀', 'A1', '_', 'x.y.z', '9lives', 'tab\tkey', 'line\nkey', 'comma,key', '[b]', '{c}', '#',
  'self', 'length', 'toString', 'constructor', 'hasOwnProperty', 'valueOf',
];
const NUMBER_LITERALS = [
  '0', '-0', '0.0', '-0.0', '1', '-1', '1.0', '1.50', '1E2', '1e+2', '1e-2', '100e-2', '1e21',
  '1e20', '999999999999999999999', '1.5e-7', '1e-6', '1e-7', '0.000001', '0.0000001',
  '123456789012345678901234567890', '9007199254740993', '-9007199254740992', '0.1', '0.2',
  '0.30000000000000004', '3.14159', '2.5e-324', '5e-324', '1.7976931348623157e308', '1e308',
  '1e400', '-1e400', '1e-400', '4294967295', '12345.6789', '1.23456789012345678', '6.02214076e23',
];
const CHAR_POOLS = [
  'abcdefghijklmnopqrstuvwxyz', 'ABCXYZ0123456789', ' _-.,:;/\\"\'[]{}()#@!?|=+*&%$^~`<>',
  '\n\r\t\u0000\u0001\u001f\u007f', 'éüßñçøåЖЯ中文日本語한국어', '\u00a0\u2000\u2028\u2029\u3000\ufeff\u0085',
  '😀🎉👍🏽𝄞𐍈',
];

function randomString(rng) {
  if (chance(rng, 0.35)) return pick(rng, HARD_STRINGS);
  const len = chance(rng, 0.9) ? int(rng, 12) : int(rng, 200);
  let s = '';
  for (let i = 0; i < len; i++) {
    const pool = [...(chance(rng, 0.7) ? CHAR_POOLS[0] : pick(rng, CHAR_POOLS))];
    s += pick(rng, pool);
  }
  return s;
}

function randomKey(rng) {
  if (chance(rng, 0.3)) return pick(rng, HARD_KEYS);
  if (chance(rng, 0.3)) return String(int(rng, 30));
  return chance(rng, 0.8) ? pick(rng, ['id', 'key', 'value', 'status', 'title', 'n', 'x', 'url']) + int(rng, 5) : randomString(rng);
}

function randomNumber(rng) {
  const r = rng();
  if (r < 0.3) return pick(rng, NUMBER_LITERALS);
  if (r < 0.6) return String(int(rng, 2000) - 1000);
  if (r < 0.8) return String((rng() - 0.5) * 10 ** (int(rng, 40) - 20));
  // A random double from random bits: covers the whole range of shortest-digit cases.
  const buf = new DataView(new ArrayBuffer(8));
  buf.setUint32(0, Math.floor(rng() * 2 ** 32));
  buf.setUint32(4, Math.floor(rng() * 2 ** 32));
  const d = buf.getFloat64(0);
  return Number.isFinite(d) ? String(d).replace('+', '') : '1e999';
}

function randomPrimitive(rng) {
  const r = rng();
  if (r < 0.45) return str(randomString(rng));
  if (r < 0.8) return randomNumber(rng);
  if (r < 0.9) return pick(rng, ['true', 'false']);
  return 'null';
}

function objectText(entries) {
  return `{${entries.map(([k, v]) => `${str(k)}:${v}`).join(',')}}`;
}

/** A random array shaped like one of the encoder's array forms. */
function randomArray(rng, depth) {
  const n = chance(rng, 0.1) ? 0 : 1 + int(rng, 6);
  const form = int(rng, 6);
  const items = [];
  if (form === 0) {
    for (let i = 0; i < n; i++) items.push(randomPrimitive(rng));
  } else if (form === 1 || form === 2) {
    // Uniform objects (tabular), sometimes spoiled by a missing/extra key or a nested value,
    // sometimes with rows listing the keys in another order.
    const keys = [...new Set(Array.from({ length: 1 + int(rng, 5) }, () => randomKey(rng)))];
    for (let i = 0; i < n; i++) {
      let rowKeys = chance(rng, 0.2) ? [...keys].sort(() => rng() - 0.5) : keys;
      if (form === 2 && chance(rng, 0.3)) rowKeys = chance(rng, 0.5) ? rowKeys.slice(1) : [...rowKeys, randomKey(rng)];
      items.push(objectText(rowKeys.map((k) => [k, form === 2 && chance(rng, 0.1) ? randomValue(rng, depth + 1) : randomPrimitive(rng)])));
    }
  } else if (form === 3) {
    for (let i = 0; i < n; i++) items.push(chance(rng, 0.85) ? randomArrayOfPrimitives(rng) : randomValue(rng, depth + 1));
  } else {
    for (let i = 0; i < n; i++) items.push(randomValue(rng, depth + 1));
  }
  return `[${items.join(',')}]`;
}

function randomArrayOfPrimitives(rng) {
  const n = int(rng, 4);
  return `[${Array.from({ length: n }, () => randomPrimitive(rng)).join(',')}]`;
}

function randomObject(rng, depth) {
  const n = chance(rng, 0.1) ? 0 : 1 + int(rng, 6);
  const entries = [];
  for (let i = 0; i < n; i++) {
    // Occasionally repeat a key: JSON.parse keeps its first place and last value.
    const k = entries.length && chance(rng, 0.05) ? pick(rng, entries)[0] : randomKey(rng);
    entries.push([k, randomValue(rng, depth + 1)]);
  }
  return objectText(entries);
}

/** A random JSON text of nested values. */
export function randomValue(rng, depth = 0) {
  const r = rng();
  if (depth > 4 || r < 0.35) return randomPrimitive(rng);
  if (r < 0.65) return randomArray(rng, depth);
  return randomObject(rng, depth);
}

// ---- real-shaped vendor responses -------------------------------------------------------------

const WORDS = 'build test deploy fix update refactor add remove bump release docs lint ci cache flaky timeout merge api user login page search index config'.split(' ');
const sentence = (rng, n) => Array.from({ length: n }, () => pick(rng, WORDS)).join(' ');
const hex = (rng, n) => Array.from({ length: n }, () => '0123456789abcdef'[int(rng, 16)]).join('');
const isoDate = (rng) => new Date(1.7e12 + int(rng, 3e10)).toISOString().replace(/\.\d+Z$/, 'Z');
const jiraDate = (rng) => new Date(1.7e12 + int(rng, 3e10)).toISOString().replace('Z', '+0000');

function githubUser(rng) {
  const login = pick(rng, ['octocat', 'dependabot[bot]', 'alice-dev', 'bob_smith', 'ci-bot']);
  const id = 1000 + int(rng, 9e7);
  return { login, id, node_id: `MDQ6VXNlcj${hex(rng, 6)}`, avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`, gravatar_id: '', url: `https://api.github.com/users/${login}`, html_url: `https://github.com/${login}`, type: login.endsWith('[bot]') ? 'Bot' : 'User', site_admin: false };
}

function githubRun(rng) {
  const id = 7e9 + int(rng, 1e9);
  const status = pick(rng, ['completed', 'in_progress', 'queued']);
  return {
    id, name: pick(rng, ['CI', 'Release', 'CodeQL', 'Deploy to production']), node_id: `WFR_kwLO${hex(rng, 10)}`,
    head_branch: pick(rng, ['main', 'feature/login', 'dependabot/npm_and_yarn/lodash-4.17.21', 'fix-123']),
    head_sha: hex(rng, 40), path: '.github/workflows/ci.yml', display_title: sentence(rng, 5), run_number: 1 + int(rng, 5000),
    event: pick(rng, ['push', 'pull_request', 'schedule', 'workflow_dispatch']), status,
    conclusion: status === 'completed' ? pick(rng, ['success', 'failure', 'cancelled', 'skipped']) : null,
    workflow_id: 5e7 + int(rng, 1e6), check_suite_id: 2e10 + int(rng, 1e9), url: `https://api.github.com/repos/o/r/actions/runs/${id}`,
    html_url: `https://github.com/o/r/actions/runs/${id}`, pull_requests: chance(rng, 0.3) ? [{ url: 'https://api.github.com/repos/o/r/pulls/1', id: int(rng, 1e9), number: int(rng, 900), head: { ref: 'feature', sha: hex(rng, 40) }, base: { ref: 'main', sha: hex(rng, 40) } }] : [],
    created_at: isoDate(rng), updated_at: isoDate(rng), actor: githubUser(rng), run_attempt: 1 + int(rng, 3), referenced_workflows: [],
    run_started_at: isoDate(rng), triggering_actor: githubUser(rng), jobs_url: `https://api.github.com/repos/o/r/actions/runs/${id}/jobs`,
    head_commit: { id: hex(rng, 40), tree_id: hex(rng, 40), message: `${sentence(rng, 6)}\n\n${sentence(rng, 12)}\n\nCo-authored-by: A <a@example.com>`, timestamp: isoDate(rng), author: { name: 'Alice', email: 'alice@example.com' }, committer: { name: 'GitHub', email: 'noreply@github.com' } },
  };
}

function githubJob(rng) {
  const steps = Array.from({ length: 3 + int(rng, 8) }, (_, i) => ({ name: i === 0 ? 'Set up job' : `Run ${sentence(rng, 2)}`, status: 'completed', conclusion: pick(rng, ['success', 'success', 'failure', 'skipped']), number: i + 1, started_at: isoDate(rng), completed_at: isoDate(rng) }));
  return { id: 2e10 + int(rng, 1e9), run_id: 7e9 + int(rng, 1e9), workflow_name: 'CI', head_branch: 'main', run_attempt: 1, head_sha: hex(rng, 40), status: 'completed', conclusion: pick(rng, ['success', 'failure']), created_at: isoDate(rng), started_at: isoDate(rng), completed_at: isoDate(rng), name: `test (${pick(rng, ['ubuntu-latest', 'macos-14', 'windows-2022'])}, ${pick(rng, ['18.x', '20.x', '22.x'])})`, steps, labels: ['ubuntu-latest'], runner_id: int(rng, 1e5), runner_name: `GitHub Actions ${int(rng, 1e3)}`, runner_group_id: 2, runner_group_name: 'GitHub Actions' };
}

function circleciPipeline(rng) {
  return { id: `${hex(rng, 8)}-${hex(rng, 4)}-${hex(rng, 4)}-${hex(rng, 4)}-${hex(rng, 12)}`, errors: chance(rng, 0.1) ? [{ type: 'config', message: 'Config does not conform to schema: {:workflows {:build {:jobs [nil]}}}' }] : [], project_slug: 'gh/acme/widgets', updated_at: isoDate(rng), number: int(rng, 30000), trigger_parameters: { git: { checkout_url: 'git@github.com:acme/widgets.git', branch: 'main' }, circleci: { event_time: isoDate(rng), provider_actor_type: 'author', event_type: 'push' } }, state: pick(rng, ['created', 'errored', 'setup']), created_at: isoDate(rng), trigger: { received_at: isoDate(rng), type: pick(rng, ['webhook', 'api', 'schedule']), actor: { login: 'alice-dev', avatar_url: 'https://avatars.githubusercontent.com/u/1?v=4' } }, vcs: { origin_repository_url: 'https://github.com/acme/widgets', target_repository_url: 'https://github.com/acme/widgets', revision: hex(rng, 40), provider_name: 'GitHub', commit: { body: chance(rng, 0.5) ? '' : sentence(rng, 10), subject: sentence(rng, 6) }, branch: 'main' } };
}

function circleciTest(rng) {
  const result = pick(rng, ['success', 'success', 'failure', 'skipped']);
  return { message: result === 'failure' ? `AssertionError: expected ${int(rng, 100)} to equal ${int(rng, 100)}\n    at Context.<anonymous> (test/${pick(rng, WORDS)}.spec.js:${int(rng, 300)}:${int(rng, 40)})` : '', source: 'mocha', run_time: Math.round(rng() * 5000) / 1000 + 0.0001 * int(rng, 3), file: `test/${pick(rng, WORDS)}.spec.js`, result, name: `${sentence(rng, 4)} works`, classname: `${pick(rng, WORDS)} suite` };
}

function adf(rng) {
  return { type: 'doc', version: 1, content: Array.from({ length: 1 + int(rng, 3) }, () => ({ type: 'paragraph', content: [{ type: 'text', text: sentence(rng, 8) }, { type: 'text', text: ` ${pick(rng, WORDS)}`, marks: [{ type: pick(rng, ['strong', 'em', 'code']) }] }] })) };
}

function jiraIssue(rng) {
  const id = String(10000 + int(rng, 90000));
  const key = `${pick(rng, ['PROJ', 'OPS', 'WEB'])}-${int(rng, 5000)}`;
  const accountId = `5b10a2844c20165700ede${int(rng, 99)}`;
  return {
    expand: 'operations,versionedRepresentations,editmeta,changelog,renderedFields', id, self: `https://acme.atlassian.net/rest/api/3/issue/${id}`, key,
    fields: {
      summary: sentence(rng, 6), status: { self: 'https://acme.atlassian.net/rest/api/3/status/3', description: '', iconUrl: 'https://acme.atlassian.net/', name: pick(rng, ['To Do', 'In Progress', 'Done']), id: String(1 + int(rng, 10)), statusCategory: { self: 'https://acme.atlassian.net/rest/api/3/statuscategory/4', id: 4, key: 'indeterminate', colorName: 'yellow', name: 'In Progress' } },
      priority: { self: 'https://acme.atlassian.net/rest/api/3/priority/3', iconUrl: 'https://acme.atlassian.net/images/icons/priorities/medium.svg', name: 'Medium', id: '3' },
      assignee: chance(rng, 0.2) ? null : { self: `https://acme.atlassian.net/rest/api/3/user?accountId=${accountId}`, accountId, emailAddress: 'alice@example.com', avatarUrls: { '48x48': 'https://secure.gravatar.com/avatar/a?d=48', '24x24': 'https://secure.gravatar.com/avatar/a?d=24', '16x16': 'https://secure.gravatar.com/avatar/a?d=16', '32x32': 'https://secure.gravatar.com/avatar/a?d=32' }, displayName: 'Alice Example', active: true, timeZone: 'Europe/Berlin', accountType: 'atlassian' },
      labels: Array.from({ length: int(rng, 4) }, () => pick(rng, ['backend', 'frontend', 'tech-debt', 'p1', '2024-Q3'])),
      created: jiraDate(rng), updated: jiraDate(rng), duedate: chance(rng, 0.5) ? null : '2024-12-31', description: chance(rng, 0.3) ? null : adf(rng),
      customfield_10010: null, customfield_10016: chance(rng, 0.5) ? 3.0 : null, timetracking: {}, issuelinks: [], components: chance(rng, 0.5) ? [{ self: 'https://acme.atlassian.net/rest/api/3/component/10000', id: '10000', name: 'API' }] : [],
      subtasks: [], fixVersions: [], votes: { self: 'https://acme.atlassian.net/rest/api/3/issue/PROJ-1/votes', votes: 0, hasVoted: false },
    },
  };
}

function confluencePage(rng) {
  const id = String(1e8 + int(rng, 9e8));
  return { id, status: 'current', title: `${sentence(rng, 3)}: ${pick(rng, ['Runbook', 'Design', 'RFC-12', 'Q3 plan'])}`, spaceId: String(int(rng, 1e6)), parentId: String(int(rng, 1e8)), parentType: 'page', position: int(rng, 1000), authorId: `557058:${hex(rng, 8)}-${hex(rng, 4)}`, ownerId: null, lastOwnerId: null, createdAt: isoDate(rng), version: { number: 1 + int(rng, 40), message: chance(rng, 0.5) ? '' : sentence(rng, 4), minorEdit: chance(rng, 0.5), authorId: `557058:${hex(rng, 8)}`, createdAt: isoDate(rng) }, body: { storage: { value: `<p>${sentence(rng, 20)}</p><ac:structured-macro ac:name="code"><ac:plain-text-body><![CDATA[if (a < b) { return "x"; }]]></ac:plain-text-body></ac:structured-macro>`, representation: 'storage' } }, _links: { editui: `/pages/resumedraft.action?draftId=${id}`, webui: `/spaces/ENG/pages/${id}/Title`, tinyui: `/x/${hex(rng, 6)}` } };
}

function bitbucketUser(rng) {
  return { display_name: pick(rng, ['Alice Example', 'Bob Smith', 'Chloé Dupont']), links: { self: { href: 'https://api.bitbucket.org/2.0/users/%7Babc%7D' }, avatar: { href: 'https://secure.gravatar.com/avatar/abc?d=https%3A%2F%2Favatar-management--avatars.us-west-2.prod.public.atl-paas.net%2Finitials%2FAE-6.png' }, html: { href: 'https://bitbucket.org/%7Babc%7D/' } }, type: 'user', uuid: `{${hex(rng, 8)}-${hex(rng, 4)}-${hex(rng, 4)}-${hex(rng, 4)}-${hex(rng, 12)}}`, account_id: `5b10a2844c20165700ede${int(rng, 99)}`, nickname: 'alice' };
}

function bitbucketPr(rng) {
  const id = 1 + int(rng, 3000);
  const href = (p) => ({ href: `https://api.bitbucket.org/2.0/repositories/acme/widgets/pullrequests/${id}${p}` });
  return { comment_count: int(rng, 20), task_count: int(rng, 3), type: 'pullrequest', id, title: `${pick(rng, ['feat', 'fix', 'chore'])}: ${sentence(rng, 5)}`, description: `## Summary\n\n- ${sentence(rng, 6)}\n- ${sentence(rng, 4)}\n\n\`\`\`diff\n-old\n+new\n\`\`\``, rendered: { title: { type: 'rendered', raw: 'x', markup: 'markdown', html: '<p>x</p>' } }, state: pick(rng, ['OPEN', 'MERGED', 'DECLINED']), author: bitbucketUser(rng), source: { branch: { name: `feature/${pick(rng, WORDS)}-${int(rng, 99)}` }, commit: { type: 'commit', hash: hex(rng, 12), links: { self: { href: 'https://api.bitbucket.org/2.0/repositories/acme/widgets/commit/abc' } } }, repository: { type: 'repository', full_name: 'acme/widgets', name: 'widgets', uuid: `{${hex(rng, 8)}}` } }, destination: { branch: { name: 'main' }, commit: { type: 'commit', hash: hex(rng, 12) } }, merge_commit: chance(rng, 0.5) ? null : { type: 'commit', hash: hex(rng, 12) }, close_source_branch: chance(rng, 0.5), closed_by: null, reason: '', created_on: `${isoDate(rng).slice(0, -1)}.${int(rng, 999999)}+00:00`, updated_on: `${isoDate(rng).slice(0, -1)}.123456+00:00`, reviewers: [], participants: Array.from({ length: int(rng, 3) }, () => ({ type: 'participant', user: bitbucketUser(rng), role: pick(rng, ['REVIEWER', 'PARTICIPANT']), approved: chance(rng, 0.5), state: pick(rng, ['approved', 'changes_requested', null]), participated_on: isoDate(rng) })), links: { self: href(''), html: { href: `https://bitbucket.org/acme/widgets/pull-requests/${id}` }, commits: href('/commits'), approve: href('/approve'), diff: href('/diff'), diffstat: href('/diffstat'), comments: href('/comments'), activity: href('/activity'), merge: href('/merge'), decline: href('/decline'), statuses: href('/statuses') }, summary: { type: 'rendered', raw: sentence(rng, 8), markup: 'markdown', html: `<p>${sentence(rng, 8)}</p>` } };
}

/** Real-shaped vendor responses by name; `n` scales the number of listed items. */
export const VENDOR_DOCUMENTS = {
  github_runs: (rng, n) => ({ total_count: n, workflow_runs: Array.from({ length: n }, () => githubRun(rng)) }),
  github_jobs: (rng, n) => ({ total_count: n, jobs: Array.from({ length: n }, () => githubJob(rng)) }),
  circleci_pipelines: (rng, n) => ({ items: Array.from({ length: n }, () => circleciPipeline(rng)), next_page_token: chance(rng, 0.5) ? null : hex(rng, 32) }),
  circleci_tests: (rng, n) => ({ items: Array.from({ length: n }, () => circleciTest(rng)), next_page_token: null }),
  jira_search: (rng, n) => ({ expand: 'schema,names', startAt: 0, maxResults: 50, total: n + int(rng, 500), issues: Array.from({ length: n }, () => jiraIssue(rng)) }),
  confluence_pages: (rng, n) => ({ results: Array.from({ length: n }, () => confluencePage(rng)), _links: { next: '/wiki/api/v2/pages?cursor=eyJpZCI6IjEyMyJ9', base: 'https://acme.atlassian.net/wiki' } }),
  bitbucket_prs: (rng, n) => ({ values: Array.from({ length: n }, () => bitbucketPr(rng)), pagelen: 50, size: n, page: 1, next: 'https://api.bitbucket.org/2.0/repositories/acme/widgets/pullrequests?page=2' }),
};

/** A real-shaped document of about `targetBytes` of compact JSON: every vendor's list response. */
export function realShapedDocument(seed, targetBytes) {
  const rng = prng(seed);
  const names = Object.keys(VENDOR_DOCUMENTS);
  const doc = {};
  for (const name of names) {
    const one = JSON.stringify(VENDOR_DOCUMENTS[name](prng(seed + 1), 10)).length / 10;
    doc[name] = VENDOR_DOCUMENTS[name](rng, Math.max(1, Math.round(targetBytes / names.length / one)));
  }
  return JSON.stringify(doc);
}
