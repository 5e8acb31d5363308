#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Regenerate the data and plots of Documentation/scale.rst from kcoll-sim.

  tools/kcoll-sim/scale.py [--out DIR] [--jobs N] [--ranks 64,1024,16384] [--full]
                           [--plot-only] [--sim PATH]
  tools/kcoll-sim/scale.py --check   TAP: the committed data is complete, still the model's
                                     answer (a few cheap points re-run) and its summary is
                                     what the script makes of it (a host test runs this)

Two experiments, each a CSV in DIR (default Documentation/scale/):

- allreduce.csv: all-reduce of fp32 at 1 MiB, 64 MiB and 1 GiB on 64, 1,024 and 16,384 ranks
  (8 a node), on a star, leaf-spines at 1:1, 2:1 and 4:1 and a fat-tree, with 1, 4 and 8
  rails; at every point the module's own choice ("auto") and every other all-reduce
  algorithm, so the table says whether another would be faster;
- spines.csv: the seed's claim that leaf-spine bandwidth grows with the spines: 1,024 ranks
  (one a node), 32 nodes a leaf, 1 to 32 spines whose links run at a NIC's speed (oversub
  32/spines), all-to-all and all-reduce of 64 MiB, and the star for reference.

Rows already in a CSV are kept (delete the file, or use --force, to redo them), so an
interrupted run resumes; the "auto" rows (the module's choice, kcoll-sim --choose) are
rewritten from the others at the end, so a change of the thresholds costs no model run.
At 16,384 ranks the model is slow (the ring: 537 M messages, 1.5 min of CPU and 5 to 20 of
wall time on a loaded 2-core host; Rabenseifner on a leaf-spine: minutes): without --full,
16,384 ranks are run on every fabric and rail count at 1 MiB but at 64 MiB and 1 GiB only on
the star and the 4:1 leaf-spine with 1 and 8 rails, and the ring only on the star with one
rail.  Then the PNGs are drawn with gnuplot, and DIR/summary.txt has the tables
Documentation/scale.rst quotes.
"""
import argparse
import concurrent.futures as cf
import csv
import json
import os
import shutil
import subprocess
import sys
import threading

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", ".."))

SIZES = [(1 << 20, "1M"), (64 << 20, "64M"), (1 << 30, "1G")]
RANKS = [64, 1024, 16384]
RAILS = [1, 4, 8]
RPN = 8
# leaf-spine: 4 nodes (32 ranks) a leaf, so that even 64 ranks span two leaves
HPL, SPINES = 4, 4
FABRICS = [
    ("star", ["-F", "star"]),
    ("ls-1:1", ["-F", "leaf-spine", "--hosts-per-leaf", str(HPL), "--spines", str(SPINES),
                "--oversub", "1"]),
    ("ls-2:1", ["-F", "leaf-spine", "--hosts-per-leaf", str(HPL), "--spines", str(SPINES),
                "--oversub", "2"]),
    ("ls-4:1", ["-F", "leaf-spine", "--hosts-per-leaf", str(HPL), "--spines", str(SPINES),
                "--oversub", "4"]),
    ("fat-tree", ["-F", "fat-tree"]),
]
ALGOS = ["ring", "recdbl", "rabenseifner", "dbtree"]
# At this many ranks, without --full: the ring only on the star with one rail, and
# 64 MiB and 1 GiB only on the star and the 4:1 leaf-spine with 1 and 8 rails (the model's
# CPU time, Documentation/scale.rst).
BIG_RANKS = 16384
BIG_AT = {("star", 1), ("star", 8), ("ls-4:1", 1), ("ls-4:1", 8)}

AR_COLS = ["ranks", "size", "fabric", "rails", "request", "algo", "time_us", "busbw_gbs",
           "busiest", "busiest_util", "messages", "wall_s"]
SP_SPINES = [1, 2, 4, 8, 16, 32]
SP_HPL = 32
SP_COLS = ["coll", "fabric", "spines", "algo", "time_us", "busbw_gbs", "busiest",
           "busiest_util", "wall_s"]

lock = threading.Lock()


def run_sim(sim, args):
    p = subprocess.run([sim, "-j", "-q"] + args, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("kcoll-sim %s: %s" % (" ".join(args), p.stderr.strip()))
    return json.loads(p.stdout)


def load(path, cols):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and list(rows[0].keys()) != cols:
        sys.exit("%s: unexpected columns; delete it to regenerate" % path)
    return rows


def append(path, cols, row):
    with lock:
        new = not os.path.exists(path)
        with open(path, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
            if new:
                w.writeheader()
            w.writerow(row)


def ar_key(r):
    return (int(r["ranks"]), int(r["size"]), r["fabric"], int(r["rails"]), r["request"])


def point_args(ranks, size, fargs, rails):
    # the module's choice: it does not know the node shape yet (hier: scale.rst)
    return ["-c", "allreduce", "-s", str(size), "-n", str(ranks), "-N", str(RPN),
            "-R", str(rails), "--no-locality"] + fargs


def choose(sim, args):
    p = subprocess.run([sim, "--choose"] + args, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("kcoll-sim --choose %s: %s" % (" ".join(args), p.stderr.strip()))
    return p.stdout.split()[1]


def point_skipped(ranks, size, fab, rails, full):
    return ranks >= BIG_RANKS and not full and size > (1 << 20) and (fab, rails) not in BIG_AT


def ring_skipped(ranks, size, fab, rails, full):
    return ranks >= BIG_RANKS and not full and (fab, rails) != ("star", 1)


def times_of(rows):
    """(ranks, size, fabric, rails, algo) -> row; an "auto" row counts for its algorithm."""
    t = {}
    for r in rows:
        t.setdefault(ar_key(r)[:4] + (r["algo"],), r)
    return t


def ar_point(sim, out, times, ranks, size, fab, fargs, rails, full):
    """Every all-reduce algorithm at one point (the module's choice is added after)."""
    path = os.path.join(out, "allreduce.csv")
    base = point_args(ranks, size, fargs, rails)
    if point_skipped(ranks, size, fab, rails, full):
        return
    for req in ALGOS:
        if (ranks, size, fab, rails, req) in times:
            continue
        if req == "ring" and ring_skipped(ranks, size, fab, rails, full):
            continue
        j = run_sim(sim, base + ["-a", req])
        row = {"ranks": ranks, "size": size, "fabric": fab, "rails": rails, "request": req,
               "algo": j["algo"], "time_us": "%.3f" % j["time_us"],
               "busbw_gbs": "%.6g" % j["busbw_gbs"], "busiest": j["busiest_link"]["name"],
               "busiest_util": "%.4f" % j["busiest_link"]["utilisation"],
               "messages": j["messages"], "wall_s": "%.2f" % j["wall_s"]}
        append(path, AR_COLS, row)
        with lock:
            times[(ranks, size, fab, rails, req)] = row
        print("%6d %5s %-8s %d rail(s) %-12s %12.1f us  (%.1f s)" %
              (ranks, fmt_size(size), fab, rails, j["algo"], j["time_us"], j["wall_s"]),
              flush=True)


def ar_finish(sim, path, ranks_list):
    """Rewrite the CSV: one row per point and algorithm, and an "auto" row per point that
    is the module's current choice (kcoll-sim --choose, so new thresholds cost no model
    run when the algorithm they pick was run already)."""
    rows = load(path, AR_COLS)
    times = times_of(rows)
    out = []
    for k, r in sorted(times.items(), key=lambda kv: kv[0]):
        r = dict(r)
        r["request"] = r["algo"]
        out.append(r)
    for n in ranks_list:
        for size, _ in SIZES:
            for fab, fargs in FABRICS:
                for rails in RAILS:
                    a = choose(sim, point_args(n, size, fargs, rails))
                    r = times.get((n, size, fab, rails, a))
                    if r is None:
                        continue
                    r = dict(r)
                    r["request"] = "auto"
                    out.append(r)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=AR_COLS, lineterminator="\n")
        w.writeheader()
        w.writerows(out)


def sp_point(sim, out, done, coll, spines):
    path = os.path.join(out, "spines.csv")
    fab = "star" if spines == 0 else "leaf-spine"
    if (coll, fab, str(spines)) in done:
        return
    args = ["-c", coll, "-s", "64M", "-n", "1024", "-a", "auto"]
    if spines:
        args += ["-F", "leaf-spine", "--hosts-per-leaf", str(SP_HPL), "--spines", str(spines),
                 "--oversub", "%g" % (SP_HPL / spines)]
    j = run_sim(sim, args)
    append(path, SP_COLS, {"coll": coll, "fabric": fab, "spines": spines, "algo": j["algo"],
                           "time_us": "%.3f" % j["time_us"],
                           "busbw_gbs": "%.6g" % j["busbw_gbs"],
                           "busiest": j["busiest_link"]["name"],
                           "busiest_util": "%.4f" % j["busiest_link"]["utilisation"],
                           "wall_s": "%.2f" % j["wall_s"]})
    print("%-9s %-10s %2d spines %-9s %10.1f us busbw %.3f GB/s" %
          (coll, fab, spines, j["algo"], j["time_us"], j["busbw_gbs"]), flush=True)


def fmt_size(b):
    return {1 << 20: "1M", 64 << 20: "64M", 1 << 30: "1G"}.get(b, str(b))


# ---- tables and plots ------------------------------------------------------------------------

def ar_table(rows):
    """Per point: the module's choice, its time, the fastest algorithm run and its time."""
    pts = {}
    for r in rows:
        k = (int(r["ranks"]), int(r["size"]), r["fabric"], int(r["rails"]))
        pts.setdefault(k, {})[r["request"]] = r
    out = []
    for k in sorted(pts, key=lambda k: (k[1], k[0], [f for f, _ in FABRICS].index(k[2]),
                                        k[3])):
        p = pts[k]
        if "auto" not in p:
            continue
        auto = p["auto"]
        times = {auto["algo"]: float(auto["time_us"])}
        for a in ALGOS:
            if a in p:
                times[a] = float(p[a]["time_us"])
        best = min(times, key=times.get)
        out.append({"ranks": k[0], "size": k[1], "fabric": k[2], "rails": k[3],
                    "auto": auto["algo"], "auto_us": float(auto["time_us"]),
                    "auto_busbw": float(auto["busbw_gbs"]), "busiest": auto["busiest"],
                    "util": float(auto["busiest_util"]), "best": best,
                    "best_us": times[best], "times": times,
                    "missing": [a for a in ALGOS if a not in times]})
    return out


def summary(out, table, sp, raw):
    lines = ["All-reduce, fp32, %d ranks a node; times in ms; * = the module's choice; "
             "speed-up = choice / fastest" % RPN, ""]
    hdr = "%6s %5s %-8s %5s  %-12s %10s %10s %10s %10s %10s %9s  %s" % (
        "ranks", "size", "fabric", "rails", "choice", "ring", "recdbl", "rabenseif",
        "dbtree", "busbw", "speed-up", "fastest")
    lines.append(hdr)
    for t in table:
        cells = []
        for a in ALGOS:
            v = t["times"].get(a)
            cells.append(("%.3f" % (v / 1e3) + ("*" if a == t["auto"] else ""))
                         if v is not None else "-")
        lines.append("%6d %5s %-8s %5d  %-12s %10s %10s %10s %10s %10.3f %9.2f  %s" % (
            t["ranks"], fmt_size(t["size"]), t["fabric"], t["rails"], t["auto"], *cells,
            t["auto_busbw"], t["auto_us"] / t["best_us"], t["best"]))
    lines += ["", "Leaf-spine bandwidth against spines (1,024 ranks, 32 nodes a leaf, spine "
              "links at a NIC's speed), 64 MiB:", ""]
    lines.append("%-10s %-10s %6s %10s %10s  %s" % ("coll", "fabric", "spines", "time ms",
                                                     "busbw", "busiest link (utilisation)"))
    for r in sorted(sp, key=lambda r: (r["coll"], r["fabric"] != "star", int(r["spines"]))):
        lines.append("%-10s %-10s %6s %10.3f %10.3f  %s (%.0f %%)" % (
            r["coll"], r["fabric"], r["spines"] if r["fabric"] != "star" else "-",
            float(r["time_us"]) / 1e3, float(r["busbw_gbs"]), r["busiest"],
            100 * float(r["busiest_util"])))
    lines += ["", "Wall time of one kcoll-sim run (this host, loaded; min / median / max over "
              "the points run), and messages:", ""]
    lines.append("%6s %-13s %5s %8s %8s %8s %12s" % ("ranks", "algorithm", "runs", "min s",
                                                       "median s", "max s", "messages"))
    for n in RANKS:
        for a in ALGOS:
            w = sorted(float(r["wall_s"]) for r in raw if int(r["ranks"]) == n and
                       r["request"] == a)
            m = [int(r["messages"]) for r in raw if int(r["ranks"]) == n and
                 r["request"] == a]
            if w:
                lines.append("%6d %-13s %5d %8.2f %8.2f %8.2f %12d" % (
                    n, a, len(w), w[0], w[len(w) // 2], w[-1], max(m)))
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def gnuplot(out, name, script):
    gp = shutil.which("gnuplot")
    if not gp:
        print("gnuplot is not installed: no %s.png" % name, file=sys.stderr)
        return
    path = os.path.join(out, name + ".gp")
    with open(path, "w") as f:
        f.write("\n".join(script) + "\n")
    p = subprocess.run([gp, os.path.basename(path)], cwd=out, capture_output=True, text=True)
    if p.returncode:
        sys.exit("gnuplot %s: %s" % (path, p.stderr.strip()[-500:]))


def plot_allreduce(out, table):
    """One PNG per size: a panel per rank count, busbw of the module's choice (bars) and of
    the fastest algorithm (points), clustered by fabric, one bar per rail count."""
    fabs = [f for f, _ in FABRICS]
    for size, tag in SIZES:
        dat = "allreduce-%s.dat" % tag
        have = False
        with open(os.path.join(out, dat), "w") as f:
            for ranks in RANKS:
                f.write("# %d ranks: fabric, then per rails 1 4 8: choice busbw, fastest "
                        "busbw\n" % ranks)
                for fab in fabs:
                    cells = []
                    for rails in RAILS:
                        t = [x for x in table if (x["ranks"], x["size"], x["fabric"],
                                                  x["rails"]) == (ranks, size, fab, rails)]
                        if t:
                            have = True
                            bw = t[0]["auto_busbw"]
                            cells += ["%.6g" % bw, "%.6g" % (bw * t[0]["auto_us"] /
                                                             t[0]["best_us"])]
                        else:
                            cells += ["NaN", "NaN"]
                    f.write('"%s" %s\n' % (fab, " ".join(cells)))
                f.write("\n\n")
        panels = [(i, n) for i, n in enumerate(RANKS)
                  if any((x["ranks"], x["size"]) == (n, size) for x in table)]
        if not have or not panels:
            continue
        s = ["set terminal pngcairo size 1200,380 font ',9'",
             "set output 'allreduce-%s.png'" % tag,
             "set style data histogram", "set style histogram clustered gap 1",
             "set style fill solid 0.8 border -1", "set boxwidth 0.9",
             "set grid ytics", "set yrange [0:*]", "set ylabel 'busbw (GB/s)'",
             "set key top right font ',8'",
             "set multiplot layout 1,%d title 'all-reduce %s fp32, %d ranks a node, 12.5 GB/s "
             "NICs: bars the module''s choice, points the fastest algorithm' font ',10'"
             % (len(panels), {"1M": "1 MiB", "64M": "64 MiB", "1G": "1 GiB"}[tag], RPN)]
        for i, ranks in panels:
            s.append("set title '%d ranks%s'" % (ranks, "" if all(
                any((x["ranks"], x["size"], x["fabric"], x["rails"]) == (ranks, size, f, r)
                    for x in table) for f in fabs for r in RAILS) else
                " (no bar: not run)"))
            plots = []
            # gnuplot refuses a histogram column without a value: 0 stands for "not run"
            for j, rails in enumerate(RAILS):
                plots.append("'%s' index %d using (valid(%d) ? $%d : 0):xtic(1) title '%d rail%s' "
                             "lc %d" % (dat, i, 2 + 2 * j, 2 + 2 * j, rails,
                                        "" if rails == 1 else "s", j + 1))
            for j, rails in enumerate(RAILS):
                # points over the bars: cluster x = row, bar offset (j - 1) / (bars + gap)
                plots.append("'%s' index %d using ($0 + %.2f):%d with points pt 7 ps 0.8 "
                             "lc rgb 'black' %s" % (dat, i, (j - 1) * 0.25, 3 + 2 * j,
                                                    "title 'fastest'" if j == 0 else
                                                    "notitle"))
            s.append("plot " + ", ".join(plots))
        s.append("unset multiplot")
        gnuplot(out, "allreduce-%s" % tag, s)


def plot_spines(out, sp):
    if not sp:
        return
    colls = sorted({r["coll"] for r in sp})
    with open(os.path.join(out, "spines.dat"), "w") as f:
        for c in colls:
            f.write("# %s: spines busbw (leaf-spine); star busbw\n" % c)
            star = [r for r in sp if r["coll"] == c and r["fabric"] == "star"]
            for r in sorted((r for r in sp if r["coll"] == c and r["fabric"] != "star"),
                            key=lambda r: int(r["spines"])):
                f.write("%s %s %s\n" % (r["spines"], r["busbw_gbs"],
                                        star[0]["busbw_gbs"] if star else "NaN"))
            f.write("\n\n")
    s = ["set terminal pngcairo size 720,420 font ',9'", "set output 'spines.png'",
         "set logscale xy 2", "set grid", "set xlabel 'spines (each leaf up-link at 12.5 GB/s)'",
         "set ylabel 'busbw (GB/s, log scale)'", "set key bottom right font ',8'",
         "set yrange [0.25:16]",
         "set title 'leaf-spine, 1,024 ranks, 32 nodes a leaf, 64 MiB'"]
    plots = []
    for i, c in enumerate(colls):
        plots.append("'spines.dat' index %d using 1:2 with linespoints lw 2 title '%s, "
                     "leaf-spine'" % (i, c))
        plots.append("'spines.dat' index %d using 1:3 with lines dt 2 title '%s, star'" %
                     (i, c))
        first = [r for r in sp if r["coll"] == c and r["fabric"] != "star" and
                 r["spines"] == "1"]
        if first and c == "alltoall":
            plots.append("'spines.dat' index %d using 1:(%s * $1) with lines dt 3 lc rgb "
                         "'gray' title '%s, linear in spines'" % (i, first[0]["busbw_gbs"], c))
    s.append("plot " + ", ".join(plots))
    gnuplot(out, "spines", s)


def check(sim, out):
    import tempfile
    res = []
    arp, spp = os.path.join(out, "allreduce.csv"), os.path.join(out, "spines.csv")
    rows, sp = load(arp, AR_COLS), load(spp, SP_COLS)
    keys = {ar_key(r) for r in rows}
    grid = [(n, s, f, r) for n in RANKS for s, _ in SIZES for f, _ in FABRICS for r in RAILS
            if not point_skipped(n, s, f, r, False)]
    missing = [k for k in grid if k + ("auto",) not in keys]
    res.append((not missing, "allreduce.csv has the module's choice at all %d points%s" % (
        len(grid), (": missing " + str(missing[:3])) if missing else "")))
    short, wrong = [], []
    for n in RANKS:
        for size, _ in SIZES:
            for fab, fargs in FABRICS:
                for rails in RAILS:
                    k = (n, size, fab, rails)
                    if point_skipped(n, size, fab, rails, False):
                        continue
                    short += [k + (x,) for x in ALGOS if k + (x,) not in keys and not
                              (x == "ring" and ring_skipped(n, size, fab, rails, False))]
                    auto = [r for r in rows if ar_key(r) == k + ("auto",)]
                    if auto and auto[0]["algo"] != choose(sim, point_args(n, size, fargs,
                                                                          rails)):
                        wrong.append(k)
    res.append((rows and not short, "every point has every algorithm (the 16,384-rank ring "
                "where scale.py runs it)%s" % ((": " + str(short[:3])) if short else "")))
    res.append((not wrong, "the \"auto\" rows are the module's current choice (kcoll-sim "
                "--choose; after a threshold change run scale.py again)%s" %
                ((": " + str(wrong[:3])) if wrong else "")))
    res.append((len(sp) == 2 * (1 + len(SP_SPINES)), "spines.csv has %d rows" % len(sp)))
    stale = []
    for r in [r for r in rows if r["ranks"] == "64" and r["rails"] == "4" and
              r["request"] != "auto"][::10]:
        fargs = dict(FABRICS)[r["fabric"]]
        j = run_sim(sim, ["-c", "allreduce", "-s", r["size"], "-n", "64", "-N", str(RPN),
                          "-R", "4", "-a", r["request"]] + fargs)
        if j["algo"] != r["algo"] or abs(j["time_us"] - float(r["time_us"])) > \
                1e-6 * float(r["time_us"]) + 0.002:
            stale.append("%s %s %s: %s %.3f" % (r["size"], r["fabric"], r["request"],
                                                j["algo"], j["time_us"]))
    res.append((not stale, "allreduce.csv is kcoll-sim's current answer (64 ranks, 4 rails)%s"
                % ((": " + "; ".join(stale[:3])) if stale else "")))
    same = False
    files = [os.path.join(out, f) for f in ("allreduce.csv", "spines.csv", "summary.txt")]
    if all(os.path.exists(f) for f in files):
        with tempfile.TemporaryDirectory() as tmp:
            for f in files[:2]:
                shutil.copy(f, tmp)
            raw = load(os.path.join(tmp, "allreduce.csv"), AR_COLS)
            summary(tmp, ar_table(raw), load(os.path.join(tmp, "spines.csv"), SP_COLS), raw)
            with open(os.path.join(tmp, "summary.txt")) as x, open(files[2]) as y:
                same = x.read() == y.read()
    res.append((same, "summary.txt is what scale.py makes of the CSVs"))
    print("TAP version 13")
    print("1..%d" % len(res))
    for i, (ok, desc) in enumerate(res, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, desc))
    return all(ok for ok, _ in res)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sim", default=os.path.join(TOP, "tools/kcoll-sim/kcoll-sim"))
    ap.add_argument("--out", default=os.path.join(TOP, "Documentation/scale"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--ranks", default=",".join(map(str, RANKS)))
    ap.add_argument("--sizes", default="1M,64M,1G")
    ap.add_argument("--full", action="store_true", help="the 16,384-rank ring everywhere")
    ap.add_argument("--force", action="store_true", help="redo every row")
    ap.add_argument("--plot-only", action="store_true")
    ap.add_argument("--no-spines", action="store_true")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.check:
        if not os.access(a.sim, os.X_OK):
            sys.exit("%s: not built (make -C tools/kcoll-sim)" % a.sim)
        sys.exit(0 if check(a.sim, a.out) else 1)
    os.makedirs(a.out, exist_ok=True)
    arp, spp = os.path.join(a.out, "allreduce.csv"), os.path.join(a.out, "spines.csv")
    if a.force:
        for p in (arp, spp):
            if os.path.exists(p):
                os.unlink(p)
    if not a.plot_only:
        if not os.access(a.sim, os.X_OK):
            sys.exit("%s: not built (make -C tools/kcoll-sim)" % a.sim)
        ranks = [int(x) for x in a.ranks.split(",")]
        times = times_of(load(arp, AR_COLS))
        spdone = {(r["coll"], r["fabric"], r["spines"]) for r in load(spp, SP_COLS)}
        jobs = []
        # cheap first; the 16,384-rank points last
        sizes = [b for b, tag in SIZES if tag in a.sizes.split(",")]
        for n in sorted(ranks):
            for size in sizes:
                for fab, fargs in FABRICS:
                    for rails in RAILS:
                        jobs.append((ar_point, (a.sim, a.out, times, n, size, fab, fargs,
                                                rails, a.full)))
            if n == 1024 and not a.no_spines:
                for coll in ("alltoall", "allreduce"):
                    for m in [0] + SP_SPINES:
                        jobs.append((sp_point, (a.sim, a.out, spdone, coll, m)))
        with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            futs = [ex.submit(fn, *args) for fn, args in jobs]
            for fu in futs:
                fu.result()
        ar_finish(a.sim, arp, sorted(set(RANKS) | set(ranks)))
    raw = load(arp, AR_COLS)
    table = ar_table(raw)
    sp = load(spp, SP_COLS)
    summary(a.out, table, sp, raw)
    plot_allreduce(a.out, table)
    plot_spines(a.out, sp)
    print("wrote %s" % os.path.join(a.out, "summary.txt"))


if __name__ == "__main__":
    main()
