//! The names MCP tools are offered to models under: `mcp__<server>__<tool>`.
//!
//! Model APIs take tool names of at most 64 characters of `[A-Za-z0-9_-]`. A name that fits
//! as it is stays as it is; one that does not (too long, or a tool name with other
//! characters, such as a `.`) is cut and given a suffix from a hash of the server slug and the
//! tool's own name, so it is the same on every run and every instance, and two tools never
//! share one.

use sha2::{Digest, Sha256};

/// The prefix of every MCP tool's name.
pub const PREFIX: &str = "mcp__";
/// Between the server's slug and the tool's name.
pub const SEPARATOR: &str = "__";
/// The longest tool name models take (OpenAI's limit, the strictest of the common APIs).
pub const MAX_TOOL_NAME: usize = 64;
/// Hex digits of the hash a shortened name ends with.
const HASH_DIGITS: usize = 8;

/// The name tool `tool` of server `slug` is offered under.
pub fn tool_name(slug: &str, tool: &str) -> String {
    let full = format!("{PREFIX}{slug}{SEPARATOR}{tool}");
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if full.len() <= MAX_TOOL_NAME && full.chars().all(allowed) {
        return full;
    }
    let cleaned: String = full
        .chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .collect();
    let digest = Sha256::digest(format!("{slug}\0{tool}").as_bytes());
    let hash: String = digest
        .iter()
        .take(HASH_DIGITS / 2)
        .map(|b| format!("{b:02x}"))
        .collect();
    let keep = MAX_TOOL_NAME - HASH_DIGITS - 1;
    let head: String = cleaned.chars().take(keep).collect();
    format!("{head}_{hash}")
}

/// The server slug of an MCP tool name (`mcp__<slug>__…`), for showing where a tool came from.
/// Slugs never hold `_`, so the first separator after the prefix ends the slug.
pub fn server_of(tool_name: &str) -> Option<&str> {
    let rest = tool_name.strip_prefix(PREFIX)?;
    let end = rest.find(SEPARATOR)?;
    (end > 0).then(|| &rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_that_fits_is_kept_as_it_is() {
        assert_eq!(tool_name("everything", "echo"), "mcp__everything__echo");
        assert_eq!(tool_name("fs", "read_text_file"), "mcp__fs__read_text_file");
        assert_eq!(server_of("mcp__fs__read_text_file"), Some("fs"));
        assert_eq!(server_of("read_file"), None);
        assert_eq!(server_of("mcp____x"), None);
    }

    #[test]
    fn long_or_odd_names_are_shortened_deterministically_and_stay_distinct() {
        let slug = "a-rather-long-server-slug";
        let a = tool_name(slug, "get_everything_about_the_weather_today");
        let b = tool_name(slug, "get_everything_about_the_weather_tomorrow");
        assert_eq!(a.len(), MAX_TOOL_NAME);
        assert_eq!(b.len(), MAX_TOOL_NAME);
        assert_ne!(a, b);
        assert_eq!(a, tool_name(slug, "get_everything_about_the_weather_today"));
        assert!(a.starts_with("mcp__a-rather-long-server-slug__get_everything"));
        assert_eq!(server_of(&a), Some(slug));
        // A slug too long to leave room keeps the name within the limit all the same.
        let huge = "s".repeat(64);
        assert_eq!(tool_name(&huge, "t").len(), MAX_TOOL_NAME);
        // Characters models refuse are replaced, and the hash keeps `a.b` and `a_b` apart.
        let dotted = tool_name("x", "files.read");
        assert!(
            dotted
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
        assert_ne!(dotted, tool_name("x", "files_read"));
        assert_eq!(tool_name("x", "files_read"), "mcp__x__files_read");
    }
}
