//! Requests to Durable Objects: one JSON message posted to a named object, one JSON answer.

use crate::ports::StoreError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::JsValue;
use worker::{Method, ObjectNamespace, Request, RequestInit};

/// A namespace binding looked up once; without it every request fails with the binding's name.
pub(crate) type Namespace = Result<ObjectNamespace, StoreError>;

/// Posts `message` to the object `name` of `namespace` at `url` and reads its JSON answer; any
/// failure, and any status but 200, is a [`StoreError`] that starts with `label`.
pub(crate) async fn post_json<T: DeserializeOwned>(
    namespace: &Namespace,
    name: &str,
    url: &str,
    message: &impl Serialize,
    label: &str,
) -> Result<T, StoreError> {
    let failed = |error: worker::Error| StoreError(format!("{label}: {error}"));
    let namespace = namespace.as_ref().map_err(Clone::clone)?;
    let stub = namespace.get_by_name(name).map_err(failed)?;
    let body = serde_json::to_string(message).map_err(|e| StoreError(e.to_string()))?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(JsValue::from_str(&body)));
    let request = Request::new_with_init(url, &init).map_err(failed)?;
    let mut response = stub.fetch_with_request(request).await.map_err(failed)?;
    let text = response.text().await.map_err(failed)?;
    if response.status_code() != 200 {
        return Err(StoreError(format!(
            "{label} answered {}: {text}",
            response.status_code()
        )));
    }
    serde_json::from_str(&text).map_err(|e| StoreError(format!("{label}: {e}")))
}
