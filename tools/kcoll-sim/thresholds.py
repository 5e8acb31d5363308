#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Derive the module's selection thresholds (small_bytes, medium_bytes, tree_ranks) from
kcoll-sim's model, instead of setting them by hand (Documentation/scale.rst, "Selection").

  tools/kcoll-sim/thresholds.py            print the derived thresholds and the constants
  tools/kcoll-sim/thresholds.py --measure  re-run the model grid into thresholds.csv
  tools/kcoll-sim/thresholds.py --check    TAP: the constants in core/ and kmod/ are the
                                           derived ones (a host test runs this)

These are the rules' thresholds: by default (small_bytes 0) the module picks from the table
kcoll-sim --derive-thresholds derives (core/kcoll_sched_table.h); an admin who sets
small_bytes gets the rules, and the derived small_bytes is KCOLL_SCHED_RULES_SMALL_BYTES
(core/kcoll_sched.h), the value scale.rst tells them to set.

The grid: broadcast, reduce, all-reduce, all-gather, reduce-scatter and all-to-all of fp32,
every algorithm the module has for each, on 2, 3, 4, 6, 8, 16, 24, 32, 64, 96, 128, 256, 384
and 1,024 ranks (one a
node, one switch, kcoll-sim's default RDMA parameters: 12.5 GB/s, 2 us, 1 us a message,
reductions at 10 GB/s), sizes 256 B to 64 MiB by 2 (kcoll-perf's sizes).  Its times are
thresholds.csv, committed next to this script (the model takes minutes; deriving from the
table takes seconds).

The derived thresholds are the ones for which the module's rules (kcoll_sched_select() in
core/, mirrored by select() below and checked against it through kcoll-sim --choose) lose
the least against the fastest algorithm over the grid: the smallest sum over every
collective and point of log(time of the rule's choice / time of the fastest).  Ties go to
the smallest values.  chunk_bytes and the rules' shapes (all-to-all's small_bytes / 16 and
"more than 8 ranks", broadcast's "2 ranks") stay hand-set: see scale.rst for why.
"""
import argparse
import concurrent.futures as cf
import csv
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
TABLE = os.path.join(HERE, "thresholds.csv")
SIM = os.path.join(TOP, "tools/kcoll-sim/kcoll-sim")

RANKS = [2, 3, 4, 6, 8, 16, 24, 32, 64, 96, 128, 256, 384, 1024]
SIZES = [1 << k for k in range(8, 27)]
ALGOS = {
    "broadcast": ["binomial", "chain"],
    "reduce": ["binomial", "chain"],
    "allreduce": ["ring", "recdbl", "rabenseifner", "dbtree"],
    "allgather": ["ring", "recdbl", "bruck"],
    "reduce_scatter": ["ring", "rabenseifner"],
    "alltoall": ["pairwise", "bruck"],
}
PER_RANK_BLOCKS = {"allgather", "reduce_scatter", "alltoall"}
ES = 4  # fp32
NAMES = ("small_bytes", "medium_bytes", "tree_ranks")


def payload(coll, size, n):
    """kcoll_sched_select()'s bytes for kcoll-perf's size (tools/kcoll-perf perf_count())."""
    if coll in PER_RANK_BLOCKS:
        return max(1, size // (ES * n)) * ES
    return max(1, size // ES) * ES


def pow2(n):
    return n > 0 and not n & (n - 1)


def select(coll, n, b, small, medium, tree):
    """kcoll_sched_select() for the collectives of the grid (core/; --check compares)."""
    if coll in ("broadcast", "reduce"):
        return "binomial" if b <= small or n <= 2 else "chain"
    if coll == "allreduce":
        if b <= small:
            return "recdbl"
        if n >= tree:
            return "dbtree"
        if b <= medium and pow2(n):
            return "rabenseifner"
        return "ring"
    if coll == "allgather":
        if b * n <= small:
            return "recdbl" if pow2(n) else "bruck"
        return "ring"
    if coll == "reduce_scatter":
        return "rabenseifner" if b * n <= medium and pow2(n) else "ring"
    if coll == "alltoall":
        return "bruck" if b <= small // 16 and n > 8 else "pairwise"
    raise ValueError(coll)


# ---- the table ----------------------------------------------------------------------------

def sim_time(sim, coll, n, size, algo):
    p = subprocess.run([sim, "-q", "-j", "-c", coll, "-n", str(n), "-s", str(size), "-a", algo],
                       capture_output=True, text=True)
    if p.returncode == 2 and "does not implement" in p.stderr:
        return None
    if p.returncode:
        raise RuntimeError("kcoll-sim %s %d %d %s: %s" % (coll, n, size, algo, p.stderr))
    m = re.search(r'"time_us":\s*([0-9.eE+-]+)', p.stdout)
    return float(m.group(1))


def measure(sim, jobs):
    pts = [(c, n, s, a) for c in ALGOS for n in RANKS for s in SIZES for a in ALGOS[c]]
    with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
        times = list(ex.map(lambda p: sim_time(sim, *p), pts))
    with open(TABLE, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["coll", "nranks", "size", "algo", "time_us"])
        for (c, n, s, a), t in zip(pts, times):
            if t is not None:
                w.writerow([c, n, s, a, "%.3f" % t])


def load():
    t = {}
    with open(TABLE, newline="") as f:
        for r in csv.DictReader(f):
            t.setdefault((r["coll"], int(r["nranks"]), int(r["size"])), {})[r["algo"]] = \
                float(r["time_us"])
    return t


# ---- derivation ---------------------------------------------------------------------------

def loss(table, small, medium, tree):
    tot = 0.0
    for (coll, n, size), times in table.items():
        a = select(coll, n, payload(coll, size, n), small, medium, tree)
        if a not in times:  # the rule picked an algorithm that cannot run here
            return math.inf
        tot += math.log(times[a] / min(times.values()))
    return tot


def derive(table):
    best = None
    for ks in range(8, 25):
        for km in range(ks, 28):
            for tree in RANKS + [RANKS[-1] + 1]:
                v = round(loss(table, 1 << ks, 1 << km, tree), 9)
                if best is None or v < best[0]:
                    best = (v, 1 << ks, 1 << km, tree)
    return {"small_bytes": best[1], "medium_bytes": best[2], "tree_ranks": best[3],
            "loss": best[0]}


def constants():
    """The defaults in core/ (kcoll_sched_tuning_default()) and in kmod/kcoll_config.h."""
    core, kmod = {}, {}
    for fn in sorted(os.listdir(os.path.join(TOP, "core"))):
        if not fn.endswith(".c"):
            continue
        src = open(os.path.join(TOP, "core", fn)).read()
        m = re.search(r"void kcoll_sched_tuning_default\([^)]*\)\s*\{(.*?)\n\}", src, re.S)
        if m:
            for k, v in re.findall(r"t->(\w+)\s*=\s*([^;]+);", m.group(1)):
                core[k] = c_int(v)
    # small_bytes defaults to 0 (the table); the rules' value is a constant of its own
    src = open(os.path.join(TOP, "core/kcoll_sched.h")).read()
    m = re.search(r"#define KCOLL_SCHED_RULES_SMALL_BYTES\s+(.+)", src)
    if m:
        core["small_bytes"] = c_int(m.group(1))
    src = open(os.path.join(TOP, "kmod/kcoll_config.h")).read()
    for k in NAMES + ("chunk_bytes",):
        m = re.search(r"#define KCOLL_CONFIG_%s\s+(.+)" % k.upper(), src)
        if m:
            kmod[k] = c_int(m.group(1))
    return core, kmod


def c_int(expr):
    e = re.sub(r"(\d+)[uUlL]+", r"\1", expr.strip())
    if not re.fullmatch(r"[0-9()<>*+ ]+", e):
        raise ValueError("not a constant expression: %r" % expr)
    return int(eval(e))  # digits, parentheses, << * + only


def kib(v):
    return "%d MiB" % (v >> 20) if v >= 1 << 20 and not v % (1 << 20) else \
        "%d KiB" % (v >> 10) if v >= 1024 and not v % 1024 else "%d B" % v


def report(table, d):
    cur = dict(zip(NAMES, (d[k] for k in NAMES)))
    core, kmod = constants()
    print("derived from %s (%d points):" % (os.path.relpath(TABLE, TOP), len(table)))
    for k in NAMES:
        v = d[k]
        print("  %-13s %-9s  (core/: %s, kmod/kcoll_config.h: %s)" % (
            k, kib(v) if k != "tree_ranks" else v,
            core.get(k, "?"), kmod.get(k, "?")))
    print("  sum of log(choice / fastest): %.4f derived, %.4f with core/'s constants" % (
        d["loss"], loss(table, core["small_bytes"], core["medium_bytes"], core["tree_ranks"])))
    per = {}
    for (coll, n, size), times in table.items():
        a = select(coll, n, payload(coll, size, n), cur["small_bytes"], cur["medium_bytes"],
                   cur["tree_ranks"])
        r = times[a] / min(times.values())
        p = per.setdefault(coll, [0, 0, 1.0])
        p[0] += 1
        p[1] += r > 1.0001
        p[2] = max(p[2], r)
    print("with the derived thresholds, per collective: points, points where another "
          "algorithm is faster, worst ratio")
    for c in ALGOS:
        print("  %-15s %4d %4d %6.2f" % (c, *per[c]))


# ---- --check --------------------------------------------------------------------------------

def check(table, d, sim):
    res = []
    core, kmod = constants()
    for k in NAMES:
        res.append((core.get(k) == d[k], "core/ %s %s = %s, the model derives %s" % (
            "KCOLL_SCHED_RULES_SMALL_BYTES" if k == "small_bytes" else
            "kcoll_sched_tuning_default()", k, core.get(k), d[k])))
        if k == "small_bytes":
            res.append((kmod.get(k) == 0, "kmod/kcoll_config.h KCOLL_CONFIG_SMALL_BYTES = %s, "
                        "0: the derived table selects" % kmod.get(k)))
            continue
        res.append((kmod.get(k) == d[k], "kmod/kcoll_config.h KCOLL_CONFIG_%s = %s, the model "
                    "derives %s" % (k.upper(), kmod.get(k), d[k])))
    res.append((core.get("chunk_bytes") == kmod.get("chunk_bytes"),
                "chunk_bytes (hand-set) is the same in core/ and kmod/"))
    # select() is core/'s rule: compare with kcoll-sim --choose (kcoll_sched_choose()) at the
    # derived thresholds and at others
    for small, medium, tree in ((d["small_bytes"], d["medium_bytes"], d["tree_ranks"]),
                                (16 << 10, 1 << 20, 16), (1 << 10, 64 << 20, 3)):
        bad = []
        for coll in ALGOS:
            for n in RANKS:
                p = subprocess.run([sim, "--choose", "-S", "-c", coll, "-n", str(n),
                                    "-b", str(SIZES[0]), "-e", str(SIZES[-1]),
                                    "--small-bytes", str(small), "--medium-bytes",
                                    str(medium), "--tree-ranks", str(tree)],
                                   capture_output=True, text=True)
                got = [ln.split()[1] for ln in p.stdout.split("\n") if ln.strip()]
                want = [select(coll, n, payload(coll, s, n), small, medium, tree)
                        for s in SIZES]
                if p.returncode or got != want:
                    bad.append("%s/%d" % (coll, n))
        res.append((not bad, "select() agrees with kcoll_sched_choose() at %d/%d/%d%s" % (
            small, medium, tree, (": differs for " + " ".join(bad[:6])) if bad else "")))
    # the table is the model's current answer (a few points, cheap ones)
    stale = []
    for coll, n, size in (("allreduce", 8, 1 << 14), ("allreduce", 16, 1 << 20),
                          ("broadcast", 32, 1 << 16), ("alltoall", 16, 1 << 10),
                          ("allgather", 6, 1 << 12), ("reduce_scatter", 64, 1 << 22)):
        for a, t in sorted(table[(coll, n, size)].items()):
            now = sim_time(sim, coll, n, size, a)
            if now is None or abs(now - t) > 1e-6 * t + 0.002:
                stale.append("%s/%d/%d/%s %.3f -> %s" % (coll, n, size, a, t, now))
    res.append((not stale, "thresholds.csv matches kcoll-sim's current model%s "
                "(re-run --measure)" % ((": " + "; ".join(stale[:4])) if stale else "")))
    print("TAP version 13")
    print("1..%d" % len(res))
    for i, (ok, desc) in enumerate(res, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, desc))
    return all(ok for ok, _ in res)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--measure", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--sim", default=SIM)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    if (a.measure or a.check) and not os.access(a.sim, os.X_OK):
        sys.exit("%s: not built (make -C tools/kcoll-sim)" % a.sim)
    if a.measure:
        measure(a.sim, a.jobs)
    table = load()
    d = derive(table)
    if a.check:
        sys.exit(0 if check(table, d, a.sim) else 1)
    report(table, d)


if __name__ == "__main__":
    main()
