//! The skills section of an agent's system prompt: progressive disclosure.
//!
//! The prompt lists only each skill's name, description and where its SKILL.md is; the
//! model reads a SKILL.md (and the files it points to) with its file tools when a task calls
//! for that skill. Bodies never go into the prompt, so many skills cost little context, and
//! the listing shortens descriptions to stay within a character budget.

use std::collections::BTreeMap;

use serde::Serialize;

/// Where a skill comes from; on a name clash the earlier one here wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SkillSource {
    /// The user's own skills.
    Personal,
    /// Skills shared with the user.
    Shared,
    /// Skills that ship inside the ARS binary.
    Builtin,
}

impl SkillSource {
    /// The lowercase name, as shown in the prompt and serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Personal => "personal",
            Self::Shared => "shared",
            Self::Builtin => "builtin",
        }
    }
}

/// One skill as the prompt lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ListedSkill {
    /// The skill's name.
    pub name: String,
    /// Its description from SKILL.md: what the model chooses by.
    pub description: String,
    /// The virtual path of its SKILL.md, as the agent's file tools see it.
    pub path: String,
    /// Where it comes from.
    pub source: SkillSource,
}

/// Descriptions are never cut below this many characters; past that they are left out.
const MIN_DESCRIPTION_CHARS: usize = 40;
/// Skipped entries' reasons are cut to this many characters.
const MAX_REASON_CHARS: usize = 200;

const INTRO: &str = "Skills are folders of instructions and scripts for particular kinds of \
task. When a task matches a skill's description, read that skill's SKILL.md with `read_file` \
before you start (only then: do not read skills you do not need), follow it, and run its \
scripts with `execute`. Files under /home/gem/skills are read-only; write your results to the \
working directory.\n";
const PRECEDENCE: &str = "On a name clash a personal skill wins over a shared one, and a shared \
one over a built-in; only the winner is listed.\n";
const SHORTENED: &str =
    "(Descriptions were shortened to fit; read each SKILL.md for the full text.)\n";

/// Renders the skills section of a system prompt.
///
/// Empty when there are no skills and nothing was skipped. Otherwise a Markdown section
/// starting with `\n\n## Skills\n`: how to use skills, one line per skill
/// (`- <name> (<source>): <description> — <path>`), the precedence rule, and one line per
/// skipped folder. When the section would exceed `budget_chars` characters, every
/// description is cut to an equal share (with `…`), down to a minimum, and then left out
/// altogether; names, paths and the fixed notes are always kept.
pub fn prompt_block(
    skills: &[ListedSkill],
    skipped: &[(String, String)],
    budget_chars: usize,
) -> String {
    if skills.is_empty() && skipped.is_empty() {
        return String::new();
    }
    let descriptions: Vec<String> = skills
        .iter()
        .map(|skill| one_line(&skill.description))
        .collect();
    let full = render(skills, &descriptions, skipped, false);
    if full.chars().count() <= budget_chars {
        return full;
    }

    // The largest per-description cap that fits; descriptions shorter than it stay whole.
    let bare: Vec<String> = vec![String::new(); skills.len()];
    let fixed = render(skills, &bare, skipped, true).chars().count();
    let longest = descriptions
        .iter()
        .map(|text| text.chars().count())
        .max()
        .unwrap_or(0);
    let fits = |cap: usize| {
        let used: usize = descriptions
            .iter()
            .map(|text| text.chars().count().min(cap) + 2) // ": " before each
            .sum();
        fixed + used <= budget_chars
    };
    let mut cap = longest;
    while cap >= MIN_DESCRIPTION_CHARS && !fits(cap) {
        cap -= 1;
    }
    let shortened: Vec<String> = if cap >= MIN_DESCRIPTION_CHARS {
        descriptions
            .iter()
            .map(|text| truncate(text, cap))
            .collect()
    } else {
        bare
    };
    render(skills, &shortened, skipped, true)
}

/// Keeps one skill per name: personal over shared over built-in (and, within one source,
/// the first), sorted by name.
pub fn resolve_precedence(
    personal: Vec<ListedSkill>,
    shared: Vec<ListedSkill>,
    builtin: Vec<ListedSkill>,
) -> Vec<ListedSkill> {
    let mut winners: BTreeMap<String, ListedSkill> = BTreeMap::new();
    for skill in personal.into_iter().chain(shared).chain(builtin) {
        winners.entry(skill.name.clone()).or_insert(skill);
    }
    winners.into_values().collect()
}

/// Renders the section with the given (possibly shortened or empty) descriptions.
fn render(
    skills: &[ListedSkill],
    descriptions: &[String],
    skipped: &[(String, String)],
    shortened: bool,
) -> String {
    let mut out = String::from("\n\n## Skills\n");
    if skills.is_empty() {
        out.push_str("No skills are available.\n");
    } else {
        out.push_str(INTRO);
        out.push('\n');
        for (skill, description) in skills.iter().zip(descriptions) {
            out.push_str(&format!("- {} ({})", skill.name, skill.source.as_str()));
            if !description.is_empty() {
                out.push_str(": ");
                out.push_str(description);
            }
            out.push_str(&format!(" — {}\n", skill.path));
        }
        out.push('\n');
        out.push_str(PRECEDENCE);
        if shortened {
            out.push_str(SHORTENED);
        }
    }
    for (folder, reason) in skipped {
        out.push_str(&format!(
            "Skipped (invalid SKILL.md): {}: {}\n",
            one_line(folder),
            truncate(&one_line(reason), MAX_REASON_CHARS)
        ));
    }
    out
}

/// Collapses all whitespace (newlines of folded YAML included) into single spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Cuts text to at most `max` characters, on a character boundary, ending with `…` when cut.
fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(name: &str, description: &str, source: SkillSource) -> ListedSkill {
        ListedSkill {
            name: name.to_owned(),
            description: description.to_owned(),
            path: format!("/home/gem/skills/{name}/SKILL.md"),
            source,
        }
    }

    #[test]
    fn nothing_to_list_gives_an_empty_block() {
        assert_eq!(prompt_block(&[], &[], 10_000), "");
    }

    #[test]
    fn block_lists_names_descriptions_and_paths() {
        let skills = [
            listed("csv-data", "Work with CSV files.", SkillSource::Builtin),
            listed("mine", "My own\nskill.", SkillSource::Personal),
        ];
        let block = prompt_block(&skills, &[], 10_000);
        assert!(block.starts_with("\n\n## Skills\n"), "{block}");
        assert!(block.contains(
            "- csv-data (builtin): Work with CSV files. — /home/gem/skills/csv-data/SKILL.md\n"
        ));
        assert!(
            block.contains("- mine (personal): My own skill. — "),
            "{block}"
        );
        assert!(block.contains("`read_file`") && block.contains("`execute`"));
        assert!(block.contains("read-only"));
        assert!(block.contains("a personal skill wins over a shared one"));
        assert!(!block.contains("shortened"));
    }

    #[test]
    fn block_never_includes_bodies() {
        let bundle = crate::archive::read_skill_md(
            b"---\nname: a\ndescription: Short.\n---\nSECRET BODY TEXT\n",
        )
        .unwrap();
        let skills = [listed(
            bundle.name(),
            &bundle.manifest.description,
            SkillSource::Shared,
        )];
        let block = prompt_block(&skills, &[], 10_000);
        assert!(block.contains("Short."));
        assert!(!block.contains("SECRET BODY TEXT"));
    }

    #[test]
    fn skipped_folders_are_listed_with_their_reason() {
        let skipped = [("broken".to_owned(), "no SKILL.md".to_owned())];
        let block = prompt_block(&[], &skipped, 10_000);
        assert!(block.starts_with("\n\n## Skills\n"));
        assert!(block.contains("Skipped (invalid SKILL.md): broken: no SKILL.md\n"));
    }

    #[test]
    fn budget_shortens_descriptions_to_fit() {
        let skills: Vec<ListedSkill> = (0..30)
            .map(|n| {
                listed(
                    &format!("skill-{n}"),
                    &"word ".repeat(60),
                    SkillSource::Shared,
                )
            })
            .collect();
        let budget = 6_000;
        let full = prompt_block(&skills, &[], usize::MAX);
        assert!(full.chars().count() > budget);
        let block = prompt_block(&skills, &[], budget);
        assert!(block.chars().count() <= budget, "{}", block.chars().count());
        assert!(block.contains('…'));
        assert!(block.contains(SHORTENED));
        assert!(block.contains("- skill-29 (shared): word"));
    }

    #[test]
    fn tiny_budget_drops_descriptions_but_keeps_names_and_paths() {
        let skills: Vec<ListedSkill> = (0..30)
            .map(|n| {
                listed(
                    &format!("skill-{n}"),
                    &"word ".repeat(60),
                    SkillSource::Shared,
                )
            })
            .collect();
        let block = prompt_block(&skills, &[], 100);
        assert!(!block.contains("word"));
        assert!(block.contains("- skill-7 (shared) — /home/gem/skills/skill-7/SKILL.md\n"));
        assert!(block.contains(SHORTENED));
    }

    #[test]
    fn chinese_descriptions_are_cut_on_character_boundaries() {
        let skills: Vec<ListedSkill> = (0..20)
            .map(|n| {
                listed(
                    &format!("s{n}"),
                    &"处理中文数据文件".repeat(20),
                    SkillSource::Builtin,
                )
            })
            .collect();
        let budget = 3_000;
        let block = prompt_block(&skills, &[], budget);
        assert!(block.chars().count() <= budget);
        assert!(block.contains("…"));
        assert!(block.contains("- s0 (builtin): 处理中文"));
    }

    #[test]
    fn precedence_is_personal_then_shared_then_builtin() {
        let resolved = resolve_precedence(
            vec![listed("b", "personal b", SkillSource::Personal)],
            vec![
                listed("b", "shared b", SkillSource::Shared),
                listed("c", "shared c", SkillSource::Shared),
            ],
            vec![
                listed("a", "builtin a", SkillSource::Builtin),
                listed("b", "builtin b", SkillSource::Builtin),
                listed("c", "builtin c", SkillSource::Builtin),
            ],
        );
        let got: Vec<(&str, SkillSource)> = resolved
            .iter()
            .map(|skill| (skill.name.as_str(), skill.source))
            .collect();
        assert_eq!(
            got,
            [
                ("a", SkillSource::Builtin),
                ("b", SkillSource::Personal),
                ("c", SkillSource::Shared)
            ]
        );
    }

    #[test]
    fn source_serialises_lowercase() {
        assert_eq!(
            serde_json::to_string(&SkillSource::Builtin).unwrap(),
            "\"builtin\""
        );
        assert_eq!(SkillSource::Personal.as_str(), "personal");
    }
}
