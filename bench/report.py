#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn the results of `make bench` (bench/run.sh) into report.md, report.json and busbw.png.

    bench/report.py OUTDIR

OUTDIR holds one directory per cluster size, n<N>/ (the rig's run directory, whose results/
the VMs wrote), local/ and hier/ (bench/report_local.py, bench/report_hier.py and, when the
hierarchical VMs had two NICs, bench/report_rails.py), plus host.json
and reduce_bench.json from the host.  Only the Python standard library is used; the plot is
drawn by gnuplot when it is installed.

Nothing here is a measurement: every figure comes from the files, and a system whose files are
missing or hold an error is reported as "not available" with that error, never guessed.
"""
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys

# The same-host, hierarchical and rails parts (issue 15), each with KEY, load(), targets()
# and markdown(); they import this module for the helpers below.
import report_hier
import report_rails
import report_tcp
import report_local

PARTS = (report_local, report_hier, report_rails)

SYSTEMS = [
    ("kcoll", "kcoll (kcoll-perf)"),
    ("mpi-ucx", "Open MPI over UCX (rxe0:1)"),
    ("mpi-tcp", "Open MPI over TCP (ob1, btl tcp)"),
    ("gloo", "PyTorch Gloo over TCP"),
    ("kcoll-tcp", "kcoll over kernel TCP (KCOLL_TRANSPORT=tcp)"),
    ("torch-kcoll", "PyTorch on kcoll (python/kcoll, RDMA)"),
    ("torch-kcoll-tcp", "PyTorch on kcoll, kernel TCP transport"),
]
# What kcoll (over RDMA) is compared with; kcoll-tcp has its own comparison, the PyTorch
# backends theirs with Gloo (report_tcp.py).
PEERS = [s for s in SYSTEMS if s[0] in ("mpi-ucx", "mpi-tcp", "gloo")]
# kcoll over TCP against the TCP systems on the same VMs (issue 14, item 4).
COLLS = ["allreduce", "allgather", "reduce_scatter", "broadcast", "alltoall"]
TARGET_STATES = ("met", "missed", "not measured")


def fmt_size(b):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div and b % div == 0:
            return "%d %s" % (b // div, unit)
    return "%d B" % b


def fnum(v, digits=4):
    if v is None:
        return "–"
    if isinstance(v, float):
        if v != 0 and abs(v) < 10 ** -digits:
            return "%.2e" % v
        return "%.*f" % (digits, v)
    return str(v)


def fpct(v):
    """A share (0.25) as a percentage ("25 %"), "–" for None."""
    return "–" if v is None else "%.0f %%" % (100 * v)


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def load_jsonl(path):
    """JSON objects, one per line; lines that do not parse are counted, not fatal."""
    rows, bad = [], 0
    text = read_text(path)
    if text is None:
        return None, 0
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(obj, dict):
            rows.append(obj)
        else:
            bad += 1
    return rows, bad


def numeric_rows(text, mincols):
    """Lines of perftest output made only of numbers (its result lines)."""
    out = []
    for line in (text or "").splitlines():
        tok = line.split()
        if len(tok) < mincols:
            continue
        try:
            out.append([float(t) for t in tok])
        except ValueError:
            continue
    return out


def parse_bw(text):
    """ib_write_bw --report_gbits: #bytes #iterations BW peak BW average MsgRate."""
    rows = numeric_rows(text, 5)
    if not rows:
        return None
    r = rows[-1]
    return {"size": int(r[0]), "iters": int(r[1]), "peak_gbps": r[2], "avg_gbps": r[3],
            "avg_gbs": r[3] / 8.0, "msg_rate_mpps": r[4]}


def parse_lat(text):
    """ib_write_lat: #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%."""
    rows = numeric_rows(text, 7)
    if not rows:
        return None
    r = rows[-1]
    d = {"size": int(r[0]), "iters": int(r[1]), "t_min_us": r[2], "t_max_us": r[3],
         "t_typical_us": r[4], "t_avg_us": r[5], "t_stdev_us": r[6]}
    if len(r) >= 9:
        d["p99_us"], d["p999_us"] = r[7], r[8]
    return d


def tail(path, n=3):
    text = read_text(path)
    if not text:
        return ""
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:])


def load_link(res):
    pdir = os.path.join(res, "perftest")
    link = {"bw": [], "lat": None, "errors": []}
    sizes = sorted(int(m.group(1)) for m in
                   (re.search(r"/bw-uni-(\d+)\.txt$", p)
                    for p in glob.glob(os.path.join(pdir, "bw-uni-*.txt"))) if m)
    for size in sizes:
        path = os.path.join(pdir, "bw-uni-%d.txt" % size)
        uni = parse_bw(read_text(path))
        bpath = os.path.join(pdir, "bw-bi-%d.txt" % size)
        bi = parse_bw(read_text(bpath))
        if not uni:
            link["errors"].append("ib_write_bw %s: %s" % (fmt_size(size), tail(path) or "no output"))
        if not bi:
            link["errors"].append("ib_write_bw -b %s: %s" % (fmt_size(size), tail(bpath) or "no output"))
        entry = {"size": size,
                 "uni_gbs": uni["avg_gbs"] if uni else None,
                 # perftest -b reports both directions added up
                 "bi_total_gbs": bi["avg_gbs"] if bi else None,
                 "bi_per_dir_gbs": bi["avg_gbs"] / 2 if bi else None}
        link["bw"].append(entry)
    lat_path = os.path.join(pdir, "lat-8.txt")
    lat = parse_lat(read_text(lat_path))
    if lat:
        link["lat"] = lat
    elif os.path.exists(lat_path):
        link["errors"].append("ib_write_lat: %s" % (tail(lat_path) or "no output"))
    else:
        link["errors"].append("ib_write_lat: not run")
    return link


def load_iperf(res):
    """iperf3 -J between node0 and node1 (bench/node.sh): uni- and bidirectional GB/s, the
    bidirectional figure per direction (the mean of the two directions' received rates)."""
    out = {"uni_gbs": None, "bidir_per_dir_gbs": None, "bidir_total_gbs": None, "errors": []}
    for run in ("uni", "bidir"):
        path = os.path.join(res, "iperf3", run + ".json")
        text = read_text(path)
        if text is None:
            out["errors"].append("iperf3 %s: not run" % run)
            continue
        try:
            end = json.loads(text[text.index("{"):]).get("end", {})
        except ValueError:
            out["errors"].append("iperf3 %s: %s" % (run, tail(path) or "no output"))
            continue
        fwd = end.get("sum_received", {}).get("bits_per_second")
        if run == "uni":
            out["uni_gbs"] = fwd / 8e9 if fwd else None
        else:
            rev = end.get("sum_received_bidir_reverse", {}).get("bits_per_second")
            if fwd and rev:
                out["bidir_total_gbs"] = (fwd + rev) / 8e9
                out["bidir_per_dir_gbs"] = (fwd + rev) / 2 / 8e9
        if (out["uni_gbs"] if run == "uni" else out["bidir_per_dir_gbs"]) is None:
            out["errors"].append("iperf3 %s: no result (%s)" % (run, tail(path, 1)))
    return out


def load_system(res, name):
    rows, bad = load_jsonl(os.path.join(res, name + ".json"))
    rc_text = read_text(os.path.join(res, name + ".rc"))
    rc = int(rc_text.strip()) if rc_text and rc_text.strip().lstrip("-").isdigit() else None
    sysd = {"name": name, "available": False, "rows": [], "error": None, "exit_status": rc,
            "bad_lines": bad, "meta": {}}
    if rows is None:
        outs = sorted(glob.glob(os.path.join(res, name + "*.out")))
        why = tail(outs[0]) if outs else ""
        sysd["error"] = ("did not run" if rc is None else "exit status %d" % rc) + \
            (": " + why if why else "")
        return sysd
    errors = [r for r in rows if "error" in r]
    sysd["meta"] = next((r for r in rows if r.get("meta")), {})
    sysd["rows"] = [r for r in rows if "error" not in r and not r.get("meta")]
    if errors:
        e = errors[0]
        sysd["error"] = "%s (errno %s)" % (e.get("error"), e.get("errno", "?"))
    elif not sysd["rows"]:
        outs = sorted(glob.glob(os.path.join(res, name + "*.out")))
        sysd["error"] = "no result rows" + (" (exit status %d)" % rc if rc else "") + \
            (": " + tail(outs[0]) if outs else "")
    sysd["available"] = bool(sysd["rows"])
    return sysd


def pick(rows, coll, place="out", mode="blocking", mem="user", dtype="fp32", op=None):
    """Rows of one collective, one row per size (kcoll-perf's rows carry more keys)."""
    out = {}
    for r in rows:
        if r.get("coll") != coll or r.get("dtype", dtype) != dtype:
            continue
        if r.get("place", place) != place or r.get("mode", mode) != mode:
            continue
        if r.get("mem", mem) != mem:
            continue
        if op and r.get("op") not in (op, None):
            continue
        out.setdefault(r["size"], r)
    return [out[k] for k in sorted(out)]


def read_json(path):
    """PATH's JSON object, or {} when it is missing or not JSON (a run cut short)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def open_run(outdir, name):
    """OUTDIR/NAME/ (a rig run directory), its results/ and their meta.json, or None."""
    d = os.path.join(outdir, name)
    if not os.path.isdir(d):
        return None
    res = os.path.join(d, "results")
    return d, res, read_json(os.path.join(res, "meta.json"))


def vms_ok(d, nodes):
    """Every VM of run directory D ran its job to the end (rig/cluster.sh's job.rc)."""
    return all(os.path.exists(os.path.join(d, "node%d" % i, "job.rc")) for i in range(nodes))


def load_cluster(d):
    res = os.path.join(d, "results")
    meta = read_json(os.path.join(res, "meta.json"))
    nodes = meta.get("nodes") or int(re.findall(r"n(\d+)$", d.rstrip("/"))[0])
    cl = {"nodes": nodes, "dir": d, "meta": meta, "link": load_link(res),
          "tcp_link": load_iperf(res), "systems": {}}
    for name, _ in SYSTEMS:
        cl["systems"][name] = load_system(res, name)
    cl["vm_ok"] = vms_ok(d, nodes)
    return cl


def link_at(cl, size):
    for e in cl["link"]["bw"]:
        if e["size"] == size:
            return e
    return None


def link_limit(cl):
    """The link limit the targets use: the best per-direction figure of ib_write_bw -b over
    the message sizes measured (large messages are slower under TCG, not faster)."""
    best = None
    for e in cl["link"]["bw"]:
        if e["bi_per_dir_gbs"] is not None and (best is None or
                                                e["bi_per_dir_gbs"] > best["bi_per_dir_gbs"]):
            best = e
    return best


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def compute_ratios(cl):
    """kcoll / link and kcoll / each peer, per collective and size (busbw over busbw)."""
    out = []
    k = cl["systems"]["kcoll"]
    if not k["available"]:
        return out
    for coll in COLLS:
        krows = pick(k["rows"], coll)
        for kr in krows:
            ent = {"coll": coll, "size": kr["size"], "kcoll_busbw_gbs": kr["busbw_gbs"]}
            ln = link_at(cl, kr["size"])
            ent["kcoll_over_link_bidir"] = ratio(kr["busbw_gbs"], ln["bi_per_dir_gbs"]) if ln else None
            ent["kcoll_over_link_uni"] = ratio(kr["busbw_gbs"], ln["uni_gbs"]) if ln else None
            for peer, _ in PEERS:
                ps = cl["systems"][peer]
                prow = next((r for r in pick(ps["rows"], coll) if r["size"] == kr["size"]), None)
                ent["kcoll_over_" + peer] = ratio(kr["busbw_gbs"], prow["busbw_gbs"]) if prow else None
            out.append(ent)
    return out


def target(name, value, threshold, cmp, unit, why_missing=None, detail=""):
    if value is None:
        return {"target": name, "value": None, "threshold": threshold, "status": "not measured",
                "detail": why_missing or detail}
    ok = value >= threshold if cmp == ">=" else value <= threshold
    return {"target": name, "value": value, "threshold": threshold, "unit": unit,
            "status": "met" if ok else "missed", "detail": detail}


def compute_targets(clusters, kernels):
    t = []
    for cl in clusters:
        n = cl["nodes"]
        k = cl["systems"]["kcoll"]
        kmiss = None if k["available"] else "kcoll: not available (%s)" % k["error"]
        ar = {r["size"]: r for r in pick(k["rows"], "allreduce")} if k["available"] else {}
        lim = link_limit(cl)
        if n in (2, 4):
            thr = 0.90 if n == 2 else 0.80
            v, why = None, kmiss
            if not why and lim is None:
                why = "no bidirectional ib_write_bw figure"
            elif not why and (16 << 20) not in ar:
                why = "no 16 MiB all-reduce row"
            elif not why:
                v = ar[16 << 20]["busbw_gbs"] / lim["bi_per_dir_gbs"]
            t.append(target("%d VMs: all-reduce busbw at 16 MiB / bidirectional per-direction "
                            "ib_write_bw (best: %s messages)" % (n, fmt_size(lim["size"]) if lim else "?"),
                            v, thr, ">=", "x", why))
        ucx = cl["systems"]["mpi-ucx"]
        urows = {r["size"]: r for r in pick(ucx["rows"], "allreduce")}
        for size in (1 << 20, 16 << 20):
            v, why = None, kmiss
            if not why and not ucx["available"]:
                why = "Open MPI over UCX: not available (%s)" % ucx["error"]
            elif not why and (size not in ar or size not in urows):
                why = "no %s all-reduce row for both" % fmt_size(size)
            elif not why:
                v = ar[size]["busbw_gbs"] / urows[size]["busbw_gbs"]
            t.append(target("%d VMs: all-reduce busbw at %s / Open MPI over UCX" % (n, fmt_size(size)),
                            v, 4.0, ">=", "x", why))
        if n == 2:
            lat = cl["link"]["lat"]
            v, why = None, kmiss
            if not why and not lat:
                why = "no ib_write_lat figure"
            elif not why and 8 not in ar:
                why = "no 8 B all-reduce row"
            elif not why:
                v = ar[8]["median_us"] / lat["t_typical_us"]
            t.append(target("2 VMs: 8-byte all-reduce median latency / median ib_write_lat",
                            v, 2.0, "<=", "x", why))
        if n in (2, 4):
            t += report_tcp.tcp_targets(cl)
        t += report_tcp.torch_targets(cl)
    v, why = None, None
    if kernels and kernels.get("rows"):
        row = next((r for r in kernels["rows"] if r.get("dtype") == "fp32" and r.get("op") == "sum"), None)
        if row:
            v = row.get("best_vs_memcpy")
        else:
            why = "no fp32 sum row in reduce_bench.json"
    else:
        why = "reduce_bench.json missing"
    t.append(target("reduction kernels (host): fp32 sum GB/s / memcpy GB/s", v, 0.8, ">=", "x", why))
    return t


def kernel_rows(kernels):
    if not kernels:
        return None
    rows = kernels.get("rows") or kernels.get("results")
    if rows is None:
        for v in kernels.values():
            if isinstance(v, list):
                rows = v
                break
    kernels.pop("results", None)
    kernels["rows"] = rows or []
    return kernels


# ---- plot -----------------------------------------------------------------------------

def plot(outdir, clusters):
    gp = shutil.which("gnuplot")
    if not gp:
        return "gnuplot is not installed"
    series = []
    for cl in clusters:
        n = cl["nodes"]
        files = []
        for name, label in SYSTEMS:
            rows = pick(cl["systems"][name]["rows"], "allreduce")
            if not rows:
                continue
            path = os.path.join(outdir, "busbw-n%d-%s.dat" % (n, name))
            with open(path, "w") as f:
                for r in rows:
                    f.write("%d %.9g\n" % (r["size"], r["busbw_gbs"]))
            files.append((path, "%s all-reduce" % name, "lines"))
        lk = [e for e in cl["link"]["bw"] if e["uni_gbs"] is not None]
        if lk:
            path = os.path.join(outdir, "busbw-n%d-link.dat" % n)
            with open(path, "w") as f:
                for e in lk:
                    f.write("%d %.9g %s\n" % (e["size"], e["uni_gbs"],
                                              "%.9g" % e["bi_per_dir_gbs"]
                                              if e["bi_per_dir_gbs"] is not None else "NaN"))
            files.append((path, "ib\\_write\\_bw unidirectional", "uni"))
            files.append((path, "ib\\_write\\_bw -b, per direction", "bi"))
        series.append((n, files))
    if not any(f for _, f in series):
        return "no data to plot"
    script = [
        "set terminal pngcairo size %d,520 font ',10'" % (640 * max(1, len(series))),
        "set output '%s'" % os.path.join(outdir, "busbw.png"),
        "set logscale xy",
        "set grid",
        "set key bottom right font ',8'",
        "set xlabel 'size (bytes)'",
        "set ylabel 'busbw (GB/s)'",
        "set format x '%.0s%cB'",
        "set format y '%g'",
        "set multiplot layout 1,%d title 'busbw against size (emulated: QEMU TCG + Soft-RoCE; "
        "compare ratios only)'" % max(1, len(series)),
    ]
    for (n, files), cl in zip(series, clusters):
        script.append("set title '%d VMs'" % n)
        k = cl["systems"]["kcoll"]
        script.append("unset label 2")
        if not k["available"]:
            script.append("set label 2 'kcoll: not available' at graph 0.03,0.95 font ',9'")
        parts = []
        for path, title, kind in files:
            if kind == "lines":
                parts.append("'%s' using 1:2 with linespoints title '%s'" % (path, title))
            elif kind == "uni":
                parts.append("'%s' using 1:2 with points pt 7 ps 1.2 title '%s'" % (path, title))
            else:
                parts.append("'%s' using 1:3 with points pt 5 ps 1.2 title '%s'" % (path, title))
        if parts:
            script.append("plot " + ", ".join(parts))
        else:
            script.append("set label 1 'no data' at graph 0.5,0.5 center")
            script.append("plot [1:2] [1:2] NaN notitle")
            script.append("unset label 1")
    script.append("unset multiplot")
    gpfile = os.path.join(outdir, "busbw.gp")
    with open(gpfile, "w") as f:
        f.write("\n".join(script) + "\n")
    p = subprocess.run([gp, gpfile], capture_output=True, text=True)
    if p.returncode:
        return "gnuplot failed: " + p.stderr.strip()[-300:]
    return None


# ---- markdown --------------------------------------------------------------------------

def md_table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|:---|" + "|".join("---:" for _ in head[1:]) + "|"]
    for r in rows:
        out.append("| " + " | ".join(r) + " |")
    return out


def markdown(rep):
    L = []
    host = rep["host"]
    L.append("# kcoll benchmark report")
    L.append("")
    L.append("Generated %s by `bench/report.py` from `%s` (commit %s)." %
             (rep["generated"], rep["outdir"], host.get("commit", "?")))
    L.append("")
    L.append("**This machine is emulated.** Every cluster figure below comes from QEMU virtual "
             "machines in TCG mode (software CPU emulation, no KVM), %s each, on a host with "
             "%s CPU cores that other work shares, linked by Soft-RoCE (`rdma_rxe`) over a "
             "private bridge. Absolute numbers say nothing about real hardware: only ratios "
             "measured within one run (one cluster size) mean anything." %
             ("1 vCPU" if all(c["meta"].get("vcpus", 1) == 1 for c in rep["clusters"]) else
              "/".join(str(c["meta"].get("vcpus", "?")) for c in rep["clusters"]) + " vCPUs",
              host.get("cpus", "?")))
    L.append("")
    if host.get("loadavg"):
        L.append("Host load average when the run started: %s (%s); QEMU: %s." %
                 (host["loadavg"], host.get("date", "?"), host.get("qemu", "?")))
        L.append("")
    L.append("Runs: " + ", ".join("%d VMs (%s vCPU, %s MiB each)" %
                                  (c["nodes"], c["meta"].get("vcpus", "?"),
                                   c["meta"].get("mem_mb", "?")) for c in rep["clusters"]) +
             ("; smoke run (tiny sizes)" if rep.get("smoke") else "") + ".")
    L.append("")
    L.append("## Targets")
    L.append("")
    rows = []
    for t in rep["targets"]:
        val = "%.3f" % t["value"] if t["value"] is not None else "–"
        cmpch = "≤" if "latency" in t["target"] else "≥"
        rows.append([t["target"], val, "%s %.2f" % (cmpch, t["threshold"]),
                     "**%s**" % t["status"] + (": " + t["detail"] if t.get("detail") else "")])
    L += md_table(["target", "value", "threshold", "status"], rows)
    L.append("")
    for cl in rep["clusters"]:
        n = cl["nodes"]
        m = cl["meta"]
        L.append("## %d VMs" % n)
        L.append("")
        L.append("%d VMs × %s vCPU, %s MiB, guest kernel %s, rxe active MTU %s, CPU model "
                 "\"%s\". Every VM ran its job to the end: %s." %
                 (n, m.get("vcpus", "?"), m.get("mem_mb", "?"), m.get("kernel", "?"),
                  m.get("rxe_active_mtu", "?"), m.get("cpu_model", "?"),
                  "yes" if cl["vm_ok"] else "**no**"))
        L.append("")
        L.append("### RDMA link limit (perftest, node0 ↔ node1)")
        L.append("")
        rows = []
        for e in cl["link"]["bw"]:
            rows.append([fmt_size(e["size"]), fnum(e["uni_gbs"]), fnum(e["bi_total_gbs"]),
                         fnum(e["bi_per_dir_gbs"])])
        if rows:
            L += md_table(["message", "ib_write_bw (GB/s)", "ib_write_bw -b, both directions (GB/s)",
                           "-b per direction (GB/s)"], rows)
            L.append("")
        lat = cl["link"]["lat"]
        if lat:
            L.append("ib_write_lat, 8 B, %d iterations: median (t_typical) %.2f µs, mean %.2f µs, "
                     "min %.2f µs." % (lat["iters"], lat["t_typical_us"], lat["t_avg_us"],
                                       lat["t_min_us"]))
            L.append("")
        for e in cl["link"]["errors"]:
            L.append("- perftest: %s" % e)
        if cl["link"]["errors"]:
            L.append("")
        L.append("### Systems")
        L.append("")
        for name, label in SYSTEMS:
            s = cl["systems"][name]
            if s["available"]:
                wrong = sum(int(r.get("wrong", 0)) for r in s["rows"])
                extra = ""
                if s["meta"].get("import_torch_s") is not None:
                    extra = "; `import torch` took %.1f s" % s["meta"]["import_torch_s"]
                if s["error"]:
                    extra += "; then failed: %s" % s["error"]
                L.append("- %s: %d rows, #wrong %d%s." % (label, len(s["rows"]), wrong, extra))
            else:
                L.append("- %s: %s: not available (error: %s)." % (label, name, s["error"]))
        L.append("")
        for coll in COLLS:
            have = [(name, label) for name, label in SYSTEMS
                    if pick(cl["systems"][name]["rows"], coll)]
            if not have:
                continue
            L.append("### %s (fp32%s)" % (coll, ", sum" if coll in ("allreduce", "reduce_scatter") else ""))
            L.append("")
            for name, label in have:
                L.append("%s:" % label)
                L.append("")
                rows = []
                for r in pick(cl["systems"][name]["rows"], coll):
                    rows.append([fmt_size(r["size"]), fnum(r["time_us"], 2),
                                 fnum(r.get("median_us"), 2), fnum(r["algbw_gbs"]),
                                 fnum(r["busbw_gbs"]), str(r.get("wrong", "–")),
                                 fnum(r.get("cpu_usr_us"), 1), fnum(r.get("cpu_sys_us"), 1)])
                L += md_table(["size", "time (µs)", "median (µs)", "algbw (GB/s)", "busbw (GB/s)",
                               "#wrong", "usr/op (µs)", "sys/op (µs)"], rows)
                L.append("")
            rr = [r for r in cl["ratios"] if r["coll"] == coll]
            if rr:
                L.append("Ratios (busbw over busbw; > 1: kcoll faster):")
                L.append("")
                rows = []
                for r in rr:
                    rows.append([fmt_size(r["size"]), fnum(r["kcoll_over_link_bidir"], 3),
                                 fnum(r["kcoll_over_link_uni"], 3)] +
                                [fnum(r["kcoll_over_" + p], 3) for p, _ in PEERS])
                L += md_table(["size", "kcoll / link (-b per dir.)", "kcoll / link (uni)"] +
                              ["kcoll / " + p for p, _ in PEERS], rows)
                L.append("")
        L += report_tcp.markdown_tcp(cl)
        L += report_tcp.torch_markdown(cl)
    for part in PARTS:
        L += part.markdown(rep.get(part.KEY))
    L.append("## Reduction kernels (host, `bench/reduce_bench`)")
    L.append("")
    k = rep.get("reduction_kernels")
    if k and k.get("rows"):
        L.append("Buffers of %s, median of %s runs; GB/s counts the destination's bytes." %
                 (fmt_size(k.get("size_bytes", 0)), k.get("runs", "?")))
        L.append("")
        rows = []
        for r in k["rows"]:
            rows.append([r.get("dtype", "?"), r.get("op", "?"), fnum(r.get("generic_gbs"), 2),
                         fnum(r.get("avx2_gbs"), 2), fnum(r.get("memcpy_gbs"), 2),
                         fnum(r.get("best_vs_memcpy"), 2)])
        L += md_table(["dtype", "op", "generic (GB/s)", "avx2 (GB/s)", "memcpy (GB/s)",
                       "best / memcpy"], rows)
    else:
        L.append("Not available: %s." % (rep.get("reduction_kernels_error") or "no reduce_bench.json"))
    L.append("")
    L.append("## Plot")
    L.append("")
    if rep.get("plot_error"):
        L.append("No plot: %s." % rep["plot_error"])
    else:
        L.append("![busbw against size](busbw.png)")
        L.append("")
        L.append("All-reduce busbw of every system against size, log-log, one panel per cluster "
                 "size; the points are the link limit from perftest.")
    L.append("")
    L.append("## How this was measured")
    L.append("")
    L.append("- perftest between node0 (server) and node1: `ib_write_bw` unidirectional and "
             "`-b` (bidirectional; perftest adds both directions up, so the per-direction figure "
             "is half), fixed duration per message size; `ib_write_lat -s 8`.")
    L.append("- kcoll: `kcoll-perf` on every node, launched through `kcoll_comm_init_env()` "
             "(KCOLL_RANK/KCOLL_NRANKS/KCOLL_BOOTSTRAP_ADDR), out-of-place rows in these tables "
             "(in-place rows are in report.json), plain user memory, blocking.")
    L.append("- Open MPI (Debian's openmpi-bin): `bench/mpi_timing` started by `mpirun --mca "
             "plm_rsh_agent ssh` from node0, sshd running in every VM with host keys generated "
             "into the run directory; over UCX with `--mca pml ucx` and "
             "`UCX_NET_DEVICES=rxe0:1`, over TCP with `--mca pml ob1 --mca btl tcp,self`. "
             "MPI_Allreduce runs in place (MPI_IN_PLACE).")
    L.append("- kcoll over TCP: the same `kcoll-perf` on the same VMs with "
             "`KCOLL_TRANSPORT=tcp` (the kernel's TCP transport; Soft-RoCE stays loaded but "
             "unused), all-reduce only, out of place. The TCP link limit: `iperf3 -c node0 -J` "
             "from node1, one stream, one way and `--bidir` (the per-direction figure is the "
             "mean of the two directions' received rates).")
    L.append("- PyTorch (Debian's python3-torch): `bench/gloo_bench.py`, one process per VM "
             "started independently with `init_method=tcp://node0`, timing Gloo, kcoll's backend "
             "(`import kcoll.torch`) and kcoll's backend with `KCOLL_TRANSPORT=tcp` in turn at "
             "each size, in place; `import torch` alone takes tens of seconds in a TCG guest "
             "and is not timed.")
    L.append("- Every system uses the same sweep and iteration rule; time is the slowest rank's "
             "mean per operation; busbw factors are nccl-tests' (all-reduce 2(n-1)/n; all-gather, "
             "reduce-scatter, all-to-all (n-1)/n; broadcast 1).")
    L.append("")
    return "\n".join(L)


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    outdir = os.path.abspath(sys.argv[1])
    cdirs = sorted((d for d in glob.glob(os.path.join(outdir, "n*")) if
                    os.path.isdir(d) and re.search(r"/n\d+$", d)),
                   key=lambda d: int(re.findall(r"n(\d+)$", d)[0]))
    host = read_json(os.path.join(outdir, "host.json"))
    kernels, kerr = None, None
    try:
        with open(os.path.join(outdir, "reduce_bench.json")) as f:
            kernels = kernel_rows(json.load(f))
    except OSError:
        kerr = "reduce_bench.json missing"
    except ValueError as e:
        kerr = "reduce_bench.json does not parse: %s" % e
    clusters = []
    for d in cdirs:
        cl = load_cluster(d)
        cl["ratios"] = compute_ratios(cl)
        cl["tcp"] = report_tcp.tcp_rows(cl)
        cl["tcp_cpu"] = report_tcp.tcp_cpu(cl)
        cl["torch"] = report_tcp.compute_torch(cl)
        clusters.append(cl)
    rep = {
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "outdir": os.path.relpath(outdir),
        "emulated": True,
        "note": "QEMU TCG virtual machines with Soft-RoCE on a shared host: only ratios "
                "within one run mean anything",
        "smoke": bool(host.get("smoke")),
        "host": host,
        "clusters": clusters,
        "reduction_kernels": kernels,
        "reduction_kernels_error": kerr,
    }
    rep["targets"] = compute_targets(clusters, kernels)
    for part in PARTS:
        rep[part.KEY] = part.load(outdir)
        rep["targets"] += part.targets(rep[part.KEY])
    runs = clusters + [rep[p.KEY] for p in PARTS if rep[p.KEY]]
    rep["wrong_total"] = sum(int(r.get("wrong", 0)) for cl in runs
                             for s in cl["systems"].values() for r in s["rows"])
    rep["plot_error"] = plot(outdir, clusters)
    with open(os.path.join(outdir, "report.json"), "w") as f:
        json.dump(rep, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write(markdown(rep))
    print("report: %s/report.md, report.json%s" %
          (os.path.relpath(outdir), "" if rep["plot_error"] else ", busbw.png"))
    for t in rep["targets"]:
        print("report: target %-7s %s%s" % (t["status"], t["target"],
                                           " (%.3f)" % t["value"] if t["value"] is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
