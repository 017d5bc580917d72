//! Settings read from the Workers `Env`, and the ports served by JavaScript globals: the clock
//! (`Date.now()`), randomness (`crypto.getRandomValues`) and the log (`console.log`).

use crate::ports::{Clock, Log, Rng, Settings};
use futures::future::LocalBoxFuture;
use worker::Env;

/// Binding name of the KV namespace used as the HTTP cache.
pub const CACHE_BINDING: &str = "HTTP_CACHE";
/// Binding name of the KV namespace holding a KV-held policy document.
pub const POLICY_BINDING: &str = "POLICY";
/// Binding name of the KV namespace holding sign-in state (OAuth clients, grants, token hashes).
pub const OAUTH_BINDING: &str = "OAUTH";
/// Binding name of the R2 bucket holding oversized results.
pub const ARTIFACTS_BINDING: &str = "ARTIFACTS";

/// The setting `name`: a secret when one exists, else a plain-text variable.
///
/// Secrets win so that a value moved from `[vars]` to `wrangler secret put` takes effect without
/// editing wrangler.toml. Bindings that are not strings (JSON object vars) read as absent.
pub fn setting(env: &Env, name: &str) -> Option<String> {
    env.secret(name)
        .map(|s| s.to_string())
        .or_else(|_| env.var(name).map(|v| v.to_string()))
        .ok()
}

/// Settings read from one request's `Env`.
pub struct EnvSettings<'a>(pub &'a Env);

impl Settings for EnvSettings<'_> {
    fn get(&self, name: &str) -> Option<String> {
        setting(self.0, name)
    }
}

/// Wall-clock time from `Date.now()`.
pub struct JsClock;

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
pub struct CryptoRng;

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
pub struct ConsoleLog;

impl Log for ConsoleLog {
    fn line(&self, line: &str) {
        worker::console_log!("{line}");
    }
}
