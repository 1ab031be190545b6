//! HTML as Markdown-ish text: headings as `#` headings, blocks as paragraphs, scripts and
//! styles left out.
//!
//! Read as a stream of tokens (html5ever's tokenizer), never as a tree: nothing here depends
//! on how deep the elements nest, so a document of a million nested `<div>`s costs what its
//! bytes cost — no recursion to overflow the stack, and none of a tree builder's work per
//! open element, which grows with the depth for every tag.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

/// The text of `html`.
pub(super) fn to_markdown(html: &str) -> String {
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let tokenizer = Tokenizer::new(Sink::default(), TokenizerOpts::default());
    // Feeding returns early only for a script a tree builder would run; there is none.
    while !input.is_empty() {
        let _ = tokenizer.feed(&input);
    }
    tokenizer.end();
    let mut state = tokenizer.sink.state.into_inner();
    state.flush("");
    state.out
}

#[derive(Default)]
struct Sink {
    state: RefCell<State>,
}

#[derive(Default)]
struct State {
    out: String,
    /// The text of the block being read.
    line: String,
    /// The `#`s of the heading being read.
    heading: Option<&'static str>,
    /// Open elements whose text is left out (`script`, `style`, …), counted, not kept.
    skipped: usize,
    /// Inside `<head>`, whose text (the title) is not the document's.
    in_head: bool,
}

impl State {
    fn flush(&mut self, prefix: &str) {
        let text = self.line.split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.is_empty() {
            self.out.push_str(prefix);
            self.out.push_str(&text);
            self.out.push_str("\n\n");
        }
        self.line.clear();
    }

    fn tag(&mut self, tag: &Tag) -> TokenSinkResult<()> {
        let name: &str = &tag.name;
        let start = tag.kind == TagKind::StartTag;
        if matches!(
            name,
            "script" | "style" | "noscript" | "template" | "textarea" | "title"
        ) {
            if start && !tag.self_closing {
                self.skipped += 1;
                return match name {
                    "script" => TokenSinkResult::RawData(RawKind::ScriptData),
                    "style" => TokenSinkResult::RawData(RawKind::Rawtext),
                    "textarea" | "title" => TokenSinkResult::RawData(RawKind::Rcdata),
                    _ => TokenSinkResult::Continue,
                };
            }
            if !start {
                self.skipped = self.skipped.saturating_sub(1);
            }
            return TokenSinkResult::Continue;
        }
        if name == "head" {
            self.in_head = start;
            return TokenSinkResult::Continue;
        }
        if self.in_head && start && !matches!(name, "meta" | "link" | "base") {
            // A page that never closes its head starts its body with the first other tag.
            self.in_head = false;
        }
        let heading = match name {
            "h1" => Some("# "),
            "h2" => Some("## "),
            "h3" => Some("### "),
            "h4" => Some("#### "),
            "h5" => Some("##### "),
            "h6" => Some("###### "),
            _ => None,
        };
        if heading.is_some() {
            if start {
                self.flush("");
                self.heading = heading;
            } else {
                let prefix = self.heading.take().unwrap_or("");
                self.flush(prefix);
            }
            return TokenSinkResult::Continue;
        }
        let block = matches!(
            name,
            "p" | "div"
                | "li"
                | "tr"
                | "pre"
                | "blockquote"
                | "section"
                | "article"
                | "table"
                | "ul"
                | "ol"
                | "br"
                | "dt"
                | "dd"
                | "main"
                | "header"
                | "footer"
                | "nav"
                | "aside"
                | "figure"
                | "hr"
        );
        if block {
            let prefix = self.heading.unwrap_or("");
            self.flush(prefix);
        } else if !start && matches!(name, "td" | "th") {
            self.line.push(' ');
        }
        TokenSinkResult::Continue
    }
}

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line_number: u64) -> TokenSinkResult<()> {
        let mut state = self.state.borrow_mut();
        match token {
            Token::TagToken(tag) => state.tag(&tag),
            Token::CharacterTokens(text) => {
                if state.skipped == 0 && !state.in_head {
                    state.line.push_str(&text);
                }
                TokenSinkResult::Continue
            }
            _ => TokenSinkResult::Continue,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_paragraphs_and_lists_survive_and_scripts_do_not() {
        let html = "<html><head><title>t</title><style>p{}</style></head><body>\
                    <h1>Guide</h1><p>First  <b>bold</b> para.</p><script>if (a<b) x('</p>')</script>\
                    <h2>部署</h2><ul><li>一</li><li>二</li></ul></body></html>";
        assert_eq!(
            to_markdown(html),
            "# Guide\n\nFirst bold para.\n\n## 部署\n\n一\n\n二\n\n"
        );
    }

    #[test]
    fn tables_read_cell_by_cell_and_entities_are_decoded() {
        let html = "<table><tr><th>city</th><td>上海 &amp; Paris</td></tr></table>";
        assert_eq!(to_markdown(html), "city 上海 & Paris\n\n");
    }

    #[test]
    fn a_head_that_is_never_closed_ends_at_the_body() {
        let html = "<html><head><title>t</title><meta charset=utf-8><p>Body text</p>";
        assert_eq!(to_markdown(html), "Body text\n\n");
    }

    #[test]
    fn a_million_nested_elements_read_like_a_flat_page() {
        let mut html = String::from("<html><body>");
        html.push_str(&"<div>".repeat(1_000_000));
        html.push_str("deep");
        assert_eq!(to_markdown(&html), "deep\n\n");
        let spans = format!(
            "{}x{}",
            "<span>".repeat(1_000_000),
            "</span>".repeat(1_000_000)
        );
        assert_eq!(to_markdown(&spans), "x\n\n");
    }
}
