#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Fit kcoll-sim's parameters to a `make bench` report and show the model's error per row.

    bench/calibrate.py [--sim tools/kcoll-sim/kcoll-sim] [--place out] [-o table.md]
                       bench/reports/2026-11-30-idle/report.json [more report.json ...]

For every cluster size of the report (one rank per VM, the VMs on one virtual switch: a star):

  1. start from perftest: latency = ib_write_lat's typical one-way time; of ib_write_bw's
     sizes, the one with the best bidirectional per-direction figure (bi) gives, with its
     one-way figure (uni), link bandwidth = uni and host bandwidth (kcoll-sim --host-bw, a
     node's sends and receives together) = 2 * bi; overhead 0; reduction speed = the host's
     fp32 sum kernel (the VMs are slower).  Why: the rig's NIC is Soft-RoCE in an emulated
     VM, so a node's CPU pays for what it sends and what it receives.  With a link L and a
     host H the model gives a one-way stream min(L, H) and each direction of a two-way one
     min(L, H/2); on the rig uni > bi but uni < 2 * bi (2 VMs: 0.0163 against 0.0097 GB/s,
     4 VMs 0.0101 against 0.0070, 8 VMs 0.0066 against 0.0035), which those two give back
     exactly with L = uni, H = 2 * bi (H > L).  Where 2 * bi < uni, no (L, H) gives both
     figures; the two-way one is kept (collectives mostly send and receive at once);
  2. fit link bandwidth, host bandwidth, latency, per-message overhead and reduction speed
     to the kcoll-perf rows (median time per operation) by coordinate descent over
     multiplicative grids, minimising the mean |log(predicted / measured)|;
  3. print, per row, the measured and predicted time and the error, and the median absolute
     error for sizes >= 64 KiB and below, for the perftest-only and the fitted parameters
     (in-sample), and for parameters fitted to the sizes 4^k only, judged on the sizes
     2*4^k (held out);
  4. transferred: predict this size from the next smaller one's fit, each parameter scaled by
     what perftest shows changed between the two sizes (link bandwidth by the ratio of
     ib_write_bw's one-way figure, host bandwidth and reduction speed by that of its
     bidirectional one, latency and overhead by the ratio of ib_write_lat): on the rig the
     VMs share the host's cores, so a bigger cluster has slower "links"; perftest is the only
     figure this uses from the bigger size.

--shared also fits a cluster-wide capacity (kcoll-sim --shared-bw: what all nodes together
move between nodes), started at 2 * bi too (what the cluster moved in perftest's two-way
run) and carried like the host: on the rig the VMs are emulated on one machine's cores, and
the bytes the whole cluster moves per second are about the same for any collective and
cluster size (Documentation/sim.rst, "Calibration").

Several reports (e.g. a 2- and 4-VM run and a BENCH_ONLY=sim 8-VM run) are read as one; a
cluster size that several of them measured is taken from the last one named.

Python 3 standard library only.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

COLLS = ("allreduce", "allgather", "reduce_scatter", "broadcast", "alltoall")
BIG = 64 << 10


def sim_sweep(sim, coll, nranks, maxb, p):
    """kcoll-sim's predictions for every power-of-two size up to maxb: {size: time_us}."""
    cmd = [sim, "-S", "-j", "-c", coll, "-n", str(nranks), "-b", "4", "-e", str(maxb),
           "-f", "2", "--bw", "%.9g" % p["bw"], "--lat", "%.9g" % p["lat"],
           "--hop-lat", "0", "--overhead", "%.9g" % p["ovh"],
           "--red-bw", "%.9g" % p["red"], "--host-bw", "%.9g" % p["host"]]
    if p.get("shared"):
        cmd += ["--shared-bw", "%.9g" % p["shared"]]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        r = json.loads(line)
        res.setdefault(r["size"], r["time_us"])
    return res


def predict(sim, rows, nranks, p):
    maxb = max(r["size"] for r in rows)
    by = {}
    for coll in sorted({r["coll"] for r in rows}):
        by[coll] = sim_sweep(sim, coll, nranks, maxb, p)
    return [by[r["coll"]].get(r["size"]) for r in rows]


def perftest_bw(link):
    """(uni, bi per direction) in GB/s of the ib_write_bw size with the best bidirectional
    figure, or None.  A size that failed has no figure (None) and is skipped; one size for
    both, so that the two describe the same run."""
    rows = [b for b in link.get("bw") or [] if b.get("bi_per_dir_gbs") and b.get("uni_gbs")]
    if not rows:
        return None
    b = max(rows, key=lambda b: b["bi_per_dir_gbs"])
    return b["uni_gbs"], b["bi_per_dir_gbs"]


def transfer(q0, q, p0):
    """The fit q of a cluster whose perftest start was q0, carried to one whose start is p0:
    each parameter scaled by the change of the perftest figure it started from."""
    fu, fb = p0["bw"] / q0["bw"], p0["host"] / q0["host"]
    fl = p0["lat"] / q0["lat"]
    t = {"bw": q["bw"] * fu, "host": q["host"] * fb, "lat": q["lat"] * fl,
         "ovh": q["ovh"] * fl, "red": q["red"] * fb}
    if "shared" in q:
        t["shared"] = q["shared"] * fb
    return t


def loss(pred, rows):
    errs = [abs(math.log(x / r["median_us"])) for x, r in zip(pred, rows) if x and x > 0]
    return sum(errs) / len(errs) if errs else float("inf")


def fit(sim, rows, nranks, p0, rounds=3):
    p = dict(p0)
    best = loss(predict(sim, rows, nranks, p), rows)
    grids = {
        "bw": [0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0],
        "host": [0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0],
        "shared": [0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0],
        "lat": [0.25, 0.5, 0.75, 1.0, 1.5, 2.0],
        "ovh": None,	# additive: microseconds
        "red": [0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0],
    }
    for rnd in range(rounds):
        for k in ("lat", "ovh", "bw", "host", "shared", "red"):
            if k not in p:
                continue
            if k == "ovh":
                cands = [0, 25, 50, 100, 150, 200, 300, 400, 600]
                if rnd:
                    cands = [max(0, p["ovh"] * f) for f in (0.6, 0.8, 0.9, 1.1, 1.25, 1.6)]
            else:
                g = grids[k] if not rnd else [0.7, 0.85, 0.93, 1.07, 1.15, 1.4]
                base = p0[k] if not rnd else p[k]
                cands = [base * f for f in g]
            for v in cands:
                q = dict(p)
                q[k] = v
                l = loss(predict(sim, rows, nranks, q), rows)
                if l < best - 1e-12:
                    best, p = l, q
    return p, best


def err_table(pred, rows):
    out = []
    for x, r in zip(pred, rows):
        e = (x - r["median_us"]) / r["median_us"] if x else float("nan")
        out.append((r, x, e))
    return out


def med(errs):
    errs = [abs(e) for e in errs if not math.isnan(e)]
    return statistics.median(errs) if errs else float("nan")


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", nargs="+", help="report.json of a make bench run")
    ap.add_argument("--sim", default=os.path.join(top, "tools/kcoll-sim/kcoll-sim"))
    ap.add_argument("--place", default="out", choices=("out", "in"),
                    help="kcoll-perf rows to use (kcoll-sim models out-of-place calls)")
    ap.add_argument("-o", "--output", help="also write the tables as Markdown here")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shared", action="store_true",
                    help="also fit a cluster-wide capacity (kcoll-sim --shared-bw)")
    a = ap.parse_args()
    if not os.access(a.sim, os.X_OK):
        sys.exit("calibrate: %s: not built (make -C tools/kcoll-sim)" % a.sim)
    bynodes, red0 = {}, None
    for path in a.report:
        with open(path) as f:
            rep = json.load(f)
        # a cluster size measured in several reports: the later report on the line wins
        bynodes.update((c["nodes"], c) for c in rep["clusters"])
        for r in rep.get("reduction_kernels", {}).get("rows", []):
            if red0 is None and r["dtype"] == "fp32" and r["op"] == "sum":
                red0 = r.get("avx2_gbs") or r.get("generic_gbs")
    red0 = red0 or 10.0
    # the reports as the repository names them: no host's absolute paths in the table
    shown = [os.path.relpath(os.path.abspath(r), top) for r in a.report]
    shown = [r if not r.startswith("..") else os.path.basename(r) for r in shown]
    md = ["# kcoll-sim against %s%s" % (" ".join(shown), " (--shared)" if a.shared else ""),
          ""]
    summary = []
    fits = []	# (nodes, perftest parameters, fitted parameters), smallest first
    for cl in sorted(bynodes.values(), key=lambda c: c["nodes"]):
        n = cl["nodes"]
        link = cl["link"]
        rows = [r for r in cl["systems"]["kcoll"]["rows"]
                if r["coll"] in COLLS and r["place"] == a.place and r["mode"] == "blocking"
                and r["mem"] == "user" and r.get("wrong", 0) == 0 and r["median_us"] > 0]
        pf = perftest_bw(link)
        if not rows or not pf or not link.get("lat"):
            continue
        p0 = {"bw": pf[0], "host": 2 * pf[1],
              "lat": link["lat"]["t_typical_us"], "ovh": 0.0, "red": red0}
        if a.shared:
            p0["shared"] = 2 * pf[1]
        pred0 = predict(a.sim, rows, n, p0)
        p, l = fit(a.sim, rows, n, p0, a.rounds)
        pred = predict(a.sim, rows, n, p)
        # held out: fit on the sizes 4^k, judge on the others
        train = [r for r in rows if (r["size"].bit_length() - 1) % 2 == 0]
        ph, _ = fit(a.sim, train, n, p0, a.rounds)
        predh = predict(a.sim, rows, n, ph)
        th = [(r, x, e) for r, x, e in err_table(predh, rows)
              if (r["size"].bit_length() - 1) % 2 == 1]
        t0, t = err_table(pred0, rows), err_table(pred, rows)
        tabs = [("perftest-only", t0), ("fitted", t), ("held-out", th)]
        prev = next((f for f in reversed(fits) if f[0] < n), None)
        if prev:
            m, q0, q = prev
            pt = transfer(q0, q, p0)
            tabs.append(("from %d VMs" % m, err_table(predict(a.sim, rows, n, pt), rows)))
        fits.append((n, p0, p))
        sh0 = ", shared %.4g GB/s" % p0["shared"] if "shared" in p0 else ""
        sh = ", shared %.4g GB/s" % p["shared"] if "shared" in p else ""
        head = ("%d VMs: perftest link %.4g GB/s, host %.4g GB/s%s, %.4g us; fitted link "
                "%.4g GB/s, host %.4g GB/s%s, lat %.4g us, overhead %.4g us, reduction %.4g GB/s "
                "(mean |log err| %.3f)"
                % (n, p0["bw"], p0["host"], sh0, p0["lat"], p["bw"], p["host"], sh, p["lat"],
                   p["ovh"], p["red"], l))
        print(head)
        md += ["## " + head, "",
               "| coll | size (B) | measured (us) | perftest-only (us) | err | fitted (us) | err |",
               "|---|---:|---:|---:|---:|---:|---:|"]
        print("%-15s %10s %12s %12s %8s %12s %8s" % ("coll", "size", "measured", "perftest",
                                                    "err", "fitted", "err"))
        for (r, x0, e0), (_, x, e) in zip(t0, t):
            print("%-15s %10d %12.1f %12.1f %+7.1f%% %12.1f %+7.1f%%"
                  % (r["coll"], r["size"], r["median_us"], x0 or 0, 100 * e0, x or 0, 100 * e))
            md.append("| %s | %d | %.1f | %.1f | %+.1f%% | %.1f | %+.1f%% |"
                      % (r["coll"], r["size"], r["median_us"], x0 or 0, 100 * e0, x or 0,
                         100 * e))
        for name, tab in tabs:
            big = med([e for r, _, e in tab if r["size"] >= BIG])
            small = med([e for r, _, e in tab if r["size"] < BIG])
            per = {c: med([e for r, _, e in tab if r["coll"] == c]) for c in COLLS}
            line = ("%d VMs %-13s median |error|: %5.1f%% (>= 64 KiB), %5.1f%% (< 64 KiB); "
                    % (n, name, 100 * big, 100 * small) +
                    ", ".join("%s %.1f%%" % (c, 100 * v) for c, v in per.items()))
            summary.append(line)
        md.append("")
    print()
    for s in summary:
        print(s)
    print("note: 'fitted' is in-sample (fitted to these rows); 'held-out' is fitted to the sizes "
          "4^k and judged on the sizes 2*4^k only; 'from M VMs' is M VMs' fit, scaled by perftest")
    if a.output:
        with open(a.output, "w") as f:
            f.write("\n".join(md + ["## Summary", ""] + ["- " + s for s in summary] +
                              ["", "'fitted' is in-sample; 'held-out' is fitted to the sizes "
                               "4^k and judged on the sizes 2*4^k only; 'from M VMs' is the "
                               "fit of M VMs, each parameter scaled by what perftest shows "
                               "changed from M VMs to these.", ""]))


if __name__ == "__main__":
    main()
