//! The job-log tools, `github_get_job_logs` and `circleci_get_job_logs`: the arguments they
//! share (`tailLines`, `grep`, `context`, `steps`), one log read into its excerpt and its
//! artifact, and the result every job gets.

pub mod cache;
pub mod circleci;
pub mod github;

use crate::artifacts::stream::ArtifactWriter;
use crate::artifacts::{ArtifactId, Artifacts};
use crate::logs::download::LogError;
use crate::logs::excerpt::{Excerpt, Options, MAX_CONTEXT, MAX_TAIL_LINES};
use crate::logs::pattern::CODE_OVER_BUDGET;
use crate::logs::Grep;
use crate::mcp::CallToolResult;
use crate::mcp::{ToolAnnotations, ToolDescriptor};
use crate::ports::MIN_PART_BYTES;
use crate::structured::Contract;
use crate::structured::Envelope;
use crate::tools::args::{self, CommonArgs, JQ, OUTPUT_FORMAT};
use crate::tools::output::Rendered;
use crate::tools::registry::{Access, ToolContext, ToolError, ToolSpec};
use crate::upstream::body::reserve_buffer;
use crate::value::{Map, Number, Value};
use serde::Deserialize;
use serde_json::{json, Map as JsonMap, Value as Json};

/// Lines kept from the end of each failed step when `tailLines` is not given.
pub const DEFAULT_TAIL_LINES: u64 = 30;
/// Lines around each grep match when `context` is not given.
pub const DEFAULT_CONTEXT: u64 = 2;
/// Most jobs one call reads the logs of.
pub const MAX_JOBS: usize = 10;
/// Content type of a log artifact.
pub const LOG_CONTENT_TYPE: &str = "text/plain; charset=utf-8";

/// The excerpt arguments both tools take (flattened into each tool's own arguments).
#[derive(Deserialize, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct LogArgs {
    #[serde(default, deserialize_with = "crate::tools::args::whole_opt")]
    tail_lines: Option<u64>,
    grep: Option<String>,
    #[serde(default, deserialize_with = "crate::tools::args::whole_opt")]
    context: Option<u64>,
    steps: Option<String>,
}

impl LogArgs {
    /// The excerpt options; a bad pattern or value is an invalid-arguments error saying why.
    pub fn options(&self) -> Result<Options, ToolError> {
        let invalid = ToolError::InvalidArguments;
        let tail_lines = self.tail_lines.unwrap_or(DEFAULT_TAIL_LINES);
        if tail_lines > MAX_TAIL_LINES as u64 {
            return Err(invalid(format!(
                "tailLines must be between 0 and {MAX_TAIL_LINES}, not {tail_lines}"
            )));
        }
        let context = self.context.unwrap_or(DEFAULT_CONTEXT);
        if context > MAX_CONTEXT as u64 {
            return Err(invalid(format!(
                "context must be between 0 and {MAX_CONTEXT}, not {context}"
            )));
        }
        let all_steps = match self.steps.as_deref() {
            None | Some("failed") => false,
            Some("all") => true,
            Some(other) => {
                return Err(invalid(format!(
                    "steps must be \"failed\" or \"all\", not {other:?}"
                )))
            }
        };
        let grep = match &self.grep {
            None => None,
            Some(pattern) => Some(Grep::new(pattern).map_err(invalid)?),
        };
        Ok(Options {
            tail_lines: tail_lines as usize,
            all_steps,
            grep,
            context: context as usize,
        })
    }
}

/// The schema properties of [`LogArgs`] and the common `jq`/`outputFormat`.
pub fn log_properties() -> JsonMap<String, Json> {
    let mut props = JsonMap::new();
    props.insert(
        "tailLines".into(),
        json!({"type": "integer", "minimum": 0, "maximum": MAX_TAIL_LINES, "default": DEFAULT_TAIL_LINES,
               "description": "Lines kept from the end of each chosen step."}),
    );
    props.insert(
        "grep".into(),
        json!({"type": "string", "minLength": 1, "maxLength": crate::logs::pattern::MAX_PATTERN_BYTES,
               "description": "Regular expression (Rust syntax; `(?i)` ignores ASCII case) matched against every line, e.g. `error|FAIL|panicked`; matches come with `context` lines and line numbers."}),
    );
    props.insert(
        "context".into(),
        json!({"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT, "default": DEFAULT_CONTEXT,
               "description": "Lines shown around each grep match."}),
    );
    props.insert(
        "steps".into(),
        json!({"type": "string", "enum": ["failed", "all"], "default": "failed",
               "description": "Tail of the failed steps (of the last step run when none failed), or of `all` steps."}),
    );
    args::add_fragments(&mut props, &[JQ, OUTPUT_FORMAT]);
    props
}

/// The spec of either tool: `props` (with [`log_properties`]) and no others, the job-log output
/// schema, read-only annotations, the policy's rules.
pub fn spec(name: &str, title: &str, description: &str, props: JsonMap<String, Json>) -> ToolSpec {
    ToolSpec {
        descriptor: ToolDescriptor {
            name: name.into(),
            title: Some(title.into()),
            description: description.into(),
            input_schema: json!({
                "type": "object",
                "properties": props,
                "additionalProperties": false
            }),
            output_schema: Some(Contract::JobLogs.output_schema()),
            annotations: Some(ToolAnnotations::reads_upstream(title)),
        },
        access: Access::Rules,
    }
}

/// The string at `key` of an upstream object.
pub fn text<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// Memory a log streamed through [`log_writer`] holds at most: the artifact part being filled,
/// the copy of the last one handed to the store, and the excerpt's lines with the chunk in hand.
pub const LOG_BUFFER_BYTES: usize = 2 * MIN_PART_BYTES + 2 * 1024 * 1024;

/// A writer for the complete log of one job, once the call's memory reservations cover
/// [`LOG_BUFFER_BYTES`]; a busy error when the isolate has no room for them.
pub async fn log_writer<'a>(call: &ToolContext<'a>) -> Result<ArtifactWriter<'a>, ToolError> {
    if let Err(busy) = reserve_buffer(call.ports, LOG_BUFFER_BYTES).await {
        return Err(ToolError::Failed(format!(
            "Error: the server is busy with other large results and has no memory free to read \
             a job log ({} bytes of buffers) right now. Retry in a few seconds.",
            busy.body_bytes
        )));
    }
    Ok(ArtifactWriter::new(
        Artifacts::new(call.ports, call.settings.artifact_retention_seconds),
        call.principal,
        LOG_CONTENT_TYPE,
    ))
}

/// What one job contributes to a result.
#[derive(Debug)]
pub struct JobReport {
    /// The job's fields as the vendor names them (`id`, `name`, `status`, `conclusion`, `url`),
    /// plus `annotations` or `failedTests` when the vendor has them.
    pub fields: Map,
    /// The excerpt, or why the log could not be read.
    pub log: Result<Excerpt, LogError>,
    /// The complete log's artifact, when it was saved.
    pub artifact: Option<ArtifactId>,
}

impl JobReport {
    /// `{...fields, log | logError, logArtifactId}`.
    pub fn to_value(self) -> Value {
        let mut map = self.fields;
        match self.log {
            Ok(excerpt) => {
                map.insert("log".into(), excerpt.to_value());
            }
            Err(error) => {
                map.insert("logError".into(), Value::String(error.text()));
            }
        }
        map.insert(
            "logArtifactId".into(),
            self.artifact
                .map_or(Value::Null, |id| Value::String(id.to_string())),
        );
        Value::Object(map)
    }
}

/// A whole number for a result.
pub fn int(n: u64) -> Value {
    Value::Number(Number::from_i64(i64::try_from(n).unwrap_or(i64::MAX)))
}

/// The result: `{jobs, moreJobs}` projected, rendered and finished like every tool's; an error
/// coded [`CODE_OVER_BUDGET`] when the grep pattern spent its budget on any job (the other
/// jobs' matches would be partial).
pub async fn respond(
    call: &ToolContext<'_>,
    common: &CommonArgs,
    jobs: Vec<JobReport>,
    more_jobs: usize,
) -> Result<CallToolResult, ToolError> {
    let over = jobs.iter().find_map(|job| match &job.log {
        Err(LogError::Grep(over)) => Some(over),
        _ => None,
    });
    if let Some(over) = over {
        return Err(ToolError::Coded(CODE_OVER_BUDGET, format!("Error: {over}")));
    }
    let mut map = Map::new();
    map.insert(
        "jobs".into(),
        Value::Array(jobs.into_iter().map(JobReport::to_value).collect()),
    );
    map.insert("moreJobs".into(), int(more_jobs as u64));
    let value = crate::tools::output::project(Value::Object(map), common.jq.as_deref(), call);
    Ok(Rendered::new(value, common.output_format, call.settings)
        .with_envelope(Envelope::DataOnly)
        .finish(call)
        .await)
}
