//! Which runs never count as history, as SQL the queries can embed as `&'static str`.

/// The SQL list of the source codes whose runs are never a run's history or its commit's run
/// ([`bench_model::RunSource::kept_out_of_history`]: paired sides, profiles).
/// A macro, so queries stay `&'static str` (checked against the enum by the test below).
macro_rules! kept_out_of_history {
    () => {
        "(9, 10, 13, 14, 15)"
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
}
