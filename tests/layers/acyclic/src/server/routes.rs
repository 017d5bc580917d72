//! A submodule: `super::` stays inside `server`, `super::super::` reaches the root.
use super::super::service::Service;
use crate::{service::Answer, store};

/// Answers with the service.
pub fn handle(s: &Service) -> Answer {
    let _ = store::Store::default();
    super::super::service::answer(s)
}
