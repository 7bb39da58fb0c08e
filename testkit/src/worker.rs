//! Shell workers that speak `bench-run-worker/1` with fixed answers, for the interleave tests.

/// A `sh` script that announces `benchmarks` (id, nanoseconds per trial of 2 iterations, each
/// declaring 1000 bytes of throughput) and answers every trial request with that fixed time.
/// With `log`, it appends each request line to that file first.
#[must_use]
pub fn fixed_time_script(benchmarks: &[(&str, u64)], log: Option<&str>) -> String {
    let hello: Vec<String> = benchmarks
        .iter()
        .map(|(id, _)| format!(r#"{{"id":"{id}","throughput":{{"bytes":1000}}}}"#))
        .collect();
    let logging = log.map_or_else(String::new, |log| format!("  echo \"$line\" >> '{log}'\n"));
    let mut script = format!(
        "printf '%s\\n' '{{\"protocol\":\"bench-run-worker/1\",\"benchmarks\":[{}]}}'\n\
         while read -r line; do\n{logging}  case \"$line\" in\n",
        hello.join(",")
    );
    for (id, ns) in benchmarks {
        script.push_str(&format!(
            "    *'\"{id}\"'*) printf '%s\\n' '{{\"id\":\"{id}\",\"iters\":2,\"ns\":{ns}}}' ;;\n"
        ));
    }
    script.push_str("  esac\ndone\n");
    script
}
