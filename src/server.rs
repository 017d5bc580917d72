//! The HTTP face of the server: routing, the order of the checks every `POST /mcp` passes
//! (configuration, origin, authentication, size, content type, `Accept`), CORS for allowed
//! origins, panic containment, and the replies for requests refused before dispatch. The header
//! checks live in `checks`, JSON-RPC dispatch in `dispatch`, the `tools/call` pipeline in
//! `call`, the enterprise policy gate in `gate`, revision selection in `version`, reply
//! serialization in `reply`.

mod batch;
mod call;
mod context;
/// The JSON text of a `tools/call` result (examples/bench_render_wasm.rs times it).
pub use call::call_reply;
mod checks;
mod connection;
mod dispatch;
pub(crate) mod gate;
mod inflight;
mod reply;
mod stream;
mod version;

use crate::auth::{self, AuthError, Principal};
use crate::config::{Config, ConfigError};
use crate::http::{BufferedBody, HttpRequest, HttpResponse};
use crate::jsonrpc::{ErrorCode, ErrorObject};
use crate::memory::{
    BodyReservation, CallMemory, MemoryBudget, BYTES_PER_REQUEST_BYTE, DEFAULT_BUDGET_BYTES,
    REQUEST_OVERHEAD_BYTES,
};
use crate::oauth::{self, settings::OAuthSettings};
use crate::ports::{BodyRoom, Clock, Level, Log, Ports, ReplyStream, RequestBody};
use crate::projection::FuelShares;
use crate::tools::{self, Registry, RegistryError, Selection};
use futures::future::{select, Either, LocalBoxFuture};
use futures::FutureExt;
use reply::rpc_error_reply;
use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};

/// The largest request body read; a longer one is refused with 413 (after authentication, and
/// never read whole).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The largest body the sign-in endpoints read: their forms and client registrations are a few
/// kilobytes, and anyone may send them.
const OAUTH_MAX_BODY_BYTES: usize = 64 * 1024;

/// The most header bytes (names and values) a sign-in request may carry: a browser's cookies
/// for this server's host are a few kilobytes, and each header byte is reserved twice.
const OAUTH_MAX_HEADER_BYTES: usize = 32 * 1024;

// Every sign-in request in flight at once holds at most a quarter of the default budget.
const _: () = assert!(
    inflight::SIGN_IN_TOTAL
        * (REQUEST_OVERHEAD_BYTES
            + 2 * OAUTH_MAX_HEADER_BYTES
            + BYTES_PER_REQUEST_BYTE * OAUTH_MAX_BODY_BYTES)
        <= DEFAULT_BUDGET_BYTES / 4
        && inflight::SIGN_IN_PER_ADDRESS < inflight::SIGN_IN_TOTAL
);

/// What a request refused for want of memory or room is told to wait before trying again, in
/// seconds.
const RETRY_AFTER_SECONDS: u64 = 2;

/// The MCP endpoint's path.
pub(crate) const MCP_PATH: &str = "/mcp";

/// The server's name in `initialize` and `server/discover`.
pub(crate) const SERVER_NAME: &str = "devtools-mcp-edge";

const HOME_PAGE: &str = "devtools-mcp-edge: a remote MCP (Model Context Protocol) server for CI \
and project data (GitHub Actions, CircleCI, Jira, Confluence, Bitbucket).\n\nConnect an MCP \
client to POST /mcp (Streamable HTTP, JSON responses) with an Authorization: Bearer token.\n\
Protocol revisions: 2025-03-26, 2025-06-18, 2025-11-25 (initialize) and 2026-07-28 (stateless).\n";

/// The server: configuration and tools, built once per isolate and shared by every request.
pub struct Server {
    config: Result<Config, ConfigError>,
    registry: Result<Registry, RegistryError>,
    startup_logged: AtomicBool,
    /// Shared by every call the isolate serves at once.
    memory: MemoryBudget,
    /// Each principal's requests in flight, bounded.
    inflight: inflight::InFlight,
    /// The request-body bytes each principal's requests hold.
    bodies: inflight::BodyShares,
    /// Each principal's bucket of fuel.
    fuel: FuelShares,
}

impl Server {
    /// Built once per isolate from the worker's settings: `settings(name)` returns the secret or
    /// var called `name` (the adapter asks for the secret first, then the var).
    pub fn new(settings: &dyn Fn(&str) -> Option<String>) -> Server {
        let config = Config::from_settings(settings);
        // The tools describe the API each Atlassian product speaks on this deployment.
        let registry = tools::deployment(&|vendor| {
            config
                .as_ref()
                .map_or(Default::default(), |c| c.upstream.flavor(vendor))
        });
        Server::build(config, registry)
    }

    /// A server with a given tool registry (tests register their own tools).
    pub fn with_registry(
        settings: &dyn Fn(&str) -> Option<String>,
        registry: Result<Registry, RegistryError>,
    ) -> Server {
        Server::build(Config::from_settings(settings), registry)
    }

    fn build(
        config: Result<Config, ConfigError>,
        registry: Result<Registry, RegistryError>,
    ) -> Server {
        let budget = config
            .as_ref()
            .map_or(DEFAULT_BUDGET_BYTES, |c| c.memory_budget_bytes);
        Server {
            config,
            registry,
            startup_logged: AtomicBool::new(false),
            memory: MemoryBudget::new(budget),
            inflight: Default::default(),
            bodies: Default::default(),
            fuel: FuelShares::default(),
        }
    }

    /// The isolate's memory budget for large upstream bodies.
    pub fn memory(&self) -> &MemoryBudget {
        &self.memory
    }

    /// The configuration, or the error that makes every request fail.
    pub fn config(&self) -> Result<&Config, &ConfigError> {
        self.config.as_ref()
    }

    /// Handles one HTTP request whose body was read already (`request.body`, and
    /// `body_too_large` when the reader stopped at the limit); never panics, never returns an
    /// error.
    pub async fn handle(&self, mut request: HttpRequest, ports: Ports<'_>) -> HttpResponse {
        let body = BufferedBody::new(std::mem::take(&mut request.body), request.body_too_large);
        self.serve(request, &body, ports).await
    }

    /// Handles one HTTP request whose body is read through `body` only when the route needs it
    /// (`request.body` is ignored): a `POST /mcp` is authenticated from its headers first, so
    /// a request without valid credentials is answered without its body ever being read.
    pub async fn serve(
        &self,
        request: HttpRequest,
        body: &dyn RequestBody,
        ports: Ports<'_>,
    ) -> HttpResponse {
        self.serve_streaming(request, body, ports, None).await
    }

    /// [`Server::serve`], with `reply` where a call that reports progress sends it while it
    /// runs (then the returned response is the stream's last piece).
    pub async fn serve_streaming(
        &self,
        request: HttpRequest,
        body: &dyn RequestBody,
        ports: Ports<'_>,
        reply: Option<&dyn ReplyStream>,
    ) -> HttpResponse {
        self.log_startup_once(ports.log);
        // On the host a panic unwinds to here and becomes a -32603. On wasm32 (panic=abort) it
        // traps the Wasm instance instead: this request (and any other the instance is serving)
        // fails at the runtime, and the next request gets a fresh instance, which is why request
        // paths must not panic in the first place.
        match AssertUnwindSafe(self.route(request, body, ports, reply))
            .catch_unwind()
            .await
        {
            Ok(response) => response,
            Err(payload) => {
                let detail = reply::panic_message(payload.as_ref());
                ports
                    .log
                    .event(Level::Error, "panic", &[("detail", (&detail).into())]);
                rpc_error_reply(500, None, ErrorObject::internal())
            }
        }
    }

    fn log_startup_once(&self, log: &dyn Log) {
        if self.startup_logged.swap(true, Ordering::Relaxed) {
            return;
        }
        if let Ok(config) = &self.config {
            for (setting, given, used) in &config.clamped {
                log.event(
                    Level::Warn,
                    "setting_clamped",
                    &[
                        ("setting", (*setting).into()),
                        ("given", given.into()),
                        ("used", (*used).into()),
                    ],
                );
            }
            if config.allow_anonymous && !config.auth_tokens.is_empty() {
                log.event(
                    Level::Warn,
                    "anonymous_ignored",
                    &[(
                        "detail",
                        "MCP_ALLOW_ANONYMOUS is ignored because MCP_AUTH_TOKENS holds tokens: \
                         every request must present one"
                            .into(),
                    )],
                );
            }
            if config.auth_tokens.is_empty() && config.oauth.is_none() {
                let detail = if config.allow_anonymous {
                    "MCP_AUTH_TOKENS is empty or unset: only credential-less loopback requests \
                     (MCP_ALLOW_ANONYMOUS) will be served"
                } else {
                    "MCP_AUTH_TOKENS is empty or unset: every request to /mcp will be refused \
                     with 401"
                };
                log.event(Level::Error, "no_auth_tokens", &[("detail", detail.into())]);
            }
        }
    }

    async fn route(
        &self,
        request: HttpRequest,
        body: &dyn RequestBody,
        ports: Ports<'_>,
        reply: Option<&dyn ReplyStream>,
    ) -> HttpResponse {
        // `/mcp` and the paths that choose its tools (`/mcp/x/github/readonly`, ...).
        if let Some(chosen) = connection::endpoint(&request.path) {
            return match request.method.as_str() {
                "POST" => self.post_mcp(request, body, chosen, ports, reply).await,
                "OPTIONS" => self.options_mcp(&request, ports),
                // No server-initiated SSE stream (GET) and no sessions to end (DELETE).
                _ => method_not_allowed("POST"),
            };
        }
        match (request.method.as_str(), request.path.as_str()) {
            ("GET" | "HEAD", "/") => {
                let body = if request.method == "HEAD" {
                    ""
                } else {
                    HOME_PAGE
                };
                HttpResponse::new(200, "text/plain; charset=utf-8", body)
            }
            (_, "/") => method_not_allowed("GET, HEAD"),
            (_, path) if oauth::is_oauth_path(path) => match &self.config {
                Ok(Config {
                    oauth: Some(settings),
                    ..
                }) => self.sign_in(request, body, settings, ports).await,
                Err(error) => config_error(error, ports.log),
                Ok(_) => HttpResponse::new(404, "text/plain; charset=utf-8", "Not found\n"),
            },
            _ => HttpResponse::new(404, "text/plain; charset=utf-8", "Not found\n"),
        }
    }

    /// A request to a sign-in endpoint. Anyone may send these, so each that does work for its
    /// sender is refused before its body costs anything when its address is over its rate
    /// limit, when its headers are over [`OAUTH_MAX_HEADER_BYTES`], or when its address, or every
    /// address together, has too many in flight; its body then has [`OAUTH_BODY_WITHIN_MS`] to
    /// arrive.
    async fn sign_in(
        &self,
        mut request: HttpRequest,
        body: &dyn RequestBody,
        settings: &OAuthSettings,
        ports: Ports<'_>,
    ) -> HttpResponse {
        // A discovery document, a preflight or a method the path does not take is answered at
        // once: no slot, no body.
        if !oauth::is_counted(&request) {
            return oauth::handle(settings, &request, ports).await;
        }
        if let Some(refused) = oauth::refused(&request, ports).await {
            return refused;
        }
        if header_bytes(&request) > OAUTH_MAX_HEADER_BYTES {
            return oauth::bad_request(&format!(
                "request headers over {} KiB",
                OAUTH_MAX_HEADER_BYTES / 1024
            ));
        }
        let address = inflight::sign_in_from(&oauth::address_key(&request));
        let slots = self
            .inflight
            .enter(&address, inflight::SIGN_IN_PER_ADDRESS)
            .zip(
                self.inflight
                    .enter(inflight::SIGN_IN, inflight::SIGN_IN_TOTAL),
            );
        let Some(_slots) = slots else {
            ports
                .log
                .event(Level::Warn, "sign_in_too_many_in_flight", &[]);
            return oauth::temporarily_unavailable(
                429,
                "too many sign-in requests in flight; retry in a few seconds",
                RETRY_AFTER_SECONDS,
            );
        };
        let held = self.memory.request();
        let limits = (OAUTH_MAX_BODY_BYTES, OAUTH_BODY_WITHIN_MS);
        match take_body(&mut request, body, limits, (&held, None), ports).await {
            Ok(()) => {}
            // Sign-in requests have no share of their own: their number bounds them.
            Err(Unread::Busy | Unread::OverShare) => {
                log_busy(declared_length(&request), ports.log);
                return oauth::temporarily_unavailable(
                    503,
                    "no memory for this request while other requests run; retry in a few \
                     seconds",
                    RETRY_AFTER_SECONDS,
                );
            }
            Err(Unread::CutShort) => {
                return oauth::bad_request("request body ended before its declared length")
            }
            Err(Unread::TooSlow) => {
                return oauth::bad_request(&format!(
                    "request body did not arrive within {} seconds",
                    OAUTH_BODY_WITHIN_MS / 1000
                ))
            }
        }
        // Cut short, a form or a registration would be read as another one.
        if request.body_too_large {
            return oauth::bad_request(&format!(
                "request body over {} KiB",
                OAUTH_MAX_BODY_BYTES / 1024
            ));
        }
        oauth::handle(settings, &request, ports).await
    }

    /// `POST /mcp`: the configuration and origin checks, then everything else; a response to an
    /// allowed browser origin carries CORS headers, errors included. A call that reports progress
    /// to a client reading `text/event-stream` is answered on `reply` as it runs.
    async fn post_mcp(
        &self,
        request: HttpRequest,
        body: &dyn RequestBody,
        chosen: Result<Selection, connection::BadSelection>,
        ports: Ports<'_>,
        reply: Option<&dyn ReplyStream>,
    ) -> HttpResponse {
        let config = match &self.config {
            Ok(config) => config,
            Err(error) => return config_error(error, ports.log),
        };
        let origin = request.header("Origin").map(str::to_owned);
        if let Some(origin) = &origin {
            if !config.origin_allowed(origin) {
                return forbidden_origin(origin, ports.log);
            }
        }
        let streamed = reply
            .filter(|_| checks::accepts_events(request.header("Accept")))
            .map(|out| stream::Streamed::new(out, origin.as_deref()));
        let response = self
            .checked_post(config, request, body, chosen, ports, streamed.as_ref())
            .await;
        let response = match &streamed {
            Some(streamed) => streamed.finish(response),
            None => response,
        };
        match &origin {
            Some(origin) => checks::with_cors(response, origin),
            None => response,
        }
    }

    /// `OPTIONS /mcp`: a CORS preflight from an allowed origin gets 204; without `Origin` it is
    /// not a preflight, and `/mcp` only serves POST.
    fn options_mcp(&self, request: &HttpRequest, ports: Ports<'_>) -> HttpResponse {
        let config = match &self.config {
            Ok(config) => config,
            Err(error) => return config_error(error, ports.log),
        };
        match request.header("Origin") {
            Some(origin) if config.origin_allowed(origin) => checks::preflight(origin),
            Some(origin) => forbidden_origin(origin, ports.log),
            None => method_not_allowed("POST"),
        }
    }

    async fn checked_post(
        &self,
        config: &Config,
        mut request: HttpRequest,
        body: &dyn RequestBody,
        chosen: Result<Selection, connection::BadSelection>,
        ports: Ports<'_>,
        streamed: Option<&stream::Streamed<'_>>,
    ) -> HttpResponse {
        let registry = match &self.registry {
            Ok(registry) => registry,
            Err(error) => {
                ports.log.event(
                    Level::Error,
                    "registry_invalid",
                    &[("detail", (&error.0).into())],
                );
                return rpc_error_reply(500, None, ErrorObject::internal());
            }
        };
        let principal = match authenticate(config, &request, ports).await {
            Ok(principal) => principal,
            Err(reply) => return reply,
        };
        let Some(_slot) = self
            .inflight
            .enter(principal.name(), inflight::MAX_PER_PRINCIPAL)
        else {
            return too_many_in_flight(
                &format!("at most {} at once", inflight::MAX_PER_PRINCIPAL),
                ports.log,
            );
        };
        // Only now: an unauthenticated request costs no body read.
        let held = self.memory.request();
        let share = self.bodies.open(principal.name());
        let taken = take_body(
            &mut request,
            body,
            (MAX_BODY_BYTES, MCP_BODY_WITHIN_MS),
            (&held, Some(&share)),
            ports,
        );
        match taken.await {
            Ok(()) => {}
            Err(Unread::Busy) => return busy_reply(declared_length(&request), ports.log),
            Err(Unread::OverShare) => {
                return too_many_in_flight(
                    &format!(
                        "at most {} MiB of request bodies at once",
                        inflight::BODY_BYTES_PER_PRINCIPAL >> 20
                    ),
                    ports.log,
                )
            }
            Err(Unread::CutShort) => {
                return rpc_error_reply(
                    400,
                    None,
                    ErrorObject::new(
                        ErrorCode::SERVER_ERROR,
                        "Bad request: the body ended before its declared length (or its last \
                         chunk) arrived; nothing was run",
                    ),
                )
            }
            Err(Unread::TooSlow) => {
                return rpc_error_reply(
                    408,
                    None,
                    ErrorObject::new(
                        ErrorCode::SERVER_ERROR,
                        format!(
                            "Request timeout: the body did not arrive within {} seconds; \
                             nothing was run",
                            MCP_BODY_WITHIN_MS / 1000
                        ),
                    ),
                )
            }
        }
        if request.body_too_large || request.body.len() > MAX_BODY_BYTES {
            return rpc_error_reply(
                413,
                None,
                ErrorObject::new(
                    ErrorCode::SERVER_ERROR,
                    format!("Payload too large: the body limit is {MAX_BODY_BYTES} bytes"),
                ),
            );
        }
        if !checks::is_json_content_type(request.header("Content-Type")) {
            return rpc_error_reply(
                415,
                None,
                ErrorObject::new(
                    ErrorCode::SERVER_ERROR,
                    "Unsupported Media Type: Content-Type must be application/json",
                ),
            );
        }
        if !checks::accepts_json(request.header("Accept")) {
            return rpc_error_reply(
                406,
                None,
                ErrorObject::new(
                    ErrorCode::SERVER_ERROR,
                    "Not Acceptable: this server answers with application/json",
                ),
            );
        }
        let selection = match chosen.and_then(|path| connection::selection(path, &request)) {
            Ok(selection) => selection,
            Err(reason) => return rpc_error_reply(400, None, connection::invalid(&reason)),
        };
        let context = context::Context {
            config,
            registry,
            principal: &principal,
            ports,
            request: &request,
            selection: &selection,
            memory: &self.memory,
            fuel: &self.fuel,
            stream: streamed,
        };
        dispatch::handle_body(&context).await
    }
}

/// How long a `POST /mcp` body may take to arrive once its reservation is made: 4 MiB at about
/// 600 kbit/s. A body that trickles in holds its reservation and its in-flight slot meanwhile.
const MCP_BODY_WITHIN_MS: u64 = 60_000;

/// How long a sign-in body (at most [`OAUTH_MAX_BODY_BYTES`]) may take to arrive: a client sends
/// its form or registration at once, and anyone may open these requests and hold them.
const OAUTH_BODY_WITHIN_MS: u64 = 10_000;

/// Why a request's body was not taken.
#[derive(Debug, PartialEq, Eq)]
enum Unread {
    /// No room in the memory budget for the whole wait.
    Busy,
    /// The principal's requests hold [`inflight::BODY_BYTES_PER_PRINCIPAL`] of bodies already.
    OverShare,
    /// The body stopped before its end: fewer bytes than its `Content-Length`, or a connection
    /// that failed mid-body. What arrived is a prefix, which may parse as another request.
    CutShort,
    /// The body did not arrive within its endpoint's time.
    TooSlow,
}

/// Reads the request's body into it (at most `limit` bytes, within `within_ms`) under the
/// isolate's memory budget, on `held`, which the caller keeps for as long as the body and what
/// is built from it live, and within the principal's `share` of body bytes when it has one.
/// Before a byte is read the request reserves its overhead and headers, and its declared length;
/// a body without one (chunked) reserves as it arrives, each piece before it is kept.
async fn take_body(
    request: &mut HttpRequest,
    body: &dyn RequestBody,
    (limit, within_ms): (usize, u64),
    (held, share): (&CallMemory, Option<&inflight::BodyShare>),
    ports: Ports<'_>,
) -> Result<(), Unread> {
    let clock = ports.clock;
    let headers = header_bytes(request);
    held.hold_buffer(
        REQUEST_OVERHEAD_BYTES + 2 * headers,
        || clock.now_ms(),
        |ms| clock.sleep(ms),
    )
    .await
    .map_err(|_| Unread::Busy)?;
    let room = Room {
        reservation: Cell::new(Some(held.request_body())),
        share,
        refused: Cell::new(None),
        clock,
    };
    let declared = declared_length(request);
    // A body over the limit is not kept: it costs nothing to hold.
    if let Some(len) = declared.filter(|&len| len <= limit) {
        if !room.grow(len).await {
            return Err(room.refusal());
        }
    }
    let read = match select(body.read(limit, &room), clock.sleep(within_ms)).await {
        Either::Left((read, _)) => read,
        Either::Right(_) => {
            ports.log.event(
                Level::Warn,
                "request_body_too_slow",
                &[("ms", within_ms.into())],
            );
            return Err(Unread::TooSlow);
        }
    };
    if read.no_room {
        return Err(room.refusal());
    }
    let short = declared.is_some_and(|len| !read.too_large && read.bytes.len() != len);
    if read.cut_short || short {
        ports.log.event(
            Level::Warn,
            "request_body_cut_short",
            &[("bytes", read.bytes.len().into())],
        );
        return Err(Unread::CutShort);
    }
    request.body = read.bytes;
    request.body_too_large = read.too_large;
    Ok(())
}

/// A request body's room as it is read: its reservation in the memory budget and its part of
/// the principal's body bytes.
struct Room<'a> {
    reservation: Cell<Option<BodyReservation<'a>>>,
    share: Option<&'a inflight::BodyShare>,
    /// Why the last growth was refused.
    refused: Cell<Option<Unread>>,
    clock: &'a dyn Clock,
}

impl Room<'_> {
    /// Why the body found no room.
    fn refusal(&self) -> Unread {
        self.refused.take().unwrap_or(Unread::Busy)
    }
}

impl BodyRoom for Room<'_> {
    fn grow(&self, total: usize) -> LocalBoxFuture<'_, bool> {
        Box::pin(async move {
            if self.share.is_some_and(|share| !share.grow(total)) {
                self.refused.set(Some(Unread::OverShare));
                return false;
            }
            let Some(mut reservation) = self.reservation.take() else {
                return false;
            };
            let clock = self.clock;
            let covered = reservation
                .cover(total, || clock.now_ms(), |ms| clock.sleep(ms))
                .await;
            self.reservation.set(Some(reservation));
            if covered.is_err() {
                self.refused.set(Some(Unread::Busy));
            }
            covered.is_ok()
        })
    }
}

/// The bytes of the request's header names and values.
fn header_bytes(request: &HttpRequest) -> usize {
    request.headers.iter().map(|(k, v)| k.len() + v.len()).sum()
}

/// 429 for a request whose principal has as many in flight as `bound` allows already.
fn too_many_in_flight(bound: &str, log: &dyn Log) -> HttpResponse {
    log.event(Level::Warn, "request_too_many_in_flight", &[]);
    rpc_error_reply(
        429,
        None,
        ErrorObject::new(
            ErrorCode::SERVER_ERROR,
            format!(
                "Too many requests in flight: {bound} per caller. Retry when some have \
                 answered."
            ),
        ),
    )
    .with_header("Retry-After", &RETRY_AFTER_SECONDS.to_string())
}

/// The request's `Content-Length`, when it declares one.
fn declared_length(request: &HttpRequest) -> Option<usize> {
    request
        .header("Content-Length")
        .and_then(|v| v.trim().parse::<usize>().ok())
}

/// Logs a request refused for want of memory, with its declared length.
fn log_busy(body_bytes: Option<usize>, log: &dyn Log) {
    log.event(
        Level::Warn,
        "request_busy",
        &[("bytes", body_bytes.unwrap_or(0).into())],
    );
}

/// 503 for a request that found no room in the memory budget for the whole wait: `body_bytes`
/// is its declared length, when it has one.
fn busy_reply(body_bytes: Option<usize>, log: &dyn Log) -> HttpResponse {
    log_busy(body_bytes, log);
    let what = body_bytes.map_or_else(
        || "a request".to_owned(),
        |n| format!("a request body of {n} bytes"),
    );
    rpc_error_reply(
        503,
        None,
        ErrorObject::new(
            ErrorCode::SERVER_ERROR,
            format!(
                "Server busy: no memory for {what} while other requests run. Retry in a few \
                 seconds."
            ),
        ),
    )
    .with_header("Retry-After", &RETRY_AFTER_SECONDS.to_string())
}

fn config_error(error: &ConfigError, log: &dyn Log) -> HttpResponse {
    let reason = error.reason.to_string();
    log.event(
        Level::Error,
        "config_invalid",
        &[
            ("setting", error.setting.into()),
            ("reason", (&reason).into()),
        ],
    );
    let message = format!("Internal error: server misconfigured: {error}");
    rpc_error_reply(
        500,
        None,
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, message),
    )
}

fn forbidden_origin(origin: &str, log: &dyn Log) -> HttpResponse {
    log.event(Level::Warn, "origin_refused", &[("origin", origin.into())]);
    rpc_error_reply(
        403,
        None,
        ErrorObject::new(ErrorCode::SERVER_ERROR, "Forbidden: origin not allowed"),
    )
}

fn method_not_allowed(allow: &str) -> HttpResponse {
    rpc_error_reply(
        405,
        None,
        ErrorObject::new(ErrorCode::SERVER_ERROR, "Method not allowed"),
    )
    .with_header("Allow", allow)
}

/// Authenticates a `POST /mcp`: a token of the shape OAuth issues is checked against the token
/// store, anything else against the static tokens (and the anonymous opt-in).
async fn authenticate(
    config: &Config,
    request: &HttpRequest,
    ports: Ports<'_>,
) -> Result<Principal, HttpResponse> {
    let token = request.header("Authorization").and_then(auth::bearer_token);
    if let (Some(settings), Some(token)) = (&config.oauth, token) {
        if oauth::store::is_issued_token(token) {
            return oauth::authenticate(settings, token, ports)
                .await
                .map_err(|message| {
                    unauthorized(
                        AuthError::Invalid,
                        message,
                        Some(oauth::metadata::challenge(settings, true)),
                    )
                });
        }
    }
    checks::authenticate(config, request, ports.log).map_err(|error| {
        // Only a request without credentials is pointed at OAuth discovery: a client holding a
        // static token that failed must not be sent into a browser flow it cannot finish.
        let discovery = config
            .oauth
            .as_ref()
            .filter(|_| token.is_none())
            .map(|settings: &OAuthSettings| oauth::metadata::challenge(settings, false));
        let error = match error {
            AuthError::NotConfigured if config.oauth.is_some() && token.is_some() => {
                AuthError::Invalid
            }
            AuthError::NotConfigured if config.oauth.is_some() => AuthError::Missing,
            other => other,
        };
        let message = match error {
            AuthError::Missing => "Unauthorized: send Authorization: Bearer <token>",
            AuthError::Invalid | AuthError::NotConfigured => "Unauthorized: invalid token",
        };
        unauthorized(error, message, discovery)
    })
}

fn unauthorized(error: AuthError, message: &str, challenge: Option<String>) -> HttpResponse {
    rpc_error_reply(
        401,
        None,
        ErrorObject::new(ErrorCode::SERVER_ERROR, message),
    )
    .with_header(
        "WWW-Authenticate",
        challenge.as_deref().unwrap_or(error.challenge()),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_server_can_live_in_a_static() {
        fn shareable<T: Send + Sync>() {}
        shareable::<super::Server>();
    }
}
