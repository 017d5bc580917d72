// Seeded corpus for the JMESPath differential test: random documents with hard cases, real-shaped
// GitHub / CircleCI / Jira / Confluence / Bitbucket responses, and expressions generated from the
// keys each document holds (plus hand-written quirk cases and deliberately broken expressions).

/** mulberry32: the same corpus on every run. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (r, list) => list[Math.floor(r() * list.length)];
const int = (r, lo, hi) => lo + Math.floor(r() * (hi - lo + 1));

// Number literals JSON.stringify cannot produce; written raw into the case line.
const RAW_NUMBERS = ['-0', '1.50', '1e400', '12345678901234567890123', '1E2', '0.1e-7', '-1e21', '2.0'];
const raw = (lit) => `__RAW:${lit}__`;

const STRINGS = [
  '', ' ', 'a', 'b', 'abc', 'ABC', 'Abc', 'abab', 'ab', ' padded ', '\tx\n', '\u00a0nbsp\u00a0',
  '12', '1e3', ' 3 ', '0x10', '-5', '1.5', 'Infinity', 'NaN', 'true', 'null', 'false',
  'héllo', 'ñ', '日本語', '😀', 'a😀b', '\uffff', '\ue000', '𝒳y', 'foo-bar', 'foo_bar', 'x,y',
  'success', 'failure', 'open', 'closed', 'In Progress', 'Done', 'main', 'feature/x',
  '2024-01-02T03:04:05Z', '2023-12-31T23:59:59Z', '[object Object]', 'undefined',
];
const KEYS = [
  'a', 'b', 'c', 'foo', 'bar', 'id', 'name', 'items', 'values', 'status', 'type', 'key',
  '0', '1', '2', '10', '01', '-1', '4294967294', '4294967295', 'with space', 'ключ', 'é', 'x.y',
  'A', 'B', 'nested', 'list', 'count', 'value', 'e', '_u',
];
const NUMBERS = [0, 1, 2, 3, -1, -2.5, 0.5, 10, 100, 1e21, 1.5e-7, 123456789, 2 ** 53, -0.000001, 42, 7];

export function randomScalar(r) {
  const k = r();
  if (k < 0.35) return pick(r, STRINGS);
  if (k < 0.65) return r() < 0.12 ? raw(pick(r, RAW_NUMBERS)) : pick(r, NUMBERS);
  if (k < 0.8) return r() < 0.5;
  if (k < 0.9) return null;
  return int(r, -20, 20);
}

export function randomValue(r, depth = 0) {
  const k = r();
  if (depth > 3 || k < 0.3) return randomScalar(r);
  if (k < 0.45) return randomObject(r, depth);
  if (k < 0.55) {
    // uniform object array
    const fields = Array.from({ length: int(r, 1, 4) }, () => pick(r, KEYS));
    return Array.from({ length: int(r, 0, 5) }, () =>
      Object.fromEntries(fields.map((f) => [f, r() < 0.8 ? randomScalar(r) : randomValue(r, depth + 2)])),
    );
  }
  if (k < 0.62) return Array.from({ length: int(r, 0, 4) }, () => Array.from({ length: int(r, 0, 3) }, () => randomScalar(r)));
  if (k < 0.7) return r() < 0.5 ? [] : {};
  if (k < 0.8) return Array.from({ length: int(r, 0, 6) }, () => (r() < 0.5 ? pick(r, NUMBERS) : int(r, -9, 9)));
  if (k < 0.86) return Array.from({ length: int(r, 0, 6) }, () => pick(r, STRINGS));
  return Array.from({ length: int(r, 0, 5) }, () => randomValue(r, depth + 1));
}

function randomObject(r, depth) {
  const o = {};
  for (let i = int(r, 0, 6); i > 0; i--) o[pick(r, KEYS)] = randomValue(r, depth + 1);
  return o;
}

// ---- real-shaped vendor responses -------------------------------------------------------------

const iso = (r) => `2024-0${int(r, 1, 9)}-1${int(r, 0, 9)}T0${int(r, 0, 9)}:${int(r, 10, 59)}:${int(r, 10, 59)}Z`;
const user = (r) => ({ login: pick(r, ['octocat', 'alice', 'bob', 'ci-bot']), id: int(r, 1, 99999), type: 'User', site_admin: false });

export function github(r) {
  const runs = Array.from({ length: int(r, 0, 8) }, (_, i) => ({
    id: 9000000000 + int(r, 0, 999999),
    name: pick(r, ['CI', 'Release', 'Lint', 'Deploy']),
    head_branch: pick(r, ['main', 'feature/x', 'fix-1']),
    head_sha: 'abc' + int(r, 100000, 999999),
    run_number: i + 1,
    event: pick(r, ['push', 'pull_request', 'schedule']),
    status: pick(r, ['completed', 'in_progress', 'queued']),
    conclusion: pick(r, ['success', 'failure', null, 'cancelled']),
    workflow_id: int(r, 1000, 1010),
    created_at: iso(r),
    updated_at: iso(r),
    run_attempt: int(r, 1, 3),
    actor: user(r),
    pull_requests: r() < 0.3 ? [{ number: int(r, 1, 500), head: { ref: 'feature/x' } }] : [],
    html_url: 'https://github.com/o/r/actions/runs/1',
  }));
  return { total_count: runs.length, workflow_runs: runs };
}

export function circleci(r) {
  return {
    next_page_token: r() < 0.5 ? null : 'AARLwwV',
    items: Array.from({ length: int(r, 0, 8) }, (_, i) => ({
      id: `5034460f-c7c4-4c43-9457-de07e2029e7${i}`,
      errors: r() < 0.2 ? [{ type: 'config', message: 'bad config' }] : [],
      project_slug: 'gh/org/repo',
      updated_at: iso(r),
      number: int(r, 1, 9999),
      state: pick(r, ['created', 'errored', 'setup-pending', 'pending']),
      created_at: iso(r),
      trigger: { type: pick(r, ['webhook', 'api']), received_at: iso(r), actor: { login: 'alice', avatar_url: null } },
      vcs: { branch: pick(r, ['main', 'dev']), revision: 'f00' + i, commit: { subject: pick(r, STRINGS), body: '' } },
      duration: r() < 0.3 ? null : int(r, 1, 5000) / 10,
    })),
  };
}

export function jira(r) {
  return {
    expand: 'schema,names',
    startAt: 0,
    maxResults: 50,
    total: 3,
    issues: Array.from({ length: int(r, 0, 7) }, (_, i) => ({
      expand: 'operations',
      id: String(10000 + i),
      self: `https://x.atlassian.net/rest/api/3/issue/${10000 + i}`,
      key: `PROJ-${i + 1}`,
      fields: {
        summary: pick(r, STRINGS),
        status: { name: pick(r, ['To Do', 'In Progress', 'Done']), statusCategory: { key: pick(r, ['new', 'done']) } },
        assignee: r() < 0.3 ? null : { displayName: pick(r, ['Ann', 'Bo', 'Émile']), accountId: 'abc' + i },
        priority: { name: pick(r, ['High', 'Medium', 'Low']), id: String(int(r, 1, 5)) },
        labels: Array.from({ length: int(r, 0, 3) }, () => pick(r, ['backend', 'ui', 'bug', 'p1'])),
        story_points: r() < 0.5 ? null : pick(r, [1, 2, 3, 5, 8, 0.5]),
        created: iso(r),
        customfield_10010: r() < 0.5 ? null : [{ id: 1, name: 'Sprint 1' }],
        '10': 'numeric-key',
      },
    })),
  };
}

export function confluence(r) {
  return {
    results: Array.from({ length: int(r, 0, 6) }, (_, i) => ({
      id: String(65536 + i),
      type: 'page',
      status: pick(r, ['current', 'draft']),
      title: pick(r, STRINGS),
      spaceId: String(int(r, 1, 9)),
      version: { number: int(r, 1, 30), createdAt: iso(r), message: '' },
      body: { storage: { value: '<p>Hello</p>', representation: 'storage' } },
      _links: { webui: `/spaces/X/pages/${65536 + i}` },
    })),
    _links: { next: r() < 0.5 ? '/wiki/api/v2/pages?cursor=abc' : undefined, base: 'https://x.atlassian.net/wiki' },
  };
}

export function bitbucket(r) {
  return {
    pagelen: 10,
    size: 2,
    page: 1,
    values: Array.from({ length: int(r, 0, 6) }, (_, i) => ({
      id: i + 1,
      title: pick(r, STRINGS),
      state: pick(r, ['OPEN', 'MERGED', 'DECLINED']),
      author: { display_name: pick(r, ['Ann', 'Bo']), uuid: `{${i}}` },
      source: { branch: { name: 'feature/x' }, commit: { hash: 'abc' } },
      destination: { branch: { name: 'main' } },
      comment_count: int(r, 0, 20),
      task_count: int(r, 0, 3),
      created_on: iso(r),
      participants: Array.from({ length: int(r, 0, 3) }, () => ({ role: 'REVIEWER', approved: r() < 0.5 })),
    })),
  };
}

// ---- expressions ----------------------------------------------------------------------------------

/** Paths of object keys in `v`, as arrays of keys (with `*` for array elements). */
function paths(v, prefix = [], out = [], depth = 0) {
  if (depth > 4) return out;
  if (Array.isArray(v)) {
    for (const item of v.slice(0, 2)) paths(item, [...prefix, '*'], out, depth + 1);
  } else if (v && typeof v === 'object') {
    for (const [k, c] of Object.entries(v)) {
      out.push([...prefix, k]);
      paths(c, [...prefix, k], out, depth + 1);
    }
  }
  return out;
}

const ident = (k) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : JSON.stringify(k));

function pathExpr(p) {
  let s = '';
  for (const seg of p) {
    if (seg === '*') s += '[*]';
    else s += (s ? '.' : '') + ident(seg);
  }
  return s || '@';
}

const FUNCS1 = ['abs', 'avg', 'ceil', 'floor', 'length', 'max', 'min', 'sum', 'type', 'keys', 'values', 'sort', 'reverse', 'to_array', 'to_string', 'to_number', 'not_null'];
const LITERALS = ['`1`', '`0`', '`-1`', '`2.5`', '`"a"`', '`"12"`', "'abc'", "''", '`true`', '`false`', '`null`', '`[]`', '`{}`', '`[1,2]`', '`{"a":1}`', "'1e3'", '`"😀"`', '`1e21`', "' 3 '"];
const CMPS = ['==', '!=', '<', '<=', '>', '>='];

export function expressionsFor(r, doc, count) {
  const ps = paths(doc).map(pathExpr);
  const keys = [...new Set(paths(doc).map((p) => p[p.length - 1]).filter((k) => k !== '*'))];
  const anyPath = () => (ps.length && r() < 0.85 ? pick(r, ps) : ident(pick(r, KEYS)));
  const key = () => (keys.length && r() < 0.8 ? ident(pick(r, keys)) : ident(pick(r, KEYS)));
  const operand = () => (r() < 0.5 ? key() : r() < 0.5 ? pick(r, LITERALS) : '@');
  const gen = (d) => {
    const k = r();
    if (d > 2) return r() < 0.6 ? anyPath() : pick(r, LITERALS);
    if (k < 0.12) return anyPath();
    if (k < 0.18) return `${anyPath()}[${int(r, -3, 3)}]`;
    if (k < 0.24) {
      const part = () => (r() < 0.4 ? '' : String(int(r, -4, 4)));
      return `${anyPath()}[${part()}:${part()}${r() < 0.5 ? ':' + part() : ''}]`;
    }
    if (k < 0.3) return `${anyPath()}[*].${key()}`;
    if (k < 0.34) return `${anyPath()}.*`;
    if (k < 0.38) return `${anyPath()}[]${r() < 0.5 ? '.' + key() : ''}`;
    if (k < 0.48) return `${anyPath()}[?${operand()} ${pick(r, CMPS)} ${operand()}]${r() < 0.5 ? '.' + key() : ''}`;
    if (k < 0.53) return `[${gen(d + 1)}, ${gen(d + 1)}]`;
    if (k < 0.6) return `${r() < 0.5 ? anyPath() + '[*].' : ''}{${key()}: ${gen(d + 1)}, ${ident(pick(r, KEYS))}: ${key()}}`;
    if (k < 0.64) return `${gen(d + 1)} | ${gen(d + 1)}`;
    if (k < 0.72) return `${pick(r, FUNCS1)}(${gen(d + 1)})`;
    if (k < 0.76) return `${pick(r, ['sort_by', 'max_by', 'min_by'])}(${anyPath()}, &${key()})`;
    if (k < 0.78) return `map(&${key()}, ${anyPath()})`;
    if (k < 0.8) return `${pick(r, ['contains', 'starts_with', 'ends_with', 'join'])}(${operand()}, ${operand()})`;
    if (k < 0.82) return `merge(${gen(d + 1)}, ${gen(d + 1)})`;
    if (k < 0.85) return `${gen(d + 1)} ${pick(r, ['||', '&&'])} ${gen(d + 1)}`;
    if (k < 0.87) return `!${gen(d + 1)}`;
    if (k < 0.9) return `${gen(d + 1)} ${pick(r, CMPS)} ${gen(d + 1)}`;
    if (k < 0.93) return pick(r, LITERALS);
    if (k < 0.95) return `not_null(${gen(d + 1)}, ${gen(d + 1)})`;
    return mutate(r, gen(d + 1));
  };
  return Array.from({ length: count }, () => gen(0));
}

/** A deliberately damaged expression (most do not compile; some still do). */
function mutate(r, e) {
    // No `&`: an expression reference outside a function argument is a documented deviation
  // (the reference prints its syntax tree; we report an error), see docs/projection.md.
  const junk = ['.', '[', ']', '(', ')', '{', '}', '|', '=', '`', "'", '"', ',', ':', '?', '*', '@', ' ', '\r', 'é', '1'];
  const at = int(r, 0, e.length);
  if (r() < 0.5) return e.slice(0, at) + pick(r, junk) + e.slice(at);
  // Deleting next to `&` could leave a bare expression reference (see above).
  return e[at] === '&' || e[at - 1] === '&' ? e : e.slice(0, at) + e.slice(at + 1);
}

/** Hand-written cases for the reference's quirks. */
export const QUIRK_EXPRESSIONS = [
  'a', 'a.b', 'a.b.c', '@', '@.a', 'a[0]', 'a[-1]', 'a[10]', 'a[:]', 'a[::-1]', 'a[1:3]', 'a[::2]', 'a[::0]', 'a[-]', 'a[::-]',
  'a[:::]', 'a[1:2 3]', 'a[*]', 'a[*].b', 'a.*', '*', '*.b', '[*]', '[]', 'a[]', 'a[][]', 'a[].b', '[a, b]', '[a b]', '{x: a, y: b}',
  '{x: a y: b}', '{"0": a, "b": b, "1": c}', '{b: a, a: b, "10": c, "2": a}', 'a | b', 'a || b', 'a && b', '!a', '!!a', '`1`', '`"x"`', "'x'",
  "'it\\'s'", "'a\\'b\\'c'", "'unterminated", '`unterminated', '`foo`', '` true `', '`[1] `', '"a"', '"with space"', '"\\u0041"',
  'a.', 'a || ()', '()', 'a.b(c)', 'f(a b)', 'length(@)', 'length(a)', 'length(a,)', 'length(@.a)', 'abs(`-1`)', 'avg(`[]`)',
  'avg(a)', 'sum(`[]`)', 'max(`[]`)', "max(['b', 'a', 'B'])", "min(['b', 'a', 'B', '_'])", "max(`[\"aa\",\"Ab\",\"ab\"]`)",
  'sort(`[10, 9, 1, 100]`)', "sort(['b', 'B', 'a', '😀', '\uffff'])", 'sort(`[]`)', "starts_with('abab', 'ab')",
  "starts_with('ab', 'ab')", "starts_with('abc', '')", "starts_with('', '')", "ends_with('abc', 'bc')", "ends_with('abc', '')",
  "contains('a1b', `1`)", "contains('anull', `null`)", 'contains(`[1, 2]`, `1`)', 'contains(`[[1]]`, `[1]`)',
  '`[1]` | contains([@], @)', "contains('x', 'x')", "join(', ', ['a', 'b'])", "join(',', `[]`)", "reverse('a😀b')",
  'reverse(`[1,2,3]`)', "to_number('12')", "to_number(' 12 ')", "to_number('0x10')", "to_number('abc')", "to_number('Infinity')",
  'to_number(`true`)', 'to_string(`[1, "a", {"b": null}]`)', 'to_string(`1e21`)', 'to_string(`-0`)', "to_string('x')",
  'not_null(`null`, `null`)', 'not_null()', 'type(@)', 'type(`null`)', 'keys(@)', 'values(@)', 'keys(`{"b":1,"a":2,"1":3}`)',
  'merge(`{"a":1}`, `{"b":2}`, `{"a":3}`)', "merge(`{}`, 'ab', `[5]`)", 'merge()', 'merge(`1`)',
  'sort_by(`[]`, &a)', 'sort_by(`[{"a":2},{"a":1},{"a":1}]`, &a)', 'sort_by(`[{"a":"b"},{"a":"a"}]`, &a)',
  'sort_by(`[{"a":1},{"a":"a"}]`, &a)', 'sort_by(`[{"a":true}]`, &a)', 'sort_by(`[{"a":null}]`, &a)',
  'max_by(`[]`, &a)', 'max_by(`[{"a":1},{"a":3},{"a":2}]`, &a)', 'max_by(`[{"a":"x"},{"a":"y"}]`, &a)',
  'max_by(`[{"a":"5"},{"a":"10"},{"a":"9"}]`, &a)', 'min_by(`[{"a":"5"},{"a":"10"},{"a":"9"}]`, &a)',
  'min_by(`[{"a":1},{"a":-3}]`, &a)', 'map(&a, `[{"a":1},{},null]`)', 'map(&a, `{}`)', '{m: max_by(`[]`, &a), n: `1`}',
  '[max_by(`[]`, &a)]', 'max_by(`[]`, &a) | [a]', 'type(max_by(`[]`, &a))', 'to_string(max_by(`[]`, &a))',
  '`null` < `1`', '`"a"` < `"b"`', '`"10"` < `"9"`', '`"10"` < `9`', '`[1,2]` < `[1,3]`', '`{}` < `{}`', '`true` > `false`',
  '`"abc"` <= `"abc"`', '`null` >= `null`', '`1` == `1.0`', '`{"a":1,"b":2}` == `{"b":2,"a":1}`', '`[1,2]` == `[2,1]`',
  '`"😀"` < `"\uffff"`', '`-0` == `0`', '[?a]', '[?a > `1`]', '[?a == `"x"`]', "[?a == 'x'].b", '[?@]', 'foo(a)', 'unknown_fn()',
  'a[?b == c] | [0]', '[0][0]', 'a[0][1]', 'a.b[0].c[1:]', '-', '=', 'a = b', '.a', '', ' ', 'a\rb', 'a\tb', 'a\n.b', '1', 'a.1',
  'sort_by(@, &a)', '\t', '\u00a0', '\ufeff', '\u0085', '.a', '.[0]', '.a | length', 'map(.a)', '[.[] | .b]', '..',
  'keys', 'length', 'def f: f; f', '.a.b.c', 'to_entries', '[.[]?]', '.a[]?', 'select(.a)', 'a[?b].c[?d]', '[].a', 'a.[b, c]', 'a.{b: b}', 'a[*][*]', 'a[*].b[*].c', '*.*', 'a.*.b',
];

/** The whole corpus: an array of `{ data, expressions }` cases, each serialisable to one line. */
export function corpus(seed = 20260101) {
  const r = rng(seed);
  const cases = [];
  const quirkDocs = [
    { a: [1, 2, 3, 4], b: { c: 1 }, c: 'x', d: null },
    { a: [{ b: 1, c: 'x', d: 2 }, { b: 2, c: 'y', d: 1 }, { b: null }, 5, 'x', [{ b: 3 }]], b: [[1, 2], [3, [4]]], c: {} },
    { a: { b: { c: [0, 1, 2] } }, '0': 'zero', '10': 'ten', '2': 'two', 'with space': true, e: '' },
    [{ a: 'x', b: 1 }, { a: 'y', b: raw('-0') }, { a: raw('1e400'), b: raw('12345678901234567890123') }],
    'just a string', raw('1.50'), null, [], {},
  ];
  for (const doc of quirkDocs) cases.push({ data: doc, expressions: QUIRK_EXPRESSIONS });
  for (let i = 0; i < 120; i++) {
    const doc = randomObject(r, 0);
    cases.push({ data: doc, expressions: expressionsFor(r, doc, 40) });
  }
  for (let i = 0; i < 30; i++) {
    const doc = randomValue(r, 0);
    cases.push({ data: doc, expressions: expressionsFor(r, doc, 15) });
  }
  // String order: localeCompare (max/min) and UTF-16 order (sort, comparisons) on words mixing
  // ASCII, punctuation, case and accented Latin letters.
  const letters = [...'aAbeEéÉèêëñnNoOøØßsSæÆœzZ-_ .1—€©αя日あ한²~$', '😀', '\uffff', '\u00a0', '\ufffd'];
  const word = () => Array.from({ length: int(r, 1, 4) }, () => pick(r, letters)).join('');
  for (let i = 0; i < 300; i++) {
    const words = Array.from({ length: int(r, 2, 6) }, word);
    cases.push({ data: { w: words }, expressions: ['max(w)', 'min(w)', 'sort(w)', 'w[0] < w[1]', 'w[0] >= w[1]', "max_by(w[*].{k: @}, &k).k"] });
  }
  for (const vendor of [github, circleci, jira, confluence, bitbucket]) {
    for (let i = 0; i < 6; i++) {
      const doc = JSON.parse(JSON.stringify(vendor(r)));
      cases.push({ data: doc, expressions: expressionsFor(r, doc, 60) });
    }
  }
  return cases;
}

/** One case as a line of JSON, with the raw number literals spliced in. */
export function caseLine(c) {
  return JSON.stringify(c).replace(/"__RAW:([^"_]+)__"/g, '$1');
}
