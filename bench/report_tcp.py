# SPDX-License-Identifier: GPL-2.0-only
"""The TCP and PyTorch parts of the `make bench` report (issues 14 and 16), used by
bench/report.py: kcoll over TCP against Gloo, Open MPI over TCP and the iperf3 link, and
kcoll's PyTorch backend against Gloo, with their targets and tables."""

import report as R

TCP_PEERS = [("gloo", "Gloo"), ("mpi-tcp", "Open MPI TCP")]
TORCH = ["torch-kcoll", "torch-kcoll-tcp"]
TORCH_SIZES = (8, 1 << 20, 16 << 20)


def tcp_rows(cl):
    """kcoll over TCP's all-reduce against Gloo, Open MPI over TCP and iperf3, per size."""
    k = cl["systems"]["kcoll-tcp"]
    link = cl["tcp_link"]["bidir_per_dir_gbs"]
    out = []
    for kr in R.pick(k["rows"], "allreduce"):
        ent = {"size": kr["size"], "kcoll_tcp_busbw_gbs": kr["busbw_gbs"],
               "kcoll_tcp_median_us": kr.get("median_us"),
               "kcoll_tcp_over_iperf3_bidir": R.ratio(kr["busbw_gbs"], link)}
        for peer, _ in TCP_PEERS:
            prow = next((r for r in R.pick(cl["systems"][peer]["rows"], "allreduce")
                         if r["size"] == kr["size"]), None)
            ent[peer + "_busbw_gbs"] = prow["busbw_gbs"] if prow else None
            ent[peer + "_median_us"] = prow.get("median_us") if prow else None
            ent["kcoll_tcp_over_" + peer] = R.ratio(kr["busbw_gbs"], ent[peer + "_busbw_gbs"])
        out.append(ent)
    return out


# CPU use per operation of what runs over each link (issue 14's profile): label, system.
CPU_SYSTEMS = [("kcoll/TCP", "kcoll-tcp"), ("Gloo", "gloo"), ("Open MPI TCP", "mpi-tcp"),
               ("kcoll (RDMA)", "kcoll")]
CPU_SIZES = (1 << 20, 16 << 20)


def tcp_cpu(cl):
    """Per system and size of CPU_SIZES: time per operation, the node's busy CPU per
    operation (node_cpu_us: every CPU of the node, kernel threads and softirqs included,
    the mean over nodes) and the share of the VM's vCPUs that was, or None where a row or
    its figure is missing."""
    vcpus = cl["meta"].get("vcpus") or 1
    out = []
    for label, name in CPU_SYSTEMS:
        rows = {r["size"]: r for r in R.pick(cl["systems"][name]["rows"], "allreduce")}
        for size in CPU_SIZES:
            r = rows.get(size) or {}
            node = r.get("node_cpu_us")
            out.append({"system": name, "label": label, "size": size,
                        "time_us": r.get("time_us"), "node_cpu_us": node,
                        "busy": R.ratio(node, r["time_us"] * vcpus) if r and node else None})
    return out


def compute_torch(cl):
    """torch+kcoll over torch+Gloo (busbw over busbw, = Gloo's time over kcoll's) at
    TORCH_SIZES: one row per size, None where a side has no row."""
    rows = {name: {r["size"]: r for r in R.pick(cl["systems"][name]["rows"], "allreduce")}
            for name in ["gloo"] + TORCH}
    out = []
    for size in TORCH_SIZES:
        g = rows["gloo"].get(size)
        ent = {"size": size, "gloo_time_us": g["time_us"] if g else None}
        for name in TORCH:
            k = rows[name].get(size)
            ent[name + "_time_us"] = k["time_us"] if k else None
            ent[name + "_over_gloo"] = R.ratio(k["busbw_gbs"], g["busbw_gbs"]) if k and g else None
        out.append(ent)
    return out


def tcp_targets(cl):
    """Issue 14's targets for kcoll over TCP on this cluster size."""
    n, t = cl["nodes"], []
    k = cl["systems"]["kcoll-tcp"]
    kmiss = None if k["available"] else "kcoll over TCP: not available (%s)" % k["error"]
    rows = {e["size"]: e for e in cl.get("tcp", [])}
    for size in (1 << 20, 16 << 20):
        for peer, label in TCP_PEERS:
            v, why = None, kmiss
            ps = cl["systems"][peer]
            if not why and not ps["available"]:
                why = "%s: not available (%s)" % (label, ps["error"])
            elif not why and (size not in rows or rows[size]["kcoll_tcp_over_" + peer] is None):
                why = "no %s all-reduce row for both" % R.fmt_size(size)
            elif not why:
                v = rows[size]["kcoll_tcp_over_" + peer]
            t.append(R.target("%d VMs: kcoll/TCP all-reduce busbw at %s / %s" %
                            (n, R.fmt_size(size), label), v, 2.0, ">=", "x", why))
    v, why = None, kmiss
    if not why and cl["tcp_link"]["bidir_per_dir_gbs"] is None:
        why = "no iperf3 --bidir figure"
    elif not why and (16 << 20) not in rows:
        why = "no 16 MiB all-reduce row"
    elif not why:
        v = rows[16 << 20]["kcoll_tcp_over_iperf3_bidir"]
    t.append(R.target("%d VMs: kcoll/TCP all-reduce busbw at 16 MiB / iperf3 bidirectional "
                    "per direction" % n, v, 0.7, ">=", "x", why))
    v, why = None, kmiss
    if not why and not cl["systems"]["mpi-tcp"]["available"]:
        why = "Open MPI TCP: not available (%s)" % cl["systems"]["mpi-tcp"]["error"]
    elif not why and (8 not in rows or not rows[8]["mpi-tcp_median_us"]):
        why = "no 8 B all-reduce row for both"
    elif not why:
        v = rows[8]["kcoll_tcp_median_us"] / rows[8]["mpi-tcp_median_us"]
    t.append(R.target("%d VMs: kcoll/TCP 8-byte all-reduce median latency / Open MPI TCP's" % n,
                    v, 1.0, "<=", "x", why))
    return t


def torch_targets(cl):
    """torch+kcoll at least 2x torch+Gloo at 1 and 16 MiB (issue 16)."""
    t = []
    tk, gl = cl["systems"]["torch-kcoll"], cl["systems"]["gloo"]
    for ent in cl["torch"]:
        if ent["size"] < 1 << 20:
            continue
        why = None
        for s, label in ((tk, "torch+kcoll"), (gl, "torch+Gloo")):
            if not why and not s["available"]:
                why = "%s: not available (%s)" % (label, s["error"])
        if not why and ent["torch-kcoll_over_gloo"] is None:
            why = "no %s all-reduce row for both" % R.fmt_size(ent["size"])
        t.append(R.target("%d VMs: torch+kcoll all-reduce busbw at %s / torch+Gloo" %
                        (cl["nodes"], R.fmt_size(ent["size"])), ent["torch-kcoll_over_gloo"],
                        2.0, ">=", "x", why))
    return t


def markdown_tcp(cl):
    """One cluster's TCP comparison: the TCP link, then kcoll over TCP against the others."""
    L = ["### kcoll over TCP against Gloo, Open MPI over TCP and the TCP link", ""]
    tl = cl["tcp_link"]
    L.append("TCP link limit (iperf3, one stream, node1 → node0): %s GB/s one way; with "
             "`--bidir` %s GB/s both directions, %s GB/s per direction." %
             (R.fnum(tl["uni_gbs"]), R.fnum(tl["bidir_total_gbs"]), R.fnum(tl["bidir_per_dir_gbs"])))
    L.append("")
    for e in tl["errors"]:
        L.append("- %s" % e)
    if tl["errors"]:
        L.append("")
    if not cl["tcp"]:
        k = cl["systems"]["kcoll-tcp"]
        L.append("kcoll over TCP: not available (error: %s)." % k["error"])
        L.append("")
        return L
    rows = []
    for e in cl["tcp"]:
        rows.append([R.fmt_size(e["size"]), R.fnum(e["kcoll_tcp_busbw_gbs"]),
                     R.fnum(e["gloo_busbw_gbs"]), R.fnum(e["mpi-tcp_busbw_gbs"]),
                     R.fnum(e["kcoll_tcp_over_gloo"], 3), R.fnum(e["kcoll_tcp_over_mpi-tcp"], 3),
                     R.fnum(e["kcoll_tcp_over_iperf3_bidir"], 3),
                     R.fnum(e["kcoll_tcp_median_us"], 2), R.fnum(e["mpi-tcp_median_us"], 2)])
    L.append("All-reduce (fp32, sum, out of place), busbw in GB/s; ratios > 1: kcoll over TCP "
             "faster; the last columns are the median times (µs).")
    L.append("")
    L += R.md_table(["size", "kcoll/TCP", "Gloo", "Open MPI TCP", "kcoll/TCP / Gloo",
                   "kcoll/TCP / Open MPI TCP", "kcoll/TCP / iperf3 -bidir per dir.",
                   "kcoll/TCP median", "Open MPI TCP median"], rows)
    L.append("")
    cpu = cl.get("tcp_cpu") or []
    if any(e["busy"] is not None for e in cpu):
        L.append("Where the time goes: each node's busy CPU per all-reduce (/proc/stat: user, "
                 "system, interrupts and softirqs of every vCPU, the mean over nodes; tick "
                 "resolution) and the share of the VM's %s vCPU(s) that was busy over the "
                 "operation's time; – where a system has no figure." %
                 (cl["meta"].get("vcpus") or "?"))
        L.append("")
        L += R.md_table(["system", "size", "time / op (µs)", "node CPU / op (µs)",
                         "vCPUs busy"],
                        [[e["label"], R.fmt_size(e["size"]), R.fnum(e["time_us"], 1),
                          R.fnum(e["node_cpu_us"], 1),
                          R.fpct(e["busy"])]
                         for e in cpu])
        L.append("")
    return L


def torch_markdown(cl):
    if not any(e["gloo_time_us"] is not None for e in cl["torch"]):
        return []
    L = ["### PyTorch: kcoll's backend against Gloo (all_reduce, fp32 sum)", "",
         "The same script and process (`bench/gloo_bench.py`), each size timed on each "
         "backend in turn; ratio = Gloo's time / kcoll's (> 1: kcoll faster).", ""]
    rows = [[R.fmt_size(e["size"]), R.fnum(e["gloo_time_us"], 1)] +
            sum(([R.fnum(e[n + "_time_us"], 1), R.fnum(e[n + "_over_gloo"], 3)] for n in TORCH), [])
            for e in cl["torch"]]
    L += R.md_table(["size", "Gloo (µs)", "torch+kcoll (µs)", "ratio",
                   "torch+kcoll, TCP transport (µs)", "ratio"], rows)
    return L + [""]
