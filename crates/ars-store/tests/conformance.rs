//! The `Store` conformance suite: every check runs against SQLite, and against PostgreSQL when
//! `ARS_TEST_DATABASE_URL` is set (skipped quietly otherwise).
//!
//! A check is a plain `async fn check_xxx(store: &dyn Store)` (or generic over
//! `Store + RawSql` when it must write behind the trait's back) and gets a fresh database.
//! Each `conformance!` entry becomes `sqlite::<check>` and `postgres::<check>` tests.

// The checks are plain async fns rather than `#[test]`s, so clippy's test exemption for
// `unwrap` does not reach them; a failed call should fail the test loudly all the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "conformance/agents.rs"]
mod agents;
#[path = "conformance/fixtures.rs"]
mod fixtures;
#[path = "conformance/ingestion.rs"]
mod ingestion;
#[path = "conformance/knowledge.rs"]
mod knowledge;
#[path = "conformance/mcp_servers.rs"]
mod mcp_servers;
#[path = "conformance/protocols.rs"]
mod protocols;
#[path = "conformance/providers.rs"]
mod providers;
#[path = "conformance/replace.rs"]
mod replace;
#[path = "conformance/results.rs"]
mod results;
#[path = "conformance/runs.rs"]
mod runs;
#[path = "conformance/schema.rs"]
mod schema;
#[path = "conformance/skills.rs"]
mod skills;
#[path = "conformance/steering.rs"]
mod steering;
#[path = "conformance/threads.rs"]
mod threads;
#[path = "conformance/users.rs"]
mod users;
#[path = "conformance/visibility.rs"]
mod visibility;
#[path = "conformance/waiting.rs"]
mod waiting;

/// Runs each `module::check` once per store, each time on a fresh database.
macro_rules! conformance {
    ($($module:ident :: $check:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $check() {
                    let (store, _dir) = ars_store::test_support::sqlite_fresh().await;
                    super::$module::$check(&store).await;
                }
            )*
        }

        mod postgres {
            $(
                #[tokio::test]
                async fn $check() {
                    let Some(url) = ars_store::test_support::pg_url() else {
                        return;
                    };
                    let store = ars_store::test_support::pg_fresh(&url).await;
                    super::$module::$check(&store).await;
                }
            )*
        }
    };
}

conformance!(
    users::check_users_create_and_lookup,
    users::check_duplicate_username_conflicts,
    users::check_count_and_existing_users,
    users::check_tokens_lookup_and_expiry,
    users::check_revoke_only_own_tokens,
    users::check_account_changes_keep_an_active_admin,
    users::check_concurrent_demotions_leave_an_admin,
    users::check_disabled_users_tokens_are_found_flagged,
    users::check_password_change_revokes_other_tokens,
    users::check_token_use_is_recorded,
    agents::check_agent_create_and_lookup,
    agents::check_duplicate_slug_conflicts_and_writes_nothing,
    agents::check_unknown_share_user_is_invalid,
    agents::check_update_replaces_fields_and_shares,
    agents::check_update_missing_agent_is_not_found,
    agents::check_delete_cascades_shares,
    agents::check_general_purpose_is_built_in,
    agents::check_only_one_default,
    agents::check_concurrent_default_changes,
    visibility::check_list_filter_matrix,
    visibility::check_list_order,
    visibility::check_skill_list_filter_matrix,
    visibility::check_skills_list_by_name_in_byte_order,
    visibility::check_every_read_of_a_shared_resource_answers_exactly_its_shares,
    skills::check_skill_create_get_and_files_round_trip,
    skills::check_taken_skill_name_conflicts_and_writes_nothing,
    skills::check_skill_names_are_one_to_64_characters,
    skills::check_a_failed_skill_create_leaves_nothing,
    skills::check_unknown_skill_users_are_invalid,
    skills::check_replace_skill_content_swaps_every_file_at_once,
    skills::check_replace_skill_content_keeps_the_name,
    skills::check_update_skill_share_replaces_shares_only,
    skills::check_delete_skill_cascades_files_and_shares,
    skills::check_deleting_a_user_clears_skill_ownership_and_shares,
    schema::check_schema_rejects_forbidden_rows,
    schema::check_deleting_a_user_clears_ownership_and_shares,
    schema::check_timestamps_round_trip,
    schema::check_schema_rejects_forbidden_conversation_rows,
    threads::check_message_search_is_literal_and_only_the_users_top_level_history,
    threads::check_thread_create_and_lookup,
    threads::check_list_threads_top_level_by_recency,
    threads::check_child_threads,
    threads::check_thread_pages_walk_the_list_by_keyset,
    threads::check_message_pages_read_a_thread_backwards,
    threads::check_answered_calls_name_a_runs_results,
    threads::check_threads_by_ids_answers_those_that_exist,
    threads::check_rename_thread,
    threads::check_delete_thread_cascades,
    threads::check_deleting_an_agent_or_user_deletes_threads,
    threads::check_messages_seq_and_round_trip,
    threads::check_concurrent_appends,
    threads::check_conversation_timestamps_round_trip,
    runs::check_create_run_and_busy,
    runs::check_new_run_after_finish,
    runs::check_concurrent_create_run_has_one_winner,
    runs::check_mark_run_running,
    runs::check_a_run_created_running_is_started_as_it_is_created_and_holds_its_thread,
    runs::check_run_usage,
    runs::check_a_message_carries_its_runs_spend_and_a_refused_one_writes_nothing,
    runs::check_usage_rolls_runs_up_by_day_agent_user_and_model,
    runs::check_a_new_thread_is_created_with_its_run_or_not_at_all,
    runs::check_finish_run_first_writer_wins,
    runs::check_interrupt_active_runs,
    runs::check_leases_renew_for_their_owner_and_only_expired_ones_are_reaped,
    runs::check_child_and_subagent_runs,
    waiting::check_a_waiting_run_holds_its_thread_keeps_no_lease_and_is_never_reaped,
    waiting::check_a_waiting_run_resumes_once_and_only_on_what_it_waited_on,
    waiting::check_expired_waits_and_the_waiting_runs_under_a_thread,
    steering::check_steer_messages_keep_their_mark_and_read_after_a_seq,
    steering::check_a_runs_answer_and_end_are_one_write_refused_while_a_message_was_sent_in,
    protocols::check_thread_metadata_is_the_owners_and_goes_with_the_thread,
    protocols::check_only_an_empty_thread_is_bound_to_another_agent,
    results::check_a_background_childs_end_is_told_once_by_a_message_a_wake_or_the_mark,
    replace::check_create_run_with_input_writes_the_run_and_its_user_message,
    replace::check_replace_from_takes_the_message_and_everything_after_it_out_of_the_history,
    replace::check_replace_while_busy_is_busy_and_replaces_nothing,
    replace::check_unreplaceable_messages_are_refused_and_nothing_is_written,
    replace::check_concurrent_replacements_have_one_winner,
    providers::check_model_providers_round_trip,
    providers::check_model_provider_names_are_unique,
    providers::check_update_model_provider_replaces_fields,
    providers::check_default_model_follows_renames_and_deletions,
    providers::check_model_provider_schema_rejects_forbidden_rows,
    providers::check_failed_runs_keep_their_error_code,
    providers::check_an_agent_is_read_for_a_run_with_the_providers_version,
    mcp_servers::check_mcp_servers_round_trip,
    mcp_servers::check_mcp_server_slugs_are_unique_and_a_conflict_writes_nothing,
    mcp_servers::check_update_mcp_server_replaces_fields_and_shares_and_keeps_the_slug,
    mcp_servers::check_delete_mcp_server_and_deleting_its_owner,
    mcp_servers::check_mcp_server_list_filter_matrix,
    mcp_servers::check_every_read_of_an_mcp_server_answers_exactly_its_shares,
    mcp_servers::check_mcp_server_schema_rejects_forbidden_rows,
    mcp_servers::check_mcp_sessions_and_calls,
    knowledge::check_knowledge_bases_round_trip_with_counts,
    knowledge::check_knowledge_base_slugs_are_unique_and_a_conflict_writes_nothing,
    knowledge::check_update_knowledge_base_keeps_the_slug_and_replaces_shares,
    knowledge::check_knowledge_base_list_filter_matrix,
    knowledge::check_every_read_of_a_knowledge_base_answers_exactly_its_shares,
    knowledge::check_delete_knowledge_base_cascades,
    knowledge::check_put_kb_document_inserts_then_replaces_by_name,
    ingestion::check_concurrent_claims_never_take_one_document_twice,
    ingestion::check_claims_take_the_least_recently_updated_document_first,
    ingestion::check_an_expired_lease_is_claimable_again_and_a_live_one_is_not,
    ingestion::check_a_released_claim_is_pending_again_and_not_counted,
    ingestion::check_finish_writes_only_the_claimed_version_and_replaces_chunks_at_once,
    ingestion::check_failed_documents_keep_their_old_chunks_until_retried,
    ingestion::check_kb_chunk_reads,
    ingestion::check_kb_change_log,
    knowledge::check_knowledge_base_schema_rejects_forbidden_rows,
);
