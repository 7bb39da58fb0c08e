//! The store's test suite on both engines: SQLite in a temporary file, PostgreSQL on a server
//! this test process starts (testkit::postgres; skipped outside CI when PostgreSQL is missing,
//! failed under CI).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod engines;
mod suite;

on_both_engines!(
    a_run_reads_back_as_recorded,
    bad_runs_store_nothing,
    runs_are_found_by_filter_commit_tag_and_order,
    baselines_leave_out_quick_confirmation_and_ab_runs_and_history_quick_and_ab,
    a_pair_round_trips_and_a_bad_pair_stores_nothing,
    machines_trend_and_annotations_for_the_web,
    a_trend_draws_the_line_and_leaves_ab_pairs_to_their_compare_page,
    annotations_between_runs_follow_commit_order,
    every_table_refuses_update_and_delete,
    concurrent_writers_lose_nothing,
    pushes_are_recorded_once_per_key,
    dated_runs_keep_their_time_and_notes_once_per_key,
    concurrent_pushes_with_one_key_record_one_run,
    pair_pushes_are_recorded_once_per_key,
    a_newer_schema_is_refused,
    artifacts_read_back_once,
    concurrent_recordings_of_one_artifact_store_one,
    bad_artifacts_store_nothing,
    artifacts_are_append_only,
    two_projects_with_the_same_names_never_mix,
    the_stamp_changes_with_every_write,
    line_summaries_count_every_run_as_recorded,
);
