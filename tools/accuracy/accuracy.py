#!/usr/bin/env python3
"""The gate accuracy experiment of issue 20: how often each way of gating raises a false alarm
when nothing changed (A/A) and how often it catches a known slowdown, on this machine, with a
steady and an on/off CPU load running beside it.

The crate tools/accuracy/knob has a slowdown knob in its code (SLOWDOWN_PERMILLE: extra work of
its `knob` benchmark, per thousand) and a label (TRIAL_LABEL). The script commits the crate into
a scratch git repository (tag `base`: knob 0), then one commit per trial on top of `base`:

  A/A trial:      knob 0, a new label: a different executable, the same hot code
  version trial:  knob 0, only the crate's version bumped in Cargo.toml (issue 45: a release
                  commit; every symbol's hash changes, so the code's layout does)
  unused trial:   knob 0, one more function that nothing calls
  slowdown trial: knob 20, 50 or 100 (2%, 5%, 10% more work), and 10 (1%) for instruction counts

Trials run in a seeded random order, each judged by the methods asked for:

  old-gate      the single-run gate as it was before issue 20 (a bench-run built from commit
                a45e1af, --old-bench-run): one plain run of the head, `gate --base base`, its
                history growing trial by trial as a team's would
  ab            `bench-run ab --base base --head trial-N` (this checkout's bench-run: its default
                layouts, issue 45)
  ab-1          the same with `--layouts 1`: the default link alone, as before issue 45
  instructions  `bench-run ab --suite knob_instructions --rounds 1` (gungraun under valgrind)

An A/A, version or unused trial counts as a false alarm when any benchmark is called a regression
or an improvement (and as a failed gate when ab exits 1);
a slowdown trial is caught when `knob` is a regression. Every trial is appended to trials-<method>.jsonl in
the output directory (a rerun resumes, method by method), and the summary is written as summary.json and as a
Bencher Metric Format file for `bench-run import bmf --suite gate_accuracy`.

Usage:
  tools/accuracy/accuracy.py --out results/accuracy [--methods old-gate,ab,ab-1,instructions]
                             [--aa 20] [--version-aa 10] [--unused-aa 10] [--per-level 10]
                             [--levels 10,20,50,100] [--seed 20261125] [--no-load]
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KNOB = Path(__file__).resolve().parent / "knob"
GIT = ["git", "-c", "user.name=accuracy", "-c", "user.email=accuracy@example.invalid"]


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(args, cwd, env=None, check=True):
    started = time.monotonic()
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    seconds = time.monotonic() - started
    if check and done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, args))} exited {done.returncode}\n{done.stderr[-4000:]}"
        )
    return done, seconds


# --------------------------------------------------------------------------------------------
# The load beside the experiment
# --------------------------------------------------------------------------------------------

STEADY = "while True: pass"
ON_OFF = """
import random, time
rng = random.Random(4242)
while True:
    end = time.monotonic() + rng.uniform(1.0, 4.0)
    while time.monotonic() < end:
        pass
    time.sleep(rng.uniform(1.0, 4.0))
"""


def start_load():
    """One process spinning all the time and one spinning 1-4 s on, 1-4 s off: on this 2-core
    machine the benchmark shares the CPUs with one to two busy threads."""
    procs = [
        subprocess.Popen([sys.executable, "-c", STEADY]),
        subprocess.Popen([sys.executable, "-c", ON_OFF]),
    ]
    return procs


def stop_load(procs):
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


# --------------------------------------------------------------------------------------------
# The scratch repository
# --------------------------------------------------------------------------------------------


def write_knob(repo, permille, label):
    lib = repo / "src/lib.rs"
    text = lib.read_text()
    lines = []
    for line in text.splitlines():
        if line.startswith("pub const SLOWDOWN_PERMILLE: u64 = "):
            line = f"pub const SLOWDOWN_PERMILLE: u64 = {permille};"
        elif line.startswith("pub const TRIAL_LABEL: &str = "):
            assert len(label) == 8, label
            line = f'pub const TRIAL_LABEL: &str = "{label}";'
        lines.append(line)
    lib.write_text("\n".join(lines) + "\n")


def make_repo(out):
    repo = out / "repo"
    if (repo / ".git").exists():
        return repo
    shutil.copytree(KNOB, repo, ignore=shutil.ignore_patterns("target"))
    run(GIT + ["init", "-q"], repo)
    write_knob(repo, 0, "base-000")
    run(GIT + ["add", "-A"], repo)
    run(GIT + ["commit", "-q", "-m", "base"], repo)
    run(GIT + ["tag", "base"], repo)
    return repo


def bump_version(repo, index):
    """Only the package's version changes, as in a release commit."""
    manifest = repo / "Cargo.toml"
    text = manifest.read_text()
    bumped = text.replace('version = "0.1.0"', f'version = "0.1.{index + 1}"', 1)
    assert bumped != text, "the knob crate's version line has moved"
    manifest.write_text(bumped)


def add_unused_function(repo, index):
    """One more public function that nothing calls."""
    lib = repo / "src/lib.rs"
    lib.write_text(lib.read_text() + f"""
/// Called by nothing: a change that compiles to code no benchmark runs.
#[must_use]
pub fn unused_{index}(x: u64) -> u64 {{
    x.rotate_left({index % 63 + 1}) ^ {index}
}}
""")


def make_trial_commit(repo, trial):
    tag = f"trial-{trial['index']:03d}"
    exists, _ = run(GIT + ["rev-parse", "-q", "--verify", tag], repo, check=False)
    if exists.returncode == 0:
        return tag
    run(GIT + ["checkout", "-q", "--detach", "base"], repo)
    if trial["kind"] == "version":
        bump_version(repo, trial["index"])
    elif trial["kind"] == "unused":
        add_unused_function(repo, trial["index"])
    else:
        write_knob(repo, trial["permille"], trial["label"])
    run(GIT + ["commit", "-q", "-am", tag], repo)
    run(GIT + ["tag", tag], repo)
    run(GIT + ["checkout", "-q", "--detach", "base"], repo)
    return tag


# --------------------------------------------------------------------------------------------
# Methods
# --------------------------------------------------------------------------------------------


MAIN_METRICS = ("time", "instructions")


def judge(rows):
    """(caught, alarms, knob change %) from a comparison's JSON rows: the time rows (criterion) or
    the instruction counts (gungraun); gungraun's other counters are not judged here."""
    main = [r for r in rows if r.get("metric") in MAIN_METRICS]
    alarms = sum(1 for r in main if r["verdict"] in ("regression", "improvement"))
    knob = next((r for r in main if r["benchmark"].split("/")[-1].split("::")[-1] == "knob"), None)
    caught = bool(knob and knob["verdict"] == "regression")
    change = knob.get("change_pct") if knob else None
    return caught, alarms, change


def measured_seconds(binary, ledger, run_id, repo, env):
    """How long a recorded run's benchmarks ran (its duration_ms), without the builds."""
    done, _ = run([binary, "--db", ledger, "show", str(run_id), "--format", "json"], repo, env=env,
                  check=False)
    if done.returncode != 0:
        return None
    ms = json.loads(done.stdout)["run"].get("duration_ms")
    return ms / 1000 if ms is not None else None


def method_ab(args, repo, out, tag, suite, extra):
    done, seconds = run(
        [args.bench_run, "--db", str(out / "new.sqlite"), "ab", "--suite", suite,
         "--base", "base", "--head", tag, "--format", "json", *extra],
        repo, env=args.env, check=False,
    )
    if done.returncode not in (0, 1):
        return {"exit": done.returncode, "error": done.stderr[-2000:], "seconds": seconds}
    doc = json.loads(done.stdout) if done.stdout.strip() else {"rows": []}
    caught, alarms, change = judge(doc.get("rows", []))
    head = doc.get("head", {}).get("id")
    every_metric = sum(1 for r in doc.get("rows", []) if r["verdict"] in ("regression", "improvement"))
    return {
        "exit": done.returncode, "caught": caught, "alarms": alarms, "change_pct": change,
        "alarms_any_metric": every_metric,
        "seconds": seconds, "runs": [doc.get("base", {}).get("id"), head],
        "measured_seconds": head and measured_seconds(
            args.bench_run, str(out / "new.sqlite"), head, repo, args.env),
        "same_executable": "built the same bench executable" in done.stderr,
    }


def method_old_gate(args, repo, out, tag):
    ledger = str(out / "old.sqlite")
    run(GIT + ["checkout", "-q", "--detach", tag], repo)
    try:
        _, plain_seconds = run([args.old_bench_run, "--db", ledger, "--suite", "knob"], repo, env=args.env)
        done, _ = run(
            [args.old_bench_run, "--db", ledger, "gate", "--base", "base", "--head", "latest",
             "--format", "json"],
            repo, env=args.env, check=False,
        )
    finally:
        run(GIT + ["checkout", "-q", "--detach", "base"], repo)
    if done.returncode not in (0, 1):
        return {"exit": done.returncode, "error": done.stderr[-2000:], "plain_seconds": plain_seconds}
    doc = json.loads(done.stdout)
    caught, alarms, change = judge(doc["rows"])
    return {"exit": done.returncode, "caught": caught, "alarms": alarms, "change_pct": change,
            "plain_seconds": plain_seconds,
            "measured_seconds": measured_seconds(args.old_bench_run, ledger, doc["head"]["id"], repo, args.env)}


def old_gate_base(args, repo, out):
    ledger = out / "old.sqlite"
    if ledger.exists():
        return
    log("old gate: recording the base run")
    run([args.old_bench_run, "--db", str(ledger), "--suite", "knob"], repo, env=args.env)
    run([args.old_bench_run, "--db", str(ledger), "tag", "latest", "base"], repo, env=args.env)


# --------------------------------------------------------------------------------------------
# The plan and the summary
# --------------------------------------------------------------------------------------------


def plan(args):
    trials = []
    for i in range(args.aa):
        trials.append({"kind": "aa", "permille": 0, "label": f"aa-{i:05d}"})
    for i in range(args.version_aa):
        trials.append({"kind": "version", "permille": 0, "label": f"ve-{i:05d}"})
    for i in range(args.unused_aa):
        trials.append({"kind": "unused", "permille": 0, "label": f"un-{i:05d}"})
    for permille in args.levels:
        for i in range(args.per_level):
            trials.append({"kind": "slow", "permille": permille, "label": f"s{permille:03d}-{i:03d}"[:8].ljust(8, "0")})
    rng = random.Random(args.seed)
    rng.shuffle(trials)
    for index, trial in enumerate(trials):
        trial["index"] = index
    return trials


def methods_for(trial, methods):
    # Instruction counts are the only method held to 1%; the others skip the 1% trials.
    chosen = [m for m in methods if m == "instructions" or trial["permille"] != 10]
    return chosen


def summarise(records):
    table = {}
    for r in records:
        for method, result in [(r["method"], r["result"])]:
            key = (method, r["kind"], r["permille"])
            cell = table.setdefault(key, {"trials": 0, "caught": 0, "alarms": 0, "errors": 0,
                                          "failed": 0, "changes": [], "seconds": [],
                                          "measured": []})
            cell["trials"] += 1
            if "error" in result:
                cell["errors"] += 1
                continue
            cell["caught"] += int(result["caught"])
            cell["alarms"] += int(result["alarms"] > 0)
            cell["failed"] += int(result.get("exit") == 1)
            if result.get("change_pct") is not None:
                cell["changes"].append(result["change_pct"])
            for k in ("seconds", "plain_seconds"):
                if k in result:
                    cell["seconds"].append(result[k])
            if result.get("measured_seconds") is not None:
                cell["measured"].append(result["measured_seconds"])
    return table


def to_bmf(table):
    """One row per method and level, for `bench-run import bmf`: the count of alarms (A/A) or of
    caught slowdowns, its measure naming the number of trials (`alarms_of_20`, `caught_of_10`).
    The medians of the measured changes and times stay in summary.json."""
    bmf = {}
    for (method, kind, permille), cell in sorted(table.items()):
        judged = cell["trials"] - cell["errors"]
        if kind in ("aa", "version", "unused"):
            bmf[f"{method}/{kind}"] = {f"alarms_of_{judged}": {"value": cell["alarms"]},
                                       f"failed_of_{judged}": {"value": cell["failed"]}}
        else:
            bmf[f"{method}/slow_{permille / 10:g}pct"] = {f"caught_of_{judged}": {"value": cell["caught"]}}
    return bmf


def cost_of_ab(records):
    """The measuring time of `ab` (rounds only) over that of one plain run of the suite (the
    old gate's head run, criterion's default budget), as medians over the trials: the issue's
    bar is 3. The wall times with builds are given too."""
    def median(values):
        values = sorted(v for v in values if v is not None)
        return values[len(values) // 2] if values else None
    ab = [r["result"] for r in records if r["method"] == "ab" and "error" not in r["result"]]
    ab_1 = [r["result"] for r in records if r["method"] == "ab-1" and "error" not in r["result"]]
    plain = [r["result"] for r in records if r["method"] == "old-gate" and "error" not in r["result"]]
    ab_measured = median(r.get("measured_seconds") for r in ab)
    plain_measured = median(r.get("measured_seconds") for r in plain)
    ab_1_measured = median(r.get("measured_seconds") for r in ab_1)
    cost = {}
    if ab_measured and ab_1_measured:
        # What the layouts cost: rounds rounded up to a multiple of K, and the relinks.
        cost["layouts_over_one"] = {"value": ab_measured / ab_1_measured}
        cost["layouts_wall_over_one"] = {
            "value": median(r.get("seconds") for r in ab) / median(r.get("seconds") for r in ab_1)}
    if not ab_measured or not plain_measured:
        return cost or None
    return {
        **cost,
        "ratio": {"value": ab_measured / plain_measured},
        "ab_measured_seconds": {"value": ab_measured},
        "plain_measured_seconds": {"value": plain_measured},
        "ab_wall_seconds": {"value": median(r.get("seconds") for r in ab)},
        "plain_wall_seconds": {"value": median(r.get("plain_seconds") for r in plain)},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "results/accuracy")
    parser.add_argument("--methods", default="old-gate,ab,instructions")
    parser.add_argument("--aa", type=int, default=20)
    parser.add_argument("--version-aa", type=int, default=0,
                        help="A/A trials that only bump the crate's version")
    parser.add_argument("--unused-aa", type=int, default=0,
                        help="A/A trials that only add a function nothing calls")
    parser.add_argument("--per-level", type=int, default=10)
    parser.add_argument("--levels", default="10,20,50,100", help="slowdowns in permille")
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--bench-run", default=str(ROOT / "target/release/bench-run"))
    parser.add_argument("--old-bench-run", default=str(ROOT / "target/old-gate/bench-run"))
    parser.add_argument("--no-load", action="store_true", help="run without the CPU load")
    parser.add_argument("--rejudge", action="store_true",
                        help="measure nothing: judge the stored pairs of the ab methods again with "
                             "this bench-run's rule (`compare BASE HEAD` on their rounds), and "
                             "summarise that")
    args = parser.parse_args()
    args.levels = [int(x) for x in args.levels.split(",")]
    methods = args.methods.split(",")
    # Absolute: the tools run with the scratch repository as their working directory.
    args.out = args.out.resolve()
    args.bench_run = str(Path(args.bench_run).resolve())
    args.out.mkdir(parents=True, exist_ok=True)
    args.env = dict(os.environ, CARGO_TARGET_DIR=str(args.out / "target"))
    args.env.pop("BENCH_DB", None)

    repo = make_repo(args.out)
    trials = plan(args)
    done = {}  # (method, index) -> result
    for method in ("old-gate", "ab", "ab-1", "instructions"):
        path = args.out / f"trials-{method}.jsonl"
        if path.exists():
            for line in path.read_text().splitlines():
                record = json.loads(line)
                done[(method, record["index"])] = record
    if args.rejudge:
        for (method, index), record in list(done.items()):
            runs = record["result"].get("runs")
            if method not in ("ab", "ab-1", "instructions") or not runs or None in runs:
                continue
            judged, _ = run([args.bench_run, "--db", str(args.out / "new.sqlite"), "compare",
                             str(runs[0]), str(runs[1]), "--format", "json"],
                            repo, env=args.env, check=False)
            rows = json.loads(judged.stdout).get("rows", []) if judged.stdout.strip() else []
            caught, alarms, change = judge(rows)
            failed = any(r["verdict"] == "regression" for r in rows)
            record["result"].update(caught=caught, alarms=alarms, change_pct=change,
                                    exit=1 if failed else 0)
        trials = []
    load = [] if args.no_load or args.rejudge else start_load()
    signal.signal(signal.SIGTERM, lambda *_: (stop_load(load), sys.exit(2)))
    try:
        if "old-gate" in methods:
            old_gate_base(args, repo, args.out)
        for trial in trials:
            todo = [m for m in methods_for(trial, methods) if (m, trial["index"]) not in done]
            if not todo:
                continue
            tag = make_trial_commit(repo, trial)
            results = {}
            for method in todo:
                if method == "ab":
                    results[method] = method_ab(args, repo, args.out, tag, "knob", [])
                elif method == "ab-1":
                    results[method] = method_ab(args, repo, args.out, tag, "knob", ["--layouts", "1"])
                elif method == "instructions":
                    results[method] = method_ab(args, repo, args.out, tag, "knob_instructions", ["--rounds", "1"])
                elif method == "old-gate":
                    results[method] = method_old_gate(args, repo, args.out, tag)
            for method, result in results.items():
                record = dict(trial, method=method, result=result,
                              finished=time.strftime("%Y-%m-%dT%H:%M:%S"), load=not args.no_load)
                with (args.out / f"trials-{method}.jsonl").open("a") as f:
                    f.write(json.dumps(record) + "\n")
                done[(method, trial["index"])] = record
            brief = ", ".join(
                f"{m}: {'ERROR' if 'error' in r else ('caught' if r['caught'] else 'missed') if trial['kind'] == 'slow' else ('ALARM' if r['alarms'] else 'quiet')}"
                for m, r in results.items()
            )
            log(f"trial {trial['index'] + 1}/{len(trials)} ({trial['kind']} {trial['permille'] / 10:g}%): {brief}")
    finally:
        stop_load(load)

    table = summarise(done.values())
    summary = {f"{m}/{k}/{p}": v for (m, k, p), v in table.items()}
    bmf = to_bmf(table)
    cost = cost_of_ab(done.values())
    if cost:
        if "ratio" in cost:
            bmf["cost/ab_over_one_plain_run"] = {"ratio": cost["ratio"]}
        if "layouts_over_one" in cost:
            bmf["cost/ab_over_ab_1"] = {"ratio": cost["layouts_over_one"],
                                        "wall_ratio": cost["layouts_wall_over_one"]}
        summary["cost"] = cost
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
    (args.out / "accuracy.bmf.json").write_text(json.dumps(bmf, indent=1, sort_keys=True))
    for (method, kind, permille), cell in sorted(table.items()):
        what = {"aa": "false alarms", "version": "version bumps", "unused": "unused fn"}.get(
            kind, f"caught at {permille / 10:g}%")
        count = cell["alarms"] if kind != "slow" else cell["caught"]
        print(f"{method:13} {what:16} {count}/{cell['trials'] - cell['errors']}"
              + (f" ({cell['errors']} errors)" if cell["errors"] else ""))


if __name__ == "__main__":
    main()
