//! The tools.
use super::registry::Tool;

/// A named tool.
pub struct Named;
impl Tool for Named {}

/// Every tool.
pub fn list() -> Vec<Named> {
    vec![Named]
}
