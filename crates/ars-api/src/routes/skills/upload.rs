//! Reading an upload: a zip (or `.skill`) archive or a lone SKILL.md, into a validated
//! [`SkillBundle`]. The rules are `ars-skills`'; this module picks the reader and turns a
//! refusal into a 422 that names the problem.

use serde::Deserialize;
use utoipa::ToSchema;

use ars_domain::{SkillContent, SkillFile};
use ars_skills::{SkillBundle, SkillError, UploadLimits, read_skill_md, read_zip};

use crate::ApiError;

/// The largest upload body: the decompressed limit of a skill (20 MiB) and room for a zip's
/// own overhead. Larger bodies are a 413 before anything is parsed.
pub const UPLOAD_BODY_LIMIT: usize = 25 * 1024 * 1024;

/// Where an uploaded skill goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum UploadTarget {
    /// A store row, private to the uploader until shared (`share_config`).
    #[default]
    Shared,
    /// A folder in the uploader's workspace, `/home/gem/user-data/agents/skills/<name>/`.
    Personal,
}

/// The bytes of a zip (or `.skill`) archive holding a skill folder.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)]
pub struct SkillArchive(Vec<u8>);

/// A SKILL.md: YAML frontmatter between `---` lines (`name`, `description`, …), then Markdown.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct SkillMarkdown(String);

/// The start of every zip archive with at least one entry (a local file header).
const ZIP_MAGIC: &[u8] = b"PK\x03\x04";

/// What was sent, by its first bytes and then its declared type.
enum Kind {
    Zip,
    SkillMd,
}

fn kind(content_type: Option<&str>, body: &[u8]) -> Result<Kind, ApiError> {
    if body.starts_with(ZIP_MAGIC) {
        return Ok(Kind::Zip);
    }
    let mime = content_type
        .and_then(|v| v.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase());
    match mime.as_deref() {
        Some("application/zip" | "application/x-zip-compressed" | "application/octet-stream") => {
            Ok(Kind::Zip)
        }
        Some("text/markdown" | "text/x-markdown" | "text/plain") => Ok(Kind::SkillMd),
        _ => Err(ApiError::UnsupportedMediaType {
            expected: "a zip archive (`Content-Type: application/zip` or \
                       `application/octet-stream`) or a SKILL.md (`text/markdown` or `text/plain`)",
        }),
    }
}

/// Parses an upload body under the default [`UploadLimits`].
pub fn parse(content_type: Option<&str>, body: &[u8]) -> Result<SkillBundle, ApiError> {
    let limits = UploadLimits::default();
    let bundle = match kind(content_type, body)? {
        Kind::Zip => read_zip(body, &limits),
        // The archive reader measures each file; a lone SKILL.md is one file.
        Kind::SkillMd if body.len() as u64 > limits.max_file_bytes => {
            Err(SkillError::FileTooLarge {
                path: "SKILL.md".into(),
                limit: limits.max_file_bytes,
            })
        }
        Kind::SkillMd => read_skill_md(body),
    };
    bundle.map_err(skill_error)
}

/// A refused skill as a 422; `field` names the SKILL.md frontmatter key at fault
/// (`frontmatter.<key>`), or `SKILL.md` for the file as a whole.
pub fn skill_error(err: SkillError) -> ApiError {
    let field = match &err {
        SkillError::Field { field, .. } => Some(format!("frontmatter.{field}")),
        SkillError::InvalidName { .. } | SkillError::FolderMismatch { .. } => {
            Some("frontmatter.name".to_owned())
        }
        SkillError::MissingFrontmatter
        | SkillError::UnterminatedFrontmatter
        | SkillError::FrontmatterTooLarge { .. }
        | SkillError::FrontmatterSyntax(_)
        | SkillError::FrontmatterNotMapping { .. }
        | SkillError::MissingSkillMd
        | SkillError::SkillMdNotUtf8 => Some("SKILL.md".to_owned()),
        _ => None,
    };
    ApiError::Unprocessable {
        message: err.to_string(),
        field,
    }
}

/// A bundle as the store keeps a version of a shared skill.
pub fn content(bundle: &SkillBundle) -> SkillContent {
    let manifest = &bundle.manifest;
    SkillContent {
        name: manifest.name.clone(),
        description: manifest.description.clone(),
        license: manifest.license.clone(),
        compatibility: manifest.compatibility.clone(),
        metadata: manifest.metadata.clone(),
        allowed_tools: manifest.allowed_tools.clone(),
        version: bundle.version(),
        files: bundle
            .files
            .iter()
            .map(|(path, bytes)| SkillFile {
                path: path.clone(),
                content: bytes.clone(),
            })
            .collect(),
    }
}
