//! Knowledge bases as pure logic, in Chinese and English alike:
//!
//! - [`extract`]: the text of an uploaded document (`.txt`, `.md`, `.html`, `.pdf`, `.docx`,
//!   `.csv`, `.json`), headings kept as Markdown headings; PDFs read in a process of their own.
//! - [`chunk`]: a document's text in chunks that follow its structure (Markdown headings,
//!   paragraphs, sentences — Chinese sentence ends included), each with its heading path and
//!   its place in the text, for citations.
//! - [`index`]: one knowledge base's BM25 index over its chunks (jieba word segmentation,
//!   English stemming), derived data rebuilt from the store at will.
//! - [`vectors`]: chunks' embeddings searched by cosine (exact), and the deterministic
//!   embedder CI ranks with in place of a model.
//! - [`fusion`]: reciprocal-rank fusion of the BM25 and vector rankings.
//!
//! **Boundary:** no store, runtime or HTTP; it takes text and answers chunks and hits.

pub mod chunk;
pub mod extract;
pub mod fusion;
pub mod index;
pub mod samples;
pub mod vectors;
