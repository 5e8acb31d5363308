#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host test of bench/calibrate.py (no VM): reports that kcoll-sim itself produced, with
perftest figures that a link L and a host H give (one way min(L, H), each way of a two-way
run min(L, H/2)), must come out with no error: perftest-only, fitted, held out, and carried
from 2 to 4 VMs.  Also: which perftest figures start the fit, and that the Markdown table
names no absolute path.  Needs tools/kcoll-sim/kcoll-sim built.  TAP.  Run by
selftests/host's test_calibrate.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "bench"))
import calibrate  # noqa: E402

SIM = os.path.join(TOP, "tools/kcoll-sim/kcoll-sim")
RED0 = 0.05	# GB/s, the "host kernel" of the synthetic report
# the truth of each cluster size: 4 VMs have slower links and hosts, and twice the latency
TRUTH = {2: {"bw": 0.016, "host": 0.02, "lat": 300.0, "ovh": 0.0, "red": RED0},
         4: {"bw": 0.008, "host": 0.012, "lat": 600.0, "ovh": 0.0, "red": RED0 * 0.6}}
MAXB = 256 << 10

n_test = 0
failed = 0


def ok(cond, what):
    global n_test, failed
    n_test += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n_test, what))
    if not cond:
        failed += 1


def cluster(n, p):
    rows = []
    for coll in calibrate.COLLS:
        for size, us in sorted(calibrate.sim_sweep(SIM, coll, n, MAXB, p).items()):
            rows.append({"coll": coll, "size": size, "place": "out", "mode": "blocking",
                         "mem": "user", "wrong": 0, "median_us": us})
    # rows calibrate.py must leave out: in place, and a wrong result
    rows.append({"coll": "allreduce", "size": 4096, "place": "in", "mode": "blocking",
                 "mem": "user", "wrong": 0, "median_us": 1.0})
    rows.append({"coll": "allreduce", "size": 8192, "place": "out", "mode": "blocking",
                 "mem": "user", "wrong": 1, "median_us": 1.0})
    uni, bi = min(p["bw"], p["host"]), min(p["bw"], p["host"] / 2)
    bw = [{"size": 4096, "uni_gbs": uni / 2, "bi_per_dir_gbs": bi / 2},
          {"size": 65536, "uni_gbs": uni * 3, "bi_per_dir_gbs": None},	# failed to connect
          {"size": 8388608, "uni_gbs": uni, "bi_per_dir_gbs": bi}]
    return {"nodes": n, "link": {"bw": bw, "lat": {"t_typical_us": p["lat"]}},
            "systems": {"kcoll": {"rows": rows}}}


def write_report(d, name, truth):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        json.dump({"clusters": [cluster(n, p) for n, p in truth.items()],
                   "reduction_kernels": {"rows": [{"dtype": "fp32", "op": "sum",
                                                   "avx2_gbs": RED0}]}}, f)
    return path


def medians(stdout):
    """{(VMs, prediction): (median % >= 64 KiB, median % below)} of calibrate.py's summary."""
    med = {}
    for line in stdout.splitlines():
        m = re.match(r"(\d) VMs (.+?)\s+median \|error\|:\s+([\d.]+)% \(>= 64 KiB\),"
                     r"\s+([\d.]+)% \(< 64 KiB\)", line)
        if m:
            med[(int(m.group(1)), m.group(2))] = (float(m.group(3)), float(m.group(4)))
    return med


def main():
    print("TAP version 13")
    if not os.access(SIM, os.X_OK):
        print("1..0 # SKIP %s not built" % SIM)
        return 0
    # the start: one ib_write_bw size, the one with the best two-way figure
    link = {"bw": [{"size": 1, "uni_gbs": 0.5, "bi_per_dir_gbs": 0.1},
                   {"size": 2, "uni_gbs": 0.2, "bi_per_dir_gbs": 0.15},
                   {"size": 3, "uni_gbs": 0.9, "bi_per_dir_gbs": None}]}
    ok(calibrate.perftest_bw(link) == (0.2, 0.15), "perftest_bw: the best two-way size's pair")
    ok(calibrate.perftest_bw({"bw": [{"size": 1, "uni_gbs": 1, "bi_per_dir_gbs": None}]})
       is None, "perftest_bw: no two-way figure, no start")
    t = calibrate.transfer({"bw": 1, "host": 2, "lat": 10}, {"bw": 3, "host": 5, "lat": 7,
                                                             "ovh": 4, "red": 6},
                           {"bw": 0.5, "host": 1.5, "lat": 20})
    ok(t == {"bw": 1.5, "host": 3.75, "lat": 14, "ovh": 8, "red": 4.5},
       "transfer: link by the one-way, host and reduction by the two-way, time by latency")

    with tempfile.TemporaryDirectory() as d:
        path = write_report(d, "report.json", TRUTH)
        md = os.path.join(d, "table.md")
        out = subprocess.run([sys.executable, os.path.join(TOP, "bench/calibrate.py"),
                              "--sim", SIM, "-o", md, path], capture_output=True, text=True)
        ok(out.returncode == 0, "calibrate.py runs" + (": " + out.stderr.strip()[-200:]
                                                       if out.returncode else ""))
        med = medians(out.stdout)
        for key in ((2, "perftest-only"), (2, "fitted"), (2, "held-out"), (4, "from 2 VMs")):
            ok(med.get(key) == (0.0, 0.0), "%d VMs %s: no error (%s)" % (key + (med.get(key),)))
        head = re.search(r"2 VMs: perftest link ([\d.]+) GB/s, host ([\d.]+) GB/s", out.stdout)
        ok(head and (float(head.group(1)), float(head.group(2))) == (0.016, 0.02),
           "2 VMs start: link = one-way figure, host = twice the two-way figure")
        with open(md) as f:
            text = f.read()
        ok(d not in text and "# kcoll-sim against report.json" in text,
           "the table names the report without its absolute path")
        ok("| allreduce | 8192 | 1.0 |" not in text and "| allreduce | 4096 | 1.0 |" not in text,
           "in-place and wrong rows are left out")
        # the same size in two reports: the later one on the line is the one fitted
        bad = write_report(d, "stale.json", {2: dict(TRUTH[2], bw=TRUTH[2]["bw"] * 3)})
        out = subprocess.run([sys.executable, os.path.join(TOP, "bench/calibrate.py"),
                              "--sim", SIM, bad, path], capture_output=True, text=True)
        med = medians(out.stdout)
        ok(out.stdout.count("2 VMs: perftest") == 1 and med.get((2, "fitted")) == (0.0, 0.0),
           "a size in two reports: the last one named (%s)" % (med.get((2, "fitted")),))
        # --shared: a cluster-wide capacity, started where the host is (2 * bi)
        truth = {n: dict(p, shared=p["host"]) for n, p in TRUTH.items()}
        path = write_report(d, "shared.json", truth)
        out = subprocess.run([sys.executable, os.path.join(TOP, "bench/calibrate.py"),
                              "--sim", SIM, "--shared", path], capture_output=True, text=True)
        med = medians(out.stdout)
        for key in ((2, "perftest-only"), (2, "fitted"), (4, "from 2 VMs")):
            ok(med.get(key) == (0.0, 0.0),
               "--shared: %d VMs %s: no error (%s)" % (key + (med.get(key),)))
    print("1..%d" % n_test)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
