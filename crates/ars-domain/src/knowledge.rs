//! Knowledge bases: collections of documents that agents search, the documents uploaded into
//! them with their ingestion status, the chunks a document is cut into, and the rules every
//! write of one obeys.
//!
//! Knowledge bases share like agents, skills and MCP servers ([`ShareConfig`], through
//! [`crate::Shared`]). A document is stored whole (its original bytes), then ingested in the
//! background: `pending` → `processing` → `ready` (or `error`). Re-uploading a document of the
//! same name replaces it in place as a new version; its previous chunks stay searchable until
//! the new version's are ready.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ids::{KbDocumentId, KnowledgeBaseId, UserId};
use crate::{ShareConfig, ValidationError, mcp_server};

/// The smallest chunk size, in characters.
pub const CHUNK_SIZE_MIN: u32 = 100;
/// The largest chunk size, in characters.
pub const CHUNK_SIZE_MAX: u32 = 4000;
/// The longest embedding provider or model name.
pub const EMBEDDING_NAME_MAX_CHARS: usize = 128;
/// The longest document name.
pub const DOCUMENT_NAME_MAX_CHARS: usize = 255;

/// A knowledge base as stored, with the counts of its documents as read.
#[derive(Clone, Debug, PartialEq)]
pub struct KnowledgeBase {
    pub id: KnowledgeBaseId,
    pub fields: KnowledgeBaseFields,
    /// `None` once the owner's account is gone: admins and managers still manage it.
    pub owner_id: Option<UserId>,
    /// Computed by the store when it reads the knowledge base, never written.
    pub counts: KbCounts,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Everything a write of a knowledge base sets.
#[derive(Clone, Debug, PartialEq)]
pub struct KnowledgeBaseFields {
    /// What agents name the knowledge base by; it never changes once created (see
    /// [`validate_slug`]).
    pub slug: String,
    pub name: String,
    pub description: String,
    pub settings: KbSettings,
    pub share_config: ShareConfig,
}

impl KnowledgeBaseFields {
    /// Checks every rule of a write and answers the fields as they are stored: name and
    /// description trimmed, share lists sorted. The first broken rule is reported.
    pub fn validate(self) -> Result<Self, ValidationError> {
        validate_slug(&self.slug)?;
        let name = mcp_server::normalize_name(&self.name)?;
        let description = mcp_server::normalize_description(&self.description)?;
        self.settings.validate()?;
        Ok(Self {
            slug: self.slug,
            name,
            description,
            settings: self.settings,
            share_config: self.share_config.normalized(),
        })
    }
}

/// How a knowledge base cuts its documents into chunks and embeds them. Stored as JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default)]
pub struct KbSettings {
    /// The most characters a chunk holds (100-4000).
    pub chunk_size: u32,
    /// Characters of a chunk's end repeated at the start of the next (at most half a chunk).
    pub chunk_overlap: u32,
    /// The model that embeds chunks for semantic search; `None`: keyword search only.
    pub embedding: Option<EmbeddingModel>,
}

impl Default for KbSettings {
    fn default() -> Self {
        Self {
            chunk_size: 800,
            chunk_overlap: 120,
            embedding: None,
        }
    }
}

impl KbSettings {
    /// Checks the chunk size (100-4000), the overlap (at most half the chunk size) and, when
    /// set, the embedding model's names (1-128 characters each).
    pub fn validate(&self) -> Result<(), ValidationError> {
        if !(CHUNK_SIZE_MIN..=CHUNK_SIZE_MAX).contains(&self.chunk_size) {
            return Err(ValidationError::invalid(
                "settings.chunk_size",
                format!("must be {CHUNK_SIZE_MIN}-{CHUNK_SIZE_MAX} characters"),
            ));
        }
        if self.chunk_overlap > self.chunk_size / 2 {
            return Err(ValidationError::invalid(
                "settings.chunk_overlap",
                format!(
                    "must be at most half the chunk size ({})",
                    self.chunk_size / 2
                ),
            ));
        }
        if let Some(embedding) = &self.embedding {
            for (field, value) in [
                ("settings.embedding.provider", &embedding.provider),
                ("settings.embedding.model", &embedding.model),
            ] {
                if value.trim().is_empty() || value.chars().count() > EMBEDDING_NAME_MAX_CHARS {
                    return Err(ValidationError::length(field, EMBEDDING_NAME_MAX_CHARS));
                }
            }
        }
        Ok(())
    }
}

/// An embedding model, named as the model providers name it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct EmbeddingModel {
    pub provider: String,
    pub model: String,
}

/// What a knowledge base holds, counted when it is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct KbCounts {
    pub documents: u64,
    /// Chunks stored, so searchable (a re-uploaded document's old ones included).
    pub chunks: u64,
    /// The documents' sizes, summed.
    pub bytes: u64,
    pub pending: u64,
    pub processing: u64,
    /// Documents whose ingestion failed (status `error`).
    pub failed: u64,
}

/// Knowledge base slugs follow the MCP server rule ([`mcp_server::validate_slug`]): 1-64
/// characters of `a-z`, `0-9` and `-`, starting and ending with a letter or digit, so agents
/// name both kinds of resource alike.
pub fn validate_slug(slug: &str) -> Result<(), ValidationError> {
    mcp_server::validate_slug(slug)
}

/// A document uploaded into a knowledge base, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct KbDocument {
    pub id: KbDocumentId,
    pub kb_id: KnowledgeBaseId,
    /// Unique within its knowledge base (see [`validate_document_name`]); uploading the same
    /// name again replaces the document.
    pub name: String,
    /// The file's extension, lower case (`pdf`, `md`; empty without one): see
    /// [`document_format`].
    pub format: String,
    pub size_bytes: u64,
    /// The SHA-256 of the bytes, as 64 lower-case hex digits.
    pub sha256: String,
    /// 1 at the first upload, one more at each replacement. Ingestion writes only for the
    /// version it claimed, so a stale worker's writes are no-ops.
    pub version: u32,
    pub status: KbDocumentStatus,
    /// How far ingestion of this version has come, 0.0 to 1.0.
    pub progress: f32,
    /// Why ingestion failed; set exactly when the status is `error`.
    pub error: Option<String>,
    /// The chunks stored for it: the last finished version's, until a newer one finishes.
    pub chunk_count: u64,
    /// How many times this version was claimed for ingestion (a worker that died counts).
    pub attempts: u32,
    /// Who uploaded this version; `None` once their account is gone.
    pub uploaded_by: Option<UserId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A document to upload: inserted under `id`, or, when its knowledge base already holds a
/// document of that name, replacing that one (which keeps its own id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewKbDocument {
    pub id: KbDocumentId,
    pub name: String,
    pub format: String,
    pub bytes: Vec<u8>,
    /// The SHA-256 of `bytes`, as 64 lower-case hex digits.
    pub sha256: String,
    pub uploaded_by: Option<UserId>,
}

impl NewKbDocument {
    /// A new document named `name` holding `bytes`: a fresh id, the format from the name,
    /// the bytes' SHA-256.
    pub fn new(name: String, bytes: Vec<u8>, uploaded_by: Option<UserId>) -> Self {
        use sha2::{Digest, Sha256};
        let sha256 = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Self {
            id: KbDocumentId::new(),
            format: document_format(&name),
            name,
            bytes,
            sha256,
            uploaded_by,
        }
    }
}

/// Where a document is in ingestion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KbDocumentStatus {
    /// Uploaded, waiting for a worker.
    Pending,
    /// A worker holds it under a lease.
    Processing,
    /// Its chunks are stored and searchable.
    Ready,
    /// Ingestion failed; it stays so until retried or replaced.
    Error,
}

impl KbDocumentStatus {
    pub const ALL: [Self; 4] = [Self::Pending, Self::Processing, Self::Ready, Self::Error];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Processing => "processing",
            Self::Ready => "ready",
            Self::Error => "error",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// A document name: 1-255 characters, none of them `/`, `\`, `[`, `]`, NUL or another control
/// character, and not `.` or `..`, so a name is always one plain file name and a citation
/// (`[kb:name#3]`) always reads back.
pub fn validate_document_name(name: &str) -> Result<(), ValidationError> {
    let bad = name.is_empty()
        || name.chars().count() > DOCUMENT_NAME_MAX_CHARS
        || name == "."
        || name == ".."
        || name
            .chars()
            .any(|c| matches!(c, '/' | '\\' | '[' | ']') || crate::text::forbidden_in_name(c));
    if bad {
        return Err(ValidationError::invalid(
            "name",
            format!(
                "must be 1-{DOCUMENT_NAME_MAX_CHARS} characters without '/', '\\', '[', ']', \
                 control characters or bidirectional controls (such as U+202E), and not '.' or \
                 '..'"
            ),
        ));
    }
    Ok(())
}

/// The format of a document named `name`: its extension in lower case (`Report.PDF` → `pdf`),
/// empty when it has none (`README`, `.env`).
pub fn document_format(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => extension.to_lowercase(),
        _ => String::new(),
    }
}

/// One chunk of a document, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct KbChunk {
    pub document_id: KbDocumentId,
    pub kb_id: KnowledgeBaseId,
    /// 0, 1, 2, … in document order.
    pub ordinal: u32,
    /// The headings above it, outermost first.
    pub heading_path: Vec<String>,
    /// Byte offsets of the chunk in the document's extracted text.
    pub start: u64,
    pub end: u64,
    pub text: String,
    pub embedding: Option<Vec<f32>>,
}

impl KbChunk {
    /// The chunk's id as text, `<document id>#<ordinal>`: what a search index keys it by.
    pub fn id(&self) -> String {
        chunk_id(self.document_id, self.ordinal)
    }
}

/// A chunk to store for a document (which gives it its document and knowledge base).
#[derive(Clone, Debug, PartialEq)]
pub struct NewKbChunk {
    pub ordinal: u32,
    pub heading_path: Vec<String>,
    pub start: u64,
    pub end: u64,
    pub text: String,
    pub embedding: Option<Vec<f32>>,
}

/// The text id of chunk `ordinal` of `document`: `<document id>#<ordinal>`.
pub fn chunk_id(document: KbDocumentId, ordinal: u32) -> String {
    format!("{document}#{ordinal}")
}

/// The document and ordinal a chunk id names; `None` when it is not one.
pub fn parse_chunk_id(text: &str) -> Option<(KbDocumentId, u32)> {
    let (document, ordinal) = text.split_once('#')?;
    Some((KbDocumentId::parse(document)?, ordinal.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ShareConfig, Visibility};

    fn fields() -> KnowledgeBaseFields {
        KnowledgeBaseFields {
            slug: "handbook".into(),
            name: "Handbook".into(),
            description: "Policies".into(),
            settings: KbSettings::default(),
            share_config: ShareConfig::default(),
        }
    }

    #[test]
    fn slugs_follow_the_mcp_server_rule() {
        for good in ["handbook", "hr-2024", "a", "9"] {
            assert!(validate_slug(good).is_ok(), "{good}");
        }
        let long = "a".repeat(65);
        for bad in ["", "-a", "a-", "Handbook", "hr_docs", "a b", long.as_str()] {
            assert_eq!(validate_slug(bad).unwrap_err().field(), "slug", "{bad}");
        }
    }

    #[test]
    fn validate_trims_the_name_and_description_and_sorts_the_shares() {
        let (a, b) = (UserId::new(), UserId::new());
        let written = KnowledgeBaseFields {
            name: "  Handbook ".into(),
            description: " 员工手册 ".into(),
            share_config: ShareConfig {
                visibility: Visibility::Users,
                user_ids: vec![b, a, b],
                manager_ids: Vec::new(),
            },
            ..fields()
        };
        let stored = written.validate().unwrap();
        assert_eq!(stored.name, "Handbook");
        assert_eq!(stored.description, "员工手册");
        let mut sorted = vec![a, b];
        sorted.sort();
        assert_eq!(stored.share_config.user_ids, sorted);
    }

    #[test]
    fn validate_names_the_first_broken_field() {
        let cases = [
            (
                KnowledgeBaseFields {
                    slug: "Bad".into(),
                    ..fields()
                },
                "slug",
            ),
            (
                KnowledgeBaseFields {
                    name: " ".into(),
                    ..fields()
                },
                "name",
            ),
            (
                KnowledgeBaseFields {
                    name: "a\u{7}b".into(),
                    ..fields()
                },
                "name",
            ),
            (
                KnowledgeBaseFields {
                    name: "n".repeat(129),
                    ..fields()
                },
                "name",
            ),
            (
                KnowledgeBaseFields {
                    description: "d".repeat(4001),
                    ..fields()
                },
                "description",
            ),
            (
                KnowledgeBaseFields {
                    settings: KbSettings {
                        chunk_size: 50,
                        ..KbSettings::default()
                    },
                    ..fields()
                },
                "settings.chunk_size",
            ),
        ];
        for (written, field) in cases {
            assert_eq!(written.validate().unwrap_err().field(), field);
        }
        assert!(
            KnowledgeBaseFields {
                description: "d".repeat(4000),
                ..fields()
            }
            .validate()
            .is_ok()
        );
    }

    #[test]
    fn a_knowledge_base_shares_like_every_shared_resource() {
        use crate::{Caller, Role};
        let (owner, manager, listed, stranger) =
            (UserId::new(), UserId::new(), UserId::new(), UserId::new());
        let now = crate::time::now();
        let kb = |visibility| KnowledgeBase {
            id: KnowledgeBaseId::new(),
            fields: KnowledgeBaseFields {
                share_config: ShareConfig {
                    visibility,
                    user_ids: vec![listed],
                    manager_ids: vec![manager],
                },
                ..fields()
            },
            owner_id: Some(owner),
            counts: KbCounts::default(),
            created_at: now,
            updated_at: now,
        };
        let user = |id| Caller {
            id,
            role: Role::User,
        };
        let private = kb(Visibility::Private);
        assert!(user(owner).can_delete(&private) && user(manager).can_manage(&private));
        assert!(!user(listed).can_view(&private) && !user(stranger).can_view(&private));
        assert!(user(listed).can_view(&kb(Visibility::Users)));
        assert!(!user(listed).can_manage(&kb(Visibility::Users)));
        assert!(user(stranger).can_view(&kb(Visibility::Public)));
        let admin = Caller {
            id: stranger,
            role: Role::Admin,
        };
        assert!(admin.can_delete(&private));
    }

    #[test]
    fn chunk_sizes_are_100_to_4000_and_the_overlap_at_most_half() {
        let settings = |chunk_size, chunk_overlap| KbSettings {
            chunk_size,
            chunk_overlap,
            embedding: None,
        };
        for (size, overlap) in [(100, 0), (100, 50), (800, 120), (4000, 2000)] {
            assert!(
                settings(size, overlap).validate().is_ok(),
                "{size}/{overlap}"
            );
        }
        for (size, overlap, field) in [
            (99, 0, "settings.chunk_size"),
            (4001, 0, "settings.chunk_size"),
            (0, 0, "settings.chunk_size"),
            (100, 51, "settings.chunk_overlap"),
            (801, 401, "settings.chunk_overlap"),
        ] {
            let err = settings(size, overlap).validate().unwrap_err();
            assert_eq!(err.field(), field, "{size}/{overlap}");
        }
    }

    #[test]
    fn an_embedding_model_names_a_provider_and_a_model() {
        let with = |provider: &str, model: &str| KbSettings {
            embedding: Some(EmbeddingModel {
                provider: provider.into(),
                model: model.into(),
            }),
            ..KbSettings::default()
        };
        assert!(with("openai", "text-embedding-3-small").validate().is_ok());
        let long = "m".repeat(EMBEDDING_NAME_MAX_CHARS + 1);
        for (provider, model, field) in [
            ("", "m", "settings.embedding.provider"),
            (" ", "m", "settings.embedding.provider"),
            ("p", "", "settings.embedding.model"),
            ("p", long.as_str(), "settings.embedding.model"),
        ] {
            let err = with(provider, model).validate().unwrap_err();
            assert_eq!(err.field(), field, "{provider}/{model}");
        }
    }

    #[test]
    fn settings_are_stored_as_json_and_missing_keys_take_the_defaults() {
        let settings = KbSettings {
            embedding: Some(EmbeddingModel {
                provider: "local".into(),
                model: "bge-m3".into(),
            }),
            ..KbSettings::default()
        };
        let json = serde_json::to_value(&settings).unwrap();
        assert_eq!(json["chunk_size"], 800);
        assert_eq!(json["chunk_overlap"], 120);
        assert_eq!(json["embedding"]["model"], "bge-m3");
        assert_eq!(
            serde_json::from_value::<KbSettings>(json).unwrap(),
            settings
        );
        let defaults: KbSettings = serde_json::from_str("{}").unwrap();
        assert_eq!(defaults, KbSettings::default());
    }

    #[test]
    fn document_names_are_plain_file_names() {
        let longest = "n".repeat(DOCUMENT_NAME_MAX_CHARS);
        for good in [
            "report.pdf",
            "员工手册 2024.docx",
            ".env",
            "a..b",
            longest.as_str(),
        ] {
            assert!(validate_document_name(good).is_ok(), "{good}");
        }
        let long = "n".repeat(DOCUMENT_NAME_MAX_CHARS + 1);
        for bad in [
            "",
            ".",
            "..",
            "dir/file.txt",
            "dir\\file.txt",
            "nul\0.txt",
            "line\nbreak.txt",
            "tab\t.txt",
            "[draft].md",
            "notes].md",
            long.as_str(),
        ] {
            let err = validate_document_name(bad).unwrap_err();
            assert_eq!(err.field(), "name", "{bad:?}");
        }
    }

    #[test]
    fn a_document_s_format_is_its_lower_case_extension() {
        assert_eq!(document_format("Report.PDF"), "pdf");
        assert_eq!(document_format("notes.tar.gz"), "gz");
        assert_eq!(document_format("README"), "");
        assert_eq!(document_format(".env"), "");
        assert_eq!(document_format("trailing."), "");
    }

    #[test]
    fn statuses_round_trip_through_their_names() {
        for status in KbDocumentStatus::ALL {
            assert_eq!(KbDocumentStatus::parse(status.as_str()), Some(status));
            let json = serde_json::to_value(status).unwrap();
            assert_eq!(json, status.as_str());
        }
        assert_eq!(KbDocumentStatus::parse("done"), None);
    }

    #[test]
    fn a_chunk_id_is_its_document_and_ordinal() {
        let document = KbDocumentId::new();
        let chunk = KbChunk {
            document_id: document,
            kb_id: KnowledgeBaseId::new(),
            ordinal: 7,
            heading_path: vec!["Intro".into()],
            start: 0,
            end: 5,
            text: "hello".into(),
            embedding: None,
        };
        assert_eq!(chunk.id(), format!("{document}#7"));
        assert_eq!(parse_chunk_id(&chunk.id()), Some((document, 7)));
        for bad in [
            "",
            "#1",
            "not-a-uuid#1",
            &format!("{document}"),
            &format!("{document}#x"),
        ] {
            assert_eq!(parse_chunk_id(bad), None, "{bad}");
        }
    }
}
