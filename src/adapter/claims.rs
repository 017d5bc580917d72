//! First-claim-wins markers on Durable Objects: one object of the `CLAIMS` namespace per key
//! (named by the key, which is a hash, never a credential), so claims of different keys never
//! queue behind each other and no single object carries every sign-in. The runtime runs one
//! instance of each object worldwide and delivers its requests one at a time; the object decides
//! in memory with no await between reading and setting its marker, so exactly one claim of a key
//! is the first, for every isolate and location. The marker is written to the object's storage
//! before the answer leaves (the output gate holds it until the write is durable), and the
//! object's alarm deletes it once its time is up.

use crate::adapter::objects::{post_json, Namespace};
use crate::ports::{Claim, ClaimStore, StoreError, Stored};
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use worker::{durable_object, DurableObject, Env, Request, Response, State};

/// Binding name of the Durable Object namespace holding claims.
pub(crate) const CLAIMS_BINDING: &str = "CLAIMS";
/// The storage key of an object's one marker.
const MARKER_KEY: &str = "claim";

/// A claim as sent to the object.
#[derive(Serialize, Deserialize)]
struct Ask {
    holder: String,
    ttl_seconds: u64,
    /// Only asks who holds the key: nothing is set.
    #[serde(default)]
    only_ask: bool,
}

/// The object's answer: whether this claim was the first (for a question, whether nobody holds
/// the key), and the first claim's holder.
#[derive(Serialize, Deserialize)]
struct Answer {
    first: bool,
    holder: String,
}

/// The marker an object keeps while its claim lasts.
#[derive(Clone, Serialize, Deserialize)]
struct Marker {
    holder: String,
    expires_ms: u64,
}

/// The [`ClaimStore`] port: each claim is one request to the object named by its key.
pub(crate) struct DoClaims {
    namespace: Namespace,
}

impl DoClaims {
    /// The claims of `env`; without the binding every claim fails, so nothing is spent.
    pub(super) fn new(env: &Env) -> DoClaims {
        DoClaims {
            namespace: env
                .durable_object(CLAIMS_BINDING)
                .map_err(|_| StoreError::missing_binding(CLAIMS_BINDING)),
        }
    }

    async fn send(&self, key: &str, ask: &Ask) -> Result<Claim, StoreError> {
        let url = "https://claims.internal/claim";
        let answer: Answer = post_json(&self.namespace, key, url, ask, "claim object").await?;
        Ok(if answer.first {
            Claim::First
        } else {
            Claim::Taken(answer.holder)
        })
    }
}

impl ClaimStore for DoClaims {
    fn claim<'a>(&'a self, key: &'a str, holder: &'a str, ttl_seconds: u64) -> Stored<'a, Claim> {
        Box::pin(async move {
            let ask = Ask {
                holder: holder.to_owned(),
                ttl_seconds,
                only_ask: false,
            };
            self.send(key, &ask).await
        })
    }

    fn holder<'a>(&'a self, key: &'a str) -> Stored<'a, Option<String>> {
        Box::pin(async move {
            let ask = Ask {
                holder: String::new(),
                ttl_seconds: 0,
                only_ask: true,
            };
            Ok(match self.send(key, &ask).await? {
                Claim::First => None,
                Claim::Taken(holder) => Some(holder),
            })
        })
    }
}

/// The object of one key.
#[durable_object(alarm)]
pub(crate) struct ClaimObject {
    state: State,
    /// True once the marker has been read from storage (or deleted by the alarm).
    loaded: Cell<bool>,
    /// The marker, if any; it may have expired before the alarm ran.
    marker: RefCell<Option<Marker>>,
}

impl ClaimObject {
    fn now_ms() -> u64 {
        worker::js_sys::Date::now().max(0.0) as u64
    }

    async fn answer(&self, ask: Ask) -> worker::Result<Answer> {
        if !self.loaded.get() {
            let stored = self.state.storage().get::<Marker>(MARKER_KEY).await?;
            // A request that loaded first (while this one awaited) has the newer view.
            if !self.loaded.replace(true) {
                self.marker.replace(stored);
            }
        }
        let now = Self::now_ms();
        // Read and set with no await in between: no other request can interleave.
        let live = self
            .marker
            .borrow()
            .clone()
            .filter(|marker| marker.expires_ms > now);
        if let Some(marker) = live {
            return Ok(Answer {
                first: false,
                holder: marker.holder,
            });
        }
        if ask.only_ask {
            return Ok(Answer {
                first: true,
                holder: String::new(),
            });
        }
        let ttl_ms = ask.ttl_seconds.saturating_mul(1000);
        let marker = Marker {
            holder: ask.holder,
            expires_ms: now.saturating_add(ttl_ms),
        };
        self.marker.replace(Some(marker.clone()));
        let storage = self.state.storage();
        let stored = match storage.put(MARKER_KEY, &marker).await {
            Ok(()) => {
                let offset = i64::try_from(ttl_ms).unwrap_or(i64::MAX);
                storage.set_alarm(offset).await
            }
            Err(error) => Err(error),
        };
        if let Err(error) = stored {
            // Forget what storage may not hold: the next request reads it again.
            self.loaded.set(false);
            self.marker.replace(None);
            return Err(error);
        }
        Ok(Answer {
            first: true,
            holder: marker.holder,
        })
    }
}

impl DurableObject for ClaimObject {
    fn new(state: State, _env: Env) -> Self {
        ClaimObject {
            state,
            loaded: Cell::new(false),
            marker: RefCell::new(None),
        }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let text = req.text().await?;
        let ask: Ask = match serde_json::from_str(&text) {
            Ok(ask) => ask,
            Err(e) => return Response::error(format!("not a claim: {e}"), 400),
        };
        match self.answer(ask).await {
            Ok(answer) => match serde_json::to_string(&answer) {
                Ok(text) => Response::ok(text),
                Err(e) => Response::error(e.to_string(), 500),
            },
            Err(e) => Response::error(format!("claim: {e}"), 500),
        }
    }

    async fn alarm(&self) -> worker::Result<Response> {
        self.state.storage().delete_all().await?;
        self.loaded.set(true);
        self.marker.replace(None);
        Response::ok("")
    }
}
