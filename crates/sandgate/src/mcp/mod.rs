//! `sandgate mcp`: the gated file and exec tools, served over MCP with rmcp.
//!
//! Every `tools/call` goes through the [`Dispatcher`], which asks the gate
//! first. An ASK goes to the client's user through elicitation when the client
//! declared it (see [`elicit`]); otherwise to the terminal prompt when there is
//! a terminal, and otherwise it is a DENY.

pub mod elicit;
pub mod http;
pub mod stdio;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use sandgate_policy::ask::{Question, Resolution, Resolver, SubjectKind};
use sandgate_policy::Verdict;
use sandgate_tools::{Dispatcher, ToolError, ToolOutput};
use serde_json::{json, Value};

use elicit::{ElicitResolver, Explained, Preanswered};

/// What every session of the server shares.
pub struct Shared {
    /// The tools behind the gate.
    pub tools: Dispatcher,
    /// Who is asked when the client cannot elicit: the terminal prompt, or nobody.
    pub fallback: Arc<dyn Resolver>,
}

/// The MCP server handler. Cheap to clone; one per HTTP session.
#[derive(Clone)]
pub struct SandgateServer {
    shared: Arc<Shared>,
    tools: Arc<Vec<Tool>>,
}

impl SandgateServer {
    /// A server over `shared`.
    pub fn new(shared: Arc<Shared>) -> Self {
        SandgateServer {
            shared,
            tools: Arc::new(tool_list()),
        }
    }
}

/// The tools as MCP describes them.
pub fn tool_list() -> Vec<Tool> {
    sandgate_tools::specs()
        .into_iter()
        .map(|spec| {
            let schema = match spec.input_schema.clone() {
                Value::Object(m) => m,
                _ => serde_json::Map::new(),
            };
            Tool::new(spec.name, spec.full_description(), schema)
                .with_title(spec.title)
                .with_annotations(
                    ToolAnnotations::with_title(spec.title)
                        .read_only(spec.read_only)
                        .destructive(spec.destructive)
                        .idempotent(spec.idempotent)
                        .open_world(spec.open_world),
                )
        })
        .collect()
}

const INSTRUCTIONS: &str = "Local file and shell tools behind sandgate's permission gate. \
Every path and command is checked against the user's policy; a denied call returns an error \
naming the rule that decided it. Do not retry a denied call with a different spelling of the \
same path or command.";

impl ServerHandler for SandgateServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("sandgate", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let tool = request.name.to_string();
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let version = context.protocol_version();
        let can_elicit = context
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        let stateless = version.as_ref().is_some_and(|v| !v.has_initialize());
        let shared = Arc::clone(&self.shared);

        let resolver: Box<dyn Resolver> = if !can_elicit {
            Box::new(Fallback(Arc::clone(&shared.fallback)))
        } else if stateless {
            // 2026-07-28: no server-to-client requests; the question travels in
            // the result, the answer in the retried call.
            let state = elicit::fingerprint(&tool, &args);
            let answered = match (&request.input_responses, &request.request_state) {
                (Some(responses), Some(echoed)) if *echoed == state => {
                    elicit::answer_from_responses(responses)
                }
                _ => None,
            };
            match answered {
                Some(resolution) => Box::new(Preanswered(resolution)),
                None => {
                    let (t, a, s) = (tool.clone(), args.clone(), Arc::clone(&shared));
                    let preview = tokio::task::spawn_blocking(move || s.tools.preview(&t, &a))
                        .await
                        .map_err(|e| {
                            McpError::internal_error(format!("the gate failed: {e}"), None)
                        })?;
                    if let Ok(Some(decision)) = preview {
                        if decision.verdict == Verdict::Ask {
                            let ask = Question {
                                tool: tool.clone(),
                                kind: SubjectKind::of_tool(&tool).unwrap_or(SubjectKind::Command),
                                subject: decision.subject.clone(),
                                reason: decision.reason.clone(),
                                timeout: shared.tools.policy().settings().prompt_timeout,
                            };
                            crate::audit::record("mcp", &tool, &decision);
                            return match elicit::input_required(&ask, version.as_ref(), state) {
                                Ok(r) => Ok(r.into()),
                                Err(e) => Ok(error_result(&ToolError::failed(e)).into()),
                            };
                        }
                    }
                    // Not an ASK now; should it turn into one, nobody was asked.
                    Box::new(Preanswered(Resolution::Unavailable {
                        reason: "the policy changed while the question was being prepared".into(),
                    }))
                }
            }
        } else {
            Box::new(ElicitResolver {
                peer: context.peer.clone(),
                handle: tokio::runtime::Handle::current(),
                version: version.clone(),
            })
        };
        // A host an `exec_run` command connects to that no entry of
        // `permissions.network` decides: asked through elicitation while
        // the command runs, where the client can be asked mid-call.
        let network: Arc<dyn Resolver> = if !can_elicit {
            Arc::new(Explained {
                inner: Arc::clone(&shared.fallback),
                why: "the MCP client did not declare elicitation",
            })
        } else if stateless {
            Arc::new(Explained {
                inner: Arc::clone(&shared.fallback),
                why: "the MCP client speaks a protocol revision without requests from the server, so it cannot be asked while a command runs",
            })
        } else {
            Arc::new(ElicitResolver {
                peer: context.peer.clone(),
                handle: tokio::runtime::Handle::current(),
                version: version.clone(),
            })
        };
        let result = tokio::task::spawn_blocking(move || {
            shared
                .tools
                .call_asking(&tool, &args, resolver.as_ref(), Some(network))
        })
        .await
        .map_err(|e| McpError::internal_error(format!("the tool failed: {e}"), None))?;
        Ok(match result {
            Ok(output) => success_result(output),
            Err(e) => error_result(&e),
        }
        .into())
    }
}

/// The fallback resolver, shared across calls.
struct Fallback(Arc<dyn Resolver>);

impl Resolver for Fallback {
    fn resolve(&self, ask: &Question) -> Resolution {
        self.0.resolve(ask)
    }
}

/// A tool's result. Clients that receive `structuredContent` (Claude Code,
/// Codex CLI) give the model that JSON and drop the text blocks, so the
/// structured content always carries the text too, as `text`: the model gets
/// the same data either way (for `file_read` and `file_head_tail`, the lines).
fn success_result(output: ToolOutput) -> CallToolResult {
    let structured = with_text(output.structured, &output.text);
    let mut result = CallToolResult::success(vec![ContentBlock::text(output.text)]);
    result.structured_content = Some(structured);
    result
}

/// `structured` (an object, or nothing) with `text` added.
fn with_text(structured: Value, text: &str) -> Value {
    let mut object = match structured {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    object.insert("text".into(), Value::String(text.to_string()));
    Value::Object(object)
}

fn error_result(error: &ToolError) -> CallToolResult {
    let text = error.to_string();
    let mut result = CallToolResult::error(vec![ContentBlock::text(text.clone())]);
    if let ToolError::Denied(decision) = error {
        result.structured_content = Some(with_text(
            json!({
                "verdict": decision.verdict,
                "subject": decision.subject,
                "reason": decision.reason,
                "rule": decision.rule,
            }),
            &text,
        ));
    }
    result
}
