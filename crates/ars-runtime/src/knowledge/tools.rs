//! The knowledge plug-in: for each run whose context names knowledge bases (those the user
//! can see; others are dropped with a log line), `knowledge_search` and `knowledge_read`, and
//! a prompt block naming the knowledge bases and asking for citations.
//!
//! Citations read `[<knowledge base>:<document>#<chunk>]`, e.g. `[handbook:travel.md#3]`:
//! what `knowledge_search` labels each passage with, what `knowledge_read` takes, and what the
//! chat UI turns into a link to the passage.

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use ars_domain::knowledge::{KbChunk, KnowledgeBase};
use ars_knowledge::fusion::{RRF_K, reciprocal_rank_fusion};

use super::{KnowledgeHub, SearchHit};
use crate::middleware::Middleware;
use crate::models::ModelSource;
use crate::plugin::{MiddlewareFactory, RunSetup};
use crate::tool::{Tool, ToolContext, ToolError, parse_args};

/// Passages `knowledge_search` answers by default, and at most.
const DEFAULT_TOP_K: usize = 5;
const MAX_TOP_K: usize = 20;
/// The longest passage text a search answers (the rest is for `knowledge_read`).
const PASSAGE_CHARS: usize = 1200;
/// Chunks one `knowledge_read` answers at most.
const READ_CHUNKS: u32 = 8;

/// Offers the knowledge bases a run's context names.
pub struct KnowledgePlugin {
    hub: KnowledgeHub,
}

impl KnowledgePlugin {
    pub fn new(hub: KnowledgeHub) -> Self {
        Self { hub }
    }
}

#[async_trait]
impl MiddlewareFactory for KnowledgePlugin {
    async fn build(&self, setup: &RunSetup<'_>) -> Option<Arc<dyn Middleware>> {
        let configured = &setup.context.knowledge_bases;
        if configured.is_empty() {
            return None;
        }
        let mut bases = Vec::new();
        let mut seen = BTreeSet::new();
        for slug in configured {
            if !seen.insert(slug.as_str()) {
                continue;
            }
            match self.hub.store().knowledge_base_by_slug(slug).await {
                Ok(Some(kb)) if setup.caller.can_view(&kb) => bases.push(kb),
                Ok(_) => tracing::warn!(
                    run_id = %setup.run.id,
                    agent = %setup.agent.slug,
                    knowledge_base = %slug,
                    "a knowledge base the agent names is gone or not visible to the user; dropped"
                ),
                Err(e) => {
                    tracing::warn!(run_id = %setup.run.id, error = %e, "cannot read knowledge base `{slug}`")
                }
            }
        }
        if bases.is_empty() {
            return None;
        }
        let mut prompt = String::from(
            "\n\n## Knowledge bases\nBefore answering from memory, search these with \
             `knowledge_search`; read more around a passage with `knowledge_read`. Cite every \
             passage you use with its citation id, exactly as given, e.g. \
             [handbook:travel.md#3].\n",
        );
        for kb in &bases {
            let fields = &kb.fields;
            let description = if fields.description.is_empty() {
                String::new()
            } else {
                format!(": {}", fields.description)
            };
            prompt.push_str(&format!(
                "- `{}` ({}){description} — {} document(s)\n",
                fields.slug, fields.name, kb.counts.documents
            ));
        }
        let bases = Arc::new(bases);
        let models = setup.runs.models().clone();
        Some(Arc::new(KnowledgeMiddleware {
            prompt,
            tools: vec![
                Arc::new(KnowledgeSearch {
                    hub: self.hub.clone(),
                    bases: Arc::clone(&bases),
                    models,
                }),
                Arc::new(KnowledgeRead {
                    hub: self.hub.clone(),
                    bases,
                }),
            ],
        }))
    }
}

struct KnowledgeMiddleware {
    prompt: String,
    tools: Vec<Arc<dyn Tool>>,
}

impl Middleware for KnowledgeMiddleware {
    fn system_prompt(&self, prompt: &mut String) {
        prompt.push_str(&self.prompt);
    }

    fn tools(&self, tools: &mut Vec<Arc<dyn Tool>>) {
        tools.extend(self.tools.iter().cloned());
    }
}

/// The citation id of a chunk.
pub fn citation(kb: &str, document: &str, ordinal: u32) -> String {
    format!("[{kb}:{document}#{ordinal}]")
}

/// A citation id's parts: knowledge base, document and, when given, the chunk.
pub fn parse_citation(text: &str) -> Option<(String, String, Option<u32>)> {
    let text = text.trim().trim_start_matches('[').trim_end_matches(']');
    let (kb, rest) = text.split_once(':')?;
    let (document, ordinal) = match rest.rsplit_once('#') {
        Some((document, ordinal))
            if ordinal.chars().all(|c| c.is_ascii_digit()) && !ordinal.is_empty() =>
        {
            (document, ordinal.parse().ok())
        }
        _ => (rest, None),
    };
    (!kb.is_empty() && !document.is_empty()).then(|| (kb.to_owned(), document.to_owned(), ordinal))
}

struct KnowledgeSearch {
    hub: KnowledgeHub,
    bases: Arc<Vec<KnowledgeBase>>,
    models: ModelSource,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    #[serde(default)]
    knowledge_base: Option<String>,
    #[serde(default)]
    top_k: Option<usize>,
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push_str(" …");
    out
}

#[async_trait]
impl Tool for KnowledgeSearch {
    fn name(&self) -> &str {
        "knowledge_search"
    }

    fn description(&self) -> &str {
        "Search the knowledge bases (Chinese or English) for passages that answer a question. \
         Answers the best passages, each with its citation id, e.g. [handbook:travel.md#3]; \
         cite those ids in your answer."
    }

    fn parameters(&self) -> Arc<Value> {
        let slugs: Vec<&str> = self
            .bases
            .iter()
            .map(|kb| kb.fields.slug.as_str())
            .collect();
        Arc::new(json!({"type": "object", "properties": {
            "query": {"type": "string", "description": "What to look for, in words (any language)"},
            "knowledge_base": {"type": "string", "enum": slugs, "description": "Only this knowledge base; default: all of them"},
            "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K, "description": "How many passages (default 5)"}
        }, "required": ["query"], "additionalProperties": false}))
    }

    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        let args: SearchArgs = parse_args(args)?;
        if args.query.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "query: must not be empty".into(),
            ));
        }
        let top_k = args.top_k.unwrap_or(DEFAULT_TOP_K).clamp(1, MAX_TOP_K);
        let bases: Vec<&KnowledgeBase> = match &args.knowledge_base {
            Some(slug) => match self.bases.iter().find(|kb| &kb.fields.slug == slug) {
                Some(kb) => vec![kb],
                None => {
                    return Err(ToolError::InvalidArguments(format!(
                        "knowledge_base: no knowledge base `{slug}` here; these are: {}",
                        self.bases
                            .iter()
                            .map(|kb| kb.fields.slug.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
            },
            None => self.bases.iter().collect(),
        };
        let mut rankings: Vec<Vec<String>> = Vec::new();
        let mut hits: std::collections::HashMap<String, (String, SearchHit)> = Default::default();
        for kb in bases {
            let found = self
                .hub
                .search(kb, &args.query, top_k, &self.models)
                .await
                .map_err(|e| {
                    ToolError::Failed(format!("searching `{}` failed: {e}", kb.fields.slug))
                })?;
            let mut ranking = Vec::new();
            for hit in found.hits {
                let id = citation(&kb.fields.slug, &hit.document_name, hit.ordinal);
                ranking.push(id.clone());
                hits.insert(id, (kb.fields.slug.clone(), hit));
            }
            rankings.push(ranking);
        }
        // Scores of different knowledge bases do not compare; their ranks do.
        let fused = reciprocal_rank_fusion(&rankings, RRF_K);
        if fused.is_empty() {
            return Ok(format!("No passage matches “{}”.", args.query));
        }
        let mut out = String::new();
        for (id, _) in fused.into_iter().take(top_k) {
            let Some((_, hit)) = hits.get(&id) else {
                continue;
            };
            let mut place = vec![hit.document_name.clone()];
            place.extend(hit.heading_path.iter().cloned());
            out.push_str(&format!(
                "{id} {}\n{}\n\n",
                place.join(" › "),
                cut(&hit.text, PASSAGE_CHARS)
            ));
        }
        Ok(out.trim_end().to_owned())
    }
}

struct KnowledgeRead {
    hub: KnowledgeHub,
    bases: Arc<Vec<KnowledgeBase>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    document: String,
    #[serde(default)]
    from: Option<u32>,
    #[serde(default)]
    to: Option<u32>,
}

#[async_trait]
impl Tool for KnowledgeRead {
    fn name(&self) -> &str {
        "knowledge_read"
    }

    fn description(&self) -> &str {
        "Read a stretch of a knowledge base document: give a citation id (e.g. \
         [handbook:travel.md#3]) to read around that passage, or `<knowledge base>:<document>` \
         with `from`/`to` chunk numbers."
    }

    fn parameters(&self) -> Arc<Value> {
        Arc::new(json!({"type": "object", "properties": {
            "document": {"type": "string", "description": "A citation id like [handbook:travel.md#3], or handbook:travel.md"},
            "from": {"type": "integer", "minimum": 0, "description": "First chunk number"},
            "to": {"type": "integer", "minimum": 0, "description": "Last chunk number (at most 8 chunks at once)"}
        }, "required": ["document"], "additionalProperties": false}))
    }

    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        let args: ReadArgs = parse_args(args)?;
        let (slug, name, cited) = parse_citation(&args.document).ok_or_else(|| {
            ToolError::InvalidArguments(
                "document: give a citation id like [handbook:travel.md#3] or handbook:travel.md"
                    .into(),
            )
        })?;
        let kb = self
            .bases
            .iter()
            .find(|kb| kb.fields.slug == slug)
            .ok_or_else(|| ToolError::Failed(format!("no knowledge base `{slug}` here")))?;
        let store = self.hub.store();
        let document = store
            .kb_documents(kb.id)
            .await
            .map_err(|e| ToolError::Failed(e.to_string()))?
            .into_iter()
            .find(|d| d.name == name)
            .ok_or_else(|| ToolError::Failed(format!("no document “{name}” in `{slug}`")))?;
        let chunks: Vec<KbChunk> = store
            .kb_chunks(document.id)
            .await
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        let Some(last) = chunks.last().map(|c| c.ordinal) else {
            return Ok(format!(
                "“{name}” has no readable text yet (it is {}).",
                document.status.as_str()
            ));
        };
        let (from, to) = match (args.from, args.to, cited) {
            (Some(from), Some(to), _) => (from, to),
            (Some(from), None, _) => (from, from + READ_CHUNKS / 2),
            (None, Some(to), _) => (to.saturating_sub(READ_CHUNKS / 2), to),
            (None, None, Some(at)) => (at.saturating_sub(1), at + 1),
            (None, None, None) => (0, READ_CHUNKS - 1),
        };
        if from > to {
            return Err(ToolError::InvalidArguments(
                "from: must not be after to".into(),
            ));
        }
        let to = to.min(from + READ_CHUNKS - 1).min(last);
        let mut out = String::new();
        for chunk in chunks
            .iter()
            .filter(|c| c.ordinal >= from && c.ordinal <= to)
        {
            let mut place = vec![name.clone()];
            place.extend(chunk.heading_path.iter().cloned());
            out.push_str(&format!(
                "{} {}\n{}\n\n",
                citation(&slug, &name, chunk.ordinal),
                place.join(" › "),
                chunk.text
            ));
        }
        if out.is_empty() {
            return Ok(format!(
                "“{name}” has chunks 0 to {last}; none in {from}-{to}."
            ));
        }
        if to < last {
            out.push_str(&format!("[chunks {from}-{to} of 0-{last}]"));
        }
        Ok(out.trim_end().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_read_back() {
        assert_eq!(
            citation("handbook", "travel.md", 3),
            "[handbook:travel.md#3]"
        );
        assert_eq!(
            parse_citation("[handbook:travel.md#3]"),
            Some(("handbook".into(), "travel.md".into(), Some(3)))
        );
        assert_eq!(
            parse_citation("handbook:差旅 #1 制度.md"),
            Some(("handbook".into(), "差旅 #1 制度.md".into(), None))
        );
        assert_eq!(
            parse_citation("handbook:a#b.md#12"),
            Some(("handbook".into(), "a#b.md".into(), Some(12)))
        );
        assert_eq!(parse_citation("no colon"), None);
        assert_eq!(parse_citation(":x"), None);
    }
}
