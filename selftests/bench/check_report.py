#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check that a `make bench` report is well formed, as TAP: the benchmark's own sanity test.

    selftests/bench/check_report.py OUTDIR

Checks structure and consistency, never speed: report.json parses and has every part; every
system either has result rows or says why not; every row's figures are finite numbers that
agree with each other (algbw = size / time, busbw = algbw x the bus factor); #wrong is 0
everywhere; each target is met, missed or not measured; report.md states the VM count, the
vCPUs and that the machine is emulated; busbw.png is a PNG.  The same-host run (issue 15), when
the run had one: kcoll and Open MPI have consistent rows with #wrong 0, kcoll on plain memory
and on kcoll buffers, and `kcollctl comm show` showed every kcoll peer on the loop transport.
The hierarchical run, likewise: kcoll's three algorithms and Open MPI have consistent rows,
the link limits are there, and no row was refused: the kernel ran the algorithm asked for,
and every rank's locality showed the hosts x ranks the run was made of.  The rails run, when
the hierarchical VMs had two NICs: the link limits of one rail and of both, consistent rows,
every rank on its rail's device, every node's CPU use in the profile.

KCOLL_BENCH_ALLOW_MISSING=1 turns "kcoll produced result rows" (and the same of kcoll's
PyTorch backend) into a skip (kcoll's collectives not there yet); the report must then say
"not available" with the error.
"""
import json
import math
import os
import sys

# The systems that run on kcoll (bench/report.py's SYSTEMS).
KCOLL_SYSTEMS = ("kcoll", "torch-kcoll", "torch-kcoll-tcp")

FACTORS = {
    "allreduce": lambda n: 2.0 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "gather": lambda n: (n - 1) / n,
    "scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
}

results = []


def test(ok, what, diag=None, skip=None):
    results.append((ok, what, diag, skip))


def close(a, b, rel=2e-3, abs_=2e-6):
    # abs_: two units of the 6th decimal older outputs printed; rel: their rounding
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def finite(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_rows(name, n, rows):
    bad = []
    for r in rows:
        for k in ("size", "time_us", "algbw_gbs", "busbw_gbs", "wrong", "coll"):
            if k not in r:
                bad.append("%s: row without %s: %s" % (name, k, r))
                break
        else:
            if not all(finite(r[k]) for k in ("size", "time_us", "algbw_gbs", "busbw_gbs")):
                bad.append("%s: non-numeric figure: %s" % (name, r))
            elif r["time_us"] <= 0 or r["size"] <= 0:
                bad.append("%s: time or size not positive: %s" % (name, r))
            elif not close(r["algbw_gbs"], r["size"] / r["time_us"] / 1e3):
                bad.append("%s: algbw != size / time: %s" % (name, r))
            elif r["coll"] in FACTORS and not close(r["busbw_gbs"],
                                                    r["algbw_gbs"] * FACTORS[r["coll"]](n)):
                bad.append("%s: busbw != algbw x factor: %s" % (name, r))
            if r.get("nranks", n) != n:
                bad.append("%s: nranks %s in a cluster of %d" % (name, r.get("nranks"), n))
    return bad


def test_rows(tag, name, n, rows):
    """A system's rows: consistent figures, and no wrong result."""
    bad = check_rows(name, n, rows)
    test(not bad, tag + "%s rows are consistent (algbw, busbw, nranks)" % name,
         "\n".join(bad[:5]))
    wrong = sum(int(r.get("wrong", 0)) for r in rows)
    test(wrong == 0, tag + "%s #wrong is 0" % name, "#wrong = %d" % wrong)


def part(rep, key, asked_key, label, why_absent):
    """rep[KEY], a part of the run; when it is absent, a test that fails only if host.json
    says the run asked for it (ASKED_KEY), skipped otherwise."""
    p = rep.get(key)
    if p is None:
        asked = rep.get("host", {}).get(asked_key)
        test(not asked, label + ": the run is in the report", "host.json asked for it",
             None if asked else why_absent)
    return p


def check_local(rep, md, allow_missing):
    """The same-host run (bench/report_local.py): present when the run asked for it."""
    loc = part(rep, "local", "same_host", "same host",
               "no same-host run (BENCH_ONLY=tcp or an older report)")
    if loc is None:
        return
    n = loc.get("nranks")
    tag = "same host: "
    test(isinstance(n, int) and n >= 2, tag + "the rank count is recorded", "nranks %s" % n)
    test(isinstance(loc.get("meta", {}).get("vcpus"), int), tag + "the vCPU count is recorded")
    test(loc.get("vm_ok") is True, tag + "the VM ran its job to the end")
    for name, s in sorted(loc.get("systems", {}).items()):
        rows = s.get("rows", [])
        if name == "local-kcoll" and not s.get("available") and allow_missing:
            test(True, tag + "%s produced result rows" % name, None,
                 "%s: not available (%s)" % (name, s.get("error")))
            continue
        test(bool(s.get("available")) and bool(rows) and not s.get("error"),
             tag + "%s produced result rows and no error" % name, "error: %s" % s.get("error"))
        test_rows(tag, name, n, rows)
        if name == "local-kcoll" and rows:
            mems = {r.get("mem") for r in rows}
            test(mems == {"user", "kbuf"}, tag + "kcoll ran on plain memory and on kcoll buffers",
                 "mem: %s" % sorted(str(m) for m in mems))
    tr = loc.get("transports") or {}
    peers = tr.get("peers") or []
    bad = [p for p in peers if p[2] != "loop"]
    test(isinstance(n, int) and len(peers) == n * (n - 1) and not bad and not tr.get("error"),
         tag + "every kcoll peer showed the loop transport",
         "%s; not loop (rank, peer, transport): %s" % (tr.get("error"), bad[:6]))
    test("## Same host" in md, "report.md has the same-host section")


def check_hier(rep, md, allow_missing):
    """The hierarchical run (bench/report_hier.py): present when the run asked for it."""
    h = part(rep, "hier", "hier", "hierarchical",
             "no hierarchical run (another BENCH_ONLY or an older report)")
    if h is None:
        return
    n, tag = h.get("nranks"), "hierarchical: "
    test(isinstance(n, int) and n == h.get("nodes", 0) * h.get("rpn", 0) and n >= 4,
         tag + "the VM and rank counts are recorded", "%s x %s" % (h.get("nodes"), h.get("rpn")))
    test(isinstance(h.get("meta", {}).get("vcpus"), int), tag + "the vCPU count is recorded")
    test(h.get("vm_ok") is True, tag + "every VM ran its job to the end")
    bw = [e for e in h.get("link", {}).get("bw", []) if finite(e.get("bi_per_dir_gbs"))]
    test(bool(bw), tag + "the RDMA link limit (ib_write_bw -b) is there",
         "; ".join(h.get("link", {}).get("errors", [])))
    test(finite(h.get("tcp_link", {}).get("bidir_per_dir_gbs")),
         tag + "the TCP link limit (iperf3 --bidir) is there")
    for name, s in sorted(h.get("systems", {}).items()):
        rows = s.get("rows", [])
        if name.startswith("hier-kcoll") and not s.get("available") and allow_missing:
            test(True, tag + "%s produced result rows" % name, None,
                 "%s: not available (%s)" % (name, s.get("error")))
            continue
        test(bool(s.get("available")) and bool(rows) and not s.get("error"),
             tag + "%s produced result rows and no error" % name, "error: %s" % s.get("error"))
        test_rows(tag, name, n, rows)
    loc = (h.get("locality") or {}).get("hier") or {}
    test(loc.get("ok") is True, tag + "every rank's locality shows %s hosts x %s ranks" %
         (h.get("nodes"), h.get("rpn")), loc.get("error"))
    refused = sorted({"%s: %s" % kv for e in h.get("rows", []) for kv in e["refused"].items()})
    test(not refused, tag + "no row refused (the kernel ran the algorithm asked for)",
         "\n".join(refused[:6]))
    test("## Hierarchical" in md, "report.md has the hierarchical section")


def check_rails(rep, md):
    """The rails run (bench/report_rails.py): present when the hierarchical VMs had two NICs."""
    ra = rep.get("rails")
    if ra is None:
        nics = ((rep.get("hier") or {}).get("meta") or {}).get("nics") or 1
        test(nics < 2, "rails: the run is in the report", "the hierarchical run had 2 NICs",
             None if nics >= 2 else "no two-NIC hierarchical run")
        return
    n, tag = ra.get("nranks"), "rails: "
    test(ra.get("vm_ok") is True, tag + "every VM ran its job to the end")
    lk = ra.get("links") or {}
    test(finite(lk.get("both_over_one")), tag + "the link limits of one rail and of both are "
         "there", "; ".join(lk.get("errors", [])))
    for name, s in sorted(ra.get("systems", {}).items()):
        rows = s.get("rows", [])
        test(bool(s.get("available")) and bool(rows) and not s.get("error"),
             tag + "%s produced result rows and no error" % name, "error: %s" % s.get("error"))
        test_rows(tag, name, n, rows)
    dv = ra.get("devices") or {}
    test(all((dv.get(k) or {}).get("ok") for k in ("one", "two")),
         tag + "every rank used its rail's device",
         "; ".join("%s: %s" % (k, (dv.get(k) or {}).get("error")) for k in ("one", "two")))
    refused = sorted({"%s: %s" % kv for e in ra.get("rows", []) for kv in e["refused"].items()})
    test(not refused, tag + "no row refused", "\n".join(refused[:6]))
    prof = ra.get("profile") or {}
    test(all(len(p.get("nodes") or []) == ra.get("nodes") for p in prof.values()) and prof,
         tag + "the profile has every node's CPU use for each run")
    test("## Rails" in md, "report.md has the rails section")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = sys.argv[1]
    allow_missing = os.environ.get("KCOLL_BENCH_ALLOW_MISSING", "0") not in ("", "0")
    try:
        with open(os.path.join(out, "report.json")) as f:
            rep = json.load(f)
        test(True, "report.json parses")
    except (OSError, ValueError) as e:
        test(False, "report.json parses", str(e))
        rep = None
    try:
        with open(os.path.join(out, "report.md")) as f:
            md = f.read()
        test(len(md) > 200, "report.md is written")
    except OSError as e:
        test(False, "report.md is written", str(e))
        md = ""

    if rep is not None:
        clusters = rep.get("clusters") or []
        test(len(clusters) >= 1 or rep.get("local") or rep.get("hier"),
             "the report has a cluster run, the same-host run or the hierarchical one")
        test(rep.get("emulated") is True, "report.json says the machine is emulated")
        for cl in clusters:
            n = cl.get("nodes")
            tag = "%s VMs: " % n
            test(isinstance(n, int) and n >= 2, tag + "the VM count is recorded")
            test(isinstance(cl.get("meta", {}).get("vcpus"), int), tag + "the vCPU count is recorded",
                 "meta: %s" % cl.get("meta"))
            test(cl.get("vm_ok") is True, tag + "every VM ran its job to the end")
            link = cl.get("link", {})
            bw = [e for e in link.get("bw", []) if finite(e.get("uni_gbs")) and e["uni_gbs"] > 0
                  and finite(e.get("bi_per_dir_gbs")) and e["bi_per_dir_gbs"] > 0]
            test(bool(bw), tag + "perftest ib_write_bw (uni and -b) figures are there",
                 "; ".join(link.get("errors", [])))
            lat = link.get("lat") or {}
            test(finite(lat.get("t_typical_us")) and lat["t_typical_us"] > 0,
                 tag + "perftest ib_write_lat median is there", "; ".join(link.get("errors", [])))
            for name, s in sorted(cl.get("systems", {}).items()):
                rows = s.get("rows", [])
                if name in KCOLL_SYSTEMS and not s.get("available") and allow_missing:
                    test(True, tag + "%s produced result rows" % name, None,
                         "%s: not available (%s)" % (name, s.get("error")))
                    test("%s: not available (error: %s)" % (name, s.get("error")) in md,
                         tag + "report.md says %s is not available, with the error" % name)
                    continue
                test(bool(s.get("available")) and bool(rows),
                     tag + "%s produced result rows" % name, "error: %s" % s.get("error"))
                test_rows(tag, name, n, rows)
        check_local(rep, md, allow_missing)
        check_hier(rep, md, allow_missing)
        if not allow_missing:
            check_rails(rep, md)
        targets = rep.get("targets") or []
        test(len(targets) >= (4 if clusters else 2), "the targets are computed",
             "%d targets" % len(targets))
        test(all(t.get("status") in ("met", "missed", "not measured") for t in targets),
             "every target is met, missed or not measured")
        test(all(t["status"] == "not measured" or finite(t.get("value")) for t in targets),
             "every measured target has a value")
        test(rep.get("wrong_total") == 0, "#wrong is 0 over the whole report",
             "wrong_total = %s" % rep.get("wrong_total"))
        k = rep.get("reduction_kernels") or {}
        only_local = rep.get("host", {}).get("bench_only") in ("local", "hier")
        test(bool(k.get("rows")) or only_local, "the reduction kernels' figures are included",
             rep.get("reduction_kernels_error"))

    test("emulated" in md and "VMs" in md and "vCPU" in md,
         "report.md states the VM count, the vCPUs and that the machine is emulated")
    for t in ("## Targets", "met" if "met" in md else "not measured"):
        test(t in md, "report.md has '%s'" % t)
    if rep is not None and not rep.get("clusters"):
        test(True, "busbw.png is a PNG", None, "no cluster run (BENCH_ONLY=local or hier): "
             "no plot")
    else:
        try:
            with open(os.path.join(out, "busbw.png"), "rb") as f:
                sig = f.read(8)
            test(sig == b"\x89PNG\r\n\x1a\n", "busbw.png is a PNG")
        except OSError as e:
            test(False, "busbw.png is a PNG", str(e))

    print("TAP version 13")
    print("1..%d" % len(results))
    fails = 0
    for i, (ok, what, diag, skip) in enumerate(results, 1):
        if skip:
            print("ok %d %s # SKIP %s" % (i, what, skip))
            continue
        print("%s %d %s" % ("ok" if ok else "not ok", i, what))
        if not ok:
            fails += 1
            for line in str(diag or "").splitlines():
                print("# " + line)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
