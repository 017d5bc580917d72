//! A query language: the parent names its children, and they name its `Limits`.
mod eval;
mod funcs;
mod lexer;

pub use lexer::Tok;

/// How far an evaluation may go.
pub struct Limits;

/// Evaluates a query.
pub fn run(text: &str) -> usize {
    eval::visit(&lexer::tokens(text, &Limits))
}
