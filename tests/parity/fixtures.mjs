// Builders for scripted upstream responses and a seeded generator for large, realistic bodies.

/** Standard reason phrases, as an HTTP/1.1 upstream sends them (the reference puts them into error texts). */
export const REASON = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** A JSON response; `body` may be a value (serialised compactly, as Atlassian does) or an exact string. */
export function json(status, body, headers = {}) {
  return {
    status,
    statusText: REASON[status] ?? '',
    headers: { 'content-type': 'application/json;charset=UTF-8', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

/** A response with an explicit content type and a text body. */
export function text(status, body, contentType, headers = {}) {
  return {
    status,
    statusText: REASON[status] ?? '',
    headers: { 'content-type': contentType, ...headers },
    body,
  };
}

/** A response without a body (204, or an empty 200/201/5xx). */
export function empty(status, headers = {}) {
  return { status, statusText: REASON[status] ?? '', headers, body: status === 204 ? null : '' };
}

/** Deterministic PRNG (mulberry32) so generated bodies are identical on every run. */
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

/** Picks one element of `list` with the generator `r`. */
export function pick(r, list) {
  return list[Math.floor(r() * list.length)];
}

/** Words used to build generated summaries and descriptions (mixed scripts to exercise UTF-16 lengths). */
export const WORDS = [
  'login', 'timeout', 'retry', 'cache', 'webhook', 'pipeline', 'flaky', 'deploy', 'rollback', 'latency',
  'migration', 'schema', 'index', 'quota', 'token', 'refresh', 'export', 'import', 'billing', 'search',
  'café', 'naïve', 'Größe', 'データ', '修复', 'ошибка', 'emoji🚀', 'check✅', 'a,b', 'x: y',
];

/** A sentence of `n` words drawn with `r`. */
export function sentence(r, n) {
  const out = [];
  for (let i = 0; i < n; i += 1) out.push(pick(r, WORDS));
  const s = out.join(' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}
