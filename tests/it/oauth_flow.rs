//! Host tests of the sign-in flow: registration, the consent page and its browser binding,
//! the GitHub hand-off (a scripted GitHub), the code exchange, refresh and revocation, the
//! refusals (each with the right OAuth error and nothing issued), and the Atlassian consent
//! chained after the sign-in when an Atlassian app is configured.

use crate::common::oauth::*;
use devtools_mcp_edge::http::HttpResponse;
use devtools_mcp_edge::oauth::store::pkce_challenge;
use devtools_mcp_edge::ports::fake::{yield_once, FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::{CacheEntry, CacheStore, UpstreamRequest, UpstreamResponse};
use devtools_mcp_edge::server::Server;
use serde_json::{json, Value as Json};

const REDIRECT: &str = "http://127.0.0.1:3000/callback";

fn ok(body: Json) -> UpstreamResponse {
    UpstreamResponse {
        status: 200,
        status_text: "OK".into(),
        headers: vec![],
        body: body.to_string().into_bytes(),
    }
}

/// GitHub signing in `login`, member of `acme`.
fn github(login: &'static str) -> ScriptedHttp {
    ScriptedHttp::new(move |r: &UpstreamRequest| Ok(github_reply(login, r)))
}

/// GitHub's answer to `r` when `login` signs in.
fn github_reply(login: &str, r: &UpstreamRequest) -> UpstreamResponse {
    if r.url.ends_with("/login/oauth/access_token") {
        ok(json!({"access_token": "gho_person_token", "token_type": "bearer"}))
    } else if r.url.ends_with("/user") {
        ok(json!({"login": login, "id": 1}))
    } else if r.url.contains("/user/orgs") {
        ok(json!([{"login": "acme"}]))
    } else if r.url == "https://client.example.org/big.json" {
        ok(json!({"client_id": r.url, "pad": "x".repeat(10_000)}))
    } else {
        UpstreamResponse {
            status: 404,
            status_text: "Not Found".into(),
            headers: vec![],
            body: vec![],
        }
    }
}

fn form(pairs: &[(&str, &str)]) -> String {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    devtools_mcp_edge::upstream::path::form_urlencode(&pairs)
}

fn location(response: &HttpResponse) -> String {
    response.header("Location").expect("a redirect").to_owned()
}

fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    devtools_mcp_edge::oauth::form::Params::parse(query)
        .ok()?
        .get(name)
        .ok()?
        .map(str::to_owned)
}

fn register(server: &Server, env: &FakeEnv) -> String {
    let body = json!({"client_name": "Test <Client>", "redirect_uris": [REDIRECT]}).to_string();
    let response = send_on(
        server,
        env,
        http(
            "POST",
            "/oauth/register",
            &[("Content-Type", "application/json")],
            &body,
        ),
    );
    assert_eq!(
        response.status,
        201,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    body_json(&response)["client_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn authorize_query(client_id: &str, redirect: &str) -> String {
    form(&[
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect),
        ("code_challenge", &pkce_challenge(VERIFIER)),
        ("code_challenge_method", "S256"),
        ("state", "st-1"),
        ("resource", "https://mcp.example.com/mcp"),
    ])
}

/// The consent page's sealed request and the browser's binding cookie.
fn consent(server: &Server, env: &FakeEnv, client_id: &str) -> (String, String) {
    let response = send_on(
        server,
        env,
        http(
            "GET",
            &format!("/oauth/authorize?{}", authorize_query(client_id, REDIRECT)),
            &[],
            "",
        ),
    );
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    let html = String::from_utf8_lossy(&response.body).into_owned();
    assert!(
        html.contains("Test &lt;Client&gt;") && html.contains("127.0.0.1"),
        "{html}"
    );
    let field = |name: &str| {
        let marker = format!("name=\"{name}\" value=\"");
        let start = html.find(&marker).unwrap() + marker.len();
        html[start..].split('"').next().unwrap().to_owned()
    };
    let cookie = response
        .header("Set-Cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    (field("request"), cookie)
}

/// The consent form approved with the sealed `request`, sent with `cookie`.
fn approve(server: &Server, env: &FakeEnv, request: &str, cookie: &str) -> HttpResponse {
    send_on(
        server,
        env,
        http(
            "POST",
            "/oauth/authorize",
            &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Cookie", cookie),
            ],
            &form(&[("request", request), ("action", "approve")]),
        ),
    )
}

/// The browser half up to the identity provider's return: the worker's answer to it, and the
/// consent cookie the browser holds.
fn through_github(server: &Server, env: &FakeEnv, client_id: &str) -> (HttpResponse, String) {
    let (request, cookie) = consent(server, env, client_id);
    let response = approve(server, env, &request, &cookie);
    assert_eq!(response.status, 303);
    let to_github = location(&response);
    assert!(
        to_github.starts_with("https://github.com/login/oauth/authorize?"),
        "{to_github}"
    );
    let state = query_param(&to_github, "state").unwrap();
    // The provider issues a code per sign-in, and each is accepted once.
    static CODES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CODES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let response = send_on(
        server,
        env,
        http(
            "GET",
            &format!("/oauth/callback?code=gh-code-{n}&state={state}"),
            &[("Cookie", &cookie)],
            "",
        ),
    );
    (response, cookie)
}

/// The code in the worker's redirect back to the client.
fn code_of(back: &str) -> String {
    assert!(back.starts_with(REDIRECT), "{back}");
    assert_eq!(query_param(back, "state").as_deref(), Some("st-1"));
    assert_eq!(query_param(back, "iss").as_deref(), Some(ISSUER));
    query_param(back, "code").unwrap_or_else(|| panic!("no code in {back}"))
}

/// Runs the whole browser half; returns the code.
fn sign_in(server: &Server, env: &FakeEnv, client_id: &str) -> String {
    code_of(&location(&through_github(server, env, client_id).0))
}

fn token(server: &Server, env: &FakeEnv, pairs: &[(&str, &str)]) -> (u16, Json) {
    let response = send_on(
        server,
        env,
        http(
            "POST",
            "/oauth/token",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            &form(pairs),
        ),
    );
    assert_eq!(response.header("Cache-Control"), Some("no-store"));
    (response.status, body_json(&response))
}

fn exchange(
    server: &Server,
    env: &FakeEnv,
    client_id: &str,
    code: &str,
    verifier: &str,
) -> (u16, Json) {
    token(
        server,
        env,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("client_id", client_id),
            ("redirect_uri", REDIRECT),
            ("code_verifier", verifier),
        ],
    )
}

/// A request body that records whether it was read.
#[derive(Default)]
struct WatchedBody(std::cell::Cell<bool>);

impl devtools_mcp_edge::ports::RequestBody for WatchedBody {
    fn read<'a>(
        &'a self,
        _: usize,
        _: &'a dyn devtools_mcp_edge::ports::BodyRoom,
    ) -> futures::future::LocalBoxFuture<'a, devtools_mcp_edge::ports::BodyRead> {
        self.0.set(true);
        Box::pin(async { devtools_mcp_edge::ports::BodyRead::default() })
    }
}

#[test]
fn an_address_over_its_sign_in_limit_is_refused_before_its_body_is_read() {
    let server = oauth_server();
    let env = FakeEnv::new();
    env.limiter.limit_to(0);
    // The token and revocation endpoints too: anyone may send them, and hold their bodies.
    for path in ["/oauth/register", "/oauth/token", "/oauth/revoke"] {
        let body = WatchedBody::default();
        let request = http("POST", path, &[("Content-Type", "application/json")], "");
        let response = futures::executor::block_on(server.serve(request, &body, env.ports()));
        assert_eq!(response.status, 429, "{path}");
        assert!(!body.0.get(), "the body of {path} was read");
        assert_eq!(server.memory().in_use(), 0);
    }
}

/// A request body whose sender never finishes it.
struct StalledBody;

impl devtools_mcp_edge::ports::RequestBody for StalledBody {
    fn read<'a>(
        &'a self,
        _: usize,
        _: &'a dyn devtools_mcp_edge::ports::BodyRoom,
    ) -> futures::future::LocalBoxFuture<'a, devtools_mcp_edge::ports::BodyRead> {
        Box::pin(futures::future::pending())
    }
}

#[test]
fn sign_in_requests_in_flight_are_bounded_per_address_and_together() {
    let server = oauth_server();
    let env = FakeEnv::new();
    let register = |address: &str| {
        http(
            "POST",
            "/oauth/register",
            &[("CF-Connecting-IP", address)],
            "",
        )
    };
    let stall =
        |address: &str| Box::pin(server.serve(register(address), &StalledBody, env.ports()));
    // Six from one address, then eighteen from other addresses: the isolate's 24.
    let mut stalled: Vec<_> = (0..6).map(|_| stall("203.0.113.7")).collect();
    stalled.extend((0..18).map(|i| stall(&format!("2001:db8:{i:x}::1"))));
    futures::executor::block_on(async {
        for request in &mut stalled {
            assert!(futures::poll!(request.as_mut()).is_pending());
        }
    });
    for address in ["203.0.113.7", "198.51.100.1"] {
        let refused = send_on(&server, &env, register(address));
        assert_eq!(refused.status, 429, "{address}");
        assert_eq!(body_json(&refused)["error"], "temporarily_unavailable");
        assert_eq!(refused.header("Retry-After"), Some("2"));
    }
    // One address's slots given back admit another address, not it past its six.
    stalled.truncate(18);
    assert_eq!(send_on(&server, &env, register("198.51.100.1")).status, 400);
    assert_eq!(send_on(&server, &env, register("203.0.113.7")).status, 429);
    drop(stalled);
    assert_eq!(send_on(&server, &env, register("203.0.113.7")).status, 400);
    assert_eq!(server.memory().in_use(), 0);
}

#[test]
fn requests_that_do_no_work_are_answered_at_once_without_a_slot_or_a_body() {
    let server = oauth_server();
    let env = FakeEnv::new();
    let address = [("CF-Connecting-IP", "203.0.113.9")];
    // The address's six slots, held.
    let mut stalled: Vec<_> = (0..6)
        .map(|_| {
            let request = http("POST", "/oauth/register", &address, "");
            Box::pin(server.serve(request, &StalledBody, env.ports()))
        })
        .collect();
    futures::executor::block_on(async {
        for request in &mut stalled {
            assert!(futures::poll!(request.as_mut()).is_pending());
        }
    });
    let path = "/.well-known/oauth-authorization-server";
    for (method, status) in [("POST", 405), ("GET", 200), ("OPTIONS", 204)] {
        let request = http(method, path, &address, "");
        let answer = futures::executor::block_on(server.serve(request, &StalledBody, env.ports()));
        assert_eq!(answer.status, status, "{method}");
    }
}

#[test]
fn a_sign_in_body_that_does_not_arrive_within_ten_seconds_is_refused() {
    let server = oauth_server();
    let env = FakeEnv::new();
    let stalled = server.serve(
        http("POST", "/oauth/token", &[], ""),
        &StalledBody,
        env.ports(),
    );
    let clock = async {
        yield_once().await;
        env.clock.advance(10_000);
    };
    let (refused, ()) = futures::executor::block_on(futures::future::join(stalled, clock));
    assert_eq!(refused.status, 400);
    let body = body_json(&refused);
    assert_eq!(body["error"], "invalid_request");
    assert_eq!(
        body["error_description"],
        "request body did not arrive within 10 seconds"
    );
    assert_eq!(refused.header("Access-Control-Allow-Origin"), Some("*"));
    assert_eq!(server.memory().in_use(), 0);
}

#[test]
fn sign_in_requests_with_headers_over_32_kib_are_refused_unread() {
    let server = oauth_server();
    let env = FakeEnv::new();
    let padding = "a".repeat(32 * 1024);
    let refused = server.serve(
        http("POST", "/oauth/token", &[("X-Pad", &padding)], ""),
        &StalledBody,
        env.ports(),
    );
    let refused = futures::executor::block_on(refused);
    assert_eq!(refused.status, 400);
    assert_eq!(
        body_json(&refused)["error_description"],
        "request headers over 32 KiB"
    );
}

#[test]
fn a_sign_in_body_over_its_limit_is_refused_rather_than_read_cut_short() {
    let server = oauth_server();
    let env = FakeEnv::new();
    let padding = "x".repeat(70 * 1024);
    let (status, body) = token(
        &server,
        &env,
        &[("grant_type", "refresh_token"), ("refresh_token", &padding)],
    );
    assert_eq!(status, 400);
    assert_eq!(body["error"], "invalid_request");
    assert_eq!(body["error_description"], "request body over 64 KiB");
    assert_eq!(server.memory().in_use(), 0);
}

#[test]
fn the_whole_flow_signs_in_refreshes_and_revokes() {
    let server = oauth_server();
    let env = FakeEnv::with_http(github("octocat"));
    let client_id = register(&server, &env);
    let code = sign_in(&server, &env, &client_id);
    let (status, tokens) = exchange(&server, &env, &client_id, &code, VERIFIER);
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(refused_at_mcp(&server, &env, access), None);
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let (status, again) = refresh_with(&server, &env, &client_id, refresh);
    assert_eq!(status, 200, "{again}");
    // The GitHub token never reaches a reply or a log line.
    assert!(env
        .log
        .lines()
        .iter()
        .all(|l| !l.contains("gho_person_token")));
    let new_access = again["access_token"].as_str().unwrap();
    let revoke = send_on(
        &server,
        &env,
        http(
            "POST",
            "/oauth/revoke",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            &form(&[
                ("token", again["refresh_token"].as_str().unwrap()),
                ("client_id", &client_id),
            ]),
        ),
    );
    assert_eq!(revoke.status, 200);
    assert!(refused_at_mcp(&server, &env, new_access).is_some());
}

#[test]
fn refusals_at_authorization_and_exchange_issue_nothing() {
    let server = oauth_server();
    let env = FakeEnv::with_http(github("octocat"));
    let client_id = register(&server, &env);
    // Wrong PKCE verifier, then the code used twice.
    let code = sign_in(&server, &env, &client_id);
    let (status, body) = exchange(&server, &env, &client_id, &code, &"w".repeat(43));
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert!(body.get("access_token").is_none());
    assert_eq!(exchange(&server, &env, &client_id, &code, VERIFIER).0, 200);
    let (status, body) = exchange(&server, &env, &client_id, &code, VERIFIER);
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    // A redirect URI that was not registered: shown on a page, never redirected to.
    let response = send_on(
        &server,
        &env,
        http(
            "GET",
            &format!(
                "/oauth/authorize?{}",
                authorize_query(&client_id, "https://evil.example/cb")
            ),
            &[],
            "",
        ),
    );
    assert_eq!(response.status, 400);
    assert!(response.header("Location").is_none());
    // A token for another resource: the request is not valid, so it is refused on a page too.
    let response = send_on(
        &server,
        &env,
        http(
            "GET",
            &format!(
                "/oauth/authorize?{}",
                authorize_query(&client_id, REDIRECT).replace("mcp.example.com", "other.example")
            ),
            &[],
            "",
        ),
    );
    assert_eq!(response.status, 400);
    assert!(response.header("Location").is_none());
    assert!(String::from_utf8_lossy(&response.body).contains("resource must be"));
}

#[test]
fn client_metadata_documents_on_private_addresses_or_too_large_are_refused() {
    let server = oauth_server();
    let env = FakeEnv::with_http(github("octocat"));
    for client_id in [
        "https://10.0.0.1/client.json",
        "https://169.254.169.254/latest/meta-data",
        "https://localhost/client.json",
        "http://client.example.org/client.json",
        "https://client.example.org/big.json",
    ] {
        let response = send_on(
            &server,
            &env,
            http(
                "GET",
                &format!("/oauth/authorize?{}", authorize_query(client_id, REDIRECT)),
                &[],
                "",
            ),
        );
        assert_eq!(response.status, 400, "{client_id}");
        assert!(response.header("Location").is_none());
    }
    let fetched: Vec<String> = env.http.sent().iter().map(|r| r.url.clone()).collect();
    assert_eq!(fetched, ["https://client.example.org/big.json"]);
}

#[test]
fn people_outside_the_allow_list_or_with_a_static_name_are_refused() {
    for login in ["mallory", "ci"] {
        let mut settings = oauth_settings();
        settings.retain(|(k, _)| k != "MCP_OAUTH_ALLOWED_USERS");
        settings.push(("MCP_OAUTH_ALLOWED_USERS".into(), format!("octocat,{login}")));
        if login == "mallory" {
            settings.retain(|(k, _)| k != "MCP_OAUTH_ALLOWED_USERS");
            settings.push(("MCP_OAUTH_ALLOWED_USERS".into(), "octocat".into()));
        }
        let server = server_with(settings);
        let env = FakeEnv::with_http(github(login));
        let client_id = register(&server, &env);
        let (request, cookie) = consent(&server, &env, &client_id);
        let response = approve(&server, &env, &request, &cookie);
        let state = query_param(&location(&response), "state").unwrap();
        let response = send_on(
            &server,
            &env,
            http(
                "GET",
                &format!("/oauth/callback?code=c&state={state}"),
                &[("Cookie", &cookie)],
                "",
            ),
        );
        let back = location(&response);
        assert_eq!(
            query_param(&back, "error").as_deref(),
            Some("access_denied"),
            "{login}: {back}"
        );
        assert!(query_param(&back, "code").is_none());
    }
}

/// The `WWW-Authenticate` of a `tools/list` with `access`, or `None` when it was served.
fn refused_at_mcp(server: &Server, env: &FakeEnv, access: &str) -> Option<String> {
    let mut request = post(
        &request(1, "tools/list", json!({"_meta": meta_2026()})).to_string(),
        &[("Authorization", &format!("Bearer {access}"))],
    );
    for (k, v) in headers_2026("tools/list", None) {
        request.headers.push((k.into(), v.into()));
    }
    let response = send_on(server, env, request);
    (response.status != 200).then(|| {
        assert_eq!(response.status, 401);
        response
            .header("WWW-Authenticate")
            .unwrap_or_default()
            .to_owned()
    })
}

fn assert_refused(status: u16, body: &Json, error: &str) {
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some(error)),
        "{body}"
    );
    assert!(
        body.get("access_token").is_none() && body.get("refresh_token").is_none(),
        "{body}"
    );
}

#[test]
fn refused_grants_leave_no_usable_token() {
    let server = oauth_server();
    let env = FakeEnv::with_http(github("octocat"));
    let client_id = register(&server, &env);
    let code = sign_in(&server, &env, &client_id);
    let exchange_with = |extra: &[(&str, &str)]| {
        let mut pairs = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("client_id", client_id.as_str()),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
        ];
        for (k, v) in extra {
            pairs.retain(|(name, _)| name != k);
            pairs.push((k, v));
        }
        token(&server, &env, &pairs)
    };
    // A token asked for another resource, and a redirect URI other than the request's.
    let (status, body) = exchange_with(&[("resource", "https://other.example/mcp")]);
    assert_refused(status, &body, "invalid_target");
    let (status, body) = exchange_with(&[("redirect_uri", "http://127.0.0.1:3001/callback")]);
    assert_refused(status, &body, "invalid_grant");
    // The code is still good after those; its second use revokes the tokens of its first.
    let (status, first) = exchange_with(&[]);
    assert_eq!(status, 200, "{first}");
    let first_access = first["access_token"].as_str().unwrap();
    assert_eq!(refused_at_mcp(&server, &env, first_access), None);
    let (status, body) = exchange_with(&[]);
    assert_refused(status, &body, "invalid_grant");
    let challenge = refused_at_mcp(&server, &env, first_access).expect("revoked");
    assert!(
        challenge.contains("invalid_token") && challenge.contains("resource_metadata"),
        "{challenge}"
    );
    // A rotated refresh token replayed ends the tokens of its rotation too.
    let code = sign_in(&server, &env, &client_id);
    let (_, tokens) = exchange(&server, &env, &client_id, &code, VERIFIER);
    let refresh = |token: &str| refresh_with(&server, &env, &client_id, token);
    let (status, rotated) = refresh(tokens["refresh_token"].as_str().unwrap());
    assert_eq!(status, 200, "{rotated}");
    let (status, body) = refresh(tokens["refresh_token"].as_str().unwrap());
    assert_refused(status, &body, "invalid_grant");
    assert!(refused_at_mcp(&server, &env, rotated["access_token"].as_str().unwrap()).is_some());
    let (status, body) = refresh(rotated["refresh_token"].as_str().unwrap());
    assert_refused(status, &body, "invalid_grant");
    // A revoked access token.
    let code = sign_in(&server, &env, &client_id);
    let (_, tokens) = exchange(&server, &env, &client_id, &code, VERIFIER);
    let access = tokens["access_token"].as_str().unwrap();
    let revoke = send_on(
        &server,
        &env,
        http(
            "POST",
            "/oauth/revoke",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            &form(&[("token", access), ("client_id", &client_id)]),
        ),
    );
    assert_eq!(revoke.status, 200);
    assert!(refused_at_mcp(&server, &env, access).is_some());
}

fn refresh_with(server: &Server, env: &FakeEnv, client_id: &str, refresh: &str) -> (u16, Json) {
    token(
        server,
        env,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", client_id),
        ],
    )
}

#[test]
fn refresh_tokens_expire_a_refresh_lifetime_after_the_sign_in() {
    let mut settings = oauth_settings();
    settings.push(("MCP_OAUTH_REFRESH_TTL_SECONDS".into(), "3600".into()));
    let server = server_with(settings);
    let env = FakeEnv::with_http(github("octocat"));
    let client_id = register(&server, &env);
    let code = sign_in(&server, &env, &client_id);
    let (_, tokens) = exchange(&server, &env, &client_id, &code, VERIFIER);
    env.clock.advance(3_600_000 - 1);
    let (status, rotated) = refresh_with(
        &server,
        &env,
        &client_id,
        tokens["refresh_token"].as_str().unwrap(),
    );
    assert_eq!(status, 200, "{rotated}");
    // Rotation does not lengthen the grant: its tokens end when the first ones would have.
    env.clock.advance(1);
    let (status, body) = refresh_with(
        &server,
        &env,
        &client_id,
        rotated["refresh_token"].as_str().unwrap(),
    );
    assert_refused(status, &body, "invalid_grant");
    assert_eq!(body["error_description"], "the refresh token has expired");
}

#[test]
fn a_token_issued_for_another_resource_is_refused_at_mcp() {
    let here = oauth_server();
    let env = FakeEnv::with_http(github("octocat"));
    let tokens = mint_tokens(&here, &env, "octocat");
    assert_eq!(refused_at_mcp(&here, &env, &tokens.access_token), None);
    // The same token store behind another origin: the token names a resource that is not this one.
    let mut settings = oauth_settings();
    settings.retain(|(k, _)| k != "MCP_OAUTH_ISSUER");
    settings.push((
        "MCP_OAUTH_ISSUER".into(),
        "https://other.example.com".into(),
    ));
    let there = server_with(settings);
    let challenge = refused_at_mcp(&there, &env, &tokens.access_token).expect("refused");
    assert!(challenge.contains("invalid_token"), "{challenge}");
    assert!(env
        .log
        .lines()
        .iter()
        .any(|l| l.contains("access token for another resource")));
}

#[test]
fn a_consent_or_callback_from_another_browser_never_reaches_the_provider() {
    let server = oauth_server();
    let env = FakeEnv::with_http(github("octocat"));
    let client_id = register(&server, &env);
    let (request, cookie) = consent(&server, &env, &client_id);
    for cookie in ["", "mcp_oauth_browser=forged", "mcp_oauth_consent=x"] {
        let response = approve(&server, &env, &request, cookie);
        assert_eq!(response.status, 403, "{cookie}");
        assert!(response.header("Location").is_none());
    }
    // The consent form's sealed request is not a provider state.
    let response = send_on(
        &server,
        &env,
        http(
            "GET",
            &format!("/oauth/callback?code=c&state={request}"),
            &[("Cookie", &cookie)],
            "",
        ),
    );
    assert_eq!(response.status, 400);
    assert!(response.header("Location").is_none());
    // Approved in one browser, the provider's answer opened in another (with no cookie, another
    // value, or the starting browser's value planted before its own, as a cookie for a longer
    // path or a parent domain is sent): refused on a page, and the provider's code is spent, so
    // the refused URL is worth nothing in the browser that started it.
    let response = approve(&server, &env, &request, &cookie);
    let state = query_param(&location(&response), "state").unwrap();
    assert!(env.oauth.dump().is_empty(), "{:?}", env.oauth.dump());
    let planted = format!("{cookie}; __Host-mcp_oauth_browser=the-victims-own");
    for (n, other) in [
        "",
        "__Host-mcp_oauth_browser=someone-else",
        planted.as_str(),
    ]
    .into_iter()
    .enumerate()
    {
        let before = env.http.sent().len();
        let response = send_on(
            &server,
            &env,
            http(
                "GET",
                &format!("/oauth/callback?code=c{n}&state={state}"),
                &[("Cookie", other)],
                "",
            ),
        );
        assert_eq!(response.status, 403, "{other}");
        assert!(response.header("Location").is_none());
        let exchanges: Vec<String> = env.http.sent()[before..]
            .iter()
            .filter(|r| r.url.ends_with("/login/oauth/access_token"))
            .map(|r| String::from_utf8_lossy(r.body.as_deref().unwrap_or_default()).into_owned())
            .collect();
        assert_eq!(exchanges.len(), 1, "{other}: the code is spent once");
        assert!(
            exchanges[0].contains(&format!("code=c{n}&")),
            "{}",
            exchanges[0]
        );
    }
    // Nothing was stored for any of it.
    assert!(env.oauth.dump().is_empty(), "{:?}", env.oauth.dump());
}

#[test]
fn the_binding_cookie_is_host_only_and_secure_on_an_https_issuer() {
    let server = oauth_server();
    let env = FakeEnv::with_http(github("octocat"));
    let client_id = register(&server, &env);
    let response = send_on(
        &server,
        &env,
        http(
            "GET",
            &format!("/oauth/authorize?{}", authorize_query(&client_id, REDIRECT)),
            &[],
            "",
        ),
    );
    let set = response.header("Set-Cookie").unwrap();
    let attributes: Vec<&str> = set.split("; ").collect();
    assert!(
        attributes[0].starts_with("__Host-mcp_oauth_browser="),
        "{set}"
    );
    for wanted in [
        "Path=/",
        "Secure",
        "HttpOnly",
        "SameSite=Lax",
        "Max-Age=600",
    ] {
        assert!(attributes.contains(&wanted), "{wanted} in {set}");
    }
    assert!(!set.contains("Domain"), "{set}");
}

const ATLASSIAN_CLOUD: &str = "11111111-2222-3333-4444-555555555555";

/// GitHub signing in `octocat`, and Atlassian, whose accessible sites are `sites`.
fn github_and_atlassian(sites: Json) -> ScriptedHttp {
    ScriptedHttp::new(move |r: &UpstreamRequest| {
        Ok(if r.url == "https://auth.atlassian.com/oauth/token" {
            ok(
                json!({"access_token": "atl-person-token", "expires_in": 3600,
                      "refresh_token": "atl-refresh", "token_type": "Bearer"}),
            )
        } else if r.url == "https://api.atlassian.com/oauth/token/accessible-resources" {
            ok(sites.clone())
        } else {
            github_reply("octocat", r)
        })
    })
}

fn acme_sites() -> Json {
    json!([{"id": ATLASSIAN_CLOUD, "url": "https://acme.atlassian.net", "name": "acme",
            "scopes": ["read:jira-work"]}])
}

fn atlassian_server() -> Server {
    let mut pairs = oauth_settings();
    for (k, v) in [
        ("ATLASSIAN_SITE_NAME", "acme"),
        ("MCP_OAUTH_ATLASSIAN_CLIENT_ID", "atl-client"),
        ("MCP_OAUTH_ATLASSIAN_CLIENT_SECRET", "atl-secret"),
    ] {
        pairs.push((k.into(), v.into()));
    }
    server_with(pairs)
}

/// Signs in through GitHub and returns the redirect to Atlassian and the consent cookie.
fn to_atlassian(server: &Server, env: &FakeEnv, client_id: &str) -> (String, String) {
    let (response, cookie) = through_github(server, env, client_id);
    let to_atlassian = location(&response);
    assert!(
        to_atlassian.starts_with("https://auth.atlassian.com/authorize?"),
        "{to_atlassian}"
    );
    (to_atlassian, cookie)
}

/// Signs in through GitHub and returns the state toward Atlassian and the consent cookie.
fn atlassian_state(server: &Server, env: &FakeEnv, client_id: &str) -> (String, String) {
    let (to_atlassian, cookie) = to_atlassian(server, env, client_id);
    (query_param(&to_atlassian, "state").unwrap(), cookie)
}

fn atlassian_return(server: &Server, env: &FakeEnv, query: &str, cookie: &str) -> HttpResponse {
    send_on(
        server,
        env,
        http(
            "GET",
            &format!("/oauth/atlassian/callback?{query}"),
            &[("Cookie", cookie)],
            "",
        ),
    )
}

/// The person's upstream tokens in the grant of `access`.
fn upstream_of(server: &Server, env: &FakeEnv, access: &str) -> Vec<(String, Option<String>)> {
    let settings = settings_of(server);
    let store = devtools_mcp_edge::oauth::store::TokenStore::new(&settings, env.ports());
    let who = futures::executor::block_on(store.authenticate(access)).unwrap();
    who.upstream
        .iter()
        .map(|t| (t.vendor.clone(), t.site.clone()))
        .collect()
}

#[test]
fn with_atlassian_configured_the_sign_in_goes_on_to_atlassian_and_seals_its_token() {
    let server = atlassian_server();
    let env = FakeEnv::with_http(github_and_atlassian(acme_sites()));
    let client_id = register(&server, &env);
    let (to_atlassian, cookie) = to_atlassian(&server, &env, &client_id);
    for (k, v) in [
        ("audience", "api.atlassian.com"),
        ("client_id", "atl-client"),
        (
            "redirect_uri",
            "https://mcp.example.com/oauth/atlassian/callback",
        ),
        ("response_type", "code"),
        ("prompt", "consent"),
    ] {
        assert_eq!(query_param(&to_atlassian, k).as_deref(), Some(v), "{k}");
    }
    let state = query_param(&to_atlassian, "state").unwrap();
    let back = atlassian_return(
        &server,
        &env,
        &format!("code=atl-code&state={state}"),
        &cookie,
    );
    let code = code_of(&location(&back));
    let (status, tokens) = exchange(&server, &env, &client_id, &code, VERIFIER);
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(
        upstream_of(&server, &env, access),
        [
            ("github".to_owned(), None),
            ("atlassian".to_owned(), Some(ATLASSIAN_CLOUD.to_owned()))
        ]
    );
    // The exchange sent Atlassian's code to its token endpoint with the app's credentials.
    let exchange = env
        .http
        .sent()
        .into_iter()
        .find(|r| r.url == "https://auth.atlassian.com/oauth/token")
        .unwrap();
    let body: Json = serde_json::from_slice(exchange.body.as_deref().unwrap()).unwrap();
    assert_eq!(body["code"], "atl-code");
    assert_eq!(body["client_secret"], "atl-secret");
    // Neither person's token is ever in the store in clear, nor in a log line.
    for (key, value) in env.oauth.dump() {
        let text = String::from_utf8_lossy(&value);
        for secret in ["atl-person-token", "atl-refresh", "gho_person_token"] {
            assert!(!text.contains(secret), "{key}: {text}");
        }
    }
    for line in env.log.lines() {
        assert!(!line.contains("atl-person-token"), "{line}");
    }
    // The waiting sign-in is used once.
    let again = atlassian_return(
        &server,
        &env,
        &format!("code=atl-code&state={state}"),
        &cookie,
    );
    assert_eq!(again.status, 400);
}

#[test]
fn declining_atlassian_consent_signs_in_without_an_atlassian_identity() {
    let server = atlassian_server();
    let env = FakeEnv::with_http(github_and_atlassian(acme_sites()));
    let client_id = register(&server, &env);
    let (to_atlassian, cookie) = to_atlassian(&server, &env, &client_id);
    let state = query_param(&to_atlassian, "state").unwrap();
    let query = format!("error=access_denied&error_description=declined&state={state}");
    let code = code_of(&location(&atlassian_return(&server, &env, &query, &cookie)));
    let (status, tokens) = exchange(&server, &env, &client_id, &code, VERIFIER);
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(
        upstream_of(&server, &env, tokens["access_token"].as_str().unwrap()),
        [("github".to_owned(), None)]
    );
    assert!(env
        .http
        .sent()
        .iter()
        .all(|r| !r.url.contains("atlassian.com")));
}

#[test]
fn a_token_that_cannot_reach_the_site_ends_the_sign_in_with_the_reason() {
    let server = atlassian_server();
    let other = json!([{"id": "x", "url": "https://other.atlassian.net", "name": "other"}]);
    let env = FakeEnv::with_http(github_and_atlassian(other));
    let client_id = register(&server, &env);
    let (state, cookie) = atlassian_state(&server, &env, &client_id);
    let back = location(&atlassian_return(
        &server,
        &env,
        &format!("code=atl-code&state={state}"),
        &cookie,
    ));
    assert!(back.starts_with(REDIRECT), "{back}");
    assert_eq!(
        query_param(&back, "error").as_deref(),
        Some("access_denied")
    );
    let description = query_param(&back, "error_description").unwrap();
    assert!(
        description.contains("https://acme.atlassian.net"),
        "{description}"
    );
    assert!(query_param(&back, "code").is_none());
}

#[test]
fn atlassians_answer_needs_its_own_state_and_the_browser_that_started_the_sign_in() {
    let server = atlassian_server();
    let env = FakeEnv::with_http(github_and_atlassian(acme_sites()));
    let client_id = register(&server, &env);
    // An unknown state, or the primary provider's answer replayed here: nothing.
    let (state, cookie) = atlassian_state(&server, &env, &client_id);
    let unknown = atlassian_return(&server, &env, "code=atl-forged&state=forged", &cookie);
    assert_eq!(unknown.status, 400);
    // Another browser (no consent cookie, or another one) cannot finish this sign-in.
    for (n, other) in ["", "mcp_oauth_consent=someone-else"]
        .into_iter()
        .enumerate()
    {
        let (state, _) = atlassian_state(&server, &env, &client_id);
        let response = atlassian_return(
            &server,
            &env,
            &format!("code=atl-code-{n}&state={state}"),
            other,
        );
        assert_eq!(response.status, 403, "{other:?}");
        assert!(response.header("Location").is_none());
    }
    // The person's own browser can, once.
    let back = atlassian_return(
        &server,
        &env,
        &format!("code=atl-code&state={state}"),
        &cookie,
    );
    code_of(&location(&back));
}

#[test]
fn a_refused_atlassian_answer_spends_its_code_and_the_sign_in_it_belonged_to() {
    let server = atlassian_server();
    let env = FakeEnv::with_http(github_and_atlassian(acme_sites()));
    let client_id = register(&server, &env);
    let (state, cookie) = atlassian_state(&server, &env, &client_id);
    let query = format!("code=atl-code&state={state}");
    let leg = || {
        env.oauth
            .dump()
            .into_iter()
            .find(|(k, _)| k.starts_with("atlassian2:"))
    };
    let (key, value) = leg().expect("the waiting sign-in is stored under the state's hash");
    assert!(!key.contains(&state), "{key}");
    let refused = atlassian_return(&server, &env, &query, "mcp_oauth_consent=someone-else");
    assert_eq!(refused.status, 403);
    // Atlassian was asked for the code's token once, which its single-use codes make final.
    let exchanged = || {
        env.http
            .sent()
            .iter()
            .filter(|r| r.url == "https://auth.atlassian.com/oauth/token")
            .count()
    };
    assert_eq!(exchanged(), 1);
    // Its address opens nothing later: not in the browser that started the sign-in either,
    // even where KV still holds the waiting sign-in (a location's copy, put back here).
    assert!(leg().is_none());
    let entry = CacheEntry {
        value,
        metadata: String::new(),
    };
    futures::executor::block_on(env.oauth.put(&key, entry, 600)).unwrap();
    let again = atlassian_return(&server, &env, &query, &cookie);
    assert_eq!(again.status, 400);
    assert!(again.header("Location").is_none());
    assert_eq!(exchanged(), 1);
}

#[test]
fn a_registration_made_under_looser_rules_cannot_send_a_code_where_the_rules_now_refuse() {
    let redirect = "cursor://anysphere.cursor-retrieval/oauth/callback";
    let mut looser = oauth_settings();
    looser.push(("MCP_OAUTH_REDIRECT_SCHEMES".into(), "cursor".into()));
    let (then, now) = (server_with(looser), server_with(oauth_settings()));
    let env = FakeEnv::new();
    let body = json!({"client_name": "Cursor", "redirect_uris": [redirect]}).to_string();
    let registered = send_on(
        &then,
        &env,
        http(
            "POST",
            "/oauth/register",
            &[("Content-Type", "application/json")],
            &body,
        ),
    );
    assert_eq!(registered.status, 201);
    let client_id = body_json(&registered)["client_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/oauth/authorize?{}", authorize_query(&client_id, redirect));
    assert_eq!(
        send_on(&then, &env, http("GET", &path, &[], "")).status,
        200
    );
    // The operator stops accepting the scheme: the client id still opens, its redirect does not.
    let refused = send_on(&now, &env, http("GET", &path, &[], ""));
    assert_eq!(refused.status, 400);
    assert!(refused.header("Location").is_none());
    let page = String::from_utf8_lossy(&refused.body);
    assert!(page.contains("no longer accepted"), "{page}");
}

#[test]
fn a_providers_code_opens_one_answer_whatever_state_comes_with_it() {
    let server = oauth_server();
    let env = FakeEnv::with_http(github("octocat"));
    let client_id = register(&server, &env);
    let (request, cookie) = consent(&server, &env, &client_id);
    let state = query_param(
        &location(&approve(&server, &env, &request, &cookie)),
        "state",
    )
    .unwrap();
    // The victim's browser comes back with the state altered or removed: refused, and nothing
    // there can spend the code at the provider.
    for query in ["code=gh-code&state=altered", "code=gh-code"] {
        let response = send_on(
            &server,
            &env,
            http("GET", &format!("/oauth/callback?{query}"), &[], ""),
        );
        assert_eq!(response.status, 400, "{query}");
        assert!(response.header("Location").is_none());
    }
    // The code with the starting browser's own state and cookie: still nothing.
    let replay = send_on(
        &server,
        &env,
        http(
            "GET",
            &format!("/oauth/callback?code=gh-code&state={state}"),
            &[("Cookie", &cookie)],
            "",
        ),
    );
    assert_eq!(replay.status, 400);
    assert!(replay.header("Location").is_none());
    assert!(String::from_utf8_lossy(&replay.body).contains("already used"));
    assert!(env
        .http
        .sent()
        .iter()
        .all(|r| !r.url.ends_with("/login/oauth/access_token")));
    // Another code, in that browser, signs in.
    let back = send_on(
        &server,
        &env,
        http(
            "GET",
            &format!("/oauth/callback?code=gh-code-other&state={state}"),
            &[("Cookie", &cookie)],
            "",
        ),
    );
    code_of(&location(&back));
}
