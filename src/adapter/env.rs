//! Settings read from the Workers `Env`, and the ports served by JavaScript globals: the clock
//! (`Date.now()`), randomness (`crypto.getRandomValues`) and the log (`console.log`).

use crate::ports::{Clock, Log, RateLimit, Rng, Settings, StoreError, Stored};
use futures::future::LocalBoxFuture;
use worker::Env;

/// Binding name of the KV namespace used as the HTTP cache.
pub(crate) const CACHE_BINDING: &str = "HTTP_CACHE";
/// Binding name of the KV namespace holding a KV-held policy document.
pub(crate) const POLICY_BINDING: &str = "POLICY";
/// Binding name of the KV namespace holding sign-in state (OAuth clients, grants, token hashes).
pub(crate) const OAUTH_BINDING: &str = "OAUTH";
/// Binding name of the rate limiter that bounds anonymous sign-in requests per address.
pub(crate) const RATE_LIMIT_BINDING: &str = "OAUTH_RATE_LIMIT";
/// Binding name of the R2 bucket holding oversized results.
pub(crate) const ARTIFACTS_BINDING: &str = "ARTIFACTS";

/// The setting `name`: a secret when one exists, else a plain-text variable.
///
/// Secrets win so that a value moved from `[vars]` to `wrangler secret put` takes effect without
/// editing wrangler.toml. Bindings that are not strings (JSON object vars) read as absent.
pub(crate) fn setting(env: &Env, name: &str) -> Option<String> {
    env.secret(name)
        .map(|s| s.to_string())
        .or_else(|_| env.var(name).map(|v| v.to_string()))
        .ok()
}

/// Settings read from one request's `Env`.
pub(crate) struct EnvSettings<'a>(pub &'a Env);

impl Settings for EnvSettings<'_> {
    fn get(&self, name: &str) -> Option<String> {
        setting(self.0, name)
    }
}

/// The Workers Rate Limiting binding [`RATE_LIMIT_BINDING`], when the deployment has it.
pub(crate) struct BindingLimiter(pub Option<worker::RateLimiter>);

impl BindingLimiter {
    /// The limiter bound in `env`, if any.
    pub(super) fn new(env: &Env) -> BindingLimiter {
        BindingLimiter(env.rate_limiter(RATE_LIMIT_BINDING).ok())
    }
}

impl RateLimit for BindingLimiter {
    fn admit<'a>(&'a self, key: &'a str) -> Stored<'a, bool> {
        Box::pin(async move {
            let limiter = self.0.as_ref().ok_or_else(|| {
                StoreError(format!(
                    "binding {RATE_LIMIT_BINDING} is not configured in wrangler.toml"
                ))
            })?;
            limiter
                .limit(key.to_owned())
                .await
                .map(|outcome| outcome.success)
                .map_err(|e| StoreError(e.to_string()))
        })
    }
}

/// Wall-clock time from `Date.now()`.
pub(crate) struct JsClock;

impl Clock for JsClock {
    fn now_ms(&self) -> u64 {
        // Date.now() is a non-negative integer well inside f64's exact range.
        worker::js_sys::Date::now().max(0.0) as u64
    }

    fn sleep(&self, ms: u64) -> LocalBoxFuture<'_, ()> {
        Box::pin(worker::Delay::from(std::time::Duration::from_millis(ms)))
    }
}

/// Randomness from `crypto.getRandomValues`, through getrandom's `wasm_js` backend.
pub(crate) struct CryptoRng;

impl Rng for CryptoRng {
    fn fill(&self, buf: &mut [u8]) {
        if let Err(error) = getrandom::fill(buf) {
            // Workers always provide Web Crypto, so this is a broken runtime. Ids built from these
            // bytes guard stored artifacts: stopping the isolate is safer than guessable ids.
            worker::console_error!("crypto.getRandomValues failed: {error}");
            std::process::abort();
        }
    }
}

/// Log lines to `console.log`, where Workers Logs and `wrangler tail` collect them.
pub(crate) struct ConsoleLog;

impl Log for ConsoleLog {
    fn line(&self, line: &str) {
        worker::console_log!("{line}");
    }
}
