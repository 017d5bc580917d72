//! Projection of upstream values by the `jq` argument: JMESPath with the reference servers'
//! semantics, jq (through jaq) for what JMESPath cannot say, and the reference's
//! `_jqError`/`_originalData` value when an expression fails.
//!
//! The selection rule (docs/projection.md): an expression that compiles as JMESPath is
//! JMESPath; any other expression is run as a jq program.

mod fuel;
pub mod jmespath;
pub mod jq;
mod meter;
#[cfg(test)]
mod tests_rule;
#[cfg(test)]
mod tests_stack;

use std::fmt;

use crate::memory::CallMemory;
use crate::value::{Map, Value};

pub(crate) use fuel::{Fuel, FuelShares};
use jmespath::Expression;
use jq::{JqError, JqProgram};
pub use meter::{last_input_memory, last_peak_memory, last_spent, Limits, MAX_MEMORY_BYTES};

/// The text tools put in the `jq` argument's description, so every tool states the same rule.
pub(crate) const TOOL_DESCRIPTION: &str = "JMESPath or jq expression applied to the JSON response \
before it is rendered: JMESPath when valid, e.g. `items[*].{id: id, name: name}`, else jq, e.g. \
`.items | map({id, name})` (a leading `.` forces jq). Several jq outputs become an array. A \
failing expression does not fail the call: the result is {\"_jqError\": \"<reason>\", \
\"_originalData\": <the response>}.";

/// Which language a projection was read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// A valid JMESPath expression.
    JmesPath,
    /// Not JMESPath, but a jq program that compiles.
    Jq,
}

/// Why a projection produced no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProjectionError {
    /// Neither a JMESPath expression nor a jq program.
    Invalid,
    /// A JMESPath expression that failed while evaluating (the reference throws too).
    JmesPath(jmespath::RuntimeError),
    /// A jq program that failed, was refused, or ran out of budget.
    Jq(JqError),
}

/// Broad classes of [`ProjectionError`], for callers that branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The expression is not valid in either language.
    Invalid,
    /// The expression raised an error while running.
    Runtime,
    /// A jq program hit its work or output budget.
    Budget,
    /// A jq program was refused before running (recursive definitions, too large).
    Refused,
}

impl ProjectionError {
    /// The class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ProjectionError::Invalid => ErrorKind::Invalid,
            ProjectionError::JmesPath(e) if e.is_budget() => ErrorKind::Budget,
            ProjectionError::JmesPath(_) => ErrorKind::Runtime,
            ProjectionError::Jq(JqError::Syntax(_)) => ErrorKind::Invalid,
            ProjectionError::Jq(JqError::Runtime(_)) => ErrorKind::Runtime,
            ProjectionError::Jq(JqError::Budget(_)) => ErrorKind::Budget,
            ProjectionError::Jq(
                JqError::Recursive(_) | JqError::TooLarge | JqError::Refused(_),
            ) => ErrorKind::Refused,
        }
    }
}

impl fmt::Display for ProjectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProjectionError::Invalid => f.write_str("not a JMESPath expression nor a jq program"),
            ProjectionError::JmesPath(e) => write!(f, "JMESPath error: {e}"),
            ProjectionError::Jq(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ProjectionError {}

/// A compiled `jq` argument: compile once per call, apply to the response.
#[derive(Debug)]
pub struct Projection {
    source: String,
    compiled: Compiled,
}

#[derive(Debug)]
enum Compiled {
    /// Empty or blank: the reference returns the data unchanged.
    Identity,
    JmesPath(Expression),
    Jq(JqProgram),
    Failed(ProjectionError),
}

impl Projection {
    /// Compiles `source` by the selection rule. Never fails: a bad expression is remembered and
    /// reported when applied, as the reference reports it in the result.
    pub fn compile(source: &str) -> Projection {
        // Past this size neither language is tried and the text is not kept: JMESPath has no
        // bound of its own, and the error would quote the whole text back to the caller.
        if source.len() > jq::MAX_PROGRAM_BYTES {
            return Projection {
                source: String::new(),
                compiled: Compiled::Failed(ProjectionError::Jq(JqError::TooLarge)),
            };
        }
        let compiled = if crate::js::is_blank(source) {
            Compiled::Identity
        } else if let Ok(expr) = Expression::compile(source) {
            Compiled::JmesPath(expr)
        } else {
            match JqProgram::compile(source) {
                Ok(program) => Compiled::Jq(program),
                Err(JqError::Syntax(_)) => Compiled::Failed(ProjectionError::Invalid),
                Err(e) => Compiled::Failed(ProjectionError::Jq(e)),
            }
        };
        Projection {
            source: source.to_owned(),
            compiled,
        }
    }

    /// The language the expression was read as (a jq program refused before running still
    /// counts as jq); `None` when blank or valid in neither language.
    pub fn language(&self) -> Option<Language> {
        match self.compiled {
            Compiled::JmesPath(_) => Some(Language::JmesPath),
            Compiled::Jq(_) | Compiled::Failed(ProjectionError::Jq(_)) => Some(Language::Jq),
            Compiled::Identity | Compiled::Failed(_) => None,
        }
    }

    /// The projected value, or why there is none. A blank expression returns a copy of `data`
    /// (use [`Projection::apply_or_error_value`] to avoid the copy).
    pub fn apply(&self, data: &Value) -> Result<Value, ProjectionError> {
        self.apply_with(data, &Limits::default())
    }

    /// [`Projection::apply`] with explicit jq limits.
    pub fn apply_with(&self, data: &Value, limits: &Limits) -> Result<Value, ProjectionError> {
        match &self.compiled {
            Compiled::Identity => Ok(data.clone()),
            Compiled::JmesPath(expr) => expr
                .search_with(data, limits)
                .map_err(ProjectionError::JmesPath),
            Compiled::Jq(program) => program.run(data, limits).map_err(ProjectionError::Jq),
            Compiled::Failed(e) => Err(e.clone()),
        }
    }

    /// What the reference's `applyJqFilter` returns: the projected value, `data` itself for a
    /// blank expression, or `{"_jqError": <message>, "_originalData": data}` on failure.
    pub fn apply_or_error_value(&self, data: Value) -> Value {
        self.apply_or_error_value_with(data, &Limits::default())
    }

    /// [`Projection::apply_or_error_value`] with explicit limits.
    pub fn apply_or_error_value_with(&self, data: Value, limits: &Limits) -> Value {
        if matches!(self.compiled, Compiled::Identity) {
            return data;
        }
        match self.apply_with(&data, limits) {
            Ok(v) => v,
            Err(e) => error_value(self.error_message(&e), data),
        }
    }

    /// [`Projection::apply_or_error_value`] for a call: the run gets what is left of `fuel` (at
    /// most a run's default) and spends it there, and its memory comes out of the call's share
    /// of the isolate's budget (`memory`), as much as is free up to [`MAX_MEMORY_BYTES`]; what
    /// the result does not keep is given back after the run.
    pub(crate) fn apply_or_error_value_within(
        &self,
        data: Value,
        fuel: &Fuel,
        memory: Option<&CallMemory>,
    ) -> Value {
        if !matches!(self.compiled, Compiled::JmesPath(_) | Compiled::Jq(_)) {
            return self.apply_or_error_value(data);
        }
        let taken = memory.map(|m| m.take_up_to(MAX_MEMORY_BYTES));
        let limits = Limits {
            max_memory_bytes: taken.unwrap_or(MAX_MEMORY_BYTES),
            ..Limits::default()
        };
        let out = self.apply_or_error_value_with(data, &fuel.limits(limits));
        fuel.spend(last_spent());
        if let (Some(memory), Some(taken)) = (memory, taken) {
            memory.give_back(taken.saturating_sub(meter::last_kept_memory()));
        }
        out
    }

    /// The `_jqError` text for `error`. Whatever the reference would also reject keeps its
    /// exact wording, `Invalid JMESPath expression: <expr>`; jq failures and budget stops,
    /// which the reference has no counterpart for, say what went wrong.
    pub(crate) fn error_message(&self, error: &ProjectionError) -> String {
        match error {
            ProjectionError::JmesPath(e) if e.is_budget() => {
                format!(
                    "JMESPath expression stopped: {e} (JMESPath expression: {})",
                    self.source
                )
            }
            ProjectionError::Invalid | ProjectionError::JmesPath(_) => {
                format!("Invalid JMESPath expression: {}", self.source)
            }
            ProjectionError::Jq(e) if self.source.is_empty() => e.to_string(),
            ProjectionError::Jq(e) => format!("{e} (jq program: {})", self.source),
        }
    }
}

/// The reference's failure value.
fn error_value(message: String, data: Value) -> Value {
    let mut map = Map::new();
    map.insert("_jqError".into(), Value::String(message));
    map.insert("_originalData".into(), data);
    Value::Object(map)
}

/// Compiles and applies `expression` to `data` in one step (see [`Projection`]); `None` or a
/// blank expression returns `data` unchanged.
#[cfg(test)]
pub(crate) fn project(data: Value, expression: Option<&str>) -> Value {
    project_within(data, expression, &Fuel::request(), None)
}

/// [`project`] for a call, drawing on the request's `fuel` and the call's `memory` (see
/// [`Projection::apply_or_error_value_within`]).
pub(crate) fn project_within(
    data: Value,
    expression: Option<&str>,
    fuel: &Fuel,
    memory: Option<&CallMemory>,
) -> Value {
    match expression {
        None => data,
        Some(src) => Projection::compile(src).apply_or_error_value_within(data, fuel, memory),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryBudget;

    const MIB: usize = 1 << 20;

    #[test]
    fn a_projection_runs_within_the_memory_its_call_could_take() {
        let program = Projection::compile("[range(300000)] | length");
        // With room in the isolate's budget the program runs, and gives back what it used.
        let budget = MemoryBudget::new(72 * MIB);
        let call = budget.call();
        let out = program.apply_or_error_value_within(Value::Null, &Fuel::request(), Some(&call));
        assert_eq!(out.to_compact_json(), "300000");
        assert!(call.held() < MIB, "{} bytes kept", call.held());
        assert_eq!(budget.in_use(), call.held());
        // With other calls holding nearly all of it, the same program stops at what was left.
        let budget = MemoryBudget::new(6 * MIB);
        let other = budget.call();
        assert_eq!(other.take_up_to(4 * MIB), 4 * MIB);
        let call = budget.call();
        let out = program.apply_or_error_value_within(Value::Null, &Fuel::request(), Some(&call));
        let Value::Object(map) = &out else {
            panic!("{out:?}")
        };
        let Some(Value::String(error)) = map.get("_jqError") else {
            panic!("{out:?}")
        };
        assert!(error.contains("bytes of memory held"), "{error}");
        assert!(meter::last_peak_memory() < 4 * MIB);
    }
}
