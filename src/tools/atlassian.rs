//! The Atlassian passthrough tools: `jira_*`, `conf_*` and `bb_*` for GET, POST, PUT, PATCH and
//! DELETE. One generic tool parameterised by vendor and verb; the request, the body decoding,
//! the text and the error texts match the reference servers byte for byte (docs/parity.md).

use crate::mcp::{CallToolResult, ToolAnnotations, ToolDescriptor};
use crate::structured::{Contract, Envelope};
use crate::tools::args::{
    self, arguments, input_schema, Arguments, Field, WithCommon, JQ, OUTPUT_FORMAT, QUERY_PARAMS,
};
use crate::tools::output;
use crate::tools::registry::{
    Access, Planned, Tool, ToolContext, ToolError, ToolSpec, Upstream, UpstreamTool,
};
use crate::upstream::{
    ApiPath, Flavor, Method, PathError, Target, Targets, UpstreamSettings, Vendor,
};
use serde_json::{Map, Value as Json};
use std::marker::PhantomData;

/// The API path; described per vendor in each tool's schema.
const PATH: Field = Field::string("path").min(1);
/// The request body; described per vendor and verb in each tool's schema.
const BODY: Field = Field::object("body");

/// The verbs, in the order the tools are listed.
const METHODS: [Method; 5] = [
    Method::Get,
    Method::Post,
    Method::Put,
    Method::Patch,
    Method::Delete,
];

/// A passthrough tool: one vendor, one HTTP method; `A` is its arguments, with a body for the
/// verbs that send one.
pub(crate) struct Passthrough<A> {
    vendor: Vendor,
    method: Method,
    spec: ToolSpec,
    args: PhantomData<fn() -> A>,
}

/// The arguments of a passthrough tool: the path, the shared ones (`queryParams`, `jq`,
/// `outputFormat`), and a body for POST, PUT and PATCH.
pub(crate) trait PassthroughArgs: Arguments {
    /// The API path as given.
    fn path(&self) -> &str;
    /// The request body, for the verbs that send one.
    fn into_body(self) -> Option<Map<String, Json>>;
}

arguments! {
    /// GET and DELETE: a path. The reference drops a body given to them, and so does this type.
    pub(crate) struct ReadArgs: open {
        /// The API path.
        path: String = PATH,
        shared QUERY_PARAMS,
        shared JQ,
        shared OUTPUT_FORMAT,
    }
}

arguments! {
    /// POST, PUT and PATCH: a path and a JSON object body.
    pub(crate) struct WriteArgs: open {
        /// The path and the shared arguments.
        flatten read: ReadArgs,
        /// The request body.
        body: Map<String, Json> = BODY,
    }
}

impl PassthroughArgs for ReadArgs {
    fn path(&self) -> &str {
        &self.path
    }
    fn into_body(self) -> Option<Map<String, Json>> {
        None
    }
}

impl PassthroughArgs for WriteArgs {
    fn path(&self) -> &str {
        &self.read.path
    }
    fn into_body(self) -> Option<Map<String, Json>> {
        Some(self.body)
    }
}

impl<A: PassthroughArgs> Passthrough<A> {
    /// The tool for `vendor` and `method`, described for a deployment speaking `flavor`.
    fn new(vendor: Vendor, flavor: Flavor, method: Method) -> Passthrough<A> {
        Passthrough {
            vendor,
            method,
            spec: spec::<A>(vendor, flavor, method),
            args: PhantomData,
        }
    }
}

impl<A: PassthroughArgs> UpstreamTool for Passthrough<A> {
    type Args = WithCommon<A>;
    /// The one request the call makes.
    type Plan = Target;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The path, checked and canonical as the client sends it, in the path space of the API
    /// the product speaks where the settings send it.
    fn plan(&self, args: &Self::Args, settings: &UpstreamSettings) -> Planned<Target> {
        let invalid = |e: PathError| ToolError::InvalidArguments(e.to_string());
        let path = ApiPath::parse(args.own.path()).map_err(invalid)?;
        let flavor = settings.flavor(self.vendor);
        let target = Target::checked(self.vendor, flavor, self.method, &path).map_err(invalid)?;
        Ok((Targets::one(target.clone()), target))
    }

    async fn run(
        &self,
        args: Self::Args,
        target: Target,
        cx: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let body = args
            .own
            .into_body()
            .map(|body| output::json_to_value(&Json::Object(body)));
        let query = &args.common.query_params.0;
        let reply = cx.upstream.send(&target, query, body.as_ref()).await?;
        let mut rendered = output::render_body(reply.body, &args.common, &cx);
        if self.spec.descriptor.output_schema.is_some() {
            // The text stays the bare body (reference parity); the envelope wraps it.
            rendered = rendered.with_envelope(Envelope::DataOnly);
        }
        Ok(rendered.finish(&cx).await)
    }
}

/// The vendors of these tools, in registration order.
pub(crate) const VENDORS: [Vendor; 3] = [Vendor::Jira, Vendor::Confluence, Vendor::Bitbucket];

/// All fifteen tools: Jira, Confluence, Bitbucket; GET, POST, PUT, PATCH, DELETE.
#[cfg(test)]
fn tools() -> Vec<Box<dyn Tool>> {
    VENDORS
        .into_iter()
        .flat_map(|vendor| vendor_tools(vendor, Flavor::Cloud))
        .collect()
}

/// One vendor's five tools (GET, POST, PUT, PATCH, DELETE), described for the API it speaks on
/// this deployment (`flavor`).
pub(crate) fn vendor_tools(vendor: Vendor, flavor: Flavor) -> Vec<Box<dyn Tool>> {
    METHODS
        .into_iter()
        .map(|method| -> Box<dyn Tool> {
            if method.has_body() {
                Box::new(Upstream(Passthrough::<WriteArgs>::new(
                    vendor, flavor, method,
                )))
            } else {
                Box::new(Upstream(Passthrough::<ReadArgs>::new(
                    vendor, flavor, method,
                )))
            }
        })
        .collect()
}

/// The tool name: `jira_get`, `conf_post`, `bb_delete`...
pub(crate) fn tool_name(vendor: Vendor, method: Method) -> String {
    let prefix = match vendor {
        Vendor::Confluence => "conf",
        Vendor::Bitbucket => "bb",
        _ => "jira",
    };
    format!("{prefix}_{}", method.as_str().to_ascii_lowercase())
}

fn spec<A: PassthroughArgs>(vendor: Vendor, flavor: Flavor, method: Method) -> ToolSpec {
    let verb = method.as_str();
    let mut input_schema = input_schema::<WithCommon<A>>();
    args::describe(
        &mut input_schema,
        PATH.name,
        path_description(vendor, flavor),
    );
    if method.has_body() {
        args::describe(
            &mut input_schema,
            BODY.name,
            format!(
                "The JSON request body, sent as is with Content-Type: application/json. {}",
                body_hint(vendor, flavor, method)
            ),
        );
    }
    let annotations = ToolAnnotations {
        title: None,
        read_only_hint: Some(method == Method::Get),
        destructive_hint: Some(method == Method::Delete),
        idempotent_hint: Some(matches!(method, Method::Get | Method::Put | Method::Delete)),
        open_world_hint: Some(true),
    };
    ToolSpec {
        descriptor: ToolDescriptor {
            name: tool_name(vendor, method),
            title: Some(format!("{} {verb}", vendor.name())),
            description: description(vendor, flavor, method),
            input_schema,
            // The reads are the Atlassian schema tools; the write verbs stay text only.
            output_schema: (method == Method::Get).then(|| Contract::AtlassianRead.output_schema()),
            annotations: Some(annotations),
        },
        access: Access::Rules,
    }
}

fn path_description(vendor: Vendor, flavor: Flavor) -> &'static str {
    match (vendor, flavor) {
        (Vendor::Confluence, Flavor::DataCenter) => {
            "API path on the Confluence Data Center server, starting with /rest (no /wiki), \
            e.g. /rest/api/content?spaceKey=KEY&title=..., \
            /rest/api/content/123456?expand=body.storage,version, /rest/api/search (CQL in \
            queryParams.cql). A path, never a full URL."
        }
        (Vendor::Jira, Flavor::DataCenter) => {
            "API path on the Jira Data Center server, e.g. /rest/api/2/issue/PROJ-123, \
            /rest/api/2/search (JQL in queryParams.jql), /rest/api/2/project. A path, never a \
            full URL."
        }
        (Vendor::Confluence, _) => {
            "API path on the Confluence site, starting with /wiki, e.g. \
            /wiki/api/v2/pages, /wiki/api/v2/pages/123456?body-format=storage, \
            /wiki/rest/api/search (CQL in queryParams.cql). A path, never a full URL."
        }
        (Vendor::Bitbucket, Flavor::DataCenter) => {
            "API path on the Bitbucket Data Center server, starting with /rest, e.g. \
            /rest/api/1.0/projects/{key}/repos, \
            /rest/api/1.0/projects/{key}/repos/{slug}/pull-requests?state=OPEN, \
            /rest/api/1.0/projects/{key}/repos/{slug}/raw/{file}?at={branch}. A path, never \
            a full URL."
        }
        (Vendor::Bitbucket, _) => {
            "API path under https://api.bitbucket.org/2.0 (the /2.0 prefix is \
            added when missing), e.g. /repositories/{workspace}, \
            /repositories/{workspace}/{repo}/pullrequests, \
            /repositories/{workspace}/{repo}/diff/{spec}. A path, never a full URL."
        }
        _ => {
            "API path on the Jira site, e.g. /rest/api/3/issue/PROJ-123, \
            /rest/api/3/search/jql (JQL in queryParams.jql), /rest/api/3/project/search. \
            A path, never a full URL."
        }
    }
}

fn body_hint(vendor: Vendor, flavor: Flavor, method: Method) -> &'static str {
    match (vendor, method) {
        (Vendor::Jira, Method::Post) if flavor == Flavor::DataCenter => {
            "E.g. creating an issue at /rest/api/2/issue: \
            {\"fields\": {\"project\": {\"key\": \"PROJ\"}, \"summary\": \"...\", \
            \"issuetype\": {\"name\": \"Task\"}}}; text fields are plain strings (wiki markup)."
        }
        (Vendor::Confluence, Method::Post) if flavor == Flavor::DataCenter => {
            "E.g. creating a page at /rest/api/content: {\"type\": \"page\", \"title\": \
            \"...\", \"space\": {\"key\": \"KEY\"}, \"body\": {\"storage\": {\"value\": \
            \"<p>...</p>\", \"representation\": \"storage\"}}}."
        }
        (Vendor::Jira, Method::Post) => {
            "E.g. creating an issue at /rest/api/3/issue: \
            {\"fields\": {\"project\": {\"key\": \"PROJ\"}, \"summary\": \"...\", \
            \"issuetype\": {\"name\": \"Task\"}}}; text fields use Atlassian Document Format."
        }
        (Vendor::Confluence, Method::Post) => {
            "E.g. creating a page at /wiki/api/v2/pages: \
            {\"spaceId\": \"123\", \"status\": \"current\", \"title\": \"...\", \"body\": \
            {\"representation\": \"storage\", \"value\": \"<p>...</p>\"}}."
        }
        (Vendor::Bitbucket, Method::Post) if flavor == Flavor::DataCenter => {
            "E.g. a pull request comment at \
            /rest/api/1.0/projects/{key}/repos/{slug}/pull-requests/{id}/comments: {\"text\": \
            \"...\"}. Pass {} for endpoints that take no body (approve)."
        }
        (Vendor::Bitbucket, Method::Post) => {
            "E.g. a pull request comment at \
            /repositories/{workspace}/{repo}/pullrequests/{id}/comments: {\"content\": \
            {\"raw\": \"...\"}}. Pass {} for endpoints that take no body (approve)."
        }
        (_, Method::Put) => {
            "A PUT replaces the resource's fields you send (Confluence page \
            updates need the next version number)."
        }
        _ => "Send only the fields to change.",
    }
}

fn description(vendor: Vendor, flavor: Flavor, method: Method) -> String {
    let data_center = flavor == Flavor::DataCenter;
    let (api, auth) = match vendor {
        Vendor::Confluence if data_center => (
            "the Confluence Data Center REST API (under /rest/api, no /wiki prefix)",
            "Confluence",
        ),
        Vendor::Jira if data_center => (
            "the Jira Data Center REST API (v2 under /rest/api/2, Agile under /rest/agile/1.0)",
            "Jira",
        ),
        Vendor::Confluence => (
            "the Confluence Cloud REST API (v2 under /wiki/api/v2, v1 under /wiki/rest/api)",
            "Confluence",
        ),
        Vendor::Bitbucket if data_center => (
            "the Bitbucket Data Center REST API (under /rest/api/1.0)",
            "Bitbucket",
        ),
        Vendor::Bitbucket => ("the Bitbucket Cloud REST API 2.0", "Bitbucket"),
        _ => (
            "the Jira Cloud REST API (v3 under /rest/api/3, Agile under /rest/agile/1.0)",
            "Jira",
        ),
    };
    let what = match method {
        Method::Get => "Reads from",
        Method::Post => "Creates or triggers something through",
        Method::Put => "Replaces or updates a resource through",
        Method::Patch => "Partially updates a resource through",
        Method::Delete => "Deletes a resource through",
    };
    let paging = match vendor {
        Vendor::Confluence if data_center => {
            "Paging: lists return results, start, limit, size and _links.next: pass the next \
            start in queryParams.start; use limit to size pages."
        }
        Vendor::Jira if data_center => {
            "Paging: /rest/api/2/search and other lists return startAt, maxResults and total: \
            pass the next startAt in queryParams.startAt and size pages with maxResults. Use \
            queryParams.fields to ask for fewer fields."
        }
        Vendor::Confluence => {
            "Paging: v2 lists return _links.next (a cursor): pass its cursor \
            value in queryParams.cursor; use limit to size pages."
        }
        Vendor::Bitbucket if data_center => {
            "Paging: lists return values, isLastPage and nextPageStart: while isLastPage is \
            false pass nextPageStart in queryParams.start; limit sizes pages. Diffs and raw \
            files come back as text."
        }
        Vendor::Bitbucket => {
            "Paging: lists return values, page, pagelen and next (a full URL): \
            pass its page value in queryParams.page; pagelen sizes pages (max 100). Filter with \
            queryParams.q and sort with queryParams.sort; diffs and raw files come back as text."
        }
        _ => {
            "Paging: /rest/api/3/search/jql returns nextPageToken (pass it back in \
            queryParams.nextPageToken); other lists use startAt and maxResults. Use \
            queryParams.fields to ask for fewer fields."
        }
    };
    let effect = match method {
        Method::Get => "",
        Method::Delete => " This cannot be undone.",
        _ => " This changes data.",
    };
    format!(
        "{what} {api} with the server's {auth} credentials: {verb} {{path}}, returning the \
         response body. {paging} Keep the fields you need with `jq`; longer results are cut with a \
         note. An empty response (204) is {{}} in JSON, empty in TOON.{effect}",
        verb = method.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::registry::Registry;

    #[test]
    fn fifteen_tools_register_with_enforceable_schemas() {
        let mut registry = Registry::new();
        for tool in tools() {
            registry.register(tool).unwrap();
        }
        assert_eq!(registry.len(), 15);
        assert_eq!(
            &registry.names()[..5],
            [
                "jira_get",
                "jira_post",
                "jira_put",
                "jira_patch",
                "jira_delete"
            ]
        );
        assert!(registry.get("conf_patch").is_some() && registry.get("bb_delete").is_some());
    }

    #[test]
    fn annotations_follow_the_verb() {
        let get = spec::<ReadArgs>(Vendor::Jira, Flavor::Cloud, Method::Get);
        let a = get.descriptor.annotations.unwrap();
        assert_eq!(
            (a.read_only_hint, a.idempotent_hint, a.destructive_hint),
            (Some(true), Some(true), Some(false))
        );
        let delete = spec::<ReadArgs>(Vendor::Bitbucket, Flavor::Cloud, Method::Delete);
        let a = delete.descriptor.annotations.unwrap();
        assert_eq!(
            (a.read_only_hint, a.destructive_hint, a.idempotent_hint),
            (Some(false), Some(true), Some(true))
        );
        let put = spec::<WriteArgs>(Vendor::Confluence, Flavor::Cloud, Method::Put);
        assert_eq!(
            put.descriptor.annotations.clone().unwrap().idempotent_hint,
            Some(true)
        );
        assert_eq!(
            put.descriptor.annotations.unwrap().destructive_hint,
            Some(false)
        );
        let post = spec::<WriteArgs>(Vendor::Confluence, Flavor::Cloud, Method::Post);
        assert_eq!(
            post.descriptor.annotations.unwrap().idempotent_hint,
            Some(false)
        );
        for tool in tools() {
            let spec = &tool.spec().descriptor;
            let annotations = spec.annotations.clone().unwrap();
            assert_eq!(annotations.open_world_hint, Some(true));
            let required = spec.input_schema["required"].as_array().unwrap().len();
            let writes = ["_post", "_put", "_patch"]
                .iter()
                .any(|verb| spec.name.ends_with(verb));
            assert_eq!(required, if writes { 2 } else { 1 }, "{}", spec.name);
        }
    }

    #[test]
    fn data_center_descriptions_name_the_api_the_deployment_speaks() {
        for (vendor, says, never) in [
            (Vendor::Jira, "/rest/api/2/search", "/rest/api/3"),
            (Vendor::Confluence, "/rest/api/content", "/wiki/"),
            (Vendor::Bitbucket, "/rest/api/1.0/projects", "/2.0"),
        ] {
            for tool in vendor_tools(vendor, Flavor::DataCenter) {
                let d = &tool.spec().descriptor;
                let path = d.input_schema["properties"]["path"]["description"].to_string();
                let all = format!("{} {path}", d.description);
                assert!(all.contains("Data Center") && all.contains(says), "{all}");
                assert!(!all.contains(never), "{all}");
            }
        }
        let paging = vendor_tools(Vendor::Bitbucket, Flavor::DataCenter)[0]
            .spec()
            .descriptor
            .description
            .clone();
        assert!(
            paging.contains("nextPageStart in queryParams.start"),
            "{paging}"
        );
    }
}
