# SPDX-License-Identifier: GPL-2.0-only
"""The hierarchical part of the `make bench` report (issue 15), used by bench/report.py.

OUTDIR/hier/ is the run directory of the 2 VMs bench/hier.sh ran on (2 vCPUs, 2 ranks
each, over Soft-RoCE): kcoll-perf's all-reduce with -A hier, -A ring and -A auto
(hier-kcoll-ALGO.json, each row with the algorithm the kernel ran, algo_used), Open MPI
with ob1 and btl tcp,vader,self (hier-mpi.json), every node's `kcollctl -j comm show`
taken while each kcoll-perf ran (hier-comm-ALGO-nodeI.json) and the link limits (perftest,
iperf3) of the same run.  A hierarchical row is counted only when the kernel says it ran
the hierarchical schedule and every rank's locality shows the hosts and ranks per host
the run was made of; a ring row only when the kernel ran the ring.  Otherwise the row is
refused, with the reason, and the target is "not measured".
"""
import json
import os

import report as R

KEY = "hier"
ALGOS = ("hier", "ring", "auto")
# Issue 15: hierarchical busbw at 16 MiB >= 1.3x kcoll's flat ring on the same VMs.
TARGET_SIZE = 16 << 20
TARGET_MIN = 1.3
MPI_LABEL = "Open MPI (ob1, btl tcp,vader,self)"


def load_listing(res, name, nodes, n):
    """Every rank's communicator of the N-rank run from the nodes' `kcollctl -j comm show`
    listings taken while kcoll-perf NAME ran (hier-comm-NAME-nodeI.json, or .last): ({rank:
    comm}, None), or (None, why not).  kcoll-perf's communicator: the id most ranks list."""
    comms = []
    for i in range(nodes):
        base = os.path.join(res, "hier-comm-%s-node%d" % (name, i))
        text = R.read_text(base + ".json")
        if text is None:
            text = R.read_text(base + ".last")
        if text is None:
            return None, "node%d: no kcollctl comm show listing" % i
        try:
            got = json.loads(text)
        except ValueError:
            return None, "node%d: the listing does not parse: %s" % (i, text.strip()[-120:])
        comms += [c for c in got if isinstance(c, dict)] if isinstance(got, list) else []
    ids = {}
    for c in comms:
        if c.get("nranks") == n:
            ids.setdefault(c.get("comm_id"), {})[c.get("rank")] = c
    byrank = max(ids.values(), key=len) if ids else {}
    if len(byrank) != n:
        return None, "the listings show %d of the %d ranks" % (len(byrank), n)
    return byrank, None


def load_locality(res, algo, nodes, rpn):
    """Every rank's locality from the nodes' listings taken while kcoll-perf -A ALGO ran:
    ranks ([rank, known, hosts, local_size, host_groups]), ok, error (None when every rank
    shows NODES hosts of RPN consecutive ranks)."""
    n = nodes * rpn
    want = [list(range(h * rpn, (h + 1) * rpn)) for h in range(nodes)]
    out = {"ranks": [], "ok": False, "error": None}
    byrank, out["error"] = load_listing(res, algo, nodes, n)
    if byrank is None:
        return out
    for r in sorted(byrank, key=lambda r: -1 if r is None else r):
        loc = byrank[r].get("locality") or {}
        out["ranks"].append([r, loc.get("known"), loc.get("hosts"), loc.get("local_size"),
                             loc.get("host_groups")])
    for r, known, hosts, lsize, groups in out["ranks"]:
        if known is not True:
            out["error"] = "rank %s: no locality given to the kernel" % r
        elif hosts != nodes or lsize != rpn or groups != want:
            out["error"] = "rank %s: %s hosts of %s ranks, groups %s (want %d x %d, %s)" % (
                r, hosts, lsize, groups, nodes, rpn, want)
        if out["error"]:
            return out
    out["ok"] = True
    return out


def load_hier(outdir):
    """The hierarchical run, or None when OUTDIR has none (another BENCH_ONLY, older reports)."""
    run = R.open_run(outdir, "hier")
    if run is None:
        return None
    d, res, meta = run
    nodes = meta.get("nodes") or 2
    rpn = meta.get("ranks_per_node") or 2
    names = ["hier-kcoll-" + a for a in ALGOS] + ["hier-mpi"]
    h = {"dir": d, "meta": meta, "nodes": nodes, "rpn": rpn, "nranks": nodes * rpn,
         "vm_ok": R.vms_ok(d, nodes),
         "systems": {s: R.load_system(res, s) for s in names},
         "link": R.load_link(res), "tcp_link": R.load_iperf(res),
         "locality": {a: load_locality(res, a, nodes, rpn) for a in ALGOS}}
    h["rows"] = hier_rows(h)
    return h


def refusal(h, algo, row):
    """Why a row of kcoll-perf -A ALGO does not count (None: it does): the kernel must have
    run ALGO (auto: anything), and the hierarchical schedule on the run's locality."""
    used = row.get("algo_used")
    if algo != "auto" and used != algo:
        return "the kernel ran %s, not %s" % (used or "an unreported algorithm", algo)
    if algo == "hier" and not h["locality"]["hier"]["ok"]:
        return "locality: %s" % h["locality"]["hier"]["error"]
    return None


def hier_rows(h):
    """Per size: busbw and median of each kcoll algorithm and of Open MPI, what auto ran,
    the refusals, hier over ring and over Open MPI, each over the RDMA link limit."""
    series = {a: {r["size"]: r for r in R.pick(h["systems"]["hier-kcoll-" + a]["rows"],
                                               "allreduce")} for a in ALGOS}
    series["mpi"] = {r["size"]: r for r in R.pick(h["systems"]["hier-mpi"]["rows"],
                                                  "allreduce", place="in")}
    lim = R.link_limit(h)
    out = []
    for size in sorted(set().union(*series.values())):
        ent = {"size": size, "refused": {}}
        for s, rows in series.items():
            r = rows.get(size)
            why = refusal(h, s, r) if r and s in ALGOS else None
            if why:
                ent["refused"][s] = why
            ok = r is not None and not why
            ent[s + "_busbw_gbs"] = r["busbw_gbs"] if ok else None
            ent[s + "_median_us"] = r.get("median_us") if ok else None
            if s in ALGOS:
                ent[s + "_algo_used"] = r.get("algo_used") if r else None
        ent["hier_over_ring"] = R.ratio(ent["hier_busbw_gbs"], ent["ring_busbw_gbs"])
        ent["hier_over_mpi"] = R.ratio(ent["hier_busbw_gbs"], ent["mpi_busbw_gbs"])
        ent["hier_over_link"] = R.ratio(ent["hier_busbw_gbs"],
                                        lim["bi_per_dir_gbs"] if lim else None)
        out.append(ent)
    return out


def hier_targets(h):
    """Issue 15: the hierarchical all-reduce's busbw at 16 MiB over the flat ring's."""
    if h is None:
        return []
    why = None
    for a in ("hier", "ring"):
        s = h["systems"]["hier-kcoll-" + a]
        if not why and not s["available"]:
            why = "kcoll -A %s: not available (%s)" % (a, s["error"])
    e = next((e for e in h["rows"] if e["size"] == TARGET_SIZE), None)
    bad = e and {a: w for a, w in e["refused"].items() if a in ("hier", "ring")}
    if why:
        pass
    elif e is None:
        why = "no %s all-reduce row" % R.fmt_size(TARGET_SIZE)
    elif bad:
        why = "refused: " + "; ".join("-A %s: %s" % kv for kv in sorted(bad.items()))
    elif e["hier_over_ring"] is None:
        why = "no %s row for both" % R.fmt_size(TARGET_SIZE)
    lim = R.link_limit(h)
    detail = ("RDMA link limit %s GB/s a direction" % R.fnum(lim["bi_per_dir_gbs"])
              if lim else "")
    return [R.target("%d VMs x %d ranks: kcoll hierarchical all-reduce busbw at %s / kcoll "
                     "flat ring" % (h["nodes"], h["rpn"], R.fmt_size(TARGET_SIZE)),
                     None if why else e["hier_over_ring"], TARGET_MIN, ">=", "x", why, detail)]


def markdown_hier(h):
    if h is None:
        return []
    m, n = h["meta"], h["nranks"]
    L = ["## Hierarchical (%d VMs × %s vCPUs, %d ranks each)" % (h["nodes"],
                                                                m.get("vcpus", "?"), h["rpn"]),
         "",
         "%d VMs × %s vCPUs, %s MiB, guest kernel %s, rxe active MTU %s; node I holds ranks "
         "%d·I to %d·I+%d. Every VM ran its job to the end: %s." % (
             h["nodes"], m.get("vcpus", "?"), m.get("mem_mb", "?"), m.get("kernel", "?"),
             m.get("rxe_active_mtu", "?"), h["rpn"], h["rpn"], h["rpn"] - 1,
             "yes" if h["vm_ok"] else "**no**"), ""]
    lim, tl = R.link_limit(h), h["tcp_link"]
    L.append("Link limits in this run: RDMA (ib_write_bw -b, per direction, best size %s) %s "
             "GB/s; TCP (iperf3 --bidir, per direction) %s GB/s." % (
                 R.fmt_size(lim["size"]) if lim else "–",
                 R.fnum(lim["bi_per_dir_gbs"]) if lim else "–", R.fnum(tl["bidir_per_dir_gbs"])))
    L.append("")
    for e in h["link"]["errors"] + tl["errors"]:
        L.append("- %s" % e)
    for a in ALGOS:
        loc = h["locality"][a]
        L.append("- Locality while `-A %s` ran (`kcollctl -j comm show` on every node): %s." % (
            a, "every one of the %d ranks in %d hosts of %d consecutive ranks" %
            (n, h["nodes"], h["rpn"]) if loc["ok"] else "**refused**: %s" % loc["error"]))
    for s, sysd in sorted(h["systems"].items()):
        if not sysd["available"]:
            L.append("- %s: not available (error: %s)." % (s, sysd["error"]))
        elif sysd["error"]:
            L.append("- %s: %d rows, then failed: %s." % (s, len(sysd["rows"]), sysd["error"]))
    L.append("")
    refused = sorted({"%s: %s" % kv for e in h["rows"] for kv in e["refused"].items()})
    for r in refused:
        L.append("- Rows refused: %s." % r)
    if refused:
        L.append("")
    if not h["rows"]:
        return L
    L.append("All-reduce, fp32 sum: kcoll out of place with `-A hier`, `-A ring` and `-A auto` "
             "(the module's choice: the algorithm it ran), Open MPI in place; busbw in GB/s, "
             "ratios busbw over busbw, then the median times (µs); – where a row is missing "
             "or refused.")
    L.append("")
    rows = []
    for e in h["rows"]:
        rows.append([R.fmt_size(e["size"]), R.fnum(e["hier_busbw_gbs"]),
                     R.fnum(e["ring_busbw_gbs"]), R.fnum(e["auto_busbw_gbs"]),
                     e["auto_algo_used"] or "–", R.fnum(e["mpi_busbw_gbs"]),
                     R.fnum(e["hier_over_ring"], 3), R.fnum(e["hier_over_mpi"], 3),
                     R.fnum(e["hier_over_link"], 3), R.fnum(e["hier_median_us"], 1),
                     R.fnum(e["ring_median_us"], 1), R.fnum(e["mpi_median_us"], 1)])
    L += R.md_table(["size", "hier", "ring", "auto", "auto ran", "Open MPI", "hier / ring",
                     "hier / Open MPI", "hier / RDMA link", "hier median", "ring median",
                     "Open MPI median"], rows)
    L.append("")
    return L


# The interface bench/report.py calls each part of the report through.
load, targets, markdown = load_hier, hier_targets, markdown_hier
