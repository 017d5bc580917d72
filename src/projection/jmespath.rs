//! JMESPath with the exact semantics of npm `jmespath` 0.16.0, the library the reference servers
//! use: the same accepted syntax, the same results over JavaScript values (key order, doubles,
//! UTF-16 strings, coercing comparisons) and the same runtime errors.

mod functions;
mod interpreter;
mod lexer;
mod parser;
mod val;

use std::fmt;

use crate::projection::meter::{self, Limits};
use crate::value::Value;

use parser::Node;
use val::Val;

/// A compiled JMESPath expression.
#[derive(Debug)]
pub struct Expression {
    ast: Node,
}

/// Why an expression does not compile (the reference's lexer or parser threw).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError(&'static str);

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// Why evaluation failed: the reference's interpreter threw, or the budget ran out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeError {
    message: String,
    budget: bool,
}

impl RuntimeError {
    fn thrown(message: String) -> RuntimeError {
        RuntimeError {
            message,
            budget: false,
        }
    }

    /// True when the expression was stopped by its budget (`projection::Limits`), which the
    /// reference does not have.
    pub(crate) fn is_budget(&self) -> bool {
        self.budget
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl Expression {
    /// Compiles `src`, accepting exactly what the reference's `jmespath.compile` accepts (up to
    /// [`MAX_NESTING`] levels of nesting).
    pub fn compile(src: &str) -> Result<Expression, CompileError> {
        parser::parse(src)
            .map(|ast| Expression { ast })
            .map_err(|e| CompileError(e.0))
    }

    /// Evaluates against `data` under the default [`Limits`], copying only the parts of
    /// `data` that end up in the result.
    ///
    /// JavaScript values JSON cannot hold come back as `null`, as the TOON encoder shows them:
    /// `undefined` (e.g. `max_by` of an empty array), NaN (`avg` of `[]`) and infinities.
    #[cfg(test)]
    pub(crate) fn search(&self, data: &Value) -> Result<Value, RuntimeError> {
        self.search_with(data, &Limits::default())
    }

    /// [`Expression::search`] under `limits`: the fuel, the size of every value built and the
    /// size of the result.
    pub(crate) fn search_with(&self, data: &Value, limits: &Limits) -> Result<Value, RuntimeError> {
        let _run = meter::start(limits);
        let result = evaluate(&self.ast, data)?;
        let size = result.size();
        if size > limits.max_output_bytes as u64 {
            return Err(budget(format!(
                "result larger than {} bytes",
                limits.max_output_bytes
            )));
        }
        // Copying out walks the result once per occurrence of each shared part.
        if !meter::charge_items(size) {
            return Err(budget(meter::reason()));
        }
        result
            .into_value()
            .map_err(|_| RuntimeError::thrown("an expression reference cannot be a result".into()))
    }

    /// Evaluates against `data` and returns `JSON.stringify(result)` as the reference computes
    /// it (numbers in JavaScript form; `None` for `undefined`); used by the differential tests.
    pub fn search_to_js_json(&self, data: &Value) -> Result<Option<String>, RuntimeError> {
        let _run = meter::start(&Limits::default());
        let result = evaluate(&self.ast, data)?;
        if matches!(result, Val::Expref(_)) {
            return Err(RuntimeError::thrown(
                "an expression reference cannot be a result".into(),
            ));
        }
        result.charge_walk().map_err(|_| budget(meter::reason()))?;
        Ok(result.to_json())
    }
}

/// Runs the interpreter inside the meter started by the caller.
fn evaluate<'a>(ast: &'a Node, data: &'a Value) -> Result<Val<'a>, RuntimeError> {
    interpreter::visit(ast, &Val::Ref(data)).map_err(|e| {
        if meter::exhausted() {
            budget(meter::reason())
        } else {
            RuntimeError::thrown(e.0)
        }
    })
}

fn budget(message: String) -> RuntimeError {
    RuntimeError {
        message,
        budget: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_values_are_bounded_by_their_size() {
        let limits = Limits {
            max_value_bytes: 64 << 10,
            ..Limits::default()
        };
        let data = crate::value::parse("[1]").unwrap();
        let doublings = ["[@, @]"; 40].join(" | ");
        for src in [
            doublings.clone(),
            format!("{doublings} | to_string(@)"),
            format!("{doublings} | length(to_string(@))"),
        ] {
            let err = Expression::compile(&src)
                .unwrap()
                .search_with(&data, &limits)
                .unwrap_err();
            assert!(err.is_budget(), "{src}: {err}");
            assert!(
                meter::last_spent() < 10_000,
                "{src}: {}",
                meter::last_spent()
            );
        }
        // Under the bound the same doublings run: 12 of them are 24,573 bytes.
        let twelve = ["[@, @]"; 12].join(" | ");
        let result = Expression::compile(&format!("{twelve} | length(to_string(@))"))
            .unwrap()
            .search_with(&data, &limits)
            .unwrap();
        assert_eq!(result.to_compact_json(), "24573");
    }
}
