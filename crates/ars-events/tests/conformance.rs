//! The `EventBus` and `ControlChannel` conformance suite: every check runs against the
//! in-process implementation, and against Redis when `ARS_TEST_REDIS_URL` is set (skipped quietly otherwise).
//!
//! A check is a plain `async fn check_xxx(fx: &Fixture)` that makes its buses through the
//! fixture, so it never knows which implementation it is testing. Each `conformance!` entry
//! becomes `in_process::<check>` and `redis::<check>` tests. Redis fixtures use a fresh key
//! prefix per test and delete their keys when dropped.

// The checks are plain async fns rather than `#[test]`s, so clippy's test exemption for
// `unwrap` does not reach them; a failed call should fail the test loudly all the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "conformance/control.rs"]
mod control;
#[path = "conformance/fixture.rs"]
mod fixture;
#[path = "conformance/knowledge.rs"]
mod knowledge;
#[path = "conformance/live.rs"]
mod live;
#[path = "conformance/retention.rs"]
mod retention;
#[path = "conformance/sequence.rs"]
mod sequence;
#[path = "conformance/terminal.rs"]
mod terminal;
#[path = "conformance/threads.rs"]
mod threads;
#[path = "conformance/wire.rs"]
mod wire;

/// Runs each `module::check` once per bus implementation, each time on a fresh fixture.
/// Multi-threaded, so the racing checks race for real.
macro_rules! conformance {
    ($($module:ident :: $check:ident),* $(,)?) => {
        mod in_process {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $check() {
                    let fx = crate::fixture::Fixture::in_process();
                    crate::$module::$check(&fx).await;
                }
            )*
        }

        mod redis {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $check() {
                    let Some(fx) = crate::fixture::Fixture::redis() else {
                        return;
                    };
                    crate::$module::$check(&fx).await;
                }
            )*
        }
    };
}

conformance!(
    sequence::check_ids_start_at_one_and_increase_by_one,
    sequence::check_subscribe_from_zero_gets_everything_and_ends_after_terminal,
    sequence::check_late_subscriber_gets_the_whole_finished_run,
    sequence::check_resume_from_the_middle_gets_exactly_the_rest,
    sequence::check_resume_at_the_terminal_event_ends_at_once,
    sequence::check_publish_after_terminal_is_closed,
    sequence::check_unknown_run_is_not_retained,
    sequence::check_runs_do_not_see_each_other,
    live::check_subscriber_racing_a_publisher_gets_every_event_in_order,
    live::check_concurrent_publishers_get_dense_unique_ids,
    live::check_two_instances_share_a_run,
    live::check_subscribers_of_a_run_on_one_instance_share_each_event,
    live::check_a_subscriber_from_before_the_others_gets_every_event,
    retention::check_finished_run_expires_after_retention,
    retention::check_oldest_events_are_dropped_over_the_bound,
    retention::check_subscriber_that_falls_behind_the_bound_gets_not_retained,
    wire::check_every_kind_round_trips_through_the_bus,
    wire::check_a_streamed_event_reads_as_the_json_it_serializes_to,
    terminal::check_until_terminal_resolves_when_the_terminal_event_is_published,
    terminal::check_until_terminal_of_a_finished_run_resolves_at_once,
    terminal::check_until_terminal_of_an_unknown_run_is_not_retained,
    terminal::check_an_end_published_elsewhere_reaches_a_known_open_run_only,
    control::check_a_signal_reaches_every_listener_on_every_instance,
    control::check_a_listener_gets_only_signals_sent_after_it_listens,
    threads::check_a_follower_gets_what_is_published_after_it_follows_in_order_and_whole,
    threads::check_thread_events_reach_followers_on_every_instance,
    threads::check_threads_do_not_see_each_other,
    threads::check_a_follower_that_falls_behind_is_told_and_goes_on,
    knowledge::check_a_knowledge_follower_gets_what_is_published_after_it_follows_in_order,
    knowledge::check_knowledge_events_reach_followers_on_every_instance,
    knowledge::check_knowledge_bases_do_not_see_each_other,
    knowledge::check_a_knowledge_follower_that_falls_behind_is_told_and_goes_on,
);
