//! The approval ledger on a Durable Object. One object (named [`LEDGER_NAME`] in the `APPROVALS`
//! namespace) holds every approval; the runtime runs one instance of it worldwide and delivers
//! its requests one at a time, so each ledger op, applied in memory without an await, is atomic
//! for every isolate in every location. The object keeps only the book's entries in memory,
//! loaded from storage (`entry/<id>`) on first use; a record's details (`details/<id>`) are read
//! only for the page that lists them. It writes each change back before it answers (the output
//! gate holds the answer until the writes are durable).

use crate::adapter::env::setting;
use crate::adapter::objects::{post_json, Namespace};
use crate::config::{Config, ConfigError};
use crate::ledger::{Book, Change, Details, Entry, Op, Reply, Step};
use crate::ports::{ApprovalStore, StoreError, Stored};
use std::cell::RefCell;
use wasm_bindgen::JsValue;
use worker::js_sys::{Object, Reflect};
use worker::{durable_object, DurableObject, Env, Request, Response, State};

/// Binding name of the Durable Object namespace holding approvals.
pub(crate) const APPROVALS_BINDING: &str = "APPROVALS";
/// The name of the one object of the namespace: one ledger, so one order of every op.
const LEDGER_NAME: &str = "ledger";
/// Storage keys of entries: this prefix and the approval id.
const ENTRY_PREFIX: &str = "entry/";
/// Storage keys of details: this prefix and the approval id.
const DETAILS_PREFIX: &str = "details/";
/// The storage key of the layout marker, and the layout these keys follow. Storage without it
/// holds the earlier layout (whole records under `record/`), which is cleared (decision 0097).
const LAYOUT_KEY: &str = "layout";
const LAYOUT: &str = "entries-and-details";
/// The most keys one storage call writes or deletes.
const KEYS_PER_CALL: usize = 128;

/// The [`ApprovalStore`] port: each op is one request to the ledger object.
pub(crate) struct DoApprovals {
    namespace: Namespace,
}

impl DoApprovals {
    /// The ledger of `env`; without the binding every op fails (and the gate fails closed).
    pub(super) fn new(env: &Env) -> DoApprovals {
        DoApprovals {
            namespace: env
                .durable_object(APPROVALS_BINDING)
                .map_err(|_| StoreError::missing_binding(APPROVALS_BINDING)),
        }
    }

    async fn send(&self, op: &Op) -> Result<Reply, StoreError> {
        let url = "https://approvals.internal/op";
        post_json(&self.namespace, LEDGER_NAME, url, op, "approvals object").await
    }
}

impl ApprovalStore for DoApprovals {
    fn apply(&self, op: Op) -> Stored<'_, Reply> {
        Box::pin(async move { self.send(&op).await })
    }
}

/// The ledger object.
#[durable_object(fetch)]
pub(crate) struct ApprovalsObject {
    state: State,
    /// The book, once loaded from storage; `None` again after a failed write, so the next op
    /// starts from what storage holds.
    book: RefCell<Option<Book>>,
    /// `MCP_APPROVAL_LEDGER_MAX_BYTES`, or why the settings cannot be used (every op fails then,
    /// as every call of the worker does).
    max_bytes: Result<usize, ConfigError>,
}

fn storage_error(what: impl std::fmt::Display) -> worker::Error {
    worker::Error::RustError(what.to_string())
}

impl ApprovalsObject {
    /// The entries in storage, after clearing storage of another layout.
    async fn load(&self, max_bytes: usize) -> worker::Result<Book> {
        let storage = self.state.storage();
        if storage.get::<String>(LAYOUT_KEY).await?.as_deref() != Some(LAYOUT) {
            storage.delete_all().await?;
            storage.put(LAYOUT_KEY, LAYOUT).await?;
        }
        let stored = storage
            .list_with_options(worker::ListOptions::new().prefix(ENTRY_PREFIX))
            .await?;
        let mut entries = Vec::new();
        let mut unreadable = Vec::new();
        for pair in stored.entries() {
            let pair = worker::js_sys::Array::from(&pair?);
            let key = pair.get(0).as_string().unwrap_or_default();
            match pair
                .get(1)
                .as_string()
                .and_then(|text| serde_json::from_str::<Entry>(&text).ok())
            {
                Some(entry) => entries.push(entry),
                None => unreadable.push(key),
            }
        }
        if !unreadable.is_empty() {
            // Never counted, so never listed or used: removed with their details, and said.
            worker::console_error!(
                "approval ledger: removed {} unreadable entries",
                unreadable.len()
            );
            let ids = unreadable
                .iter()
                .filter_map(|k| k.strip_prefix(ENTRY_PREFIX))
                .map(str::to_owned);
            self.delete(ids.collect()).await?;
        }
        Ok(Book::from_entries(max_bytes, entries))
    }

    /// Deletes the entries and details of `ids`.
    async fn delete(&self, ids: Vec<String>) -> worker::Result<()> {
        let keys: Vec<String> = ids
            .iter()
            .flat_map(|id| {
                [
                    format!("{ENTRY_PREFIX}{id}"),
                    format!("{DETAILS_PREFIX}{id}"),
                ]
            })
            .collect();
        for chunk in keys.chunks(KEYS_PER_CALL) {
            self.state.storage().delete_multiple(chunk.to_vec()).await?;
        }
        Ok(())
    }

    async fn persist(&self, changes: Vec<Change>) -> worker::Result<()> {
        let puts = Object::new();
        let mut deleted = Vec::new();
        for change in changes {
            match change {
                Change::Put(entry, details) => {
                    let text = serde_json::to_string(&entry).map_err(storage_error)?;
                    let key = JsValue::from_str(&format!("{ENTRY_PREFIX}{}", entry.id));
                    Reflect::set(&puts, &key, &JsValue::from_str(&text))?;
                    if let Some(details) = details {
                        let text = serde_json::to_string(&details).map_err(storage_error)?;
                        let key = JsValue::from_str(&format!("{DETAILS_PREFIX}{}", entry.id));
                        Reflect::set(&puts, &key, &JsValue::from_str(&text))?;
                    }
                }
                Change::Delete(id) => deleted.push(id),
            }
        }
        // An op writes at most one record (its entry and details, in one atomic call).
        if Object::keys(&puts).length() > 0 {
            self.state.storage().put_multiple_raw(puts).await?;
        }
        self.delete(deleted).await
    }

    /// The details of `ids`, in order (`None` for one storage does not hold).
    async fn details(&self, ids: Vec<String>) -> worker::Result<Vec<Option<Details>>> {
        let keys: Vec<String> = ids
            .iter()
            .map(|id| format!("{DETAILS_PREFIX}{id}"))
            .collect();
        let stored = self.state.storage().get_multiple(keys.clone()).await?;
        Ok(keys
            .iter()
            .map(|key| {
                stored
                    .get(&JsValue::from_str(key))
                    .as_string()
                    .and_then(|text| serde_json::from_str(&text).ok())
            })
            .collect())
    }

    async fn answer(&self, op: Op) -> worker::Result<Reply> {
        let max_bytes = self.max_bytes.clone().map_err(storage_error)?;
        if self.book.borrow().is_none() {
            let loaded = self.load(max_bytes).await?;
            self.book.borrow_mut().get_or_insert(loaded);
        }
        // Applied in memory with no await in between: no other op can interleave.
        let applied = self.book.borrow_mut().as_mut().map(|book| book.apply(op));
        let Some((step, changes)) = applied else {
            return Err(storage_error("the ledger is not loaded"));
        };
        if let Err(error) = self.persist(changes).await {
            self.book.replace(None);
            return Err(error);
        }
        match step {
            Step::Done(reply) => Ok(reply),
            Step::Page(page) => {
                let details = self.details(page.ids()).await?;
                page.reply(details).map_err(storage_error)
            }
        }
    }
}

impl DurableObject for ApprovalsObject {
    fn new(state: State, env: Env) -> Self {
        let max_bytes = Config::from_settings(&|name| setting(&env, name))
            .map(|config| config.policy.ledger_max_bytes);
        ApprovalsObject {
            state,
            book: RefCell::new(None),
            max_bytes,
        }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let text = req.text().await?;
        let op: Op = match serde_json::from_str(&text) {
            Ok(op) => op,
            Err(e) => return Response::error(format!("not a ledger op: {e}"), 400),
        };
        match self.answer(op).await {
            Ok(reply) => match serde_json::to_string(&reply) {
                Ok(text) => Response::ok(text),
                Err(e) => Response::error(e.to_string(), 500),
            },
            Err(e) => Response::error(format!("ledger: {e}"), 500),
        }
    }
}
