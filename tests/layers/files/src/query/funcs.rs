//! Functions name the evaluator back through a nested group: the edge that closes the circle.
use super::{eval::{self, Eval}, Limits};

/// Calls a function.
pub fn call(_: &Eval) -> usize {
    let _: Option<eval::Eval> = None;
    let _ = Limits;
    1
}
