//! Splitting a document's text into chunks that follow its structure: Markdown headings open
//! sections (a chunk never spans two, and keeps its section's heading path for citations),
//! paragraphs are kept whole when they fit, and a paragraph too long for one chunk is split
//! between sentences — Chinese sentence ends (。！？；) as well as English ones — or, for a
//! sentence longer than a chunk, at a character boundary. Each chunk knows where it lies in
//! the text (byte offsets), so a citation can show it in context.

use std::ops::Range;

/// How big chunks are, in characters (not bytes: a Chinese character counts once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkSettings {
    /// The most characters a chunk holds.
    pub size: usize,
    /// Characters of the previous chunk's end (whole sentences) repeated at the start of the
    /// next one within a section, so a passage cut in two is still found whole.
    pub overlap: usize,
}

impl Default for ChunkSettings {
    fn default() -> Self {
        Self {
            size: 800,
            overlap: 120,
        }
    }
}

/// The text's structure, as far as chunking cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextKind {
    /// `#` headings open sections; fenced code blocks stay whole where they fit.
    Markdown,
    /// Paragraphs separated by blank lines.
    Plain,
}

/// One chunk of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// 0, 1, 2, … in document order.
    pub ordinal: usize,
    /// The headings above it, outermost first (empty before the first heading).
    pub heading_path: Vec<String>,
    /// Byte offsets of the chunk in the document's text.
    pub start: usize,
    pub end: usize,
    /// `text[start..end]`, trimmed of surrounding blank lines.
    pub text: String,
}

/// A stretch of text that is kept together when it fits: a paragraph, a list, a code block.
struct Block {
    range: Range<usize>,
    heading_path: Vec<String>,
}

/// Splits `text` into chunks.
pub fn chunk(text: &str, kind: TextKind, settings: ChunkSettings) -> Vec<Chunk> {
    let settings = ChunkSettings {
        size: settings.size.max(50),
        overlap: settings.overlap.min(settings.size / 2),
    };
    let blocks = blocks(text, kind);
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut current: Option<(Range<usize>, Vec<String>)> = None;
    let flush = |current: &mut Option<(Range<usize>, Vec<String>)>, chunks: &mut Vec<Chunk>| {
        if let Some((range, path)) = current.take() {
            push(text, range, path, chunks);
        }
    };
    for block in blocks {
        let block_chars = text[block.range.clone()].chars().count();
        // A new section, or a block that does not fit beside what is gathered: close it.
        if let Some((range, path)) = &current {
            let gathered = text[range.clone()].chars().count();
            let joined = gathered + block_chars + 2;
            if *path != block.heading_path || joined > settings.size {
                flush(&mut current, &mut chunks);
            }
        }
        if block_chars <= settings.size {
            current = Some(match current.take() {
                Some((range, path)) => (range.start..block.range.end, path),
                None => (block.range, block.heading_path),
            });
            continue;
        }
        // Too long for one chunk: by sentences, with overlap.
        flush(&mut current, &mut chunks);
        for piece in pack_sentences(text, block.range, settings) {
            push(text, piece, block.heading_path.clone(), &mut chunks);
        }
    }
    flush(&mut current, &mut chunks);
    chunks
}

fn push(text: &str, range: Range<usize>, heading_path: Vec<String>, chunks: &mut Vec<Chunk>) {
    let slice = &text[range.clone()];
    let trimmed_start = slice.len() - slice.trim_start().len();
    let trimmed_end = slice.trim_end().len();
    if trimmed_end <= trimmed_start {
        return;
    }
    let start = range.start + trimmed_start;
    let end = range.start + trimmed_end;
    chunks.push(Chunk {
        ordinal: chunks.len(),
        heading_path,
        start,
        end,
        text: text[start..end].to_owned(),
    });
}

/// The blocks of `text`, each with the heading path it lies under.
fn blocks(text: &str, kind: TextKind) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut path: Vec<(usize, String)> = Vec::new();
    let mut start: Option<usize> = None;
    let mut in_fence = false;
    let mut offset = 0;
    let close = |start: &mut Option<usize>,
                 end: usize,
                 path: &[(usize, String)],
                 blocks: &mut Vec<Block>| {
        if let Some(s) = start.take()
            && !text[s..end].trim().is_empty()
        {
            blocks.push(Block {
                range: s..end,
                heading_path: path.iter().map(|(_, h)| h.clone()).collect(),
            });
        }
    };
    for line in text.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        let trimmed = line.trim();
        if kind == TextKind::Markdown {
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                if !in_fence {
                    close(&mut start, line_start, &path, &mut blocks);
                    start = Some(line_start);
                    in_fence = true;
                } else {
                    in_fence = false;
                    close(&mut start, offset, &path, &mut blocks);
                }
                continue;
            }
            if in_fence {
                continue;
            }
            if let Some((level, title)) = heading(trimmed) {
                close(&mut start, line_start, &path, &mut blocks);
                path.retain(|(l, _)| *l < level);
                path.push((level, title.to_owned()));
                continue;
            }
        }
        if trimmed.is_empty() {
            close(&mut start, line_start, &path, &mut blocks);
        } else if start.is_none() {
            start = Some(line_start);
        }
    }
    close(&mut start, offset, &path, &mut blocks);
    blocks
}

/// `## Title` → (2, "Title").
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if !rest.starts_with(' ') && !rest.is_empty() {
        return None;
    }
    let title = rest.trim().trim_end_matches('#').trim();
    (!title.is_empty()).then_some((level, title))
}

/// Characters that end a sentence; `.` only before white space or the end.
fn ends_sentence(c: char, next: Option<char>) -> bool {
    match c {
        '。' | '！' | '？' | '；' | '!' | '?' | '\n' => true,
        '.' => next.is_none_or(char::is_whitespace),
        _ => false,
    }
}

/// Closing marks that belong to the sentence they follow.
fn closes(c: char) -> bool {
    matches!(
        c,
        '”' | '’' | '」' | '』' | '）' | ')' | '"' | '\'' | '】' | '》'
    )
}

/// The sentences of `range`, as byte ranges.
fn sentences(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let slice = &text[range.clone()];
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = slice.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|(_, n)| *n);
        if ends_sentence(c, next) {
            let mut end = i + c.len_utf8();
            while let Some(&(j, n)) = chars.peek() {
                if closes(n) {
                    end = j + n.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(range.start + start..range.start + end);
            start = end;
        }
    }
    if start < slice.len() {
        out.push(range.start + start..range.end);
    }
    out
}

/// Packs the sentences of a long block into pieces of at most `settings.size` characters,
/// each new piece starting with the previous one's last sentences (up to `settings.overlap`
/// characters). A sentence longer than a piece is cut at character boundaries.
fn pack_sentences(text: &str, range: Range<usize>, settings: ChunkSettings) -> Vec<Range<usize>> {
    let chars = |r: &Range<usize>| text[r.clone()].chars().count();
    // Sentences, with over-long ones cut into pieces that fit.
    let mut units: Vec<Range<usize>> = Vec::new();
    for sentence in sentences(text, range) {
        if chars(&sentence) <= settings.size {
            units.push(sentence);
            continue;
        }
        let mut start = sentence.start;
        let mut count = 0;
        for (i, c) in text[sentence.clone()].char_indices() {
            if count == settings.size {
                units.push(start..sentence.start + i);
                start = sentence.start + i;
                count = 0;
            }
            count += 1;
            let _ = c;
        }
        if start < sentence.end {
            units.push(start..sentence.end);
        }
    }
    let mut pieces = Vec::new();
    let mut first = 0;
    while first < units.len() {
        let mut last = first;
        let mut size = chars(&units[first]);
        while last + 1 < units.len() && size + chars(&units[last + 1]) <= settings.size {
            last += 1;
            size += chars(&units[last]);
        }
        pieces.push(units[first].start..units[last].end);
        if last + 1 >= units.len() {
            break;
        }
        // The next piece starts with as many of this piece's last sentences as the overlap
        // allows, but always moves forward.
        let mut next = last + 1;
        let mut carried = 0;
        while next > first + 1 {
            let length = chars(&units[next - 1]);
            if carried + length > settings.overlap {
                break;
            }
            carried += length;
            next -= 1;
        }
        first = next;
    }
    pieces
}

/// Words of a chunk as the index sees them: the heading path, then the text.
pub fn indexed_text(chunk: &Chunk) -> String {
    if chunk.heading_path.is_empty() {
        chunk.text.clone()
    } else {
        format!("{}\n{}", chunk.heading_path.join(" › "), chunk.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(size: usize, overlap: usize) -> ChunkSettings {
        ChunkSettings { size, overlap }
    }

    #[test]
    fn markdown_headings_open_sections_and_chunks_keep_their_path() {
        let text = "Intro line.\n\n# Guide\n\nFirst para.\n\n## Setup\n\nInstall it.\n\nRun it.\n\n## Use\n\nCall it.\n\n# Other\n\nMore.\n";
        let chunks = chunk(text, TextKind::Markdown, ChunkSettings::default());
        let paths: Vec<Vec<&str>> = chunks
            .iter()
            .map(|c| c.heading_path.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            paths,
            vec![
                vec![],
                vec!["Guide"],
                vec!["Guide", "Setup"],
                vec!["Guide", "Use"],
                vec!["Other"]
            ]
        );
        // Paragraphs of one section that fit stay in one chunk; offsets point into the text.
        assert_eq!(chunks[2].text, "Install it.\n\nRun it.");
        for c in &chunks {
            assert_eq!(&text[c.start..c.end], c.text);
        }
        assert_eq!(
            indexed_text(&chunks[2]),
            "Guide › Setup\nInstall it.\n\nRun it."
        );
    }

    #[test]
    fn chinese_paragraphs_split_at_chinese_sentence_ends() {
        let sentence = "出差期间的住宿费用每晚不得超过六百元。";
        let paragraph = sentence.repeat(10);
        let chunks = chunk(&paragraph, TextKind::Plain, small(60, 0));
        assert!(chunks.len() >= 3, "{chunks:?}");
        for c in &chunks {
            assert!(c.text.chars().count() <= 60);
            assert!(c.text.ends_with('。'), "{}", c.text);
        }
        // Without overlap the chunks tile the paragraph.
        assert_eq!(
            chunks.iter().map(|c| c.text.as_str()).collect::<String>(),
            paragraph
        );
    }

    #[test]
    fn overlap_repeats_whole_sentences_and_always_moves_forward() {
        let text = "Sentence one is right here. Sentence two is right here. Sentence three is \
                    right here. Sentence four is right here. Sentence five is right here.";
        let chunks = chunk(text, TextKind::Plain, small(60, 30));
        assert!(chunks.len() >= 3);
        for pair in chunks.windows(2) {
            assert!(pair[1].start > pair[0].start);
            assert!(pair[1].start < pair[0].end, "overlapping: {pair:?}");
        }
        assert!(chunks.last().unwrap().text.ends_with("five is right here."));
    }

    #[test]
    fn decimals_and_abbreviations_inside_a_sentence_do_not_end_it() {
        let text = "Version 3.14 ships today. Next one soon.";
        let s = sentences(text, 0..text.len());
        assert_eq!(s.len(), 2);
        assert_eq!(&text[s[0].clone()], "Version 3.14 ships today.");
    }

    #[test]
    fn a_sentence_longer_than_a_chunk_is_cut_at_character_boundaries() {
        let text = "长".repeat(130);
        let chunks = chunk(&text, TextKind::Plain, small(50, 0));
        assert_eq!(chunks.len(), 3);
        assert!(chunks.iter().all(|c| c.text.chars().count() <= 50));
    }

    #[test]
    fn code_fences_stay_whole_and_hashes_inside_are_not_headings() {
        let text = "# Title\n\n```sh\n# not a heading\necho hi\n```\n\nAfter.\n";
        let chunks = chunk(text, TextKind::Markdown, ChunkSettings::default());
        assert_eq!(chunks.len(), 1);
        assert!(chunks[0].text.contains("# not a heading"));
        assert_eq!(chunks[0].heading_path, vec!["Title".to_string()]);
    }

    #[test]
    fn empty_and_blank_text_has_no_chunks() {
        assert!(chunk("", TextKind::Plain, ChunkSettings::default()).is_empty());
        assert!(chunk("\n\n  \n", TextKind::Markdown, ChunkSettings::default()).is_empty());
    }
}
