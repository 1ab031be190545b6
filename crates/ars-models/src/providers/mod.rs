//! The providers behind the [`crate::ChatModel`] seam. Each keeps its wire format private to
//! its own module.

pub mod openai;
pub mod scripted;
