//! The full-text index of one knowledge base: BM25 over its chunks, with one analyzer for
//! Chinese and English alike — jieba word segmentation (its dictionary is compiled in), then
//! lower case and the English stemmer (a no-op on Chinese words), dropping punctuation and
//! white space. The index is derived data: it holds chunk ids, their document ids and the
//! indexed text, and can always be rebuilt from the store.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer, Token,
    TokenFilter, TokenStream, Tokenizer,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term, doc};

/// The analyzer's registered name.
const ANALYZER: &str = "ars_zh_en";
/// Memory for the index writer (tantivy's minimum is 15 MB per thread).
const WRITER_MEMORY: usize = 32 * 1024 * 1024;
/// Query terms used at most (a pasted page stays a bounded query).
const MAX_QUERY_TERMS: usize = 64;
/// The longest snippet, in characters.
const SNIPPET_CHARS: usize = 240;

/// Why the index could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[error("search index: {0}")]
pub struct IndexError(String, bool);

impl IndexError {
    fn other(message: String) -> Self {
        Self(message, false)
    }

    /// Whether another writer (another process on the same folder) holds the index: it is
    /// in use, not broken.
    pub fn is_locked(&self) -> bool {
        self.1
    }
}

impl From<tantivy::TantivyError> for IndexError {
    fn from(e: tantivy::TantivyError) -> Self {
        let locked = matches!(
            e,
            tantivy::TantivyError::LockFailure(tantivy::directory::error::LockError::LockBusy, _)
        );
        Self(e.to_string(), locked)
    }
}

/// Words too common to tell chunks apart, dropped from the index and from queries: Lucene's
/// English list, and Chinese particles and question words (a question's 什么 or 多少 is not in
/// the passage that answers it).
const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "but",
    "by",
    "for",
    "if",
    "in",
    "into",
    "is",
    "it",
    "no",
    "not",
    "of",
    "on",
    "or",
    "such",
    "that",
    "the",
    "their",
    "then",
    "there",
    "these",
    "they",
    "this",
    "to",
    "was",
    "will",
    "with",
    "的",
    "了",
    "是",
    "在",
    "和",
    "与",
    "及",
    "或",
    "也",
    "都",
    "就",
    "而",
    "吗",
    "呢",
    "吧",
    "啊",
    "这",
    "那",
    "之",
    "其",
    "为",
    "于",
    "对",
    "把",
    "被",
    "什么",
    "怎么",
    "怎样",
    "如何",
    "哪些",
    "哪个",
    "哪里",
    "多少",
    "是否",
    "为什么",
    "吗",
    "请问",
];

/// The analyzer every knowledge base indexes and searches with.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(tantivy_jieba::JiebaTokenizer::new())
        .filter(RemoveLongFilter::limit(64))
        .filter(WordsOnly)
        .filter(LowerCaser)
        .filter(StopWordFilter::remove(
            STOP_WORDS.iter().map(|w| (*w).to_owned()),
        ))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Drops the tokens jieba makes of white space and punctuation: a token stays when it holds a
/// letter or digit of any script (tantivy's own filter keeps ASCII only, so no Chinese).
#[derive(Clone)]
struct WordsOnly;

impl TokenFilter for WordsOnly {
    type Tokenizer<T: Tokenizer> = WordsOnlyTokenizer<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> WordsOnlyTokenizer<T> {
        WordsOnlyTokenizer(tokenizer)
    }
}

#[derive(Clone)]
struct WordsOnlyTokenizer<T>(T);

impl<T: Tokenizer> Tokenizer for WordsOnlyTokenizer<T> {
    type TokenStream<'a> = WordsOnlyStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        WordsOnlyStream(self.0.token_stream(text))
    }
}

struct WordsOnlyStream<T>(T);

impl<T: TokenStream> TokenStream for WordsOnlyStream<T> {
    fn advance(&mut self) -> bool {
        while self.0.advance() {
            if self.0.token().text.chars().any(char::is_alphanumeric) {
                return true;
            }
        }
        false
    }

    fn token(&self) -> &Token {
        self.0.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.0.token_mut()
    }
}

/// The words `text` is indexed under (for tests and diagnostics).
pub fn tokens(text: &str) -> Vec<String> {
    let mut analyzer = analyzer();
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while let Some(token) = stream.next() {
        out.push(token.text.clone());
    }
    out
}

/// A chunk to index.
#[derive(Clone, Debug)]
pub struct IndexedChunk {
    pub chunk_id: String,
    pub document_id: String,
    /// What is searched (see [`crate::chunk::indexed_text`]).
    pub text: String,
}

/// A search hit.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub chunk_id: String,
    pub document_id: String,
    pub score: f32,
    /// A stretch of the chunk with the query's words in `<b>…</b>`, HTML-escaped.
    pub snippet: String,
}

#[derive(Clone, Copy)]
struct Fields {
    chunk_id: Field,
    document_id: Field,
    text: Field,
}

/// One knowledge base's index, on disk or in memory.
pub struct KbIndex {
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    fields: Fields,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let chunk_id = builder.add_text_field("chunk_id", STRING | STORED);
    let document_id = builder.add_text_field("document_id", STRING | STORED);
    let text_options = TextOptions::default().set_stored().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let text = builder.add_text_field("text", text_options);
    (
        builder.build(),
        Fields {
            chunk_id,
            document_id,
            text,
        },
    )
}

impl KbIndex {
    /// An index in memory (tests, benchmarks).
    pub fn in_memory() -> Result<Self, IndexError> {
        let (schema, fields) = schema();
        Self::open(Index::create_in_ram(schema), fields)
    }

    /// The index in `dir`, created when there is none. A directory holding an index of
    /// another schema is an error: the caller removes it and rebuilds.
    pub fn open_or_create(dir: &Path) -> Result<Self, IndexError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| IndexError::other(format!("{}: {e}", dir.display())))?;
        let (schema, fields) = schema();
        let directory = tantivy::directory::MmapDirectory::open(dir)
            .map_err(|e| IndexError::other(format!("{}: {e}", dir.display())))?;
        let index = Index::open_or_create(directory, schema)?;
        Self::open(index, fields)
    }

    fn open(index: Index, fields: Fields) -> Result<Self, IndexError> {
        index.tokenizers().register(ANALYZER, analyzer());
        let writer = index.writer_with_num_threads(1, WRITER_MEMORY)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            reader,
            writer: Mutex::new(writer),
            fields,
        })
    }

    fn writer(&self) -> std::sync::MutexGuard<'_, IndexWriter> {
        self.writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Replaces a document's chunks with `chunks` (none: removes the document). Visible to
    /// searches after the next [`KbIndex::commit`].
    pub fn replace_document(
        &self,
        document_id: &str,
        chunks: &[IndexedChunk],
    ) -> Result<(), IndexError> {
        self.writer()
            .delete_term(Term::from_field_text(self.fields.document_id, document_id));
        self.add_chunks(chunks)
    }

    /// Adds chunks without removing any (rebuilding an index that was cleared).
    pub fn add_chunks(&self, chunks: &[IndexedChunk]) -> Result<(), IndexError> {
        let f = self.fields;
        let writer = self.writer();
        for chunk in chunks {
            writer.add_document(doc!(
                f.chunk_id => chunk.chunk_id.as_str(),
                f.document_id => chunk.document_id.as_str(),
                f.text => chunk.text.as_str(),
            ))?;
        }
        Ok(())
    }

    /// Removes every chunk (before a rebuild).
    pub fn clear(&self) -> Result<(), IndexError> {
        self.writer().delete_all_documents()?;
        Ok(())
    }

    /// Makes the changes so far visible to searches, all at once: a search sees a document's
    /// old chunks or its new ones, never a mix.
    pub fn commit(&self) -> Result<(), IndexError> {
        self.writer().commit()?;
        self.reader.reload()?;
        Ok(())
    }

    /// Chunks in the index (as of the last commit).
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `top_k` chunks that best match `query` by BM25, best first; none for a query with
    /// no searchable word.
    pub fn search(&self, query: &str, top_k: usize) -> Result<Vec<Hit>, IndexError> {
        let f = self.fields;
        let mut terms = BTreeSet::new();
        for token in tokens(query) {
            if terms.len() == MAX_QUERY_TERMS {
                break;
            }
            terms.insert(token);
        }
        if terms.is_empty() || top_k == 0 {
            return Ok(Vec::new());
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|t| {
                let term = Term::from_field_text(f.text, t);
                let query: Box<dyn Query> =
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                (Occur::Should, query)
            })
            .collect();
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(top_k).order_by_score())?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let stored: TantivyDocument = searcher.doc(address)?;
            let text_of = |field: Field| {
                stored
                    .get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            hits.push(Hit {
                chunk_id: text_of(f.chunk_id),
                document_id: text_of(f.document_id),
                score,
                snippet: snippet(&text_of(f.text), &terms, SNIPPET_CHARS),
            });
        }
        Ok(hits)
    }
}

/// A stretch of `text` of at most `max_chars` characters around the most matches of
/// `terms`, HTML-escaped, the matches in `<b>…</b>`. (Tantivy's own snippets assume tokens in
/// order; jieba's search mode overlaps them.)
pub fn snippet(text: &str, terms: &BTreeSet<String>, max_chars: usize) -> String {
    let mut matches: Vec<std::ops::Range<usize>> = Vec::new();
    let mut analyzer = analyzer();
    let mut stream = analyzer.token_stream(text);
    while let Some(token) = stream.next() {
        if terms.contains(&token.text) {
            matches.push(token.offset_from..token.offset_to);
        }
    }
    matches.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    let mut merged: Vec<std::ops::Range<usize>> = Vec::new();
    for range in matches {
        match merged.last_mut() {
            Some(last) if range.start < last.end => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    // Character offsets of every byte boundary, to measure windows in characters.
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect();
    let char_at = |byte: usize| boundaries.partition_point(|&b| b < byte);
    let total = boundaries.len() - 1;
    // The window (in characters) starting at a match that holds the most matches.
    let mut best = (0usize, 0usize);
    for (i, m) in merged.iter().enumerate() {
        let start = char_at(m.start);
        let inside = merged[i..]
            .iter()
            .take_while(|n| char_at(n.end) <= start + max_chars)
            .count();
        if inside > best.1 {
            best = (start, inside);
        }
    }
    // Some context before the first match, if the window has room for it.
    let lead = (max_chars / 5).min(best.0);
    let from = best.0 - lead;
    let to = (from + max_chars).min(total);
    let (from_byte, to_byte) = (boundaries[from], boundaries[to]);
    let mut html = String::new();
    if from > 0 {
        html.push('…');
    }
    let mut at = from_byte;
    for m in merged
        .iter()
        .filter(|m| m.start >= from_byte && m.end <= to_byte)
    {
        html.push_str(&escape(&text[at..m.start]));
        html.push_str("<b>");
        html.push_str(&escape(&text[m.clone()]));
        html.push_str("</b>");
        at = m.end;
    }
    html.push_str(&escape(&text[at..to_byte]));
    if to < total {
        html.push('…');
    }
    html
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &str, doc: &str, text: &str) -> IndexedChunk {
        IndexedChunk {
            chunk_id: id.into(),
            document_id: doc.into(),
            text: text.into(),
        }
    }

    #[test]
    fn chinese_is_segmented_into_words_and_english_is_stemmed() {
        let words = tokens("出差期间的住宿费用每晚不得超过六百元。");
        assert!(words.contains(&"住宿".to_string()), "{words:?}");
        // Search mode: a long word and the words inside it.
        assert!(words.contains(&"住宿费".to_string()), "{words:?}");
        assert!(words.contains(&"每晚".to_string()), "{words:?}");
        assert!(
            !words.iter().any(|w| w == "。" || w.trim().is_empty()),
            "{words:?}"
        );
        assert_eq!(tokens("Indexing the Documents"), vec!["index", "document"]);
        assert!(tokens("re-indexed").contains(&"index".to_string()));
    }

    #[test]
    fn a_chinese_query_finds_chinese_text_by_its_words_not_its_characters() {
        let index = KbIndex::in_memory().unwrap();
        index
            .replace_document(
                "d1",
                &[
                    chunk("c1", "d1", "出差期间的住宿费用每晚不得超过六百元。"),
                    chunk("c2", "d1", "宿舍的管理规定由行政部负责解释。"),
                ],
            )
            .unwrap();
        index.commit().unwrap();
        let hits = index.search("出差住宿的报销上限是多少？", 5).unwrap();
        assert_eq!(hits[0].chunk_id, "c1", "{hits:?}");
        assert!(
            hits[0].snippet.contains("<b>住宿</b>"),
            "{}",
            hits[0].snippet
        );
    }

    #[test]
    fn an_english_query_matches_other_inflections() {
        let index = KbIndex::in_memory().unwrap();
        index
            .replace_document(
                "d1",
                &[
                    chunk("c1", "d1", "The nightly rebuild indexes all documents."),
                    chunk("c2", "d1", "Lunch is served at noon."),
                ],
            )
            .unwrap();
        index.commit().unwrap();
        let hits = index.search("When are documents re-indexed?", 5).unwrap();
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].chunk_id, "c1");
        assert!(index.search("?!。", 5).unwrap().is_empty());
    }

    #[test]
    fn replacing_a_document_swaps_its_chunks_at_the_commit() {
        let index = KbIndex::in_memory().unwrap();
        index
            .replace_document("d1", &[chunk("old", "d1", "apples and pears")])
            .unwrap();
        index.commit().unwrap();
        index
            .replace_document("d1", &[chunk("new", "d1", "apples and plums")])
            .unwrap();
        // Not yet committed: the old chunk is what searches see.
        assert_eq!(index.search("apples", 5).unwrap()[0].chunk_id, "old");
        index.commit().unwrap();
        let hits = index.search("apples", 5).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].chunk_id, "new");
        index.replace_document("d1", &[]).unwrap();
        index.commit().unwrap();
        assert!(index.is_empty());
    }

    #[test]
    fn snippets_mark_the_matches_escape_the_text_and_stay_short() {
        let terms: BTreeSet<String> = tokens("住宿 <script>").into_iter().collect();
        let text = format!(
            "{}出差期间的住宿费用<script>每晚{}",
            "前".repeat(300),
            "后".repeat(300)
        );
        let snippet = snippet(&text, &terms, 40);
        assert!(
            snippet.contains("<b>住宿</b>") || snippet.contains("<b>住宿费</b>"),
            "{snippet}"
        );
        assert!(snippet.contains("&lt;<b>script</b>&gt;"), "{snippet}");
        assert!(
            snippet.starts_with('…') && snippet.ends_with('…'),
            "{snippet}"
        );
        let visible: String = snippet.replace("<b>", "").replace("</b>", "");
        assert!(visible.chars().count() <= 40 + 2 + 20, "{visible}");
        // No match: the start of the text.
        assert!(snippet_without_match().starts_with("abc"));
    }

    fn snippet_without_match() -> String {
        snippet("abc def", &BTreeSet::new(), 10)
    }

    #[test]
    fn an_index_on_disk_opens_again_with_its_chunks() {
        let dir = tempfile::tempdir().unwrap();
        {
            let index = KbIndex::open_or_create(dir.path()).unwrap();
            index
                .replace_document("d1", &[chunk("c1", "d1", "知识库的索引可以重建")])
                .unwrap();
            index.commit().unwrap();
        }
        let index = KbIndex::open_or_create(dir.path()).unwrap();
        assert_eq!(index.len(), 1);
        assert_eq!(index.search("重建索引", 3).unwrap()[0].chunk_id, "c1");
    }
}
