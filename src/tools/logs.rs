//! The job-log tools, `github_get_job_logs` and `circleci_get_job_logs`: the arguments they
//! share (`tailLines`, `grep`, `context`, `steps`), one log read into its excerpt and its
//! artifact, and the result every job gets.

pub(crate) mod cache;
pub(crate) mod circleci;
pub(crate) mod download;
pub(crate) mod github;

use crate::artifacts::stream::ArtifactWriter;
use crate::artifacts::{ArtifactId, Artifacts};
use crate::logs::excerpt::{Excerpt, Options, MAX_CONTEXT, MAX_TAIL_LINES};
use crate::logs::pattern::CODE_OVER_BUDGET;
use crate::logs::Grep;
use crate::mcp::CallToolResult;
use crate::mcp::{ToolAnnotations, ToolDescriptor};
use crate::ports::MIN_PART_BYTES;
use crate::structured::Contract;
use crate::structured::Envelope;
use crate::tools::args::{arguments, input_schema, Arguments, CommonArgs, WithCommon};
use crate::tools::args::{Fallback, Field, JQ, OUTPUT_FORMAT};
use crate::tools::logs::download::LogError;
use crate::tools::output::Rendered;
use crate::tools::registry::{Access, ToolContext, ToolError, ToolSpec};
use crate::upstream::body::reserve_buffer;
use crate::value::{Map, Number, Value};

/// Lines kept from the end of each failed step when `tailLines` is not given.
pub(crate) const DEFAULT_TAIL_LINES: u64 = 30;
/// Lines around each grep match when `context` is not given.
pub(crate) const DEFAULT_CONTEXT: u64 = 2;
/// Most jobs one call reads the logs of.
pub(crate) const MAX_JOBS: usize = 10;
/// Content type of a log artifact.
pub(crate) const LOG_CONTENT_TYPE: &str = "text/plain; charset=utf-8";

arguments! {
    /// The excerpt arguments both tools take after their own, then the shared `jq` and
    /// `outputFormat`.
    pub(crate) struct LogArgs: open {
        tail_lines: u64 = Field::integer("tailLines")
            .min(0)
            .max(MAX_TAIL_LINES as u64)
            .default(Fallback::Integer(DEFAULT_TAIL_LINES))
            .describe(
                "Lines kept from the end of each chosen step (blank ones left out, 3+ alike ones \
                 as one `[N lines FIRST-LAST] ...` entry).",
            ),
        grep: Option<String> = Field::string("grep")
            .min(1)
            .max(crate::logs::pattern::MAX_PATTERN_BYTES as u64)
            .describe(
                "Regular expression (Rust syntax; `(?i)` ignores ASCII case) matched against \
                 every line, e.g. `error|FAIL|panicked`; matches come with `context` lines and \
                 line numbers.",
            ),
        context: u64 = Field::integer("context")
            .min(0)
            .max(MAX_CONTEXT as u64)
            .default(Fallback::Integer(DEFAULT_CONTEXT))
            .describe("Lines shown around each grep match."),
        steps: String = Field::one_of("steps", &["failed", "all"])
            .default(Fallback::Text("failed"))
            .describe(
                "Tail of the failed steps (of the last step run when none failed), or of `all` \
                 steps.",
            ),
        shared JQ,
        shared OUTPUT_FORMAT,
    }
}

impl LogArgs {
    /// The excerpt options; a bad pattern is an invalid-arguments error saying why.
    pub(crate) fn options(&self) -> Result<Options, ToolError> {
        let grep = match &self.grep {
            None => None,
            Some(pattern) => {
                Some(Grep::new(pattern).map_err(|e| ToolError::InvalidArguments(e.to_string()))?)
            }
        };
        Ok(Options {
            tail_lines: self.tail_lines as usize,
            all_steps: self.steps == "all",
            grep,
            context: self.context as usize,
        })
    }
}

/// The spec of either tool whose arguments are `A` (ending with [`LogArgs`]): the job-log output
/// schema, read-only annotations, the policy's rules.
pub(crate) fn spec<A: Arguments>(name: &str, title: &str, description: &str) -> ToolSpec {
    ToolSpec {
        descriptor: ToolDescriptor {
            name: name.into(),
            title: Some(title.into()),
            description: description.into(),
            input_schema: input_schema::<WithCommon<A>>(),
            output_schema: Some(Contract::JobLogs.output_schema()),
            annotations: Some(ToolAnnotations::reads_upstream(title)),
        },
        access: Access::Rules,
    }
}

/// The string at `key` of an upstream object.
pub(crate) fn text<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// Memory a log streamed through [`log_writer`] holds at most: the artifact part being filled,
/// the copy of the last one handed to the store, and the excerpt's lines with the chunk in hand.
pub(crate) const LOG_BUFFER_BYTES: usize = 2 * MIN_PART_BYTES + 2 * 1024 * 1024;

/// A writer for the complete log of one job, once the call's memory reservations cover
/// [`LOG_BUFFER_BYTES`]; a busy error when the isolate has no room for them.
pub(crate) async fn log_writer<'a>(
    call: &ToolContext<'a>,
) -> Result<ArtifactWriter<'a>, ToolError> {
    if let Err(busy) = reserve_buffer(call.ports.memory, call.ports.clock, LOG_BUFFER_BYTES).await {
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
pub(crate) struct JobReport {
    /// The job's fields as the vendor names them (`id`, `name`, `status`, `conclusion`, `url`),
    /// plus `annotations` or `failedTests` when the vendor has them.
    pub(crate) fields: Map,
    /// The excerpt, or why the log could not be read.
    pub log: Result<Excerpt, LogError>,
    /// The complete log's artifact, when it was saved.
    pub(crate) artifact: Option<ArtifactId>,
}

impl JobReport {
    /// `{...fields, log | logError, logArtifactId}`.
    pub(crate) fn into_value(self) -> Value {
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
pub(crate) fn int(n: u64) -> Value {
    Value::Number(Number::from_i64(i64::try_from(n).unwrap_or(i64::MAX)))
}

/// The result: `{jobs, moreJobs}` projected, rendered and finished like every tool's; an error
/// coded [`CODE_OVER_BUDGET`] when the grep pattern spent its budget on any job (the other
/// jobs' matches would be partial).
pub(crate) async fn respond(
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
        Value::Array(jobs.into_iter().map(JobReport::into_value).collect()),
    );
    map.insert("moreJobs".into(), int(more_jobs as u64));
    let value = crate::tools::output::project(Value::Object(map), common.jq.as_deref(), call);
    Ok(Rendered::new(value, common.output_format, call.settings)
        .with_envelope(Envelope::DataOnly)
        .finish(call)
        .await)
}
