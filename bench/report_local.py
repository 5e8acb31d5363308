# SPDX-License-Identifier: GPL-2.0-only
"""The same-host part of the `make bench` report (issue 15), used by bench/report.py.

OUTDIR/local/ is the run directory of the one VM bench/local.sh ran in (results/ written by
the VM): NRANKS ranks of kcoll-perf on kcoll's loop transport (local-kcoll.json, plain memory
and kcoll buffers, out of place), Open MPI's shared-memory path (local-mpi.json, vader + CMA)
and `kcollctl -j comm show` taken while kcoll-perf ran (comm-show.json).  As in report.py,
nothing is guessed: what is missing is "not available" with the reason.
"""
import json
import os

import report as R

KEY = "local"
# Issue 15: busbw at 16 MiB >= 1.5x Open MPI's, 8-byte median latency <= Open MPI's.
BUSBW_SIZE = 16 << 20
BUSBW_MIN = 1.5
LAT_SIZE = 8
LAT_MAX = 1.0
MPI_LABEL = "Open MPI (ob1, btl vader + CMA)"


def load_transports(res, nranks):
    """Every rank's every peer's transport from the listing bench/local.sh kept: a dict with
    peers (list of [rank, peer, transport]), all_loop and error (None when complete)."""
    out = {"peers": [], "all_loop": False, "error": None, "source": None}
    for name in ("comm-show.json", "comm-show.last"):
        text = R.read_text(os.path.join(res, name))
        if text is not None:
            out["source"] = name
            break
    if text is None:
        out["error"] = "no kcollctl comm show listing was recorded"
        return out
    try:
        comms = json.loads(text)
    except ValueError:
        out["error"] = "%s does not parse: %s" % (out["source"], R.tail(os.path.join(res, name)))
        return out
    # kcoll-perf's communicator: the id most ranks list (it is the only one in the VM).
    ids = {}
    for c in comms if isinstance(comms, list) else []:
        if isinstance(c, dict) and c.get("nranks") == nranks:
            ids.setdefault(c.get("comm_id"), []).append(c)
    ranks = max(ids.values(), key=len) if ids else []
    for c in sorted(ranks, key=lambda c: c.get("rank", -1)):
        for p in c.get("peers") or []:
            out["peers"].append([c.get("rank"), p.get("rank"), p.get("transport") or "none"])
    want = nranks * (nranks - 1)
    if len(out["peers"]) != want:
        out["error"] = "%s lists %d peers of %d ranks, not %d" % (
            out["source"], len(out["peers"]), len(ranks), want)
    elif out["source"] != "comm-show.json":
        out["error"] = "%s is incomplete" % out["source"]
    out["all_loop"] = not out["error"] and all(t == "loop" for _, _, t in out["peers"])
    return out


def load_local(outdir):
    """The same-host run, or None when OUTDIR has none (BENCH_ONLY=tcp, older reports)."""
    run = R.open_run(outdir, "local")
    if run is None:
        return None
    d, res, meta = run
    n = meta.get("ranks") or 4
    loc = {"dir": d, "meta": meta, "nranks": n, "vm_ok": R.vms_ok(d, 1),
           "systems": {s: R.load_system(res, s) for s in ("local-kcoll", "local-mpi")},
           "transports": load_transports(res, n)}
    loc["rows"] = local_rows(loc)
    return loc


def local_rows(loc):
    """Per size: kcoll on plain memory and on kcoll buffers, Open MPI; busbw and median."""
    k, m = loc["systems"]["local-kcoll"]["rows"], loc["systems"]["local-mpi"]["rows"]
    series = {"user": {r["size"]: r for r in R.pick(k, "allreduce", mem="user")},
              "kbuf": {r["size"]: r for r in R.pick(k, "allreduce", mem="kbuf")},
              "mpi": {r["size"]: r for r in R.pick(m, "allreduce", place="in")}}
    out = []
    for size in sorted(set().union(*series.values())):
        ent = {"size": size}
        for s, rows in series.items():
            r = rows.get(size)
            ent[s + "_busbw_gbs"] = r["busbw_gbs"] if r else None
            ent[s + "_median_us"] = r.get("median_us") if r else None
        for s in ("user", "kbuf"):
            ent[s + "_over_mpi"] = R.ratio(ent[s + "_busbw_gbs"], ent["mpi_busbw_gbs"])
            ent[s + "_median_over_mpi"] = R.ratio(ent[s + "_median_us"], ent["mpi_median_us"])
        out.append(ent)
    return out


def local_targets(loc):
    """Issue 15's two targets, on kcoll's plain-memory rows (like the MPI program's)."""
    if loc is None:
        return []
    n, t = loc["nranks"], []
    why = None
    for s, label in (("local-kcoll", "kcoll"), ("local-mpi", MPI_LABEL)):
        if not why and not loc["systems"][s]["available"]:
            why = "%s: not available (%s)" % (label, loc["systems"][s]["error"])
    tr = loc["transports"]
    detail = "" if tr["all_loop"] else "kcoll's peers not all on loop: %s" % (
        tr["error"] or sorted({x for _, _, x in tr["peers"]}))
    rows = {e["size"]: e for e in loc["rows"]}
    for size, key, thr, cmp, what in (
            (BUSBW_SIZE, "user_over_mpi", BUSBW_MIN, ">=", "all-reduce busbw at 16 MiB"),
            (LAT_SIZE, "user_median_over_mpi", LAT_MAX, "<=",
             "8-byte all-reduce median latency")):
        v, w = None, why
        if not w and (size not in rows or rows[size][key] is None):
            w = "no %s all-reduce row for both" % R.fmt_size(size)
        elif not w:
            v = rows[size][key]
        t.append(R.target("Same host, %d ranks: kcoll %s / %s" % (n, what, MPI_LABEL),
                          v, thr, cmp, "x", w, detail))
    return t


def markdown_local(loc):
    if loc is None:
        return []
    m, n, tr = loc["meta"], loc["nranks"], loc["transports"]
    L = ["## Same host (1 VM, %s vCPUs, %d ranks)" % (m.get("vcpus", "?"), n), "",
         "%d ranks in one VM × %s vCPUs, %s MiB, guest kernel %s, clocksource %s. The VM ran "
         "its job to the end: %s." % (n, m.get("vcpus", "?"), m.get("mem_mb", "?"),
                                      m.get("kernel", "?"), m.get("clocksource", "?"),
                                      "yes" if loc["vm_ok"] else "**no**"), ""]
    seen = sorted({x for _, _, x in tr["peers"]})
    if tr["all_loop"]:
        L.append("kcoll's transport (`kcollctl -j comm show` while kcoll-perf ran): every one "
                 "of the %d peers of the %d ranks on `loop`." % (len(tr["peers"]), n))
    else:
        L.append("kcoll's transport (`kcollctl -j comm show` while kcoll-perf ran): **not "
                 "all loop**: %s." % (tr["error"] or "seen: " + ", ".join(seen)))
    L.append("")
    for s, label in (("local-kcoll", "kcoll (kcoll-perf)"), ("local-mpi", MPI_LABEL)):
        sysd = loc["systems"][s]
        if not sysd["available"]:
            L.append("- %s: %s: not available (error: %s)." % (label, s, sysd["error"]))
        elif sysd["error"]:
            L.append("- %s: %d rows, then failed: %s." % (label, len(sysd["rows"]),
                                                           sysd["error"]))
    if any(not loc["systems"][s]["available"] or loc["systems"][s]["error"]
           for s in loc["systems"]):
        L.append("")
    if not loc["rows"]:
        return L
    L.append("All-reduce, fp32 sum: kcoll out of place on plain memory and on kcoll buffers "
             "(`kcoll_buf_create()`), Open MPI in place; busbw in GB/s, ratios busbw over "
             "busbw (> 1: kcoll faster), then the median times (µs).")
    L.append("")
    rows = []
    for e in loc["rows"]:
        rows.append([R.fmt_size(e["size"]), R.fnum(e["user_busbw_gbs"]),
                     R.fnum(e["kbuf_busbw_gbs"]), R.fnum(e["mpi_busbw_gbs"]),
                     R.fnum(e["user_over_mpi"], 3), R.fnum(e["kbuf_over_mpi"], 3),
                     R.fnum(e["user_median_us"], 1), R.fnum(e["kbuf_median_us"], 1),
                     R.fnum(e["mpi_median_us"], 1)])
    L += R.md_table(["size", "kcoll, plain memory", "kcoll, buffers", "Open MPI",
                     "plain / Open MPI", "buffers / Open MPI", "kcoll plain median",
                     "kcoll buffers median", "Open MPI median"], rows)
    L.append("")
    return L


# The interface bench/report.py calls each part of the report through.
load, targets, markdown = load_local, local_targets, markdown_local
