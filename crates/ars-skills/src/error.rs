//! The one error type of this crate.
//!
//! Every variant is a refusal of something a user sent (a SKILL.md, an archive, a folder), so
//! each message names what was wrong and the rule it broke, in words a skill author can act on.
//! Messages never echo large input back: YAML errors are cut short, paths are the offending
//! entry's name only.

/// Why a SKILL.md, an uploaded archive or a skill folder was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    /// The text does not start with a `---` line.
    #[error("SKILL.md must start with a `---` line that opens the YAML frontmatter")]
    MissingFrontmatter,
    /// The opening `---` has no closing `---` line.
    #[error("SKILL.md frontmatter is not terminated: add a `---` line after the YAML")]
    UnterminatedFrontmatter,
    /// The frontmatter is larger than [`crate::format::MAX_FRONTMATTER_BYTES`].
    #[error("SKILL.md frontmatter is larger than {limit} bytes")]
    FrontmatterTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The frontmatter is not valid YAML.
    #[error("SKILL.md frontmatter is not valid YAML: {0}")]
    FrontmatterSyntax(String),
    /// The frontmatter is valid YAML but not a mapping of keys to values.
    #[error("SKILL.md frontmatter must be a YAML mapping (`key: value` lines), not {found}")]
    FrontmatterNotMapping {
        /// What it is instead (`a list`, `a string`, `empty`, …).
        found: &'static str,
    },
    /// A frontmatter field is missing or breaks its rule.
    #[error("SKILL.md frontmatter: `{field}` {rule}")]
    Field {
        /// The frontmatter key (`name`, `description`, `metadata.author`, …).
        field: String,
        /// The rule it broke, as the end of a sentence.
        rule: String,
    },
    /// A skill or folder name breaks the naming rule (see [`crate::format::validate_name`]).
    #[error("skill name `{name}` is invalid: {rule}")]
    InvalidName {
        /// The name, cut short when very long.
        name: String,
        /// The rule it broke.
        rule: &'static str,
    },
    /// The bytes are not a readable zip archive.
    #[error("not a readable zip archive: {0}")]
    Zip(String),
    /// An entry's path could escape the skill folder or cannot be represented portably.
    #[error("archive entry `{path}` is refused: {reason}")]
    UnsafePath {
        /// The entry's name as stored (control characters escaped).
        path: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// An entry is a symbolic link.
    #[error("archive entry `{path}` is a symbolic link; skills may only contain plain files")]
    Symlink {
        /// The entry's name.
        path: String,
    },
    /// An entry is encrypted.
    #[error("archive entry `{path}` is encrypted; upload an archive without a password")]
    Encrypted {
        /// The entry's name.
        path: String,
    },
    /// The archive holds more files than allowed.
    #[error("the skill has more than {limit} files")]
    TooManyFiles {
        /// The limit.
        limit: usize,
    },
    /// One file is larger than allowed once decompressed.
    #[error("file `{path}` is larger than {limit} bytes once decompressed")]
    FileTooLarge {
        /// The file's path.
        path: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// All files together are larger than allowed once decompressed.
    #[error("the skill's files are larger than {limit} bytes in total once decompressed")]
    TotalTooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// Two entries have the same path.
    #[error("the path `{path}` appears more than once")]
    DuplicatePath {
        /// The repeated path.
        path: String,
    },
    /// The archive's directory lists one name twice (the zip reader keeps only one of them,
    /// so which one is not known).
    #[error("the archive lists the same path more than once")]
    DuplicateEntries,
    /// The archive is neither flat (SKILL.md at its root) nor one folder.
    #[error(
        "the archive must have SKILL.md at its root, or everything inside one folder named \
         after the skill; `{path}` is outside `{folder}/`"
    )]
    MixedLayout {
        /// The entry outside the folder.
        path: String,
        /// The folder the first entry was in.
        folder: String,
    },
    /// There is no SKILL.md where one is expected.
    #[error("the skill has no SKILL.md at its root")]
    MissingSkillMd,
    /// SKILL.md is not UTF-8 text.
    #[error("SKILL.md is not valid UTF-8 text")]
    SkillMdNotUtf8,
    /// The name in SKILL.md and the folder holding it differ.
    #[error("name `{name}` in SKILL.md differs from its folder `{folder}`")]
    FolderMismatch {
        /// The frontmatter name.
        name: String,
        /// The folder name.
        folder: String,
    },
}
