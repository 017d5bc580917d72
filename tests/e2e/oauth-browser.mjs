// A headless stand-in for the person at the browser during an OAuth sign-in against the worker:
// it opens the authorization URL, approves the consent page (sending back its anti-forgery field
// and cookie, as a browser does), and follows the redirects through the identity provider (the
// fake upstream's, which approves at once) until the worker sends it back to the client.

/** The hidden field `name` of the consent page. */
function field(html, name) {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`the consent page has no ${name} field: ${html.slice(0, 400)}`);
  return m[1];
}

/**
 * Signs in at `authorizeUrl` (the worker's /oauth/authorize with the client's parameters) and
 * returns the URL the worker finally redirects to: the client's redirect URI with `code`,
 * `state` and `iss` (or `error`). Redirects are followed while they stay on the worker's or the
 * provider's origin (`providerOrigin`); the client's redirect URI is returned, not opened.
 */
export async function signInHeadless(authorizeUrl, providerOrigin) {
  const worker = new URL(authorizeUrl).origin;
  const consent = await fetch(authorizeUrl, { redirect: "manual" });
  const html = await consent.text();
  if (consent.status !== 200) throw new Error(`consent page: HTTP ${consent.status}: ${html.slice(0, 400)}`);
  const cookie = (consent.headers.get("set-cookie") ?? "").split(";")[0];
  let response = await fetch(`${worker}/oauth/authorize`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie },
    body: new URLSearchParams({ request: field(html, "request"), csrf: field(html, "csrf"), action: "approve" }),
  });
  for (let hops = 0; hops < 5; hops++) {
    const location = response.headers.get("location");
    if (response.status !== 302 || !location) {
      throw new Error(`sign-in stopped with HTTP ${response.status}: ${(await response.text()).slice(0, 400)}`);
    }
    const next = new URL(location, response.url || worker);
    if (next.origin !== worker && next.origin !== providerOrigin) return next.toString();
    response = await fetch(next, { redirect: "manual" });
  }
  throw new Error("sign-in redirected too many times");
}
