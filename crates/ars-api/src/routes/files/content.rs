//! How a downloaded file is presented: its `Content-Type` (from the extension, or from its
//! first bytes when the extension says nothing), whether a browser may show it inline, and the
//! headers that keep a file an agent wrote from acting as part of the UI.

use axum::http::HeaderValue;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// How many of a file's first bytes are read to tell text from binary when its extension does
/// not say.
pub(super) const SNIFF_BYTES: u64 = 8192;

/// Sent with every file: no script, no plugin, no request anywhere, and a unique origin
/// (`sandbox`), so an HTML or SVG file opened from the API cannot act in the UI's origin.
/// Inline styles and `data:` images keep a simple HTML report readable.
pub(super) const FILE_CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox";

/// What a file is served as.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Presentation {
    /// The `Content-Type`, with `charset=utf-8` for text.
    pub(super) content_type: String,
    /// Whether a browser may show it in place (text, images, audio, video, PDF, JSON); every
    /// other type is an attachment.
    pub(super) inline: bool,
}

/// Source and configuration files that the MIME tables know as something else (`.ts` as an
/// MPEG transport stream, `.rs` as nothing at all) or as an executable type: in a workdir they
/// are text.
const TEXT_EXTENSIONS: &[&str] = &[
    "bash",
    "c",
    "cc",
    "cfg",
    "conf",
    "cpp",
    "cs",
    "cts",
    "diff",
    "dockerfile",
    "env",
    "go",
    "h",
    "hpp",
    "ini",
    "java",
    "jl",
    "kt",
    "kts",
    "lock",
    "log",
    "lua",
    "mts",
    "patch",
    "php",
    "pl",
    "py",
    "r",
    "rb",
    "rs",
    "scala",
    "sh",
    "sql",
    "svelte",
    "swift",
    "tex",
    "toml",
    "ts",
    "tsx",
    "vue",
    "yaml",
    "yml",
    "zsh",
];

/// The presentation of the file `name` whose first bytes are `head` (`None`: not read, because
/// the extension decided).
pub(super) fn present(name: &str, head: Option<&[u8]>) -> Presentation {
    let mime = guess(name).or_else(|| head.filter(|h| looks_like_text(h)).map(|_| text_plain()));
    let mime = mime.unwrap_or(mime_guess::mime::APPLICATION_OCTET_STREAM);
    let inline = matches!(mime.type_().as_str(), "text" | "image" | "audio" | "video")
        || matches!(mime.essence_str(), "application/pdf" | "application/json");
    let content_type = if mime.type_() == mime_guess::mime::TEXT {
        format!("{}; charset=utf-8", mime.essence_str())
    } else {
        mime.essence_str().to_owned()
    };
    Presentation {
        content_type,
        inline,
    }
}

/// What the extension says, when it says anything useful.
pub(super) fn guess(name: &str) -> Option<mime_guess::Mime> {
    let extension = std::path::Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if extension
        .as_deref()
        .is_some_and(|e| TEXT_EXTENSIONS.contains(&e))
    {
        return Some(text_plain());
    }
    mime_guess::from_path(name)
        .first()
        .filter(|m| *m != mime_guess::mime::APPLICATION_OCTET_STREAM)
}

fn text_plain() -> mime_guess::Mime {
    mime_guess::mime::TEXT_PLAIN
}

/// UTF-8 without NUL bytes, allowing a character cut off at the end of the sample.
fn looks_like_text(head: &[u8]) -> bool {
    if head.contains(&0) {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        // Only an incomplete sequence at the very end: the sample cut a character.
        Err(err) => err.error_len().is_none() && head.len() - err.valid_up_to() < 4,
    }
}

/// RFC 5987 `attr-char`s: what may stand unencoded in `filename*`.
const ATTR_CHAR: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'!')
    .remove(b'#')
    .remove(b'$')
    .remove(b'&')
    .remove(b'+')
    .remove(b'-')
    .remove(b'.')
    .remove(b'^')
    .remove(b'_')
    .remove(b'`')
    .remove(b'|')
    .remove(b'~');

/// `inline` or `attachment`, with the file name twice (RFC 6266): an ASCII fallback for old
/// clients (`filename="…"`, anything else replaced by `_`) and the exact UTF-8 name
/// percent-encoded (`filename*=UTF-8''…`), which every current browser prefers.
pub(crate) fn disposition(name: &str, inline: bool) -> HeaderValue {
    let fallback: String = name
        .chars()
        .map(|c| {
            if (c.is_ascii_graphic() && c != '"' && c != '\\') || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let kind = if inline { "inline" } else { "attachment" };
    let encoded = utf8_percent_encode(name, ATTR_CHAR);
    let value = format!("{kind}; filename=\"{fallback}\"; filename*=UTF-8''{encoded}");
    // Only visible ASCII is left in `value`; the fallback never fails in practice.
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("attachment"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, head: Option<&[u8]>, content_type: &str, inline: bool) {
        assert_eq!(
            present(name, head),
            Presentation {
                content_type: content_type.into(),
                inline
            },
            "{name}"
        );
    }

    #[test]
    fn types_come_from_the_extension_then_the_first_bytes() {
        check("a.txt", None, "text/plain; charset=utf-8", true);
        check("README.md", None, "text/markdown; charset=utf-8", true);
        check("data.csv", None, "text/csv; charset=utf-8", true);
        check("page.html", None, "text/html; charset=utf-8", true);
        check("logo.svg", None, "image/svg+xml", true);
        check("photo.JPG", None, "image/jpeg", true);
        check("doc.pdf", None, "application/pdf", true);
        check("out.json", None, "application/json", true);
        check("main.ts", None, "text/plain; charset=utf-8", true);
        check("lib.rs", None, "text/plain; charset=utf-8", true);
        check("run.sh", None, "text/plain; charset=utf-8", true);
        check("bundle.zip", None, "application/zip", false);
        check(
            "Makefile",
            Some(b"all:\n\techo hi\n"),
            "text/plain; charset=utf-8",
            true,
        );
        check(
            "blob",
            Some(b"\x00\x01\x02"),
            "application/octet-stream",
            false,
        );
        check("blob", Some(b"\xff\xfe"), "application/octet-stream", false);
        // A sample that cuts a character in two is still text.
        check(
            "notes",
            Some(&"数据".as_bytes()[..4]),
            "text/plain; charset=utf-8",
            true,
        );
        check("empty", Some(b""), "text/plain; charset=utf-8", true);
        check("program.exe", None, "application/octet-stream", false);
        check("archive.tar.gz", None, "application/gzip", false);
    }

    #[test]
    fn names_are_sent_as_ascii_and_as_utf8() {
        assert_eq!(
            disposition("报告 2024.pdf", true),
            "inline; filename=\"__ 2024.pdf\"; filename*=UTF-8''%E6%8A%A5%E5%91%8A%202024.pdf"
        );
        assert_eq!(
            disposition("a\"b\\c;d.txt", false),
            "attachment; filename=\"a_b_c;d.txt\"; filename*=UTF-8''a%22b%5Cc%3Bd.txt"
        );
    }
}
