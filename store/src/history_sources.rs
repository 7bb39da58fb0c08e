//! Which runs never count as history, and which are not points of a suite's line, as SQL the
//! queries can embed as `&'static str`; and the ledger's largest ids, which its stamp reads.

/// The SQL list of the source codes whose runs are never a run's history or its commit's run
/// ([`bench_model::RunSource::kept_out_of_history`]: paired sides, profiles).
/// A macro, so queries stay `&'static str` (checked against the enum by the test below).
macro_rules! kept_out_of_history {
    () => {
        "(9, 10, 13, 14, 15)"
    };
}

/// The SQL list of the source codes whose runs are not points of a suite's line
/// ([`bench_model::RunSource::is_on_the_line`]): the above, and confirmations.
macro_rules! off_the_line {
    () => {
        "(8, 9, 10, 13, 14, 15)"
    };
}

/// The largest id of each table the ledger writes on its own (results, samples and the like
/// come with a run), as one SQL text: the shared part of [`crate::engine::Engine::STAMP`].
macro_rules! largest_ids {
    () => {
        "(SELECT COALESCE(MAX(id), 0) FROM runs) || ':' ||
         (SELECT COALESCE(MAX(id), 0) FROM tags) || ':' ||
         (SELECT COALESCE(MAX(id), 0) FROM annotations) || ':' ||
         (SELECT COALESCE(MAX(id), 0) FROM artifacts) || ':' ||
         (SELECT COALESCE(MAX(id), 0) FROM pairings)"
    };
}

#[cfg(test)]
mod tests {
    use bench_model::RunSource;

    #[test]
    fn the_sql_list_names_every_source_kept_out_of_history() {
        let codes: Vec<String> = (0..100)
            .filter_map(RunSource::from_code)
            .filter(|s| s.kept_out_of_history())
            .map(|s| s.code().to_string())
            .collect();
        assert_eq!(kept_out_of_history!(), format!("({})", codes.join(", ")));
    }

    #[test]
    fn the_sql_list_names_every_source_off_the_line() {
        let codes: Vec<String> = (0..100)
            .filter_map(RunSource::from_code)
            .filter(|s| !s.is_on_the_line())
            .map(|s| s.code().to_string())
            .collect();
        assert_eq!(off_the_line!(), format!("({})", codes.join(", ")));
    }
}
