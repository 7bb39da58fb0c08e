#!/usr/bin/env python3
"""The bisect accuracy experiment of issue 46: over repeated bisections of a 32-commit history
with one 5% slowdown, how often `bench-run bisect` names the culprit, how often a wrong commit,
how many executables it measures and how long it takes against one `bench-run ab` of the same
ends, with the on/off CPU load of accuracy.py running beside it.

The crate tools/accuracy/knob is committed into a scratch repository (tag `base`). Each trial is
a branch of 32 commits on top of `base`, made in a seeded random way:

  label commit  TRIAL_LABEL rewritten: another executable, the same hot code (must be measured)
  docs commit   README.md edited: a byte-identical executable (same-binary: free)
  the culprit   SLOWDOWN_PERMILLE set to 50 at a random position (1 to 32); later commits keep it

Each trial runs `bench-run bisect --suite knob --good base --bad trial-N --benchmark '^knob$'`
(this checkout's release bench-run, one build home for all trials so dependencies compile once)
and records whether the culprit was named, a wrong commit was named, or the range was left
unresolved, with the executables measured and the wall time. Every third trial also runs one
`bench-run ab --base base --head trial-N` for the time of one A/B run. Trials are appended to
trials.jsonl (a rerun resumes); the summary goes to summary.json and, as Bencher Metric Format,
to bisect_accuracy.bmf.json for `bench-run import bmf --suite bisect_accuracy`.

Usage:
  tools/accuracy/bisect_accuracy.py --out results/bisect-accuracy [--trials 10] [--commits 32]
                                    [--permille 50] [--seed 20261202] [--no-load]
"""

import argparse
import json
import random
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import GIT, KNOB, ROOT, log, run, start_load, stop_load, write_knob  # noqa: E402


def make_repo(out):
    repo = out / "repo"
    if (repo / ".git").exists():
        return repo
    shutil.copytree(KNOB, repo, ignore=shutil.ignore_patterns("target"))
    run(GIT + ["init", "-q"], repo)
    write_knob(repo, 0, "base-000")
    (repo / "README.md").write_text("The knob crate.\n")
    run(GIT + ["add", "-A"], repo)
    run(GIT + ["commit", "-q", "-m", "base"], repo)
    run(GIT + ["tag", "base"], repo)
    return repo


def make_history(repo, trial, commits, permille, rng):
    """Branch trial-N: `commits` commits on base, the slowdown at a random position. Returns
    the culprit's hash and its position."""
    branch = f"trial-{trial}"
    culprit_at = rng.randint(1, commits)
    run(GIT + ["checkout", "-q", "-B", branch, "base"], repo)
    knob = 0
    culprit = None
    for i in range(1, commits + 1):
        label = f"t{trial:03d}-{i:03d}"
        if i == culprit_at:
            knob = permille
            write_knob(repo, knob, label)
            message = f"knob: {permille / 10:g}% more work"
        elif rng.random() < 0.5:
            readme = repo / "README.md"
            readme.write_text(readme.read_text() + f"Note {trial}.{i}.\n")
            message = f"docs: note {i}"
        else:
            write_knob(repo, knob, label)
            message = f"label {label}"
        run(GIT + ["add", "-A"], repo)
        run(GIT + ["commit", "-q", "-m", message], repo)
        if i == culprit_at:
            culprit = run(["git", "rev-parse", "HEAD"], repo)[0].stdout.strip()
    run(GIT + ["checkout", "-q", "base"], repo)
    return culprit, culprit_at


def bisect(args, repo, out, trial):
    done, seconds = run(
        [args.bench_run, "--db", str(out / "ledger.sqlite"), "bisect", "--suite", "knob",
         "--good", "base", "--bad", f"trial-{trial}", "--benchmark", "^knob$",
         "--seed", str(args.seed + trial), "--build-home", str(out / "build-home"),
         "--format", "json"],
        repo, check=False)
    if done.returncode == 2 and "nothing to bisect" in done.stderr:
        return {"named": None, "found": "nothing-to-bisect", "stderr": done.stderr[-3000:],
                "seconds": seconds}
    if done.returncode not in (0, 1):
        return {"error": done.stderr[-3000:], "seconds": seconds}
    report = json.loads(done.stdout)
    culprit = (report.get("culprit") or {}).get("hash")
    return {
        "named": culprit,
        "found": report["found"]["kind"],
        "executables_measured": report["executables_measured"],
        "steps": sum(1 for s in report["steps"] if s["step"] > 0),
        "same_binary": len(report["same_binary"]),
        "more_than_one_change": (report.get("culprit_effect") or {}).get("more_than_one_change"),
        "range_effect_pct": 100 * (2.718281828459045 ** report["range_effect"]["log_median"] - 1),
        "wall_s": report["wall_s"],
        "seconds": seconds,
    }


def ab(args, repo, out, trial):
    done, seconds = run(
        [args.bench_run, "--db", str(out / "ledger.sqlite"), "ab", "--suite", "knob",
         "--base", "base", "--head", f"trial-{trial}", "--seed", str(args.seed + trial),
         "--build-home", str(out / "build-home"), "--", "^knob$"],
        repo, check=False)
    return {"exit": done.returncode, "seconds": seconds}


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def refused(result):
    """A bisection that called the ends alike (exit 2, nothing to bisect)."""
    return result.get("found") == "nothing-to-bisect" or "nothing to bisect" in result.get("error", "")


def summarise(records):
    bisects = [r for r in records if r["kind"] == "bisect"
               and ("error" not in r["result"] or refused(r["result"]))]
    nothing = sum(1 for r in bisects if refused(r["result"]))
    bisects_found = [r for r in bisects if not refused(r["result"])]
    right = sum(1 for r in bisects if r["result"].get("named") == r["culprit"])
    wrong = sum(1 for r in bisects if r["result"].get("named") not in (None, r["culprit"]))
    unresolved = sum(1 for r in bisects_found if r["result"]["named"] is None)
    errors = sum(1 for r in records if r["kind"] == "bisect" and "error" in r["result"]
                 and not refused(r["result"]))
    abs_ = [r["result"]["seconds"] for r in records if r["kind"] == "ab"]
    wall = median(r["result"]["seconds"] for r in bisects_found)
    return {
        "trials": len(bisects),
        "errors": errors,
        "culprit_named": right,
        "wrong_commit": wrong,
        "unresolved": unresolved,
        "nothing_to_bisect": nothing,
        "median_executables_measured": median(r["result"]["executables_measured"] for r in bisects_found),
        "max_executables_measured": max((r["result"]["executables_measured"] for r in bisects_found), default=None),
        "median_steps": median(r["result"]["steps"] for r in bisects_found),
        "median_wall_s": wall,
        "median_ab_wall_s": median(abs_),
        "wall_over_ab": (wall / median(abs_)) if wall and abs_ else None,
    }


def to_bmf(summary):
    n = summary["trials"]
    bmf = {
        "bisect/accuracy": {
            f"culprit_named_of_{n}": {"value": summary["culprit_named"]},
            f"wrong_commit_of_{n}": {"value": summary["wrong_commit"]},
            f"unresolved_of_{n}": {"value": summary["unresolved"]},
            f"nothing_to_bisect_of_{n}": {"value": summary["nothing_to_bisect"]},
        },
        "bisect/cost": {
            "median_executables_measured": {"value": summary["median_executables_measured"]},
            "max_executables_measured": {"value": summary["max_executables_measured"]},
            "median_wall_s": {"value": summary["median_wall_s"]},
        },
    }
    if summary["median_ab_wall_s"]:
        bmf["bisect/cost"]["one_ab_wall_s"] = {"value": summary["median_ab_wall_s"]}
        bmf["bisect/cost"]["wall_over_one_ab"] = {"value": summary["wall_over_ab"]}
    return bmf


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "results/bisect-accuracy")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--commits", type=int, default=32)
    parser.add_argument("--permille", type=int, default=50)
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--bench-run", default=str(ROOT / "target/release/bench-run"))
    parser.add_argument("--no-load", action="store_true")
    parser.add_argument("--only", default=None,
                        help="comma-separated trials to run (the others' histories are still drawn)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    repo = make_repo(args.out)
    trials_file = args.out / "trials.jsonl"
    records = [json.loads(l) for l in trials_file.read_text().splitlines()] if trials_file.exists() else []
    done = {(r["kind"], r["trial"]) for r in records}
    rng = random.Random(args.seed)
    load = None if args.no_load else start_load()
    try:
        for trial in range(args.trials):
            # The history is drawn whether or not the trial ran, so a resumed run draws the same.
            culprit, position = make_history(repo, trial, args.commits, args.permille, rng)
            if args.only is not None and str(trial) not in args.only.split(","):
                continue
            jobs = [("bisect", bisect)] + ([("ab", ab)] if trial % 3 == 0 else [])
            for kind, job in jobs:
                if (kind, trial) in done:
                    continue
                log(f"trial {trial}: {kind} (culprit at {position}: {culprit[:12]})")
                result = job(args, repo, args.out, trial)
                record = {"kind": kind, "trial": trial, "culprit": culprit, "position": position,
                          "load": not args.no_load, "result": result}
                log(f"trial {trial}: {kind}: {json.dumps(result)[:300]}")
                with trials_file.open("a") as f:
                    f.write(json.dumps(record) + "\n")
                records.append(record)
    finally:
        if load:
            stop_load(load)
    summary = summarise(records)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (args.out / "bisect_accuracy.bmf.json").write_text(json.dumps(to_bmf(summary), indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
