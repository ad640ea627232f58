#!/usr/bin/env python3
"""ETA replay (not a test): feed the job times of a loaded run to ETA rules offline.

A run of bench/eta_loaded.py takes five minutes; this replays what its views saw, so rules can
be compared at once. It reads the run from a trace (`eta_loaded.py --trace FILE`): when the
journal was kept beside it (FILE.journal.jsonl, written by eta_loaded.py since this script) the
plans, starts, progress and ends are the journal's own; from a trace alone it rebuilds them:
job starts and ends from the `measuring`/`done` lines, the trials' progress from the status
lines, and each plan's seconds from its calls (`planned … : n × c calls`), the call time the
status lines show (p50, in TSC ticks) and a calibration set-up time (--tsc-ghz, --setup-s):
a plan of fewer calls than the cap was sized to the trial target (1 s a trial), a capped one is
its calls at that call time. That first guess is rough (a cold calibration call is slower than
the calls measured); `--fit` moves each plan, in the run's order (cheapest plan first), until the
rule of the build that ran (`--built`, `BUILDS`) replays the ETAs the run showed, and keeps them
in FILE.plans.json for later replays. `--check` prints how close the replay of that build's rule
comes to the ETAs shown, which tells how far to trust the replay (and rebuilt plans).

It prints, at 10 %, 25 %, 50 % and 75 % of the run, the seconds truly left and each rule's ETA
with its error, the ETA computed from the job times seen by then, and the mean size of the
error at every twentieth of the run.

usage: bench/eta_replay.py TRACE [--tsc-ghz 2.6] [--setup-s 0.15] [--fit] [--check]
                             [--built s15|s16|s17|s17-cost]
"""
import argparse, json, os, re, statistics, sys
from datetime import datetime

# The status line's ETA, as the loaded run reads it (same folder).
from eta_loaded import ETA, seconds as eta_seconds

CAP = 20000  # calls per trial at most (measure::plan::MAX_ITERS)
PRIOR_JOBS = 0.05
RECENT_JOBS = 5


def share_done(trial, trials, calls_done, calls_total):
    """The share done as the views have it (measure::eta::share_done): the event's calls are
    the whole job's."""
    return max(0.0, min(1.0, calls_done / max(calls_total, 1)))


def share_done_read_twice(trial, trials, calls_done, calls_total):
    """The share as builds before session 17 had it, the job's calls read as the running
    trial's (up to 1 + 1/n of an n-trial job), to replay the runs of those builds."""
    within = min(calls_done / max(calls_total, 1), 1.0)
    return max(0.0, min(1.0, (max(trial - 1, 0) + within) / max(trials, 1)))


def key_bytes(key):
    n, unit = re.search(r"@ (\d+) (B|KiB|MiB)$", key).groups()
    return int(n) * {"B": 1, "KiB": 1024, "MiB": 1 << 20}[unit]


def read_trace(path, tsc_hz, setup_s, shifted=True):
    """Jobs, status ETAs shown, and the run's end, from the text trace.

    A status line is redrawn in place, and traces written before the journal was kept beside
    them (`shifted`) stamp it when the next output ends it: its own moment is the stamp of the
    line before."""
    rows = []
    for line in open(path):
        rows.append((float(line[:8]), line[10:].rstrip("\n")))
    jobs, order, plans, shown, end, cur, expected = {}, [], {}, [], None, None, {}
    for i, (stamp, text) in enumerate(rows):
        redrawn = text.startswith("[") or text.startswith("measuring")
        written = rows[i - 1][0] if shifted and i and redrawn else stamp
        m = re.match(r"planned (.+?)(?: \(reference job\))?: (\d+) × (\d+) calls", text)
        if m:
            plans[m[1]] = (int(m[2]), int(m[3]))
            continue
        m = re.match(r"(.+?): trial \d+/\d+: .*, expected ([\d.]+) (ms|s|µs) — far past", text)
        if m:
            expected[m[1]] = float(m[2]) * {"s": 1.0, "ms": 1e-3, "µs": 1e-6}[m[3]]
            continue
        m = re.match(r"measuring (.+?)(?: \(reference job\))? …", text)
        if m:
            cur = m[1]
            jobs[cur] = dict(key=cur, start=written, end=None, progress=[], p50=None)
            order.append(cur)
            continue
        m = re.match(r"done (.+?)(?: \(reference job\))?:", text)
        if m:
            jobs[m[1]]["end"] = stamp
            continue
        if text.startswith("run finished"):
            end = stamp
        m = re.match(r"\[[#-]+\] (.+?)  trial (\d+)/(\d+)  (\d+)/(\d+) calls(?:  p50 (\d+))?", text)
        if m and m[1] in jobs:
            j = jobs[m[1]]
            k, n, c, total = (int(m[x]) for x in (2, 3, 4, 5))
            j["progress"].append((written, k, n, c, total))
            if m[6]:
                j["p50"] = int(m[6])
            e = ETA.search(text)
            if e:
                shown.append((written, eta_seconds(e)))
    out = []
    for key in plans:
        trials, iters = plans[key]
        j = jobs.get(key, dict(key=key, start=None, end=None, progress=[], p50=None))
        # A first guess: a plan of fewer calls than the cap was sized to a 1 s trial (ceil(1 /
        # t1) calls), a capped one is its calls at the call time the status lines show.
        t1 = 1.0 / (iters - 0.5) if iters < CAP else (j["p50"] or 0) / tsc_hz
        j["planned"] = trials * (iters + warmups(t1)) * t1 + trials * setup_s
        j["plan"] = (trials, iters, setup_s)
        # A trial far past its plan names the plan's time a trial: the plan itself.
        j["known"] = expected.get(key) and trials * expected[key]
        out.append(j)
    out.sort(key=lambda j: (j["start"] is None, j["start"]))
    set_calls(out)
    return out, shown, end


def warmups(t1):
    return 3 if t1 < 0.05 else (1 if t1 < 5.0 else 0)


def set_calls(jobs):
    """Each rebuilt plan's calibration call: a capped plan's from its seconds."""
    for j in jobs:
        trials, iters, setup_s = j["plan"]
        t1 = 1.0 / (iters - 0.5) if iters < CAP else \
            max(j["planned"] - trials * setup_s, 0.0) / (trials * (iters + 3))
        j["call"] = (j["key"].split(" @ ")[0], key_bytes(j["key"]), t1,
                     trials * (iters + warmups(t1)))


def fit_plans(jobs, shown, built):
    """Plans that make the rule of the build that ran say what the run showed: the run measures
    its jobs cheapest plan first, so the plans rise in its order; each is moved in turn while
    that brings the replayed ETAs nearer to those shown."""
    sample = shown[::2]

    def cost(plans):
        for j, e in zip(jobs, plans):
            j["planned"] = j["known"] or e
        return sum(abs(replay(jobs, at, built) - said)
                   for at, said in sample) / len(sample)

    plans = [j["known"] or j["planned"] for j in jobs]
    for i in range(1, len(plans)):
        plans[i] = max(plans[i], plans[i - 1])
    for i in reversed(range(len(plans) - 1)):
        plans[i] = min(plans[i], plans[i + 1])
    best = cost(plans)
    for _ in range(8):
        for i, j in enumerate(jobs):
            if j["known"]:
                continue
            for f in (0.7, 0.85, 0.93, 0.97, 1.03, 1.07, 1.15, 1.4):
                tried = plans[:]
                low = plans[i - 1] if i else 0.0
                high = plans[i + 1] if i + 1 < len(plans) else float("inf")
                tried[i] = min(max(plans[i] * f, low), high)
                c = cost(tried)
                if c < best:
                    best, plans = c, tried
    cost(plans)
    set_calls(jobs)
    return best


def read_journal(path):
    """Jobs from the run's own journal: exact plans, and events on one clock."""
    jobs, order, t0, end = {}, [], None, None
    for line in open(path):
        try:
            v = json.loads(line)
        except ValueError:
            continue
        at = datetime.fromisoformat(v["utc"].replace("Z", "+00:00")).timestamp()
        t0 = at if t0 is None else t0
        at -= t0
        ev = v.get("event")
        key = None
        if "job" in v:
            j = v["job"]
            key = f"{j['label']} @ {j['input_bytes']}"
        if ev == "job_planned":
            p = v["plan"]
            jobs[key] = dict(key=key, planned=p["estimated_s"], start=None, end=None,
                             progress=[], call=(v["job"]["label"], v["job"]["input_bytes"],
                                                v["t1_s"],
                                                p["trials"] * (p["iterations_per_trial"]
                                                               + p["warmups"])))
            order.append(key)
        elif ev == "job_started":
            jobs[key]["start"] = at
        elif ev == "trial_progress":
            jobs[key]["progress"].append(
                (at, v["trial"], v["trials"], v["calls_done"], v["calls_total"]))
        elif ev in ("job_finished", "job_failed"):
            jobs[key]["end"] = at
        elif ev == "run_finished":
            end = at
    return [jobs[k] for k in order], end


def outside_s(job, now, planned, share_of):
    """measure::eta::TrialSpan::outside_s over the progress seen by `now`."""
    start, ended = job["start"], job["end"] if job["end"] is not None and job["end"] <= now \
        else None
    until = ended if ended is not None else now
    seen = [p for p in job["progress"] if p[0] <= until]
    if not seen:
        out = until - start
    else:
        first, share = seen[0][0], share_of(*seen[0][1:])
        before = first - start - share * max(planned, 0.0)
        out = max(before, 0.0) + (ended - seen[-1][0]) if ended is not None else before
    return min(max(out, 0.0), max(until - start, 0.0))


def times_at(jobs, now, share_of, cut=False):
    """The views' JobTime list at `now` (dicts with estimated, done, spent, outside, started);
    with `cut`, each plan counted at its instance's bound (measure::eta::credible_plans)."""
    out = []
    for j in jobs:
        planned = credible_plan(j, jobs) if cut else j["planned"]
        t = dict(estimated=planned, done=0.0, spent=None, outside=None, started=None,
                 instance=j["call"][0], bytes=j["call"][1], t1=j["call"][2],
                 calls=j["call"][3])
        if j["start"] is not None and j["start"] <= now:
            t["started"] = j["start"]
            ended = j["end"] is not None and j["end"] <= now
            seen = [p for p in j["progress"] if p[0] <= now]
            t["done"] = 1.0 if ended else (share_of(*seen[-1][1:]) if seen else 0.0)
            t["spent"] = (j["end"] if ended else now) - j["start"]
            t["outside"] = outside_s(j, now, j["planned"], share_of)
        out.append(t)
    return out


CALL_SLACK = 2.0


def credible_plan(job, jobs):
    """measure::eta: a calibration call no slower than twice a longer input's, nor than twice a
    shorter input's scaled by the bytes; a plan from a call past that counted at the bound."""
    label, nbytes, t1, timed = job["call"]
    bounds = [o["call"][2] * max(1.0, nbytes / o["call"][1]) * CALL_SLACK for o in jobs
              if o["call"][0] == label and o["call"][1] != nbytes and o["call"][2] > 0]
    if not bounds or t1 <= min(bounds):
        return job["planned"]
    return max(job["planned"] - timed * (t1 - min(bounds)), 0.0)


def trials_s(t):
    spent = max(t["spent"], 0.0)
    return min(max(spent - (t["outside"] or 0.0), 0.0), spent)


def ended(t):
    return t["done"] >= 1.0 and t["spent"] is not None


def pace_started(ts):
    """Every started job together, with the plans' prior."""
    mean = statistics.mean(t["estimated"] for t in ts)
    spent = sum(trials_s(t) for t in ts if t["spent"] is not None)
    done = sum(t["estimated"] * t["done"] for t in ts if t["spent"] is not None)
    prior = PRIOR_JOBS * mean
    return (spent + prior) / (done + prior) if prior + done > 0 else 1.0


def pace_median_recent(ts):
    """The rule until session 17: the median pace of the last five ended (started latest)."""
    ends = sorted([t for t in ts if ended(t) and t["started"] is not None],
                  key=lambda t: t["started"])
    if len(ends) >= RECENT_JOBS:
        paces = sorted(trials_s(t) / t["estimated"] for t in ends[-RECENT_JOBS:])
        return paces[len(paces) // 2]
    return pace_started(ts)


def pace_weighted_recent(ts):
    """The rule now (measure::eta::pace): the last five ended together, their trials' wall
    seconds over their planned seconds (a plan cut to nothing left out)."""
    ends = sorted([t for t in ts if ended(t) and t["started"] is not None],
                  key=lambda t: t["started"])
    if len(ends) >= RECENT_JOBS:
        recent = ends[-RECENT_JOBS:]
        recent = [t for t in recent if t["estimated"] > 0]
        if recent:
            return sum(trials_s(t) for t in recent) / sum(t["estimated"] for t in recent)
    return pace_started(ts)


COST_REACH = 4.0


def call_cost(t, ts):
    """measure::eta::call_cost_s: the wall seconds a call of `t` takes in its trials, from a
    least-squares line of the trials' seconds per call over the input lengths of its instance's
    ended jobs (at least two lengths, a line that does not fall, `t` no longer than COST_REACH
    times the longest), no lower than the cheapest call seen; None otherwise."""
    pts = [(o["bytes"], trials_s(o) / o["calls"]) for o in ts
           if ended(o) and o["instance"] == t["instance"] and o["calls"] > 0]
    xs = {x for x, _ in pts}
    if len(xs) < 2 or t["bytes"] > COST_REACH * max(xs):
        return None
    mx = statistics.mean(x for x, _ in pts)
    my = statistics.mean(y for _, y in pts)
    slope = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    if slope < 0:
        return None
    return max(my + slope * (t["bytes"] - mx), min(y for _, y in pts))


def seconds_left(ts, pace, costed=False):
    """The plans left at the pace; with `costed`, a job whose instance has a cost per call
    (`call_cost`) takes its calls left at that cost instead."""
    p = pace(ts)
    left, by_cost = 0.0, 0.0
    for t in ts:
        share = 1.0 - min(max(t["done"], 0.0), 1.0)
        cost = call_cost(t, ts) if costed and share > 0 else None
        if cost is None:
            left += t["estimated"] * share
        else:
            by_cost += t["calls"] * cost * share
    outs = [t["outside"] for t in ts if ended(t) and t["outside"] is not None]
    outside = statistics.mean(outs) if outs else 0.0
    outside_left = sum(max(outside - (t["outside"] or 0.0), 0.0) for t in ts if not ended(t))
    return left * p + by_cost + outside_left


# Rules: (pace, disturbed calibrations cut to their instance's bound, share of a job done[,
# jobs left of an instance ended at other lengths at its cost per call]).
RULES = {
    "plans as they are, median pace of the last 5 ended, calls read twice (session 15)":
        (pace_median_recent, False, share_done_read_twice),
    "calibrations cut, median pace of the last 5 ended, calls read twice (session 16)":
        (pace_median_recent, True, share_done_read_twice),
    "calibrations cut, median pace of the last 5 ended":
        (pace_median_recent, True, share_done),
    "calibrations cut, last 5 ended together (session 17)":
        (pace_weighted_recent, True, share_done),
    "as session 17, jobs left at their instance's cost per call (session 17, cost)":
        (pace_weighted_recent, True, share_done, True),
}
# The rule each build showed, for --check and --fit.
BUILDS = dict(zip(("s15", "s16", "s17", "s17-cost"),
                  [r for n, r in RULES.items() if "session" in n]))


def replay(jobs, at, rule):
    pace, cut, share, *costed = rule
    return seconds_left(times_at(jobs, at, share, cut), pace, bool(costed and costed[0]))


def load(trace, tsc_ghz=2.6, setup_s=0.15, fit=False, built="s17-cost"):
    """The run's jobs, the ETAs it showed, its end and where the plans come from."""
    journal = trace + ".journal.jsonl"
    _, shown, end = read_trace(trace, tsc_ghz * 1e9, setup_s,
                               shifted=not os.path.exists(journal))
    if os.path.exists(journal):
        jobs, jend = read_journal(journal)
        # The journal's clock starts at its first event; the trace's at the command's start.
        offset = (end or 0.0) - (jend or 0.0)
        for j in jobs:
            j["start"] = None if j["start"] is None else j["start"] + offset
            j["end"] = None if j["end"] is None else j["end"] + offset
            j["progress"] = [(p[0] + offset, *p[1:]) for p in j["progress"]]
        source = "the journal's plans and times"
    else:
        jobs, _, _ = read_trace(trace, tsc_ghz * 1e9, setup_s)
        fitted = trace + ".plans.json"
        if fit:
            err = fit_plans(jobs, shown, BUILDS[built])
            with open(fitted, "w") as f:
                json.dump({j["key"]: j["planned"] for j in jobs}, f, indent=1)
            print(f"plans fitted to the ETAs shown (mean difference {err:.1f} s), in {fitted}")
        elif os.path.exists(fitted):
            with open(fitted) as f:
                saved = json.load(f)
            for j in jobs:
                j["planned"] = saved[j["key"]]
            set_calls(jobs)
        source = (f"plans rebuilt from the trace ({'fitted, ' if os.path.exists(fitted) else ''}"
                  f"TSC {tsc_ghz} GHz, calibration set-up {setup_s} s)")
    return jobs, shown, end, source


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--tsc-ghz", type=float, default=2.6)
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--setup-s", type=float, default=0.15)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--built", choices=sorted(BUILDS), default="s17-cost",
                    help="the build whose rule the run showed (--check, --fit)")
    a = ap.parse_args()
    jobs, shown, end, source = load(a.trace, a.tsc_ghz, a.setup_s, a.fit, a.built)
    print(f"{a.trace}: {len(jobs)} jobs, {end:.1f} s; {source}")
    if a.check:
        errs = []
        for at, said in shown:
            errs.append(replay(jobs, at, BUILDS[a.built]) - said)
        errs.sort()
        print(f"rule of build {a.built} replayed against the {len(errs)} ETAs shown: median "
              f"difference {errs[len(errs) // 2]:+.1f} s, middle half {errs[len(errs) // 4]:+.1f} … "
              f"{errs[3 * len(errs) // 4]:+.1f} s")
    print("| rule | " + " | ".join(f"{s:.0%} (left {end * (1 - s):.0f} s)"
                                    for s in (0.1, 0.25, 0.5, 0.75)) + " | mean error, 5 … 95 % |")
    print("|---|---|---|---|---|---|")
    for name, rule in RULES.items():
        cells = []
        for s in (0.1, 0.25, 0.5, 0.75):
            at, left = s * end, end * (1 - s)
            eta = replay(jobs, at, rule)
            cells.append(f"{eta:.0f} s ({100 * (eta - left) / left:+.0f} %)")
        # Every twentieth of the run, the error's size: less luck in four points.
        grid = [k / 20 for k in range(1, 20)]
        mean = statistics.mean(abs(replay(jobs, s * end, rule) - end * (1 - s)) / (end * (1 - s))
                               for s in grid)
        print(f"| {name} | " + " | ".join(cells) + f" | {100 * mean:.0f} % |")


if __name__ == "__main__":
    main()
