"""The worker side of `bench-run interleave` for Python scripts (protocol `bench-run-worker/1`,
JSON lines; see `bench-run interleave --help`)."""

import json
import sys
import time

PROTOCOL = "bench-run-worker/1"
MAX_TRIAL_ITERATIONS = 10_000


def timed(fn):
    """Run `fn()` once; return the nanoseconds it took."""
    t0 = time.perf_counter_ns()
    fn()
    return time.perf_counter_ns() - t0


def serve(benchmarks, iteration, trial_ns=50_000_000):
    """Announce `benchmarks` (dicts with `id` and `throughput`) on stdout, then answer each request
    on stdin with one trial until stdin closes. `iteration(id)` runs one iteration and returns the
    nanoseconds of its timed part (setup before its clock starts is left out). A trial runs as many
    iterations as fill `trial_ns`, counted from one untimed iteration on a benchmark's first trial,
    then fixed; an exception becomes the trial's reported failure."""
    ids = {b["id"] for b in benchmarks}
    print(json.dumps({"protocol": PROTOCOL, "benchmarks": benchmarks}), flush=True)
    iterations = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            bid = json.loads(line)["run"]
        except (ValueError, KeyError, TypeError):
            print(json.dumps({"id": "", "error": "not a request: %s" % line.strip()}), flush=True)
            continue
        if bid not in ids:
            print(json.dumps({"id": bid, "error": "no such benchmark in this worker"}), flush=True)
            continue
        try:
            n = iterations.get(bid)
            if n is None:
                once = max(1, iteration(bid))
                n = iterations[bid] = max(1, min(MAX_TRIAL_ITERATIONS, trial_ns // once))
            ns = sum(iteration(bid) for _ in range(n))
            reply = {"id": bid, "iters": n, "ns": max(1, ns)}
        except Exception as e:  # reported to bench-run as the trial's failure
            reply = {"id": bid, "error": repr(e)}
        print(json.dumps(reply), flush=True)
