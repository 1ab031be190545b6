//! A tool call's result as the model reads it: text, and attachments the caller saves as
//! files.
//!
//! `text` blocks are joined; `image`, `audio` and embedded `resource` blocks become
//! [`Attachment`]s (bytes decoded from base64, or a text resource's text) that the runtime
//! writes into the workdir and names by virtual path; `resource_link`s are listed for the
//! caller to fetch (`resources/read`) and save the same way. `structuredContent` is added as
//! JSON unless the text already is exactly it. `isError: true` marks the output an error.

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// What a call answered, ready for the model once the attachments are saved.
#[derive(Debug, Default)]
pub struct ToolOutput {
    /// The text blocks (and structured content), in order.
    pub text: String,
    pub attachments: Vec<Attachment>,
    /// Resources the server linked to rather than embedded.
    pub links: Vec<ResourceLink>,
    /// The server said the call failed (`isError: true`).
    pub is_error: bool,
}

/// Bytes the server sent that belong in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// `image`, `audio` or `resource`.
    pub kind: &'static str,
    pub mime_type: Option<String>,
    /// The resource's URI, for resources.
    pub uri: Option<String>,
    pub bytes: Vec<u8>,
}

impl Attachment {
    /// A file extension for its type (`bin` when unknown).
    pub fn extension(&self) -> &'static str {
        let mime = self.mime_type.as_deref().unwrap_or_default();
        let by_mime = match mime.split(';').next().unwrap_or_default().trim() {
            "image/png" => Some("png"),
            "image/jpeg" => Some("jpg"),
            "image/gif" => Some("gif"),
            "image/webp" => Some("webp"),
            "image/svg+xml" => Some("svg"),
            "audio/wav" | "audio/x-wav" | "audio/wave" => Some("wav"),
            "audio/mpeg" => Some("mp3"),
            "audio/ogg" => Some("ogg"),
            "application/json" => Some("json"),
            "application/pdf" => Some("pdf"),
            "text/markdown" => Some("md"),
            "text/html" => Some("html"),
            "text/csv" => Some("csv"),
            "text/plain" => Some("txt"),
            _ => None,
        };
        if let Some(ext) = by_mime {
            return ext;
        }
        // A resource's own name may say (`file:///…/notes.md`).
        let from_uri = self
            .uri
            .as_deref()
            .and_then(|uri| uri.rsplit('/').next())
            .and_then(|name| name.rsplit_once('.'))
            .map(|(_, ext)| ext);
        match from_uri {
            Some("md") => "md",
            Some("txt") => "txt",
            Some("json") => "json",
            Some("csv") => "csv",
            Some("html") => "html",
            Some("png") => "png",
            Some("jpg" | "jpeg") => "jpg",
            Some("pdf") => "pdf",
            _ if mime.starts_with("text/") => "txt",
            _ => "bin",
        }
    }
}

/// A `resource_link` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceLink {
    pub uri: String,
    pub name: String,
    pub mime_type: Option<String>,
}

/// Turns a call's result into text and attachments.
pub fn convert(result: CallToolResult) -> ToolOutput {
    let mut output = ToolOutput {
        is_error: result.is_error.unwrap_or(false),
        ..ToolOutput::default()
    };
    let mut texts: Vec<String> = Vec::new();
    let b64 = base64::engine::general_purpose::STANDARD;
    for block in result.content {
        match block {
            ContentBlock::Text(text) => texts.push(text.text),
            ContentBlock::Image(image) => match b64.decode(image.data.as_bytes()) {
                Ok(bytes) => output.attachments.push(Attachment {
                    kind: "image",
                    mime_type: Some(image.mime_type),
                    uri: None,
                    bytes,
                }),
                Err(e) => texts.push(format!(
                    "[an image the server sent is not valid base64: {e}]"
                )),
            },
            ContentBlock::Audio(audio) => match b64.decode(audio.data.as_bytes()) {
                Ok(bytes) => output.attachments.push(Attachment {
                    kind: "audio",
                    mime_type: Some(audio.mime_type),
                    uri: None,
                    bytes,
                }),
                Err(e) => texts.push(format!("[audio the server sent is not valid base64: {e}]")),
            },
            ContentBlock::Resource(embedded) => match resource_bytes(embedded.resource) {
                Ok(attachment) => output.attachments.push(attachment),
                Err(note) => texts.push(note),
            },
            ContentBlock::ResourceLink(link) => output.links.push(ResourceLink {
                uri: link.uri.clone(),
                name: link.name.clone(),
                mime_type: link.mime_type.clone(),
            }),
            _ => texts.push("[a content block of a kind ARS does not know was left out]".into()),
        }
    }
    output.text = texts.join("\n");
    if let Some(structured) = result.structured_content {
        let json = structured.to_string();
        let same = serde_json::from_str::<serde_json::Value>(output.text.trim())
            .is_ok_and(|text| text == structured);
        if !same && !says_all_of(&output.text, &structured) {
            if !output.text.is_empty() {
                output.text.push_str("\n\nstructuredContent: ");
            }
            output.text.push_str(&json);
        }
    }
    output
}

/// Whether `text` already says everything `structured` holds: each of its strings (and
/// numbers) appears in it. Servers often wrap their text as `{"content": "…"}`; the model
/// need not read it twice.
fn says_all_of(text: &str, structured: &serde_json::Value) -> bool {
    fn leaves<'a>(value: &'a serde_json::Value, out: &mut Vec<std::borrow::Cow<'a, str>>) {
        match value {
            serde_json::Value::String(s) => out.push(s.as_str().into()),
            serde_json::Value::Number(n) => out.push(n.to_string().into()),
            serde_json::Value::Array(items) => items.iter().for_each(|v| leaves(v, out)),
            serde_json::Value::Object(map) => map.values().for_each(|v| leaves(v, out)),
            serde_json::Value::Bool(_) | serde_json::Value::Null => {}
        }
    }
    if text.trim().is_empty() {
        return false;
    }
    let mut found = Vec::new();
    leaves(structured, &mut found);
    !found.is_empty() && found.iter().all(|leaf| text.contains(leaf.as_ref()))
}

/// An embedded resource as an attachment, or a note saying why not.
pub fn resource_bytes(resource: ResourceContents) -> Result<Attachment, String> {
    match resource {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            ..
        } => Ok(Attachment {
            kind: "resource",
            mime_type: mime_type.or_else(|| Some("text/plain".into())),
            uri: Some(uri),
            bytes: text.into_bytes(),
        }),
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => match base64::engine::general_purpose::STANDARD.decode(blob.as_bytes()) {
            Ok(bytes) => Ok(Attachment {
                kind: "resource",
                mime_type,
                uri: Some(uri),
                bytes,
            }),
            Err(e) => Err(format!("[resource {uri} is not valid base64: {e}]")),
        },
        _ => Err("[a resource of a kind ARS does not know was left out]".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Resource;

    #[test]
    fn text_blocks_are_joined_and_images_become_attachments() {
        let png = base64::engine::general_purpose::STANDARD.encode([0x89, b'P', b'N', b'G']);
        let result = CallToolResult::success(vec![
            ContentBlock::text("first"),
            ContentBlock::image(png, "image/png"),
            ContentBlock::text("second"),
        ]);
        let out = convert(result);
        assert_eq!(out.text, "first\nsecond");
        assert!(!out.is_error);
        assert_eq!(out.attachments.len(), 1);
        assert_eq!(out.attachments[0].bytes, vec![0x89, b'P', b'N', b'G']);
        assert_eq!(out.attachments[0].extension(), "png");
    }

    #[test]
    fn is_error_and_structured_content_are_kept() {
        let mut result = CallToolResult::error(vec![ContentBlock::text("bad input")]);
        result.structured_content = Some(serde_json::json!({"code": 7}));
        let out = convert(result);
        assert!(out.is_error);
        assert_eq!(out.text, "bad input\n\nstructuredContent: {\"code\":7}");

        // Text that already is (or says all of) the structured content is not repeated.
        let mut result = CallToolResult::success(vec![ContentBlock::text("{\"a\": 1}")]);
        result.structured_content = Some(serde_json::json!({"a": 1}));
        assert_eq!(convert(result).text, "{\"a\": 1}");
        let mut result = CallToolResult::success(vec![ContentBlock::text("file body")]);
        result.structured_content = Some(serde_json::json!({"content": "file body"}));
        assert_eq!(convert(result).text, "file body");
    }

    #[test]
    fn embedded_resources_and_links_are_separated() {
        let result = CallToolResult::success(vec![
            ContentBlock::embedded_text("test://static/resource/1", "Resource 1 text"),
            ContentBlock::resource_link(Resource::new("test://static/resource/2", "Resource 2")),
            ContentBlock::image("not base64!", "image/png"),
        ]);
        let out = convert(result);
        assert_eq!(out.attachments.len(), 1);
        assert_eq!(out.attachments[0].bytes, b"Resource 1 text");
        assert_eq!(out.attachments[0].extension(), "txt");
        assert_eq!(out.links[0].uri, "test://static/resource/2");
        assert!(out.text.contains("not valid base64"), "{}", out.text);
    }
}
