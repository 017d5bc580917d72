//! `panic_probe`, built only with the `panic-probe` feature (the e2e build `make build-probe`,
//! never the release build): a tool whose call panics, so a test can show that a panic inside a
//! tool call fails that request only and the next request is served.

use crate::mcp::{CallToolResult, ToolAnnotations, ToolDescriptor};
use crate::tools::args::{arguments, input_schema};
use crate::tools::registry::{Access, ToolContext, ToolError, ToolSpec, TypedTool};

/// The tool's name.
pub(crate) const NAME: &str = "panic_probe";

/// `panic_probe`.
pub(crate) struct PanicProbe(ToolSpec);

arguments! {
    /// `panic_probe` takes no arguments.
    pub(crate) struct Args: open {}
}

/// The tool with its spec.
pub(crate) fn tool() -> Box<dyn crate::tools::Tool> {
    Box::new(PanicProbe(ToolSpec {
        descriptor: ToolDescriptor {
            name: NAME.into(),
            title: Some("Panic (test build only)".into()),
            description: "Panics. Present only in the panic-probe test build.".into(),
            input_schema: input_schema::<Args>(),
            output_schema: None,
            annotations: Some(ToolAnnotations {
                read_only_hint: Some(true),
                open_world_hint: Some(false),
                ..ToolAnnotations::default()
            }),
        },
        access: Access::Own,
    }))
}

impl TypedTool for PanicProbe {
    type Args = Args;
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn run(&self, _args: Args, _cx: ToolContext<'_>) -> Result<CallToolResult, ToolError> {
        panic!("panic_probe: a panic inside a tool call, on purpose")
    }
}
