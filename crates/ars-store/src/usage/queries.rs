//! The statement of usage. Only the day of a timestamp differs between the databases (SQLite
//! keeps RFC 3339 text, whose first ten characters are the UTC day; PostgreSQL a
//! `timestamptz`); each store picks its variant as `USAGE_ROWS`.

/// `$1`: from (inclusive); `$2`: to (exclusive); `$3`: the user, or NULL for every user.
macro_rules! usage_rows {
    ($day:literal) => {
        concat!(
            "SELECT ",
            $day,
            " AS day, agent_id, user_id, model, COUNT(*) AS runs, \
             CAST(SUM(prompt_tokens) AS BIGINT) AS prompt_tokens, \
             CAST(SUM(completion_tokens) AS BIGINT) AS completion_tokens \
             FROM runs WHERE created_at >= $1 AND created_at < $2 \
             AND ($3 IS NULL OR user_id = $3) \
             GROUP BY 1, agent_id, user_id, model ORDER BY 1, agent_id, user_id, model"
        )
    };
}

pub(crate) const USAGE_ROWS_SQLITE: &str = usage_rows!("substr(created_at, 1, 10)");
pub(crate) const USAGE_ROWS_POSTGRES: &str =
    usage_rows!("to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')");
