#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host test of bench/report.py (no VM): synthetic result directories in the layout
bench/node.sh, bench/local.sh and bench/hier.sh write, one with kcoll's rows and one where
kcoll failed, are turned into reports that check_report.py must accept, with the targets
computed from the numbers given here; a same-host run with a kcoll peer not on the loop
transport, or without the listing, must be refused, and so must a hierarchical run whose
ranks' locality is not 2 hosts x 2 ranks or whose kernel did not run the hierarchical
schedule, and a two-rail run whose ranks did not each use their rail's device.  TAP.  Run by selftests/host's test_bench_report.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
FACT = {"allreduce": lambda n: 2.0 * (n - 1) / n, "broadcast": lambda n: 1.0,
        "allgather": lambda n: (n - 1) / n, "reduce_scatter": lambda n: (n - 1) / n,
        "alltoall": lambda n: (n - 1) / n}
SIZES = [4, 8, 16, 1 << 20, 16 << 20]


def row(system, coll, n, size, gbs_link, lat_us, extra=None):
    """A consistent row: time from a latency plus size over a bandwidth."""
    t = lat_us + size / (gbs_link * 1e3)
    alg = size / t / 1e3
    r = {"system": system, "coll": coll, "nranks": n, "dtype": "fp32", "op": "sum",
         "size": size, "count": max(1, size // 4), "iters": 3, "warmup": 1,
         "time_us": t, "median_us": t * 0.9, "algbw_gbs": alg, "busbw_gbs": alg * FACT[coll](n),
         "wrong": 0, "cpu_usr_us": 1.0, "cpu_sys_us": 2.0, "node_cpu_us": t * 0.6}
    r.update(extra or {})
    return r


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def write_links(res):
    """The link limits bench/guest-lib.sh measures: perftest at 64 KiB and 8 MiB (best -b
    per direction 0.18 GB/s), ib_write_lat 300 us typical, iperf3 0.1 GB/s a direction."""
    os.makedirs(os.path.join(res, "perftest"))
    for size, uni in ((65536, 0.16), (8388608, 0.20)):
        for kind, v in (("uni", uni), ("bi", 2 * uni * 0.9)):
            with open(os.path.join(res, "perftest", "bw-%s-%d.txt" % (kind, size)), "w") as f:
                f.write(" Mtu : 4096[B]\n #bytes     #iterations    BW peak[Gb/sec]    "
                        "BW average[Gb/sec]   MsgRate[Mpps]\n %d    100    %.2f    %.2f    "
                        "0.000400\n" % (size, v * 8 * 1.1, v * 8))
    with open(os.path.join(res, "perftest", "lat-8.txt"), "w") as f:
        f.write(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
                "t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec]\n"
                " 8       1000          250.10         900.00       300.00             "
                "310.00         20.00           500.00                 800.00\n")
    os.makedirs(os.path.join(res, "iperf3"))
    json.dump({"end": {"sum_received": {"bits_per_second": 1.2e9}}},
              open(os.path.join(res, "iperf3", "uni.json"), "w"))
    json.dump({"end": {"sum_received": {"bits_per_second": 0.9e9},
                       "sum_received_bidir_reverse": {"bits_per_second": 0.7e9}}},
              open(os.path.join(res, "iperf3", "bidir.json"), "w"))


def make_cluster(out, n, kcoll_ok):
    d = os.path.join(out, "n%d" % n)
    res = os.path.join(d, "results")
    os.makedirs(res)
    for i in range(n):
        os.makedirs(os.path.join(d, "node%d" % i))
        open(os.path.join(d, "node%d" % i, "job.rc"), "w").write("0\n")
    json.dump({"nodes": n, "vcpus": 1, "mem_mb": 1536, "kernel": "6.1.0-test",
               "cpu_model": "QEMU TCG CPU", "rxe_active_mtu": "4096"},
              open(os.path.join(res, "meta.json"), "w"))
    write_links(res)
    kx = {"place": "out", "mem": "user", "mode": "blocking"}
    if kcoll_ok:
        rows = []
        for coll in ("allreduce", "allgather", "reduce_scatter", "broadcast", "alltoall"):
            for size in SIZES:
                rows.append(row("kcoll", coll, n, size, 0.19, 500.0, kx))
                rows.append(row("kcoll", coll, n, size, 0.1, 900.0, dict(kx, place="in")))
        write_jsonl(os.path.join(res, "kcoll.json"), rows)
        open(os.path.join(res, "kcoll.rc"), "w").write("0\n")
    else:
        write_jsonl(os.path.join(res, "kcoll.json"),
                    [{"system": "kcoll", "rank": 0, "nranks": n, "errno": 38,
                      "error": "kcoll_allreduce fp32 sum 4 B out of place: not in this libkcoll"}])
        open(os.path.join(res, "kcoll.rc"), "w").write("1\n")
    for system, bw, lat in (("mpi-ucx", 0.04, 2000.0), ("mpi-tcp", 0.1, 800.0)):
        write_jsonl(os.path.join(res, system + ".json"),
                    [row(system, c, n, s, bw, lat) for c in ("allreduce", "broadcast")
                     for s in SIZES])
        open(os.path.join(res, system + ".rc"), "w").write("0\n")
    write_jsonl(os.path.join(res, "gloo.json"),
                [{"system": "gloo", "meta": True, "import_torch_s": 41.5, "nranks": n}] +
                [row("gloo", "allreduce", n, s, 0.08, 3000.0) for s in SIZES])
    open(os.path.join(res, "gloo.rc"), "w").write("0\n")
    # kcoll over TCP (out of place only); the TCP link is write_links()' 0.1 GB/s a direction.
    write_jsonl(os.path.join(res, "kcoll-tcp.json"),
                [row("kcoll-tcp", "allreduce", n, s, 0.09, 400.0, kx) for s in SIZES])
    open(os.path.join(res, "kcoll-tcp.rc"), "w").write("0\n")
    for system, bw, lat in (("torch-kcoll", 0.2, 1000.0), ("torch-kcoll-tcp", 0.1, 2000.0)):
        rows = [row(system, "allreduce", n, s, bw, lat) for s in SIZES] if kcoll_ok else \
            [{"system": system, "error": "kcoll: cannot load libkcoll", "errno": None}]
        write_jsonl(os.path.join(res, system + ".json"),
                    [{"system": system, "meta": True, "import_torch_s": 41.5, "nranks": n}] + rows)
        open(os.path.join(res, system + ".rc"), "w").write("0\n")


def make_local(out, kcoll_ok, n=4):
    """bench/local.sh's results: kcoll on plain memory (0.3 GB/s, 100 us) and on kcoll
    buffers (0.4 GB/s), Open MPI (0.15 GB/s, 120 us), every peer on loop."""
    d = os.path.join(out, "local")
    res = os.path.join(d, "results")
    os.makedirs(res)
    os.makedirs(os.path.join(d, "node0"))
    open(os.path.join(d, "node0", "job.rc"), "w").write("0\n")
    json.dump({"nodes": 1, "ranks": n, "vcpus": 2, "mem_mb": 1460, "kernel": "6.1.0-test",
               "clocksource": "tsc"}, open(os.path.join(res, "meta.json"), "w"))
    kx = {"place": "out", "mode": "blocking"}
    if kcoll_ok:
        write_jsonl(os.path.join(res, "local-kcoll.json"),
                    [row("kcoll", "allreduce", n, s, bw, 100.0, dict(kx, mem=mem))
                     for mem, bw in (("user", 0.3), ("kbuf", 0.4)) for s in SIZES])
        open(os.path.join(res, "local-kcoll.rc"), "w").write("0\n")
    else:
        write_jsonl(os.path.join(res, "local-kcoll.json"),
                    [{"system": "kcoll", "rank": 0, "nranks": n, "errno": 34,
                      "error": "kcoll_allreduce fp32 sum 4 B out of place: allreduce: a region "
                      "runs past the end of its kcoll buffer"}])
        open(os.path.join(res, "local-kcoll.rc"), "w").write("1\n")
    write_jsonl(os.path.join(res, "local-mpi.json"),
                [row("local-mpi", "allreduce", n, s, 0.15, 120.0) for s in SIZES])
    open(os.path.join(res, "local-mpi.rc"), "w").write("0\n")
    comms = [{"name": "00000000000000aa-%d" % r, "comm_id": "00000000000000aa", "rank": r,
              "state": "ready", "nranks": n,
              "peers": [{"rank": p, "state": "up", "transport": "loop"}
                        for p in range(n) if p != r]} for r in range(n)]
    json.dump(comms, open(os.path.join(res, "comm-show.json"), "w"))


def write_stat(path, t, busy, idle):
    """bench_kperf -p's file: the time and a /proc/stat of 2 vCPUs, BUSY ticks split as
    user 1/2, system 1/4, softirq 1/4."""
    u, sy, si = busy // 2, busy // 4, busy - busy // 2 - busy // 4
    with open(path, "w") as f:
        f.write("time %.3f\ncpu  %d 0 %d %d 0 0 %d 0 0 0\n" % (t, u, sy, idle, si))
        for c in range(2):
            f.write("cpu%d %d 0 %d %d 0 0 %d 0 0 0\n" % (c, u // 2, sy // 2, idle // 2, si // 2))
        f.write("intr 1 0\nctxt 5\n")


def make_rails(res, kx, n, nodes, rpn):
    """The rails part of bench/hier.sh: -A hier on two rails (0.5 GB/s, 200 us) with each
    rank on rxe<local rank>, the rails' link limits (one rail 0.18 GB/s a direction, both at
    once 0.17 + 0.16), the profile's three runs at 16 MiB with /proc/stat 75 % busy."""
    write_jsonl(os.path.join(res, "hier-kcoll-rails.json"),
                [row("kcoll", "allreduce", n, sz, 0.5, 200.0, dict(kx, algo="hier",
                                                                   algo_used="hier"))
                 for sz in SIZES])
    open(os.path.join(res, "hier-kcoll-rails.rc"), "w").write("0\n")
    for i in range(nodes):
        for name in ("hier", "rails"):
            path = os.path.join(res, "hier-comm-%s-node%d.json" % (name, i))
            comms = json.load(open(path)) if name == "hier" else [
                {"name": "00000000000000cc-%d" % r, "comm_id": "00000000000000cc", "rank": r,
                 "state": "ready", "nranks": n} for r in range(i * rpn, (i + 1) * rpn)]
            for c in comms:
                c["dev"] = "rxe%d" % (c["rank"] % rpn if name == "rails" else 0)
            json.dump(comms, open(path, "w"))
    for name, v in (("rails-bi-rxe0-alone", 0.18), ("rails-bi-rxe1-alone", 0.18),
                    ("rails-bi-rxe0", 0.17),
                    ("rails-bi-rxe1", 0.16)):
        with open(os.path.join(res, "perftest", name + ".txt"), "w") as f:
            f.write(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   "
                    "MsgRate[Mpps]\n 8388608    16    %.2f    %.2f    0.000400\n" %
                    (2 * v * 8 * 1.1, 2 * v * 8))
    for name, algo, bw in (("ring", "ring", 0.2), ("hier", "hier", 0.3), ("rails", "hier", 0.5)):
        write_jsonl(os.path.join(res, "prof-kcoll-%s.json" % name),
                    [row("kcoll", "allreduce", n, 16 << 20, bw, 200.0,
                         dict(kx, algo=algo, algo_used=algo))])
        for i in range(nodes):
            base = os.path.join(res, "prof-%s-node%d.stat" % (name, i))
            write_stat(base + ".0", 100.0, 1000, 3000)
            write_stat(base + ".1", 130.0, 1000 + 4500, 3000 + 1500)


def make_hier(out, kcoll_ok, nodes=2, rpn=2):
    """bench/hier.sh's results: kcoll -A hier (0.3 GB/s, 200 us), -A ring (0.2 GB/s, 300 us),
    -A auto (the ring's figures, recdbl up to 16 B), Open MPI (0.1 GB/s, 500 us), each row
    with the algorithm the kernel ran, and every rank's locality: 2 hosts x 2 ranks; with
    kcoll, two NICs a VM and the rails' results (make_rails)."""
    n = nodes * rpn
    d = os.path.join(out, "hier")
    res = os.path.join(d, "results")
    os.makedirs(res)
    for i in range(nodes):
        os.makedirs(os.path.join(d, "node%d" % i))
        open(os.path.join(d, "node%d" % i, "job.rc"), "w").write("0\n")
    json.dump({"nodes": nodes, "ranks": n, "ranks_per_node": rpn, "vcpus": 2, "mem_mb": 1460,
               "kernel": "6.1.0-test", "rxe_active_mtu": "4096", "nics": 2 if kcoll_ok else 1},
              open(os.path.join(res, "meta.json"), "w"))
    write_links(res)
    kx = {"place": "out", "mem": "user", "mode": "blocking"}
    for algo, bw, lat in (("hier", 0.3, 200.0), ("ring", 0.2, 300.0), ("auto", 0.2, 300.0)):
        name = "hier-kcoll-" + algo
        rows = [row("kcoll", "allreduce", n, sz, bw, lat, dict(
            kx, algo=algo, algo_used=algo if algo != "auto" else
            "recdbl" if sz <= 16 else "ring")) for sz in SIZES] if kcoll_ok else \
            [{"system": "kcoll", "rank": 0, "nranks": n, "errno": 22,
              "error": "kcoll_allreduce fp32 sum 4 B out of place: the kernel refused the "
              "arguments"}]
        write_jsonl(os.path.join(res, name + ".json"), rows)
        open(os.path.join(res, name + ".rc"), "w").write("0\n" if kcoll_ok else "1\n")
        groups = [list(range(h * rpn, (h + 1) * rpn)) for h in range(nodes)]
        for i in range(nodes):
            comms = [{"name": "00000000000000bb-%d" % r, "comm_id": "00000000000000bb",
                      "rank": r, "state": "ready", "nranks": n,
                      "locality": {"local_rank": r % rpn, "local_size": rpn, "hosts": nodes,
                                   "known": True, "nics": nodes, "leaves": 1, "host": i,
                                   "nic": i, "leaf": 0, "host_groups": groups},
                      "peers": [{"rank": q, "state": "up", "transport": "rdma"}
                                for q in range(n) if q != r]}
                     for r in range(i * rpn, (i + 1) * rpn)]
            json.dump(comms, open(os.path.join(res, "hier-comm-%s-node%d.json" % (algo, i)),
                                  "w"))
    write_jsonl(os.path.join(res, "hier-mpi.json"),
                [row("hier-mpi", "allreduce", n, sz, 0.1, 500.0) for sz in SIZES])
    open(os.path.join(res, "hier-mpi.rc"), "w").write("0\n")
    if kcoll_ok:
        make_rails(res, kx, n, nodes, rpn)


def check(out, env=None):
    """check_report.py on OUT: (exit status, its "not ok" lines)."""
    c = subprocess.run([sys.executable, os.path.join(HERE, "check_report.py"), out],
                       capture_output=True, text=True, env=env)
    return c.returncode, [l for l in c.stdout.splitlines() if l.startswith("not ok")], c.stderr


def local_refusals(tmp, src, tap):
    """A same-host run whose listing shows a peer on TCP, or has no listing, is refused."""
    for case in ("a peer on tcp", "no listing"):
        out = os.path.join(tmp, case.replace(" ", "-"))
        shutil.copytree(src, out)
        path = os.path.join(out, "local", "results", "comm-show.json")
        if case == "no listing":
            os.unlink(path)
        else:
            comms = json.load(open(path))
            comms[2]["peers"][1]["transport"] = "tcp"
            json.dump(comms, open(path, "w"))
        p = subprocess.run([sys.executable, os.path.join(TOP, "bench", "report.py"), out],
                           capture_output=True, text=True)
        rc, bad, err = check(out)
        want = [l for l in bad if "every kcoll peer showed the loop transport" in l]
        tap.append((p.returncode == 0 and rc == 1 and len(want) == 1 and
                    len([l for l in bad if "PNG" not in l]) == 1,
                    "same host, %s: check_report.py refuses the report (and only for that)"
                    % case, "exit %d\n%s\n%s" % (rc, "\n".join(bad), err)))
        md = open(os.path.join(out, "report.md")).read()
        tap.append(("**not all loop**" in md, "same host, %s: report.md says so" % case, ""))


def hier_refusals(tmp, src, tap):
    """A hierarchical row is refused when the ranks' locality does not show 2 hosts x 2 ranks
    (no locality given, or one node's listing missing), or when the kernel did not run the
    hierarchical schedule: the target is then not measured and check_report.py fails."""
    for case in ("hier without locality", "hier with one listing missing",
                 "hier that ran the ring"):
        out = os.path.join(tmp, case.replace(" ", "-"))
        shutil.copytree(src, out)
        res = os.path.join(out, "hier", "results")
        if case == "hier without locality":
            for i in (0, 1):
                path = os.path.join(res, "hier-comm-hier-node%d.json" % i)
                comms = json.load(open(path))
                for c in comms:
                    c["locality"] = {"local_rank": 0, "local_size": 1, "hosts": 4,
                                     "known": False}
                json.dump(comms, open(path, "w"))
        elif case == "hier with one listing missing":
            os.unlink(os.path.join(res, "hier-comm-hier-node1.json"))
        else:
            path = os.path.join(res, "hier-kcoll-hier.json")
            rows = [json.loads(l) for l in open(path)]
            write_jsonl(path, [dict(r, algo_used="ring") for r in rows])
        p = subprocess.run([sys.executable, os.path.join(TOP, "bench", "report.py"), out],
                           capture_output=True, text=True)
        rc, bad, err = check(out)
        # The rails' one-rail rows are the -A hier rows and its listing: refused with them.
        bad = [l for l in bad if "PNG" not in l and "rails: " not in l]
        want = ["no row refused"] + ([] if case.endswith("ring") else ["locality shows"])
        tap.append((p.returncode == 0 and rc == 1 and len(bad) == len(want) and
                    all(any(w in l for l in bad) for w in want),
                    "%s: check_report.py refuses the report (and only for that)" % case,
                    "exit %d\n%s\n%s" % (rc, "\n".join(bad), err)))
        rep = json.load(open(os.path.join(out, "report.json")))
        t = next((t for t in rep["targets"] if "hierarchical" in t["target"]), {})
        tap.append((t.get("status") == "not measured" and "refused" in t.get("detail", ""),
                    "%s: the hier / ring target is not measured, and says why" % case,
                    json.dumps(t)))


def rails_refusals(tmp, src, tap):
    """A two-rail row is refused when a rank did not use its rail's device (the listing shows
    rxe0 for local rank 1): the target is then not measured and check_report.py fails."""
    out = os.path.join(tmp, "rails-one-device")
    shutil.copytree(src, out)
    path = os.path.join(out, "hier", "results", "hier-comm-rails-node1.json")
    comms = json.load(open(path))
    for c in comms:
        c["dev"] = "rxe0"
    json.dump(comms, open(path, "w"))
    p = subprocess.run([sys.executable, os.path.join(TOP, "bench", "report.py"), out],
                       capture_output=True, text=True)
    rc, bad, err = check(out)
    bad = [l for l in bad if "PNG" not in l]
    tap.append((p.returncode == 0 and rc == 1 and len(bad) == 2 and
                any("rank used its rail's device" in l for l in bad),
                "rails on one device: check_report.py refuses the report (and only for that)",
                "exit %d\n%s\n%s" % (rc, "\n".join(bad), err)))
    rep = json.load(open(os.path.join(out, "report.json")))
    t = next((t for t in rep["targets"] if "2 rails / 1 rail" in t["target"]), {})
    tap.append((t.get("status") == "not measured" and "rank 3 used rxe0, not rxe1" in
                t.get("detail", ""),
                "rails on one device: the target is not measured, and says why", json.dumps(t)))


def main():
    tap = []
    tmp = tempfile.mkdtemp(prefix="kcoll-report-")
    try:
        kernels = {"size_bytes": 1048576, "runs": 3, "memcpy_gbs": 10.0, "results": [
            {"dtype": "fp32", "op": "sum", "generic_gbs": 6.0, "avx2_gbs": 9.0,
             "memcpy_gbs": 10.0, "best_vs_memcpy": 0.9}]}
        for label, kok in (("kcoll available", True), ("kcoll failed", False)):
            out = os.path.join(tmp, label.replace(" ", "-"))
            os.makedirs(out)
            json.dump(kernels, open(os.path.join(out, "reduce_bench.json"), "w"))
            json.dump({"cpus": 2, "commit": "test", "smoke": 1},
                      open(os.path.join(out, "host.json"), "w"))
            for n in (2, 4):
                make_cluster(out, n, kok)
            make_local(out, kok)
            make_hier(out, kok)
            p = subprocess.run([sys.executable, os.path.join(TOP, "bench", "report.py"), out],
                               capture_output=True, text=True)
            tap.append((p.returncode == 0, "%s: report.py succeeds" % label, p.stderr))
            env = dict(os.environ, KCOLL_BENCH_ALLOW_MISSING="0" if kok else "1")
            have_gp = shutil.which("gnuplot") is not None
            _, bad, err = check(out, env)
            if not have_gp:
                bad = [l for l in bad if "PNG" not in l]
            tap.append((not bad, "%s: check_report.py accepts the report" % label,
                        "\n".join(bad) + err))
            try:
                rep = json.load(open(os.path.join(out, "report.json")))
            except (OSError, ValueError) as e:
                tap.append((False, "%s: report.json" % label, str(e)))
                continue
            st = {t["target"]: t for t in rep["targets"]}
            md = open(os.path.join(out, "report.md")).read()
            if kok:
                # busbw(16M) = 16M / (500 + 16M / 190) us ... over the link's 0.2 x 0.9 GB/s
                t = next(v for k, v in st.items() if k.startswith("2 VMs: all-reduce busbw at 16 MiB / bid"))
                size = 16 << 20
                tm = 500.0 + size / 190.0
                want = size / tm / 1e3 * 1.0 / (0.2 * 0.9)
                tap.append((abs(t["value"] - want) < 1e-3 * want and t["status"] == "met",
                            "kcoll available: the 2-VM link target is computed and met",
                            json.dumps(t)))
                t = next(v for k, v in st.items() if k.startswith("2 VMs: 8-byte"))
                want = (500.0 + 8 / 190.0) * 0.9 / 300.0
                tap.append((abs(t["value"] - want) < 1e-3 and t["status"] == "met",
                            "kcoll available: the latency target is computed (median over t_typical)",
                            json.dumps(t)))
                t = next(v for k, v in st.items() if k.startswith("4 VMs: all-reduce busbw at 1 MiB / Open MPI"))
                tap.append((t["status"] in ("met", "missed") and t["value"] > 1,
                            "kcoll available: the Open MPI target is computed", json.dumps(t)))
                tap.append(("kcoll / mpi-ucx" in md and "not available" not in md,
                            "kcoll available: report.md has the ratio tables", ""))
                # torch+kcoll over torch+Gloo: Gloo's time over kcoll's, same size
                for size, name in ((1 << 20, "1 MiB"), (16 << 20, "16 MiB")):
                    t = st.get("2 VMs: torch+kcoll all-reduce busbw at %s / torch+Gloo" % name)
                    want = (3000.0 + size / 80.0) / (1000.0 + size / 200.0)
                    tap.append((t is not None and abs(t["value"] - want) < 1e-6 * want and
                                t["status"] == "met",
                                "kcoll available: the torch+kcoll / Gloo target at %s" % name,
                                json.dumps(t)))
                tap.append(("### PyTorch: kcoll's backend against Gloo" in md and
                            "| 8 B |" in md.split("### PyTorch")[1],
                            "kcoll available: report.md has the torch table with 8 B", ""))
                # Same host: kcoll's plain-memory rows over Open MPI's (issue 15).
                mpi = "Open MPI (ob1, btl vader + CMA)"
                t = st.get("Same host, 4 ranks: kcoll all-reduce busbw at 16 MiB / " + mpi, {})
                want = (120.0 + size / 150.0) / (100.0 + size / 300.0)
                tap.append((abs(t.get("value", 0) - want) < 1e-6 * want and t["status"] == "met",
                            "kcoll available: the same-host busbw target (plain memory / "
                            "Open MPI)", json.dumps(t)))
                t = st.get("Same host, 4 ranks: kcoll 8-byte all-reduce median latency / " +
                           mpi, {})
                want = (100.0 + 8 / 300.0) / (120.0 + 8 / 150.0)
                tap.append((abs(t.get("value", 0) - want) < 1e-6 and t["status"] == "met",
                            "kcoll available: the same-host latency target (medians)",
                            json.dumps(t)))
                sec = md.split("## Same host")[1] if "## Same host" in md else ""
                tap.append(("every one of the 12 peers of the 4 ranks on `loop`" in sec and
                            "| 16 MiB |" in sec and "kcoll, buffers" in sec,
                            "kcoll available: report.md has the same-host table", sec[:300]))
                local_refusals(tmp, out, tap)
                # Hierarchical: hier over ring at 16 MiB, the same-size rows' times.
                t = st.get("2 VMs x 2 ranks: kcoll hierarchical all-reduce busbw at 16 MiB / "
                           "kcoll flat ring", {})
                want = (300.0 + size / 200.0) / (200.0 + size / 300.0)
                tap.append((abs(t.get("value", 0) - want) < 1e-6 * want and t["status"] == "met",
                            "kcoll available: the hier / ring target is computed and met",
                            json.dumps(t)))
                sec = md.split("## Hierarchical")[1] if "## Hierarchical" in md else ""
                tap.append(("every one of the 4 ranks in 2 hosts of 2 consecutive ranks" in sec
                            and "| 16 MiB |" in sec and "| recdbl |" in sec,
                            "kcoll available: report.md has the hierarchical table", sec[:300]))
                hier_refusals(tmp, out, tap)
                # Rails: hier on two rails over one at 16 MiB; the links and the profile.
                t = st.get("2 VMs x 2 ranks: kcoll hierarchical all-reduce busbw at 16 MiB, "
                           "2 rails / 1 rail", {})
                want = (200.0 + size / 300.0) / (200.0 + size / 500.0)
                tap.append((abs(t.get("value", 0) - want) < 1e-6 * want and
                            t["status"] == "missed" and "1.833" in t.get("detail", ""),
                            "kcoll available: the 2 rails / 1 rail target is computed, with "
                            "the links' ratio", json.dumps(t)))
                sec = md.split("## Rails")[1] if "## Rails" in md else ""
                tap.append(("rank 3 rxe1" in sec and "| hier, 2 rails | " in sec and
                            "| 75 % | 38 % | 19 % | 19 % |" in sec and "both / one 1.833" in sec,
                            "kcoll available: report.md has the rails section and profile",
                            sec[:1500]))
                rails_refusals(tmp, out, tap)
            else:
                tap.append((all(v["status"] == "not measured" for k, v in st.items()
                                if "reduction kernels" not in k and "kcoll/TCP" not in k),
                            "kcoll failed: every kcoll target is 'not measured'",
                            json.dumps(rep["targets"], indent=1)))
                tap.append(("kcoll: not available (error: kcoll_allreduce" in md,
                            "kcoll failed: report.md says 'kcoll: not available (error ...)'", ""))
                tap.append(("local-kcoll: not available (error: kcoll_allreduce" in md,
                            "kcoll failed: the same-host section says so", ""))
                tap.append(("hier-kcoll-hier: not available (error: kcoll_allreduce" in md,
                            "kcoll failed: the hierarchical section says so", ""))
            # kcoll over TCP: busbw(16M) of the rows above over Gloo's and iperf3's.
            size = 16 << 20
            ktcp = size / (400.0 + size / 90.0) / 1e3 * 2.0 * 3 / 4
            gloo = size / (3000.0 + size / 80.0) / 1e3 * 2.0 * 3 / 4
            t = st.get("4 VMs: kcoll/TCP all-reduce busbw at 16 MiB / Gloo", {})
            tap.append((abs(t.get("value", 0) - ktcp / gloo) < 1e-6 and t["status"] == "missed",
                        "%s: the kcoll/TCP over Gloo target is computed" % label, json.dumps(t)))
            t = st.get("4 VMs: kcoll/TCP all-reduce busbw at 16 MiB / iperf3 bidirectional "
                       "per direction", {})
            tap.append((abs(t.get("value", 0) - ktcp / 0.1) < 1e-6 and t["status"] == "met",
                        "%s: the kcoll/TCP over iperf3 --bidir target is computed" % label,
                        json.dumps(t)))
            t = st.get("2 VMs: kcoll/TCP 8-byte all-reduce median latency / Open MPI TCP's", {})
            want = (400.0 + 8 / 90.0) / (800.0 + 8 / 100.0)
            tap.append((abs(t.get("value", 0) - want) < 1e-6 and t["status"] == "met",
                        "%s: the kcoll/TCP latency target is computed" % label, json.dumps(t)))
            tap.append(("kcoll/TCP / Gloo" in md and "iperf3" in md,
                        "%s: report.md has the TCP comparison" % label, ""))
            # node_cpu_us is 0.6 of each row's time: 60 % of the 4-VM cluster's 1 vCPU.
            cpu = next((c for c in rep["clusters"] if c["nodes"] == 4), {}).get("tcp_cpu", [])
            e = next((e for e in cpu if e["system"] == "kcoll-tcp" and e["size"] == size), {})
            tap.append((abs((e.get("busy") or 0) - 0.6) < 1e-9 and
                        "| kcoll/TCP | 16 MiB |" in md and "| 60 % |" in md,
                        "%s: the CPU profile of the TCP comparison (node CPU / op / time)" %
                        label, json.dumps(e)))
            t = next(v for k, v in st.items() if "reduction kernels" in k)
            tap.append((t["status"] == "met" and abs(t["value"] - 0.9) < 1e-9,
                        "%s: the reduction-kernel target reads reduce_bench.json" % label,
                        json.dumps(t)))
    finally:
        if os.environ.get("KEEP"):
            print("# kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("TAP version 13")
    print("1..%d" % len(tap))
    fails = 0
    for i, (ok, what, diag) in enumerate(tap, 1):
        print("%s %d %s" % ("ok" if ok else "not ok", i, what))
        if not ok:
            fails += 1
            for line in (diag or "").splitlines()[:30]:
                print("# " + line)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
