// Confluence cases (success paths only, see docs/parity.md for why): v2 pages with `_links` and cursors, a page with
// its storage body, spaces, CQL search, projections, query strings, write verbs, empty and non-JSON bodies, truncation.

import { empty, json, pick, rng, sentence, text } from './fixtures.mjs';

const WIKI = 'https://parity-site.atlassian.net/wiki';

function page(r, id, spaceId, withBody) {
  const title = sentence(r, 3 + Math.floor(r() * 5));
  const p = {
    parentType: 'page',
    parentId: String(98000 + Math.floor(r() * 100)),
    spaceId: String(spaceId),
    ownerId: '5b10a2844c20165700ede21g',
    lastOwnerId: null,
    createdAt: `2025-0${1 + Math.floor(r() * 9)}-1${Math.floor(r() * 10)}T08:${String(Math.floor(r() * 60)).padStart(2, '0')}:00.000Z`,
    authorId: '5b10ac8d82e05b22cc7d4ef5',
    position: Math.floor(r() * 5000),
    version: { number: 1 + Math.floor(r() * 20), message: r() < 0.5 ? '' : 'Fix typo', minorEdit: r() < 0.3, authorId: '5b10a2844c20165700ede21g', createdAt: '2025-10-01T12:00:00.000Z' },
    body: {},
    status: 'current',
    title,
    id: String(id),
    _links: { editui: `/pages/resumedraft.action?draftId=${id}`, webui: `/spaces/ENG/pages/${id}/${encodeURIComponent(title.replace(/ /g, '+'))}`, edituiv2: `/spaces/ENG/pages/edit-v2/${id}`, tinyui: `/x/${id.toString(36)}` },
  };
  if (withBody) {
    p.body = { storage: { representation: 'storage', value: `<h2>${title}</h2><p>${sentence(r, 20)}</p><ac:structured-macro ac:name="code"><ac:parameter ac:name="language">bash</ac:parameter><ac:plain-text-body><![CDATA[curl -s "https://api.example.com/v1/items?limit=10&x=\\"y\\""]]></ac:plain-text-body></ac:structured-macro><ul><li>${pick(r, ['one', 'two'])}</li><li>${sentence(r, 6)}</li></ul>` } };
  }
  return p;
}

function pagesList(count, seed, withBody) {
  const r = rng(seed);
  const results = [];
  for (let i = 0; i < count; i += 1) results.push(page(r, 123450 + i, 65537, withBody));
  return {
    results,
    _links: { next: '/wiki/api/v2/pages?cursor=eyJpZCI6IjEyMzQ1NiIsImNvbnRlbnRPcmRlciI6ImlkIn0%3D&limit=' + count, base: WIKI },
  };
}

const pages3 = pagesList(3, 11, false);
const onePage = page(rng(5), 123456, 65537, true);

const spaces = {
  results: [
    { spaceOwnerId: '5b10a2844c20165700ede21g', homepageId: '98001', icon: null, createdAt: '2023-02-01T10:00:00.000Z', authorId: '5b10a2844c20165700ede21g', description: null, status: 'current', name: 'Engineering', key: 'ENG', id: '65537', type: 'global', _links: { webui: '/spaces/ENG' }, currentActiveAlias: 'ENG' },
    { spaceOwnerId: '5b10ac8d82e05b22cc7d4ef5', homepageId: '98500', icon: { path: '/wiki/download/attachments/98500/ops.png', apiDownloadLink: '/wiki/rest/api/space/OPS/icon' }, createdAt: '2023-05-12T10:00:00.000Z', authorId: '5b10ac8d82e05b22cc7d4ef5', description: null, status: 'current', name: 'Ops & SRE: "runbooks"', key: 'OPS', id: '65538', type: 'global', _links: { webui: '/spaces/OPS' }, currentActiveAlias: 'OPS' },
    { spaceOwnerId: '5b10a2844c20165700ede21g', homepageId: '99000', icon: null, createdAt: '2024-01-20T10:00:00.000Z', authorId: '5b10a2844c20165700ede21g', description: null, status: 'archived', name: 'Alice Example', key: '~5b10a2844c20165700ede21g', id: '65539', type: 'personal', _links: { webui: '/spaces/~5b10a2844c20165700ede21g' }, currentActiveAlias: '~5b10a2844c20165700ede21g' },
  ],
  _links: { base: WIKI },
};

const searchResults = {
  results: [
    { content: { id: '123456', type: 'page', status: 'current', title: 'Release notes 2025.11', _expandable: { container: '/rest/api/space/ENG' }, _links: { webui: '/spaces/ENG/pages/123456/Release+notes+2025.11', self: `${WIKI}/rest/api/content/123456` } }, title: 'Release notes 2025.11', excerpt: '@@@hl@@@Release@@@endhl@@@ @@@hl@@@notes@@@endhl@@@ for the November train: auth fixes, cache…', url: '/spaces/ENG/pages/123456/Release+notes+2025.11', resultGlobalContainer: { title: 'Engineering', displayUrl: '/spaces/ENG' }, breadcrumbs: [], entityType: 'content', iconCssClass: 'aui-icon content-type-page', lastModified: '2025-11-03T10:11:12.000Z', friendlyLastModified: 'Nov 03, 2025', score: 0.0 },
    { content: { id: '123999', type: 'blogpost', status: 'current', title: 'Ops: notes from the on-call week', _expandable: { container: '/rest/api/space/OPS' }, _links: { webui: '/spaces/OPS/blog/2025/10/30/123999', self: `${WIKI}/rest/api/content/123999` } }, title: 'Ops: notes from the on-call week', excerpt: 'Pager went off 3× — all false alarms', url: '/spaces/OPS/blog/2025/10/30/123999', resultGlobalContainer: { title: 'Ops & SRE', displayUrl: '/spaces/OPS' }, breadcrumbs: [], entityType: 'content', iconCssClass: 'aui-icon content-type-blogpost', lastModified: '2025-10-30T18:00:00.000Z', friendlyLastModified: 'Oct 30, 2025', score: 1.2345e-3 },
  ],
  start: 0,
  limit: 25,
  size: 2,
  totalSize: 2,
  cqlQuery: 'type in (page,blogpost) AND text ~ "release notes"',
  searchDuration: 87,
  _links: { base: WIKI, context: '/wiki' },
};

const bigPages = pagesList(70, 23, true);

/** The Confluence cases (tool names are conf_*; recorded through the shared jira 3.3.0 code path). */
export const confluenceCases = [
  { name: 'pages-list-toon', tool: 'conf_get', args: { path: '/wiki/api/v2/pages', queryParams: { limit: '3', 'body-format': 'storage', cursor: 'eyJpZCI6IjEyMzQ1NiJ9==' } }, upstream: json(200, pages3) },
  { name: 'pages-list-json', tool: 'conf_get', args: { path: '/wiki/api/v2/pages', queryParams: { limit: '3' }, outputFormat: 'json' }, upstream: json(200, pages3) },
  { name: 'pages-list-jq-tabular', tool: 'conf_get', args: { path: '/wiki/api/v2/pages', jq: 'results[*].{id: id, title: title, version: version.number}' }, upstream: json(200, pages3) },
  { name: 'pages-list-jq-next-link', tool: 'conf_get', args: { path: '/wiki/api/v2/pages', jq: '_links.next' }, upstream: json(200, pages3) },
  { name: 'pages-list-jq-links', tool: 'conf_get', args: { path: '/wiki/api/v2/pages', jq: 'results[0]._links' }, upstream: json(200, pages3) },
  { name: 'page-body-storage-toon', tool: 'conf_get', args: { path: '/wiki/api/v2/pages/123456', queryParams: { 'body-format': 'storage', 'include-version': 'true' } }, upstream: json(200, onePage) },
  { name: 'page-body-storage-json', tool: 'conf_get', args: { path: 'wiki/api/v2/pages/123456', queryParams: { 'body-format': 'storage' }, outputFormat: 'json' }, upstream: json(200, onePage) },
  { name: 'page-body-jq-value', tool: 'conf_get', args: { path: '/wiki/api/v2/pages/123456', jq: 'body.storage.value' }, upstream: json(200, onePage) },
  { name: 'spaces-toon', tool: 'conf_get', args: { path: '/wiki/api/v2/spaces', queryParams: { keys: 'ENG,OPS', type: 'global', status: 'current' } }, upstream: json(200, spaces) },
  { name: 'spaces-jq-keys', tool: 'conf_get', args: { path: '/wiki/api/v2/spaces', jq: 'results[*].key', outputFormat: 'json' }, upstream: json(200, spaces) },
  { name: 'search-cql', tool: 'conf_get', args: { path: '/wiki/rest/api/search', queryParams: { cql: 'type in (page,blogpost) AND text ~ "release notes" AND space in ("ENG","OPS")', limit: '25', excerpt: 'highlight' } }, upstream: json(200, searchResults) },
  { name: 'search-cql-projection-json', tool: 'conf_get', args: { path: '/wiki/rest/api/search', queryParams: { cql: 'title ~ "naïve café"' }, jq: 'results[*].{title: title, type: content.type, url: url, score: score}', outputFormat: 'json' }, upstream: json(200, searchResults) },
  { name: 'path-with-query-and-params', tool: 'conf_get', args: { path: '/wiki/rest/api/content/123456?expand=body.view', queryParams: { status: 'any', 'a b': 'c&d=e' } }, upstream: json(200, { id: '123456', type: 'page', title: 'T' }) },
  { name: 'invalid-jq', tool: 'conf_get', args: { path: '/wiki/api/v2/spaces', jq: 'results[?key==' }, upstream: json(200, { results: [{ key: 'ENG' }], _links: { base: WIKI } }) },
  { name: 'create-page-post', tool: 'conf_post', args: { path: '/wiki/api/v2/pages', body: { spaceId: '65537', status: 'current', title: 'New page — "draft"', parentId: '98001', body: { representation: 'storage', value: '<p>Hello <strong>world</strong> &amp; friends</p>' } }, jq: '{id: id, title: title, webui: _links.webui}' }, upstream: json(200, { ...page(rng(77), 130001, 65537, true), title: 'New page — "draft"' }) },
  { name: 'add-footer-comment-post', tool: 'conf_post', args: { path: '/wiki/api/v2/footer-comments', body: { pageId: '123456', body: { representation: 'storage', value: '<p>LGTM</p>' } }, outputFormat: 'json' }, upstream: json(201, { id: '140001', status: 'current', title: 'Re: Release notes', pageId: '123456', version: { number: 1, createdAt: '2025-11-05T10:00:00.000Z' }, _links: { webui: '/spaces/ENG/pages/123456?focusedCommentId=140001' } }) },
  { name: 'update-page-put', tool: 'conf_put', args: { path: '/wiki/api/v2/pages/123456', body: { id: '123456', status: 'current', title: 'Release notes 2025.11', body: { representation: 'storage', value: '<p>v2</p>' }, version: { number: 8, message: 'Edited via MCP' } }, jq: 'version' }, upstream: json(200, { ...onePage, version: { number: 8, message: 'Edited via MCP', minorEdit: false, authorId: '5b10a2844c20165700ede21g', createdAt: '2025-11-05T12:00:00.000Z' } }) },
  { name: 'patch-empty-200', tool: 'conf_patch', args: { path: '/wiki/api/v2/pages/123456/properties/777', body: { key: 'flag', value: { on: true }, version: { number: 2 } } }, upstream: empty(200) },
  { name: 'delete-page-204', tool: 'conf_delete', args: { path: '/wiki/api/v2/pages/123456', queryParams: { purge: 'false' } }, upstream: empty(204) },
  { name: 'delete-page-204-json', tool: 'conf_delete', args: { path: '/wiki/api/v2/pages/123456', outputFormat: 'json' }, upstream: empty(204) },
  { name: 'export-view-html', tool: 'conf_get', args: { path: '/wiki/spaces/ENG/pages/123456/export/view' }, upstream: text(200, '<div class="wiki-content">\n<p>Exported: a, b; c: d</p>\n</div>\n', 'text/html;charset=UTF-8') },
  { name: 'truncation-pages-toon', tool: 'conf_get', args: { path: '/wiki/api/v2/pages', queryParams: { limit: '70', 'body-format': 'storage' } }, upstream: json(200, bigPages) },
  { name: 'truncation-pages-json', tool: 'conf_get', args: { path: '/wiki/api/v2/pages', queryParams: { limit: '70', 'body-format': 'storage' }, outputFormat: 'json' }, upstream: json(200, bigPages) },
];
