//! The tool registry: the [`Tool`] trait, its [`ToolSpec`] (name, title, description, input
//! schema, annotations, access class), the settings and per-call context tools get, the outcome
//! types, and the name -> tool map the server dispatches `tools/call` through.

use super::args::Arguments;
use super::schema;
use super::toolsets::{NotOffered, Selection, Toolset};
use crate::auth::Principal;
use crate::mcp::{CallToolResult, ProtocolVersion, ToolDescriptor};
#[cfg(test)]
use crate::ports::Ports;
use crate::ports::{CallPorts, Progress};
use crate::projection::Fuel;
use crate::upstream::{Client, Targets, UpstreamError, UpstreamSettings};
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value as Json};
use std::fmt;
use std::sync::OnceLock;

/// How enterprise policy treats a tool's calls. The server's gate decides on this class, never
/// on the tool's name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Access {
    /// The policy's rules decide, on the tool's name and the upstream request it would make.
    #[default]
    Rules,
    /// Always allowed: the tool serves only the caller's own data and checks ownership itself.
    Own,
    /// Only approvers the policy names may call it.
    Approvers,
}

/// A tool's metadata: its `tools/list` entry, the wire type itself, and how enterprise policy
/// treats its calls.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// The `tools/list` entry: a name of 1 to 128 characters of `A-Z a-z 0-9 _ - .`, an object
    /// input schema the arguments are validated against before the handler runs, and an output
    /// schema when the tool returns `structuredContent`.
    pub descriptor: ToolDescriptor,
    /// How enterprise policy treats its calls.
    pub access: Access,
}

/// The settings tools read, handed out by the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSettings {
    /// Maximum text per tool result, in UTF-16 code units (`MCP_TEXT_MAX_CHARS`).
    pub text_max_chars: usize,
    /// TTL of cached upstream responses, in seconds (`HTTP_CACHE_TTL_SECONDS`).
    pub cache_ttl_seconds: u64,
    /// How long an artifact stays readable after it was saved, in seconds
    /// (`STREAMING_ARTIFACT_RETENTION_SECONDS`).
    pub artifact_retention_seconds: u64,
    /// Whether the schema tools advertise output schemas and return `structuredContent`
    /// (`MCP_STRUCTURED_OUTPUT`).
    pub(crate) structured_output: bool,
    /// Largest serialized `structuredContent` value, in bytes (`MCP_STRUCTURED_MAX_BYTES`).
    pub(crate) structured_max_bytes: usize,
    /// Whether an enterprise policy is configured (the approval tools have nothing to do
    /// without one).
    pub(crate) policy_configured: bool,
}

/// `MCP_TEXT_MAX_CHARS` when not set.
pub(crate) const DEFAULT_TEXT_MAX_CHARS: usize = 40_000;
/// `HTTP_CACHE_TTL_SECONDS` when not set: Workers KV's minimum TTL.
pub(crate) const DEFAULT_CACHE_TTL_SECONDS: u64 = 60;
/// `STREAMING_ARTIFACT_RETENTION_SECONDS` when not set: one hour.
pub(crate) const DEFAULT_ARTIFACT_RETENTION_SECONDS: u64 = 3_600;
/// `MCP_STRUCTURED_MAX_BYTES` when not set: 256 KiB.
pub(crate) const DEFAULT_STRUCTURED_MAX_BYTES: usize = 256 * 1024;

impl Default for ToolSettings {
    /// Every setting at its built-in default, structured output off, no policy.
    fn default() -> ToolSettings {
        ToolSettings {
            text_max_chars: DEFAULT_TEXT_MAX_CHARS,
            cache_ttl_seconds: DEFAULT_CACHE_TTL_SECONDS,
            artifact_retention_seconds: DEFAULT_ARTIFACT_RETENTION_SECONDS,
            structured_output: false,
            structured_max_bytes: DEFAULT_STRUCTURED_MAX_BYTES,
            policy_configured: false,
        }
    }
}

/// Everything a handler gets for one call besides its arguments.
#[derive(Clone, Copy)]
pub struct ToolContext<'a> {
    /// Who is calling; scope caches and artifacts by it.
    pub principal: &'a Principal,
    /// The protocol revision the request was made under.
    pub protocol_version: ProtocolVersion,
    /// What the call may use of the outside world besides the vendors: artifacts, the HTTP
    /// cache, approvals, clock, randomness, log, the call's memory and the background.
    pub(crate) ports: CallPorts<'a>,
    /// The tools' settings.
    pub settings: &'a ToolSettings,
    /// The only way to the vendors: the requests the call's plan declared, with the credential
    /// enterprise policy chose for this call.
    pub upstream: &'a Client<'a>,
    /// The projection fuel of the request, which the calls of a batch share.
    pub fuel: &'a Fuel,
    /// Where the call reports how far it has got, when its client asked to hear it.
    pub progress: Option<&'a dyn Progress>,
}

#[cfg(test)]
impl<'a> ToolContext<'a> {
    /// A context for unit tests: the latest revision, no `_meta`, a client that declared
    /// nothing, memory that never runs out (leaked: a test's context lives as long as the
    /// test).
    pub(crate) fn for_test(
        principal: &'a Principal,
        ports: Ports<'a>,
        settings: &'a ToolSettings,
        upstream: &'a UpstreamSettings,
        fuel: &'a Fuel,
    ) -> ToolContext<'a> {
        let targets = Box::leak(Box::new(Targets::none()));
        let memory = Box::leak(Box::new(
            crate::memory::MemoryBudget::new(usize::MAX).call(),
        ));
        let upstream = Box::leak(Box::new(Client::new(
            ports, memory, upstream, targets, None,
        )));
        ToolContext {
            principal,
            protocol_version: ProtocolVersion::LATEST_INITIALIZE,
            ports: ports.for_call(memory),
            settings,
            upstream,
            fuel,
            progress: None,
        }
    }
}

/// Why a tool call failed: the one way a tool fails. The server turns every variant into an
/// `isError` result, its text written there, except `InvalidArguments` under revisions before
/// 2025-11-25, which answer -32602.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolError {
    /// The arguments do not fit the tool; the text says how, for the model to correct.
    InvalidArguments(String),
    /// A vendor request failed; the model reads the vendor's error text.
    Upstream(UpstreamError),
    /// The tool ran and failed in a way the model should read (bad query, no policy...).
    Failed(String),
    /// A failure a client may act on by its stable code (`_meta.code`), with the text to read.
    Coded(&'static str, String),
    /// A fault on our side; the text goes to the log and the model sees a generic message.
    Internal(String),
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::InvalidArguments(m) => write!(f, "invalid arguments: {m}"),
            ToolError::Upstream(e) => f.write_str(&e.text()),
            ToolError::Failed(m) | ToolError::Coded(_, m) => f.write_str(m),
            ToolError::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for ToolError {}

impl From<UpstreamError> for ToolError {
    fn from(error: UpstreamError) -> ToolError {
        ToolError::Upstream(error)
    }
}

/// A tool as the registry holds it: metadata, and a way to turn a call's arguments into a
/// [`Prepared`] call. `Send + Sync` so a [`Registry`] can live in a `static`; the futures
/// themselves are local (Workers futures are `!Send`). Implemented for every [`TypedTool`] and,
/// through [`Upstream`], every [`UpstreamTool`].
pub trait Tool: Send + Sync {
    /// The tool's metadata.
    fn spec(&self) -> &ToolSpec;
    /// Reads `arguments` (already checked against the input schema) into the tool's typed
    /// arguments, and plans every upstream request the call may make, once each. `upstream` is
    /// the deployment's vendor settings (base URLs; the credential does not matter here).
    fn prepare<'a>(
        &'a self,
        arguments: &Json,
        upstream: &UpstreamSettings,
    ) -> Result<Prepared<'a>, ToolError>;
}

/// `arguments` read as the declared arguments `A`; a mismatch is an invalid-arguments error
/// naming the argument.
pub(crate) fn read_args<A: Arguments>(arguments: &Json) -> Result<A, ToolError> {
    let mut map = match arguments {
        Json::Object(map) => map.clone(),
        _ => Map::new(),
    };
    A::take(&mut map).map_err(|e| ToolError::InvalidArguments(e.to_string()))
}

/// One call with its typed arguments: what enterprise policy decides on, and what runs.
pub struct Prepared<'a> {
    /// Every upstream request the call may make (vendor, method, canonical path), for policy
    /// and for the client, which sends no other; none for a tool that makes none.
    pub(crate) targets: Targets,
    /// The call itself.
    pub(crate) runner: Runner<'a>,
}

/// A prepared call, ready to run: the one place a tool's future is boxed.
pub(crate) type Runner<'a> =
    Box<dyn FnOnce(ToolContext<'a>) -> LocalBoxFuture<'a, Result<CallToolResult, ToolError>> + 'a>;

/// A tool that makes no upstream request of its own, written against its typed arguments as
/// rmcp's `Parameters<T>` and axum's extractors do it: `Args` is read once from the validated
/// arguments.
// Called only through generics, and Workers futures are `!Send` anyway: no bound to name.
#[allow(async_fn_in_trait)]
pub trait TypedTool: Send + Sync {
    /// The typed arguments, declared with `arguments!`; the spec's `input_schema` is theirs.
    type Args: Arguments;
    /// The tool's metadata.
    fn spec(&self) -> &ToolSpec;
    /// Runs one call.
    async fn run(&self, args: Self::Args, cx: ToolContext<'_>)
        -> Result<CallToolResult, ToolError>;
}

/// What [`UpstreamTool::plan`] answers: the requests the call may make, and what its run needs.
pub(crate) type Planned<P> = Result<(Targets, P), ToolError>;

/// A tool whose call makes upstream requests: [`plan`](UpstreamTool::plan) checks the typed
/// arguments and names every request the call may make, once; policy decides on those
/// [`Targets`] and [`run`](UpstreamTool::run) reaches the vendor through a client that sends
/// no other, so what a rule matched is what goes out.
#[allow(async_fn_in_trait)]
pub(crate) trait UpstreamTool: Send + Sync {
    /// The typed arguments, declared with `arguments!`; the spec's `input_schema` is theirs.
    type Args: Arguments;
    /// What the run needs that was worked out with the targets (the target itself, for a
    /// tool that makes one request), so nothing is parsed twice.
    type Plan;
    /// The tool's metadata.
    fn spec(&self) -> &ToolSpec;
    /// Checks `args` and names the upstream requests the call may make.
    fn plan(&self, args: &Self::Args, upstream: &UpstreamSettings) -> Planned<Self::Plan>;
    /// Runs one call with what [`plan`](UpstreamTool::plan) worked out.
    async fn run(
        &self,
        args: Self::Args,
        plan: Self::Plan,
        cx: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError>;
}

/// An [`UpstreamTool`] as the registry holds it.
pub(crate) struct Upstream<T>(pub T);

impl<T: TypedTool> Tool for T {
    fn spec(&self) -> &ToolSpec {
        TypedTool::spec(self)
    }

    fn prepare<'a>(
        &'a self,
        arguments: &Json,
        _upstream: &UpstreamSettings,
    ) -> Result<Prepared<'a>, ToolError> {
        let args = read_args(arguments)?;
        Ok(Prepared {
            targets: Targets::none(),
            runner: Box::new(move |cx| Box::pin(self.run(args, cx))),
        })
    }
}

impl<T: UpstreamTool> Tool for Upstream<T> {
    fn spec(&self) -> &ToolSpec {
        self.0.spec()
    }

    fn prepare<'a>(
        &'a self,
        arguments: &Json,
        upstream: &UpstreamSettings,
    ) -> Result<Prepared<'a>, ToolError> {
        let args = read_args(arguments)?;
        let (targets, plan) = self.0.plan(&args, upstream)?;
        let tool = &self.0;
        Ok(Prepared {
            targets,
            runner: Box::new(move |cx| Box::pin(tool.run(args, plan, cx))),
        })
    }
}

/// Why a tool could not be registered (a programming error, caught by tests).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryError(pub String);

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RegistryError {}

/// The tools a server offers, in registration order, each with its toolset.
#[derive(Default)]
pub struct Registry {
    tools: Vec<(Option<Toolset>, Box<dyn Tool>)>,
    /// Each tool's `tools/list` entry as JSON text, without and with its output schema, made on
    /// first use: the entries change only with a deployment, so an isolate serializes them once.
    listed: OnceLock<[Vec<Box<str>>; 2]>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Adds a tool that belongs to no toolset: offered only to connections that choose none.
    pub fn register(&mut self, tool: Box<dyn Tool>) -> Result<(), RegistryError> {
        self.register_in(None, tool)
    }

    /// Adds a tool of `toolset` after checking its name (valid, unique) and input schema (an
    /// object schema using only enforceable keywords).
    pub(crate) fn register_in(
        &mut self,
        toolset: Option<Toolset>,
        tool: Box<dyn Tool>,
    ) -> Result<(), RegistryError> {
        let spec = &tool.spec().descriptor;
        let name = &spec.name;
        let name_ok = (1..=128).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !name_ok {
            return Err(RegistryError(format!(
                "tool name {name:?} must be 1 to 128 characters of A-Z a-z 0-9 _ - ."
            )));
        }
        if self.get(name).is_some() {
            return Err(RegistryError(format!("tool {name:?} is registered twice")));
        }
        if spec.input_schema.get("type").and_then(Json::as_str) != Some("object") {
            return Err(RegistryError(format!(
                "tool {name:?}: the input schema must have \"type\": \"object\""
            )));
        }
        if let Some(output) = &spec.output_schema {
            if output.get("type").and_then(Json::as_str) != Some("object") {
                return Err(RegistryError(format!(
                    "tool {name:?}: the output schema must have \"type\": \"object\""
                )));
            }
        }
        let unsupported = schema::unsupported_keywords(&spec.input_schema);
        if !unsupported.is_empty() {
            return Err(RegistryError(format!(
                "tool {name:?}: the input schema uses keywords the validator cannot enforce: {}",
                unsupported.join(", ")
            )));
        }
        self.tools.push((toolset, tool));
        self.listed = OnceLock::new();
        Ok(())
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.entry(name).map(|(_, tool)| tool)
    }

    /// The tool called `name` with its toolset.
    pub fn entry(&self, name: &str) -> Option<(Option<Toolset>, &dyn Tool)> {
        self.tools
            .iter()
            .find(|(_, t)| t.spec().descriptor.name == name)
            .map(|(toolset, t)| (*toolset, t.as_ref()))
    }

    /// Tool names in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.tools
            .iter()
            .map(|(_, t)| t.spec().descriptor.name.as_str())
            .collect()
    }

    /// Whether `selection` offers the tool called `name` (`policy`: an enterprise policy is
    /// configured); `None` when there is no such tool.
    pub(crate) fn offered(
        &self,
        name: &str,
        selection: &Selection,
        policy: bool,
    ) -> Option<Result<&dyn Tool, NotOffered>> {
        let (toolset, tool) = self.entry(name)?;
        Some(
            selection
                .offers(toolset, &tool.spec().descriptor, policy)
                .map(|()| tool),
        )
    }

    /// The `tools/list` entries `selection` offers, in registration order. Output schemas are
    /// listed only when `output_schemas` is true (`MCP_STRUCTURED_OUTPUT`): a tool that
    /// advertises one must put conforming `structuredContent` in every successful result.
    pub fn descriptors(
        &self,
        output_schemas: bool,
        selection: &Selection,
        policy: bool,
    ) -> Vec<ToolDescriptor> {
        self.tools
            .iter()
            .filter(|(toolset, t)| {
                selection
                    .offers(*toolset, &t.spec().descriptor, policy)
                    .is_ok()
            })
            .map(|(_, t)| {
                let mut descriptor = t.spec().descriptor.clone();
                if !output_schemas {
                    descriptor.output_schema = None;
                }
                descriptor
            })
            .collect()
    }

    /// The JSON text of the `tools` array [`Registry::descriptors`] would give, from entries
    /// serialized once per registry; `None` if an entry could not be serialized.
    pub(crate) fn descriptors_json(
        &self,
        output_schemas: bool,
        selection: &Selection,
        policy: bool,
    ) -> Option<String> {
        let listed = self.listed.get_or_init(|| {
            [false, true].map(|schemas| {
                self.descriptors(schemas, &Selection::ALL, false)
                    .iter()
                    .map(|d| serde_json::to_string(d).unwrap_or_default().into())
                    .collect()
            })
        });
        let entries = &listed[usize::from(output_schemas)];
        let mut text =
            String::with_capacity(entries.iter().map(|e| e.len() + 1).sum::<usize>() + 2);
        text.push('[');
        for ((toolset, tool), entry) in self.tools.iter().zip(entries) {
            if selection
                .offers(*toolset, &tool.spec().descriptor, policy)
                .is_err()
            {
                continue;
            }
            if entry.is_empty() {
                return None;
            }
            if text.len() > 1 {
                text.push(',');
            }
            text.push_str(entry);
        }
        text.push(']');
        Some(text)
    }

    /// The number of tools.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.tools.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::{ApiPath, Method, Target, Vendor};
    use serde_json::json;

    #[derive(Clone)]
    struct Named(ToolSpec);

    impl TypedTool for Named {
        type Args = Map<String, Json>;
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        async fn run(
            &self,
            _args: Map<String, Json>,
            _cx: ToolContext<'_>,
        ) -> Result<CallToolResult, ToolError> {
            Ok(CallToolResult::text("ok"))
        }
    }

    fn spec_of(name: &str, input_schema: Json) -> ToolSpec {
        ToolSpec {
            descriptor: ToolDescriptor {
                name: name.into(),
                title: None,
                description: "d".into(),
                input_schema,
                output_schema: None,
                annotations: None,
            },
            access: Access::Rules,
        }
    }

    fn spec(name: &str, input_schema: Json) -> Box<dyn Tool> {
        Box::new(Named(spec_of(name, input_schema)))
    }

    /// An upstream tool whose plan counts its calls and whose run answers the path it got.
    struct Counting(ToolSpec, std::sync::atomic::AtomicUsize);

    impl UpstreamTool for Counting {
        type Args = Map<String, Json>;
        type Plan = (Target, usize);
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn plan(&self, args: &Self::Args, _: &UpstreamSettings) -> Planned<Self::Plan> {
            let n = self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            let raw = args.get("path").and_then(Json::as_str).unwrap_or("/");
            let path =
                ApiPath::parse(raw).map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
            let target = Target::new(Vendor::Bitbucket, Method::Get, &path);
            Ok((Targets::one(target.clone()), (target, n)))
        }
        async fn run(
            &self,
            _: Self::Args,
            (target, n): Self::Plan,
            _: ToolContext<'_>,
        ) -> Result<CallToolResult, ToolError> {
            Ok(CallToolResult::text(format!("{} #{n}", target.path.path())))
        }
    }

    /// A tool whose plan declares one request and whose run sends another.
    struct Straying(ToolSpec);

    impl UpstreamTool for Straying {
        type Args = Map<String, Json>;
        type Plan = ();
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn plan(&self, _: &Self::Args, _: &UpstreamSettings) -> Planned<()> {
            let path = ApiPath::parse("/repos/o/r").unwrap();
            Ok((
                Targets::one(Target::new(Vendor::GitHub, Method::Get, &path)),
                (),
            ))
        }
        async fn run(
            &self,
            _: Self::Args,
            (): (),
            cx: ToolContext<'_>,
        ) -> Result<CallToolResult, ToolError> {
            let path = ApiPath::parse("/repos/o/secret").unwrap();
            let other = Target::new(Vendor::GitHub, Method::Get, &path);
            cx.upstream.send(&other, &[], None).await?;
            Ok(CallToolResult::text("sent"))
        }
    }

    /// The client sends only what the plan declared: a tool that asks for another request
    /// gets an error, nothing goes out, and the client keeps what it tried for the server to
    /// answer as an internal error.
    #[test]
    fn a_request_outside_the_plan_is_never_sent() {
        let http = crate::ports::fake::ScriptedHttp::unreachable();
        let env = crate::ports::fake::FakeEnv::with_http(http);
        let principal = crate::auth::Principal::named("p");
        let settings = ToolSettings::default();
        let upstream = UpstreamSettings {
            github_token: Some(crate::upstream::Secret::new("t")),
            ..UpstreamSettings::default()
        };
        let tool = Upstream(Straying(spec_of("s", json!({"type": "object"}))));
        let fuel = Fuel::request();
        let (targets, client);
        let prepared =
            Tool::prepare(&tool, &json!({}), &upstream).unwrap_or_else(|e| panic!("{e}"));
        targets = prepared.targets;
        client = Client::new(env.ports(), &env.memory, &upstream, &targets, None);
        let cx = ToolContext {
            upstream: &client,
            ..ToolContext::for_test(&principal, env.ports(), &settings, &upstream, &fuel)
        };
        let result = futures::executor::block_on((prepared.runner)(cx));
        assert!(result.is_err(), "{result:?}");
        assert!(env.http.sent().is_empty());
        assert_eq!(
            client.undeclared().as_deref(),
            Some("github GET /repos/o/secret")
        );
    }

    /// The target is built once, when the call is prepared: what policy reads is what the run
    /// gets, canonical and prefixed, and a path the plan refuses never reaches the run.
    #[test]
    fn upstream_calls_are_planned_once_and_run_what_was_planned() {
        let env = crate::ports::fake::FakeEnv::new();
        let principal = crate::auth::Principal::named("p");
        let settings = ToolSettings::default();
        let tool = Upstream(Counting(
            spec_of("u", json!({"type": "object"})),
            Default::default(),
        ));
        let upstream = UpstreamSettings::default();
        let fuel = Fuel::request();
        let prepared = Tool::prepare(&tool, &json!({"path": "/repositories/%61/./b/"}), &upstream)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            prepared.targets.first().map(|t| t.path.path()),
            Some("/2.0/repositories/a/b/")
        );
        let cx = ToolContext::for_test(&principal, env.ports(), &settings, &upstream, &fuel);
        let result = futures::executor::block_on((prepared.runner)(cx)).unwrap();
        assert_eq!(result, CallToolResult::text("/2.0/repositories/a/b/ #1"));
        assert_eq!(tool.0 .1.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(Tool::prepare(&tool, &json!({"path": "//evil"}), &upstream).is_err());
    }

    #[test]
    fn refuses_duplicates_bad_names_and_bad_schemas() {
        let mut r = Registry::new();
        r.register(spec("jira.search_issues", json!({"type": "object"})))
            .unwrap();
        let cases = [
            (
                spec("jira.search_issues", json!({"type": "object"})),
                "registered twice",
            ),
            (spec("", json!({"type": "object"})), "must be 1 to 128"),
            (
                spec("has space", json!({"type": "object"})),
                "must be 1 to 128",
            ),
            (spec("x", json!({"type": "string"})), "\"type\": \"object\""),
            (
                spec(
                    "y",
                    json!({"type": "object", "properties": {"a": {"pattern": "x"}}}),
                ),
                "#/properties/a/pattern",
            ),
        ];
        for (tool, expected) in cases {
            let err = r.register(tool).unwrap_err();
            assert!(err.0.contains(expected), "{err}");
        }
        assert_eq!(r.names(), ["jira.search_issues"]);
    }

    #[test]
    fn output_schemas_must_describe_objects() {
        let mut tool = Named(ToolSpec {
            descriptor: ToolDescriptor {
                name: "o".into(),
                title: None,
                description: "d".into(),
                input_schema: json!({"type": "object"}),
                output_schema: Some(json!({"type": "array"})),
                annotations: None,
            },
            access: Access::Rules,
        });
        let err = Registry::new()
            .register(Box::new(tool.clone()))
            .unwrap_err();
        assert!(err.0.contains("output schema"), "{err}");
        tool.0.descriptor.output_schema = Some(json!({"type": "object"}));
        let mut registry = Registry::new();
        assert!(registry.register(Box::new(tool)).is_ok());
        // Listed only when structured output is on.
        assert_eq!(
            registry.descriptors(true, &Selection::ALL, false)[0].output_schema,
            Some(json!({"type": "object"}))
        );
        assert_eq!(
            registry.descriptors(false, &Selection::ALL, false)[0].output_schema,
            None
        );
    }

    #[test]
    fn a_registry_can_live_in_a_static() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Registry>();
    }

    #[test]
    fn descriptors_omit_default_annotations() {
        let mut r = Registry::new();
        r.register(spec("a", json!({"type": "object"}))).unwrap();
        let listed = serde_json::to_value(r.descriptors(true, &Selection::ALL, false)).unwrap();
        assert_eq!(
            listed,
            json!([{"name": "a", "description": "d", "inputSchema": {"type": "object"}}])
        );
    }
}
