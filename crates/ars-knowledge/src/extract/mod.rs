//! Text out of an uploaded document: `.txt`, `.md`, `.html`, `.pdf`, `.docx`, `.csv`, `.json`.
//!
//! Headings survive as Markdown headings (HTML `h1`–`h6`, Word's Heading styles), so chunks
//! keep their heading paths. Text files that are not UTF-8 are read as GB18030 (which covers
//! GBK and GB2312, common for Chinese files) when they decode cleanly. PDFs are read by
//! `pdftotext` (poppler) in a process of its own, under a time limit and an output cap: a
//! malformed PDF fails its own document with a clear error, never the server.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::chunk::TextKind;

mod html;

/// The formats a knowledge base takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Html,
    Pdf,
    Docx,
    Csv,
    Json,
}

impl Format {
    /// The format of a file by its name's extension (case-insensitive).
    pub fn of_name(name: &str) -> Option<Self> {
        let extension = name.rsplit_once('.')?.1.to_ascii_lowercase();
        Some(match extension.as_str() {
            "txt" | "text" | "log" => Self::Text,
            "md" | "markdown" => Self::Markdown,
            "html" | "htm" => Self::Html,
            "pdf" => Self::Pdf,
            "docx" => Self::Docx,
            "csv" => Self::Csv,
            "json" => Self::Json,
            _ => return None,
        })
    }

    /// The extensions taken, for messages.
    pub const EXTENSIONS: &'static str = ".txt, .md, .html, .pdf, .docx, .csv, .json";

    /// How the extracted text is chunked.
    pub fn text_kind(self) -> TextKind {
        match self {
            Self::Markdown | Self::Html | Self::Docx => TextKind::Markdown,
            Self::Text | Self::Pdf | Self::Csv | Self::Json => TextKind::Plain,
        }
    }
}

/// Why a document's text could not be read. The message is shown with the document.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExtractError {
    #[error("the file is not a valid {format}: {reason}")]
    Invalid {
        format: &'static str,
        reason: String,
    },
    #[error("the file holds no text")]
    Empty,
    #[error("reading the PDF took longer than {0} s")]
    Timeout(u64),
    #[error(
        "its text is longer than {0} characters, the most a document may hold (as many as the \
         largest upload holds bytes)"
    )]
    TooLong(usize),
    #[error("PDF text extraction is not available on this server (install poppler-utils)")]
    PdfUnavailable,
}

/// Limits of one extraction.
#[derive(Clone, Copy, Debug)]
pub struct ExtractLimits {
    /// The longest text kept.
    pub max_chars: usize,
    /// How long `pdftotext` may take.
    pub pdf_timeout: Duration,
}

impl Default for ExtractLimits {
    fn default() -> Self {
        Self {
            max_chars: 5_000_000,
            pdf_timeout: Duration::from_secs(60),
        }
    }
}

/// The text of a document. Blocking (a PDF runs a process): call it off the async runtime.
pub fn extract(
    format: Format,
    bytes: &[u8],
    limits: ExtractLimits,
) -> Result<String, ExtractError> {
    let text = match format {
        Format::Text | Format::Markdown => decode(bytes),
        Format::Html => html::to_markdown(&decode(bytes)),
        Format::Pdf => pdf_text(bytes, limits)?,
        Format::Docx => docx_to_markdown(bytes)?,
        Format::Csv => csv_text(bytes)?,
        Format::Json => json_text(bytes)?,
    };
    let text = normalize(&text);
    if text.trim().is_empty() {
        return Err(ExtractError::Empty);
    }
    if text.chars().count() > limits.max_chars {
        return Err(ExtractError::TooLong(limits.max_chars));
    }
    Ok(text)
}

/// UTF-8 (a byte-order mark dropped), else GB18030 when it decodes without errors, else UTF-8
/// with replacement characters.
pub fn decode(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if let Ok(text) = std::str::from_utf8(bytes) {
        return text.to_owned();
    }
    let (text, _, had_errors) = encoding_rs::GB18030.decode(bytes);
    if !had_errors {
        return text.into_owned();
    }
    String::from_utf8_lossy(bytes).into_owned()
}

/// `\r\n` and `\r` as `\n`, NUL and other control characters but tab and newline dropped.
fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

/// The deepest a Word document's XML may nest (real ones stay within a few dozen levels).
const MAX_XML_DEPTH: usize = 1_000;

fn docx_to_markdown(bytes: &[u8]) -> Result<String, ExtractError> {
    use quick_xml::events::Event;
    let invalid = |reason: String| ExtractError::Invalid {
        format: "DOCX",
        reason,
    };
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| invalid(e.to_string()))?;
    let mut xml = String::new();
    archive
        .by_name("word/document.xml")
        .map_err(|_| invalid("it has no word/document.xml".into()))?
        .take(64 * 1024 * 1024)
        .read_to_string(&mut xml)
        .map_err(|e| invalid(e.to_string()))?;
    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut out = String::new();
    let mut paragraph = String::new();
    let mut heading: Option<usize> = None;
    let mut in_text = false;
    // The reader is a stream of events (no tree, no recursion); the depth is bounded anyway,
    // so an absurd document fails with a clear reason rather than being read to its end.
    let mut depth = 0usize;
    loop {
        let event = reader.read_event().map_err(|e| invalid(e.to_string()))?;
        match &event {
            Event::Start(_) => {
                depth += 1;
                if depth > MAX_XML_DEPTH {
                    return Err(invalid(format!(
                        "it is nested deeper than {MAX_XML_DEPTH} levels"
                    )));
                }
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        match event {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                b"t" => in_text = true,
                b"tab" => paragraph.push('\t'),
                b"br" | b"cr" => paragraph.push('\n'),
                b"pStyle" => {
                    let style = e
                        .attributes()
                        .flatten()
                        .find(|a| a.key.local_name().as_ref() == b"val")
                        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
                        .unwrap_or_default();
                    heading = heading_level(&style);
                }
                _ => {}
            },
            Event::Text(t) if in_text => {
                let text = t.decode().map_err(|e| invalid(e.to_string()))?;
                paragraph.push_str(&text);
            }
            Event::GeneralRef(r) if in_text => {
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    paragraph.push(c);
                } else {
                    let name = String::from_utf8_lossy(r.as_ref()).into_owned();
                    paragraph.push_str(match name.as_str() {
                        "amp" => "&",
                        "lt" => "<",
                        "gt" => ">",
                        "quot" => "\"",
                        "apos" => "'",
                        _ => "",
                    });
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                b"t" => in_text = false,
                b"p" => {
                    let text = paragraph.trim();
                    if !text.is_empty() {
                        if let Some(level) = heading {
                            out.push_str(&"#".repeat(level));
                            out.push(' ');
                        }
                        out.push_str(text);
                        out.push_str("\n\n");
                    }
                    paragraph.clear();
                    heading = None;
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

/// Word's heading styles: `Heading1`…`Heading6` (`heading 1` in some files), `Title`.
fn heading_level(style: &str) -> Option<usize> {
    let lower = style.to_ascii_lowercase().replace(' ', "");
    if lower == "title" {
        return Some(1);
    }
    let level: usize = lower.strip_prefix("heading")?.parse().ok()?;
    (1..=6).contains(&level).then_some(level)
}

fn csv_text(bytes: &[u8]) -> Result<String, ExtractError> {
    let text = decode(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| ExtractError::Invalid {
            format: "CSV",
            reason: e.to_string(),
        })?
        .iter()
        .map(str::to_owned)
        .collect();
    let mut out = String::new();
    for record in reader.records() {
        let record = record.map_err(|e| ExtractError::Invalid {
            format: "CSV",
            reason: e.to_string(),
        })?;
        let fields: Vec<String> = record
            .iter()
            .enumerate()
            .filter(|(_, value)| !value.trim().is_empty())
            .map(|(i, value)| match headers.get(i) {
                Some(header) if !header.is_empty() => format!("{header}: {}", value.trim()),
                _ => value.trim().to_owned(),
            })
            .collect();
        if !fields.is_empty() {
            out.push_str(&fields.join("; "));
            out.push('\n');
        }
    }
    Ok(out)
}

/// A JSON document as `path: value` lines. Refused past [`MAX_JSON_DEPTH`] levels, and walked
/// with an explicit stack.
fn json_text(bytes: &[u8]) -> Result<String, ExtractError> {
    use ars_domain::nesting::{MAX_JSON_DEPTH, check_json_depth};
    use serde_json::Value;
    let invalid = |reason: String| ExtractError::Invalid {
        format: "JSON",
        reason,
    };
    let text = decode(bytes);
    check_json_depth(text.as_bytes(), MAX_JSON_DEPTH).map_err(|e| invalid(e.to_string()))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
    let mut out = String::new();
    /// What is left to do: a value under its path, or the paragraph break after an array of
    /// objects (which reads best one object per paragraph).
    enum Step<'a> {
        Value(&'a Value, String),
        Break,
    }
    let mut stack = vec![Step::Value(&value, String::new())];
    while let Some(step) = stack.pop() {
        let (value, path) = match step {
            Step::Break => {
                out.push('\n');
                continue;
            }
            Step::Value(value, path) => (value, path),
        };
        match value {
            Value::Object(map) => {
                // Pushed in reverse, so they come off in order.
                for (key, value) in map.iter().rev() {
                    let path = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    stack.push(Step::Value(value, path));
                }
            }
            Value::Array(items) => {
                if items.iter().any(Value::is_object) {
                    stack.push(Step::Break);
                }
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Step::Value(item, format!("{path}[{i}]")));
                }
            }
            Value::Null => {}
            Value::String(s) => out.push_str(&format!("{path}: {s}\n")),
            other => out.push_str(&format!("{path}: {other}\n")),
        }
    }
    Ok(out)
}

/// `pdftotext` in a process of its own: the PDF on its stdin, the text (UTF-8) on its stdout,
/// killed past the time limit, its output capped.
fn pdf_text(bytes: &[u8], limits: ExtractLimits) -> Result<String, ExtractError> {
    if !bytes.starts_with(b"%PDF-") {
        return Err(ExtractError::Invalid {
            format: "PDF",
            reason: "it does not start with %PDF-".into(),
        });
    }
    let mut child = Command::new("pdftotext")
        .args(["-q", "-enc", "UTF-8", "-", "-"])
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ExtractError::PdfUnavailable,
            _ => ExtractError::Invalid {
                format: "PDF",
                reason: format!("cannot start pdftotext: {e}"),
            },
        })?;
    let input = bytes.to_vec();
    let stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input);
        }
    });
    let cap = limits.max_chars.saturating_mul(4).saturating_add(1);
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(stdout) = stdout {
            let _ = stdout.take(cap as u64).read_to_end(&mut out);
        }
        out
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() > limits.pdf_timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break None,
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let Some(status) = status else {
        return Err(ExtractError::Timeout(limits.pdf_timeout.as_secs()));
    };
    if !status.success() {
        return Err(ExtractError::Invalid {
            format: "PDF",
            reason: "pdftotext could not read it".into(),
        });
    }
    if out.len() >= cap {
        return Err(ExtractError::TooLong(limits.max_chars));
    }
    // pdftotext separates pages with a form feed.
    Ok(String::from_utf8_lossy(&out).replace('\u{c}', "\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(format: Format, bytes: &[u8]) -> String {
        extract(format, bytes, ExtractLimits::default()).unwrap()
    }

    #[test]
    fn formats_are_known_by_extension() {
        assert_eq!(Format::of_name("Report.PDF"), Some(Format::Pdf));
        assert_eq!(Format::of_name("notes.md"), Some(Format::Markdown));
        assert_eq!(Format::of_name("page.htm"), Some(Format::Html));
        assert_eq!(Format::of_name("archive.zip"), None);
        assert_eq!(Format::of_name("README"), None);
    }

    #[test]
    fn text_that_is_not_utf8_is_read_as_gb18030() {
        let (gbk, _, _) = encoding_rs::GB18030.encode("知识库支持中文文件。");
        assert_eq!(text(Format::Text, &gbk), "知识库支持中文文件。");
        assert_eq!(
            text(Format::Text, b"\xEF\xBB\xBFhello\r\nworld"),
            "hello\nworld"
        );
        assert_eq!(
            extract(Format::Text, b"  \n\t", ExtractLimits::default()),
            Err(ExtractError::Empty)
        );
    }

    #[test]
    fn html_keeps_headings_and_paragraphs_and_drops_scripts() {
        let html = "<html><head><title>t</title><style>p{}</style></head><body>\
                    <h1>Guide</h1><p>First  <b>bold</b> para.</p><script>alert(1)</script>\
                    <h2>部署</h2><ul><li>一</li><li>二</li></ul></body></html>";
        let out = text(Format::Html, html.as_bytes());
        assert_eq!(
            out,
            "# Guide\n\nFirst bold para.\n\n## 部署\n\n一\n\n二\n\n"
        );
    }

    #[test]
    fn csv_rows_read_as_header_value_pairs() {
        let out = text(
            Format::Csv,
            "city,price\n上海,600\nParis,\"1,200\"\n".as_bytes(),
        );
        assert_eq!(out, "city: 上海; price: 600\ncity: Paris; price: 1,200\n");
        assert!(matches!(
            extract(Format::Json, b"{not json", ExtractLimits::default()),
            Err(ExtractError::Invalid { format: "JSON", .. })
        ));
    }

    #[test]
    fn json_reads_as_paths_and_values() {
        let out = text(
            Format::Json,
            br#"{"name": "ARS", "tags": ["a", "b"], "n": {"x": 1}}"#,
        );
        assert_eq!(out, "n.x: 1\nname: ARS\ntags[0]: a\ntags[1]: b\n");
    }

    #[test]
    fn docx_keeps_word_headings_as_markdown() {
        let out = text(Format::Docx, &crate::samples::docx());
        assert_eq!(
            out,
            "# 报销制度\n\n## Hotels\n\nAt most 600 & \tno more.\n\n"
        );
        assert!(matches!(
            extract(Format::Docx, b"PK not a zip", ExtractLimits::default()),
            Err(ExtractError::Invalid { format: "DOCX", .. })
        ));
    }

    #[test]
    fn a_pdf_is_read_by_pdftotext_and_a_corrupt_one_fails_alone() {
        let out = text(
            Format::Pdf,
            &crate::samples::pdf("Hotels cost at most 600 per night"),
        );
        assert!(out.contains("Hotels cost at most 600 per night"), "{out:?}");
        let mut corrupt = crate::samples::pdf("x");
        corrupt.truncate(40);
        corrupt.extend_from_slice(&[0xff; 64]);
        let error = extract(Format::Pdf, &corrupt, ExtractLimits::default()).unwrap_err();
        assert!(
            matches!(
                error,
                ExtractError::Invalid { format: "PDF", .. } | ExtractError::Empty
            ),
            "{error:?}"
        );
        assert!(matches!(
            extract(Format::Pdf, b"<html>", ExtractLimits::default()),
            Err(ExtractError::Invalid { format: "PDF", .. })
        ));
    }

    #[test]
    fn a_million_levels_of_nesting_fail_their_document_with_a_clear_reason() {
        // JSON: refused before parsing.
        let json = "[".repeat(1_000_000);
        assert_eq!(
            extract(Format::Json, json.as_bytes(), ExtractLimits::default()),
            Err(ExtractError::Invalid {
                format: "JSON",
                reason: "nested deeper than 128 levels".into()
            })
        );
        // DOCX: its XML is read as a stream and refused past its bound.
        let xml = format!(
            "<w:document xmlns:w=\"w\"><w:body>{}<w:p><w:r><w:t>deep</w:t></w:r></w:p></w:body></w:document>",
            "<w:sdt>".repeat(1_000_000)
        );
        let error = extract(
            Format::Docx,
            &crate::samples::docx_of(&xml),
            ExtractLimits::default(),
        )
        .unwrap_err();
        assert_eq!(
            error,
            ExtractError::Invalid {
                format: "DOCX",
                reason: "it is nested deeper than 1000 levels".into()
            }
        );
        // HTML: a stream of tokens, so depth costs nothing.
        let html = format!("<html><body>{}deep", "<div>".repeat(1_000_000));
        assert_eq!(text(Format::Html, html.as_bytes()), "deep\n\n");
        // Markdown and text have no nesting that is walked: a million `>` or list levels are
        // read as lines.
        let quotes = format!("{} deep\n", ">".repeat(1_000_000));
        assert!(
            text(Format::Markdown, quotes.as_bytes())
                .trim_end()
                .ends_with("deep")
        );
        // CSV is flat: a million quote characters are one field.
        let csv = format!("a\n\"{}\"\n", "(".repeat(1_000_000));
        assert!(text(Format::Csv, csv.as_bytes()).starts_with("a: ((("));
    }

    #[test]
    fn text_over_the_limit_is_refused() {
        let limits = ExtractLimits {
            max_chars: 5,
            ..ExtractLimits::default()
        };
        assert_eq!(
            extract(Format::Text, "六个中文字符".as_bytes(), limits),
            Err(ExtractError::TooLong(5))
        );
    }
}
