//! What a command's result says about the quota: that a file could not grow, that the
//! command was stopped, or that the workspace is over its quota — each time with the quota,
//! the usage and the way out, so neither the model nor the user has to guess.

use super::{Budget, MARGIN, human};
use crate::error::WAY_OUT;
use crate::sandbox::ExecOutcome;

/// The note for a command killed by the file size limit (`SIGXFSZ`), when that limit was the
/// quota's rather than the configured `file_size_bytes` (0: none); `None` when it was not.
pub(crate) fn file_size_note(budget: &Budget, configured: u64) -> Option<String> {
    let cap = budget.file_size()?;
    if configured > 0 && configured <= cap {
        return None;
    }
    let (used, quota) = (human(budget.used), human(budget.quota));
    Some(if budget.over() {
        format!(
            "a file could not grow: the workspace is over its quota ({used} used of {quota}), \
             so no file can grow until space is freed; {WAY_OUT}"
        )
    } else {
        format!(
            "a file reached {}, the most the workspace quota left one file when the command \
             started ({used} of {quota} were used, and a margin of {} is allowed); {WAY_OUT}",
            human(cap),
            human(MARGIN)
        )
    })
}

/// Adds to `outcome` what the quota did: `stopped_at` is the usage at which the watcher
/// stopped the command (if it did), `used` the usage measured after it.
pub(crate) fn after_command(
    outcome: &mut ExecOutcome,
    budget: &Budget,
    stopped_at: Option<u64>,
    used: u64,
) {
    let quota = human(budget.quota);
    // Said once per result: a file size note may have said it already.
    let way_out = if outcome.stderr.contains(WAY_OUT) {
        String::new()
    } else {
        format!("; {WAY_OUT}")
    };
    let note = match stopped_at {
        Some(at) => format!(
            "the command was stopped: the workspace reached its quota ({} used of {quota}; a \
             command may go at most {} past it){way_out}",
            human(at),
            human(MARGIN)
        ),
        None if budget.limited() && used > budget.quota => format!(
            "the workspace is over its quota: {} used of {quota}{way_out}",
            human(used)
        ),
        None => return,
    };
    outcome.quota_stopped |= stopped_at.is_some();
    if !outcome.stderr.is_empty() && !outcome.stderr.ends_with('\n') {
        outcome.stderr.push('\n');
    }
    outcome.stderr.push_str(&format!("[{note}]\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    #[test]
    fn the_file_size_note_is_the_quotas_only_when_the_quota_set_the_limit() {
        let room = Budget {
            used: 10 * MIB,
            quota: 20 * MIB,
        };
        assert_eq!(file_size_note(&room, 5 * MIB), None);
        let note = file_size_note(&room, 1024 * MIB).unwrap();
        assert!(
            note.contains("reached 11.0 MiB") && note.contains("rm"),
            "{note}"
        );
        let over = Budget {
            used: 30 * MIB,
            quota: 20 * MIB,
        };
        let note = file_size_note(&over, 0).unwrap();
        assert!(
            note.contains("over its quota") && note.contains("Files"),
            "{note}"
        );
        assert_eq!(file_size_note(&Budget { used: 1, quota: 0 }, 0), None);
    }

    #[test]
    fn a_stopped_command_says_why_and_how_to_free_space() {
        let budget = Budget {
            used: 0,
            quota: 20 * MIB,
        };
        let mut outcome = ExecOutcome {
            stderr: "dd: error".into(),
            ..ExecOutcome::default()
        };
        after_command(&mut outcome, &budget, Some(22 * MIB), 22 * MIB);
        assert!(outcome.quota_stopped);
        assert!(
            outcome
                .stderr
                .starts_with("dd: error\n[the command was stopped")
                && outcome.stderr.contains("22.0 MiB used of 20.0 MiB")
                && outcome.stderr.contains("`rm`"),
            "{}",
            outcome.stderr
        );
        let mut twice = ExecOutcome {
            stderr: format!("[{}]\n", file_size_note(&budget, 0).unwrap()),
            ..ExecOutcome::default()
        };
        after_command(&mut twice, &budget, None, 21 * MIB);
        assert_eq!(twice.stderr.matches(WAY_OUT).count(), 1, "{}", twice.stderr);
        assert!(twice.stderr.contains("over its quota: 21.0 MiB used"));
        let mut quiet = ExecOutcome::default();
        after_command(&mut quiet, &budget, None, 19 * MIB);
        assert_eq!(quiet, ExecOutcome::default());
    }
}
