//! The approval ledger on a Durable Object. One object (named [`LEDGER_NAME`] in the `APPROVALS`
//! namespace) holds every approval; the runtime runs one instance of it worldwide and delivers
//! its requests one at a time, so each ledger op, applied in memory without an await, is atomic
//! for every isolate in every location. The object keeps its book in memory, loaded from its
//! storage on first use, and writes each change back before it answers (the output gate holds
//! the answer until the writes are durable).

use crate::ledger::{Book, Change, Op, Record, Reply};
use crate::ports::{ApprovalStore, StoreError};
use futures::future::LocalBoxFuture;
use std::cell::RefCell;
use wasm_bindgen::JsValue;
use worker::{
    durable_object, DurableObject, Env, Method, ObjectNamespace, Request, RequestInit, Response,
    State,
};

/// Binding name of the Durable Object namespace holding approvals.
pub const APPROVALS_BINDING: &str = "APPROVALS";
/// The name of the one object of the namespace: one ledger, so one order of every op.
const LEDGER_NAME: &str = "ledger";
/// Storage keys of records: this prefix and the approval id.
const RECORD_PREFIX: &str = "record/";

/// The [`ApprovalStore`] port: each op is one request to the ledger object.
pub struct DoApprovals {
    namespace: Result<ObjectNamespace, StoreError>,
}

impl DoApprovals {
    /// The ledger of `env`; without the binding every op fails (and the gate fails closed).
    pub fn new(env: &Env) -> DoApprovals {
        DoApprovals {
            namespace: env
                .durable_object(APPROVALS_BINDING)
                .map_err(|_| StoreError::missing_binding(APPROVALS_BINDING)),
        }
    }

    async fn send(&self, op: &Op) -> Result<Reply, StoreError> {
        let namespace = self.namespace.as_ref().map_err(Clone::clone)?;
        let stub = namespace.get_by_name(LEDGER_NAME).map_err(object_error)?;
        let body = serde_json::to_string(op).map_err(|e| StoreError(e.to_string()))?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_body(Some(JsValue::from_str(&body)));
        let request =
            Request::new_with_init("https://approvals.internal/op", &init).map_err(object_error)?;
        let mut response = stub
            .fetch_with_request(request)
            .await
            .map_err(object_error)?;
        let text = response.text().await.map_err(object_error)?;
        if response.status_code() != 200 {
            return Err(StoreError(format!(
                "approvals object answered {}: {text}",
                response.status_code()
            )));
        }
        serde_json::from_str(&text).map_err(|e| StoreError(format!("approvals object: {e}")))
    }
}

fn object_error(error: worker::Error) -> StoreError {
    StoreError(format!("approvals object: {error}"))
}

impl ApprovalStore for DoApprovals {
    fn apply(&self, op: Op) -> LocalBoxFuture<'_, Result<Reply, StoreError>> {
        Box::pin(async move { self.send(&op).await })
    }
}

/// The ledger object.
#[durable_object(fetch)]
pub struct ApprovalsObject {
    state: State,
    /// The book, once loaded from storage; `None` again after a failed write, so the next op
    /// starts from what storage holds.
    book: RefCell<Option<Book>>,
}

impl ApprovalsObject {
    async fn load(&self) -> worker::Result<Book> {
        let stored = self
            .state
            .storage()
            .list_with_options(worker::ListOptions::new().prefix(RECORD_PREFIX))
            .await?;
        let records = stored.values().into_iter().filter_map(|value| {
            value
                .ok()
                .and_then(|v| v.as_string())
                .and_then(|text| serde_json::from_str::<Record>(&text).ok())
        });
        Ok(Book::from_records(records.collect::<Vec<_>>()))
    }

    async fn persist(&self, changes: Vec<Change>) -> worker::Result<()> {
        let storage = self.state.storage();
        let mut deleted = Vec::new();
        for change in changes {
            match change {
                Change::Put(record) => {
                    let text = serde_json::to_string(&record)
                        .map_err(|e| worker::Error::RustError(e.to_string()))?;
                    storage
                        .put_raw(
                            &format!("{RECORD_PREFIX}{}", record.id),
                            JsValue::from_str(&text),
                        )
                        .await?;
                }
                Change::Delete(id) => deleted.push(format!("{RECORD_PREFIX}{id}")),
            }
        }
        if !deleted.is_empty() {
            storage.delete_multiple(deleted).await?;
        }
        Ok(())
    }

    async fn answer(&self, op: Op) -> worker::Result<Reply> {
        if self.book.borrow().is_none() {
            let loaded = self.load().await?;
            self.book.borrow_mut().get_or_insert(loaded);
        }
        // Applied in memory with no await in between: no other op can interleave.
        let applied = self.book.borrow_mut().as_mut().map(|book| book.apply(op));
        let Some((reply, changes)) = applied else {
            return Err(worker::Error::RustError("the ledger is not loaded".into()));
        };
        if let Err(error) = self.persist(changes).await {
            self.book.replace(None);
            return Err(error);
        }
        Ok(reply)
    }
}

impl DurableObject for ApprovalsObject {
    fn new(state: State, _env: Env) -> Self {
        ApprovalsObject {
            state,
            book: RefCell::new(None),
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
