//! JMESPath with the exact semantics of npm `jmespath` 0.16.0, the library the reference servers
//! use: the same accepted syntax, the same results over JavaScript values (key order, doubles,
//! UTF-16 strings, coercing comparisons) and the same runtime errors.

mod functions;
mod interpreter;
mod lexer;
mod parser;
mod val;

use std::fmt;

use crate::value::Value;

use parser::Node;
pub use parser::MAX_NESTING;
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

/// Why evaluation failed (the reference's interpreter threw).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeError(String);

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
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

    /// Evaluates against `data`, copying only the parts of `data` that end up in the result.
    ///
    /// JavaScript values JSON cannot hold come back as `null`, as the TOON encoder shows them:
    /// `undefined` (e.g. `max_by` of an empty array), NaN (`avg` of `[]`) and infinities.
    pub fn search(&self, data: &Value) -> Result<Value, RuntimeError> {
        let result =
            interpreter::visit(&self.ast, &Val::Ref(data)).map_err(|e| RuntimeError(e.0))?;
        result
            .into_value()
            .map_err(|_| RuntimeError("an expression reference cannot be a result".into()))
    }

    /// Evaluates against `data` and returns `JSON.stringify(result)` as the reference computes
    /// it (numbers in JavaScript form; `None` for `undefined`); used by the differential tests.
    pub fn search_to_js_json(&self, data: &Value) -> Result<Option<String>, RuntimeError> {
        let result =
            interpreter::visit(&self.ast, &Val::Ref(data)).map_err(|e| RuntimeError(e.0))?;
        if matches!(result, Val::Expref(_)) {
            return Err(RuntimeError(
                "an expression reference cannot be a result".into(),
            ));
        }
        Ok(result.to_json())
    }
}
