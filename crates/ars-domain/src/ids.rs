//! Identifier newtypes.
//!
//! Ids are UUIDv7 strings: time-ordered (so indexes stay append-friendly), globally unique
//! across instances, and plain text in every store. Threads and runs (and child threads, whose
//! ids embed their parent's) use the same text representation.

use std::fmt;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

macro_rules! uuid_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[derive(utoipa::ToSchema)]
        #[serde(transparent)]
        #[schema(value_type = String, format = Uuid)]
        pub struct $name(Uuid);

        impl $name {
            /// A fresh, time-ordered id.
            pub fn new() -> Self {
                Self(Uuid::now_v7())
            }

            /// Parses an id from its text form; `None` when it is not a UUID.
            pub fn parse(text: &str) -> Option<Self> {
                Uuid::parse_str(text).ok().map(Self)
            }

            /// Wraps an existing UUID (used for fixed, well-known rows).
            pub const fn from_uuid(uuid: Uuid) -> Self {
                Self(uuid)
            }

            pub fn as_uuid(&self) -> Uuid {
                self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.hyphenated().fmt(f)
            }
        }
    };
}

uuid_id!(
    /// Identifies a user.
    UserId
);
uuid_id!(
    /// Identifies an agent row (normal agent or subagent).
    AgentId
);
uuid_id!(
    /// Identifies an API token (not the secret itself).
    TokenId
);

uuid_id!(
    /// Identifies a run.
    RunId
);
uuid_id!(
    /// Identifies a committed message.
    MessageId
);
uuid_id!(
    /// Identifies a model provider stored in the database (config providers have none).
    ModelProviderId
);
uuid_id!(
    /// Identifies a shared skill (its name is unique too, but may be what a client typed).
    SkillId
);
uuid_id!(
    /// Identifies an MCP server entry (its slug is unique too, and what agents name).
    McpServerId
);
uuid_id!(
    /// Identifies a knowledge base (its slug is unique too, and what agents name).
    KnowledgeBaseId
);
uuid_id!(
    /// Identifies a document of a knowledge base; it keeps its id when re-uploaded.
    KbDocumentId
);

/// The fixed id of the built-in `general-purpose` subagent, created by a migration.
pub const GENERAL_PURPOSE_ID: AgentId =
    AgentId::from_uuid(Uuid::from_u128(0x0000_0000_0000_7000_8000_0000_0000_0001));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_round_trips_and_rejects_garbage() {
        let id = AgentId::new();
        assert_eq!(AgentId::parse(&id.to_string()), Some(id));
        assert_eq!(AgentId::parse("not-a-uuid"), None);
        assert_eq!(
            GENERAL_PURPOSE_ID.to_string(),
            "00000000-0000-7000-8000-000000000001"
        );
        let skill = SkillId::new();
        assert_eq!(SkillId::parse(&skill.to_string()), Some(skill));
        assert_eq!(SkillId::parse(""), None);
    }
}
