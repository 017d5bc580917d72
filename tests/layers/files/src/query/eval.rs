//! The evaluator calls functions by an inline path.
use crate::query::lexer::Tok;

/// What a function sees.
pub struct Eval;

/// Evaluates tokens.
pub fn visit(tokens: &[Tok]) -> usize {
    tokens.iter().map(|_| super::funcs::call(&Eval)).sum()
}
