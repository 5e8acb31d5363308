# SPDX-License-Identifier: GPL-2.0-only
"""The rails part of the `make bench` report (issue 15 item 4), used by bench/report.py.

When the hierarchical run's VMs have two NICs (bench/run.sh boots them with --nics 2),
bench/hier.sh also runs kcoll-perf -A hier with KCOLL_IFNAME=eth0,eth1
(hier-kcoll-rails.json: local rank i on rail i, so the inter-node step of local rank i stays
on rail i) next to its one-rail run (hier-kcoll-hier.json, KCOLL_IFNAME=eth0), with every
node's `kcollctl -j comm show` taken while each ran (hier-comm-NAME-nodeI.json: each rank's
RDMA device); the link limits of each rail alone and of both at once (ib_write_bw -b, 8 MiB
in a full run: perftest/rails-bi-rxe0-alone.txt, rails-bi-rxe1-alone.txt, then
rails-bi-rxe0.txt and rails-bi-rxe1.txt run together); and a profile at 16 MiB (ring and hier on one rail, hier on two:
prof-kcoll-NAME.json, every node's /proc/stat before and after, prof-NAME-nodeI.stat.0/.1).
A two-rail row counts only when every rank showed the device of its rail (rxe<local rank>),
a one-rail row only when every rank showed rxe0, and each only when the kernel ran hier.
"""
import os

import report as R
import report_hier as H

KEY = "rails"
# Issue 15: two rails' busbw at 16 MiB >= 1.7x one rail's, next to the link limits.
TARGET_SIZE = 16 << 20
TARGET_MIN = 1.7
PROFILES = (("ring", "ring, 1 rail"), ("hier", "hier, 1 rail"), ("rails", "hier, 2 rails"))
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def load_devices(res, name, nodes, rpn, rails):
    """Each rank's RDMA device while kcoll-perf NAME ran: {"devs": [[rank, dev]], "ok",
    "error"}; ok when rank r showed rxe<(r mod RPN) mod RAILS>."""
    out = {"devs": [], "ok": False, "error": None}
    byrank, out["error"] = H.load_listing(res, name, nodes, nodes * rpn)
    if byrank is None:
        return out
    for r in sorted(byrank):
        dev, want = byrank[r].get("dev"), "rxe%d" % (r % rpn % rails)
        out["devs"].append([r, dev])
        if dev != want and not out["error"]:
            out["error"] = "rank %d used %s, not %s" % (r, dev, want)
    out["ok"] = out["error"] is None
    return out


def bw_per_dir(res, name, errors):
    """ib_write_bw -b from perftest/NAME.txt: (GB/s a direction (perftest adds both up),
    message size), or (None, None)."""
    path = os.path.join(res, "perftest", name + ".txt")
    bw = R.parse_bw(R.read_text(path))
    if not bw:
        errors.append("ib_write_bw -b (%s): %s" % (name, R.tail(path) or "no output"))
        return None, None
    return bw["avg_gbs"] / 2, bw["size"]


def load_links(res):
    """Each rail alone and both at once, GB/s a direction; one rail is rxe0 alone."""
    errors = []
    one, size = bw_per_dir(res, "rails-bi-rxe0-alone", errors)
    rxe1, _ = bw_per_dir(res, "rails-bi-rxe1-alone", errors)
    a, _ = bw_per_dir(res, "rails-bi-rxe0", errors)
    b, _ = bw_per_dir(res, "rails-bi-rxe1", errors)
    both = a + b if a is not None and b is not None else None
    return {"size": size, "one_rail_gbs": one, "rxe1_alone_gbs": rxe1, "both_rxe0_gbs": a,
            "both_rxe1_gbs": b, "both_gbs": both, "both_over_one": R.ratio(both, one),
            "errors": errors}


def parse_stat(text):
    """bench_kperf -p's file: the time, then /proc/stat: (seconds, {"cpu": [fields], ...})."""
    t, cpus = None, {}
    for line in (text or "").splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "time":
            t = float(f[1])
        elif f and f[0].startswith("cpu"):
            cpus[f[0]] = [int(v) for v in f[1:1 + len(STAT_FIELDS)]]
    return t, cpus


def cpu_use(res, name, node):
    """How node NODE's vCPUs spent kcoll-perf NAME's run: shares of all vCPU time (busy,
    user, system, irq + softirq) and the wall seconds, or None."""
    t0, s0 = parse_stat(R.read_text(os.path.join(res, "prof-%s-node%d.stat.0" % (name, node))))
    t1, s1 = parse_stat(R.read_text(os.path.join(res, "prof-%s-node%d.stat.1" % (name, node))))
    if t0 is None or t1 is None or "cpu" not in s0 or "cpu" not in s1:
        return None
    d = dict(zip(STAT_FIELDS, (b - a for a, b in zip(s0["cpu"], s1["cpu"]))))
    total = sum(d.values())
    if total <= 0:
        return None
    return {"node": node, "wall_s": t1 - t0, "vcpus": len(s1) - 1,
            "busy": 1 - (d["idle"] + d["iowait"]) / total,
            "user": (d["user"] + d["nice"]) / total, "system": d["system"] / total,
            "irq": (d["irq"] + d["softirq"]) / total}


def load_profile(res, nodes, systems):
    """Each profiled run's 16 MiB row (from SYSTEMS, the loaded prof-kcoll-NAME results)
    and every node's CPU use in it."""
    out = {}
    for name, label in PROFILES:
        s = systems["prof-kcoll-" + name]
        # the one size it ran (TARGET_SIZE; a smoke run's tiny one)
        r = max(R.pick(s["rows"], "allreduce"), key=lambda r: r["size"], default=None)
        out[name] = {"label": label, "error": s["error"], "size": r["size"] if r else None,
                     "busbw_gbs": r["busbw_gbs"] if r else None,
                     "median_us": r.get("median_us") if r else None,
                     "algo_used": r.get("algo_used") if r else None,
                     "nodes": [u for u in (cpu_use(res, name, i) for i in range(nodes)) if u]}
    return out


def load_rails(outdir):
    """The rails run, or None when the hierarchical run had one NIC a VM (or is absent)."""
    run = R.open_run(outdir, "hier")
    if run is None:
        return None
    d, res, meta = run
    if (meta.get("nics") or 1) < 2:
        return None
    nodes, rpn = meta.get("nodes") or 2, meta.get("ranks_per_node") or 2
    ra = {"dir": d, "meta": meta, "nodes": nodes, "rpn": rpn, "nranks": nodes * rpn,
          "vm_ok": R.vms_ok(d, nodes), "links": load_links(res),
          "systems": {s: R.load_system(res, s) for s in
                      ["hier-kcoll-rails"] + ["prof-kcoll-" + p for p, _ in PROFILES]},
          "one": R.load_system(res, "hier-kcoll-hier"),
          "devices": {"one": load_devices(res, "hier", nodes, rpn, 1),
                      "two": load_devices(res, "rails", nodes, rpn, 2)}}
    ra["profile"] = load_profile(res, nodes, ra["systems"])
    ra["rows"] = rails_rows(ra)
    return ra


def rails_rows(ra):
    """Per size: hier's busbw and median on one rail and on two, two over one, refusals."""
    series = {"one": ra["one"]["rows"], "two": ra["systems"]["hier-kcoll-rails"]["rows"]}
    series = {k: {r["size"]: r for r in R.pick(v, "allreduce")} for k, v in series.items()}
    out = []
    for size in sorted(set().union(*series.values())):
        ent = {"size": size, "refused": {}}
        for k, rows in series.items():
            r = rows.get(size)
            why = None
            if r and r.get("algo_used") != "hier":
                why = "the kernel ran %s, not hier" % (r.get("algo_used") or "?")
            elif r and not ra["devices"][k]["ok"]:
                why = "devices: %s" % ra["devices"][k]["error"]
            if why:
                ent["refused"][k] = why
            ok = r is not None and not why
            ent[k + "_busbw_gbs"] = r["busbw_gbs"] if ok else None
            ent[k + "_median_us"] = r.get("median_us") if ok else None
        ent["two_over_one"] = R.ratio(ent["two_busbw_gbs"], ent["one_busbw_gbs"])
        out.append(ent)
    return out


def rails_targets(ra):
    """Issue 15: hier's busbw at 16 MiB on two rails over one rail."""
    if ra is None:
        return []
    e = next((e for e in ra["rows"] if e["size"] == TARGET_SIZE), None)
    why = None
    if e is None:
        why = "no %s row" % R.fmt_size(TARGET_SIZE)
    elif e["refused"]:
        why = "refused: " + "; ".join("%s rail(s): %s" % kv for kv in sorted(e["refused"].items()))
    elif e["two_over_one"] is None:
        why = "no %s row for both" % R.fmt_size(TARGET_SIZE)
    lk = ra["links"]
    detail = ("RDMA link, both rails at once / one rail: %s" % R.fnum(lk["both_over_one"], 3)
              if lk["both_over_one"] is not None else "")
    return [R.target("%d VMs x %d ranks: kcoll hierarchical all-reduce busbw at %s, 2 rails / "
                     "1 rail" % (ra["nodes"], ra["rpn"], R.fmt_size(TARGET_SIZE)),
                     None if why else e["two_over_one"], TARGET_MIN, ">=", "x", why, detail)]


def markdown_rails(ra):
    if ra is None:
        return []
    lk = ra["links"]
    L = ["## Rails (%d VMs × 2 NICs, %d ranks each)" % (ra["nodes"], ra["rpn"]), "",
         "The hierarchical run's VMs, each with a second NIC on its own segment (rxe1 on "
         "eth1). Every VM ran its job to the end: %s." % ("yes" if ra["vm_ok"] else "**no**"),
         "",
         "RDMA link limits at %s (ib_write_bw -b, GB/s a direction): rxe0 alone %s, rxe1 "
         "alone %s, both at once %s + %s = %s, **both / one %s**." % (
             R.fmt_size(lk["size"]) if lk["size"] else "–", R.fnum(lk["one_rail_gbs"]), R.fnum(lk["rxe1_alone_gbs"]),
             R.fnum(lk["both_rxe0_gbs"]), R.fnum(lk["both_rxe1_gbs"]), R.fnum(lk["both_gbs"]),
             R.fnum(lk["both_over_one"], 3)), ""]
    for e in lk["errors"]:
        L.append("- %s" % e)
    for k, label in (("one", "KCOLL_IFNAME=eth0"), ("two", "KCOLL_IFNAME=eth0,eth1")):
        dv = ra["devices"][k]
        L.append("- Devices with %s (`kcollctl -j comm show`): %s." % (
            label, ", ".join("rank %s %s" % (r, d) for r, d in dv["devs"]) if dv["ok"] else
            "**refused**: %s" % dv["error"]))
    for s, sysd in sorted(ra["systems"].items()):
        if not sysd["available"] or sysd["error"]:
            L.append("- %s: %s." % (s, sysd["error"]))
    refused = sorted({"%s: %s" % kv for e in ra["rows"] for kv in e["refused"].items()})
    L += ["- Rows refused: %s." % r for r in refused]
    L.append("")
    if ra["rows"]:
        L.append("All-reduce, fp32 sum, out of place, `-A hier`: busbw in GB/s and medians "
                 "(µs), one rail and two.")
        L.append("")
        L += R.md_table(["size", "1 rail", "2 rails", "2 / 1", "1 rail median",
                         "2 rails median"],
                        [[R.fmt_size(e["size"]), R.fnum(e["one_busbw_gbs"]),
                          R.fnum(e["two_busbw_gbs"]), R.fnum(e["two_over_one"], 3),
                          R.fnum(e["one_median_us"], 1), R.fnum(e["two_median_us"], 1)]
                         for e in ra["rows"]])
        L.append("")
    size = next((p["size"] for p in ra["profile"].values() if p["size"]), None)
    L.append("Profile at %s: each kcoll-perf run alone (1 warm-up and 4 timed iterations), "
             "the share of every vCPU's time in the run's wall time that each node's "
             "/proc/stat shows busy, and with what." % (R.fmt_size(size) if size else "–"))
    L.append("")
    rows = []
    for name, _ in PROFILES:
        p = ra["profile"][name]
        for u in p["nodes"] or [None]:
            rows.append([p["label"], R.fnum(p["busbw_gbs"]), p["algo_used"] or "–",
                         "node%d" % u["node"] if u else "–",
                         "%.0f" % u["wall_s"] if u else "–"] +
                        [R.fpct(u and u[k]) for k in ("busy", "user", "system", "irq")])
    L += R.md_table(["run", "busbw", "ran", "node", "wall s", "vCPUs busy", "user", "system",
                     "irq + softirq"], rows)
    L.append("")
    return L


# The interface bench/report.py calls each part of the report through.
load, targets, markdown = load_rails, rails_targets, markdown_rails
