#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""PyTorch's Gloo backend: torch.distributed.all_reduce timed the way kcoll-perf times kcoll.

--backend gloo,kcoll,kcoll-tcp times the same loop on kcoll's PyTorch backend (python/kcoll,
import kcoll.torch) next to Gloo, in ONE process (one `import torch`, which takes minutes
under TCG): the torch+kcoll vs torch+Gloo comparison, backend switched and nothing else.
kcoll-tcp is the kcoll backend on its kernel TCP transport (KCOLL_TRANSPORT=tcp).  The first
backend is the default group, the others groups of all ranks (new_group), and every size is
timed on each backend in turn, so that a host whose load drifts affects them alike.

Every rank is started on its own (no launcher): init_method=tcp://MASTER:PORT with an explicit
rank and world size.  Same size sweep, warm-up and iteration rule as kcoll-perf; time per
operation of the slowest rank, algbw = size / time, busbw = algbw x 2(n-1)/n, and a result
check (#wrong).  fp32 sum of small integers (exact).  Rank 0 prints a table and, with --json,
one JSON object per row (FILE with %s: one file per backend, %s its label); the first line
of each file records how long `import torch` took.

Only Debian's python3-torch and the standard library: no PyPI.
"""
import argparse
import json
import os
import resource
import sys
import time


def parse_size(s):
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    s = s.strip()
    if s and s[-1].lower() in mult:
        return int(s[:-1]) * mult[s[-1].lower()]
    return int(s)


def sweep(lo, hi, factor):
    out, s = [], lo
    while s <= hi:
        out.append(s)
        nxt = int(s * factor)
        s = nxt if nxt > s else s + 1
    return out


def cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime, ru.ru_stime


def cpu_node():
    """The node's busy CPU seconds (user, nice, system, irq, softirq, steal over all CPUs),
    as kcoll-perf's node_cpu_us: the kernel threads and interrupts no process is charged."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")


LABELS = {"gloo": "gloo", "kcoll": "torch-kcoll", "kcoll-tcp": "torch-kcoll-tcp"}


def make_group(backend, first, a, dist, timeout):
    """The process group of @backend: the default one for the first backend, else a group of
    every rank.  kcoll-tcp: the kcoll backend with KCOLL_TRANSPORT=tcp for its creation."""
    name = "gloo" if backend == "gloo" else "kcoll"
    if backend == "kcoll-tcp":
        os.environ["KCOLL_TRANSPORT"] = "tcp"
    try:
        if first:
            dist.init_process_group(name, init_method="tcp://" + a.master, rank=a.rank,
                                    world_size=a.world, timeout=timeout)
            return None
        return dist.new_group(backend=name, timeout=timeout)
    finally:
        os.environ.pop("KCOLL_TRANSPORT", None)


def open_json(a, label, meta):
    if not a.json:
        return None
    path = a.json.replace("%s", label) if "%s" in a.json else a.json
    f = open(path, "w")
    f.write(json.dumps(dict(meta, system=label)) + "\n")
    f.flush()
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--master", required=True, help="ADDR:PORT of rank 0 (tcp:// init)")
    ap.add_argument("-b", "--minbytes", type=parse_size, default=4)
    ap.add_argument("-e", "--maxbytes", type=parse_size, default=16 << 20)
    ap.add_argument("-f", "--stepfactor", type=float, default=2.0)
    ap.add_argument("-w", "--warmup", type=int, default=5)
    ap.add_argument("-n", "--iters", type=int, default=20)
    ap.add_argument("-I", "--iter-bytes", type=parse_size, default=0)
    ap.add_argument("--backend", default="gloo",
                    help="comma-separated: gloo, kcoll, kcoll-tcp (default gloo)")
    ap.add_argument("-L", "--label", help="the label of a single backend's rows")
    ap.add_argument("-J", "--json", help="FILE, or a name with %%s for one file per backend")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds")
    a = ap.parse_args()
    backends = a.backend.split(",")
    if any(b not in LABELS for b in backends) or len(set(backends)) != len(backends):
        ap.error("--backend: a list of distinct gloo, kcoll, kcoll-tcp")
    if len(backends) > 1 and (a.label or (a.json and "%s" not in a.json)):
        ap.error("several backends: no --label, and --json needs %s")
    labels = [a.label or LABELS[b] for b in backends]
    if a.stepfactor <= 1 or a.minbytes < 1 or a.minbytes > a.maxbytes or a.iters < 1:
        ap.error("need 1 <= minbytes <= maxbytes, stepfactor > 1, iters >= 1")

    t0 = time.monotonic()
    import datetime
    import torch
    import torch.distributed as dist
    if any(b != "gloo" for b in backends):
        import kcoll.torch  # noqa: F401  registers the backend
    import_s = time.monotonic() - t0
    torch.set_num_threads(1)

    timeout = datetime.timedelta(seconds=a.timeout)
    groups, inits, failed = [], [], []
    for k, b in enumerate(backends):
        t0 = time.monotonic()
        try:
            groups.append(make_group(b, k == 0, a, dist, timeout))
        except Exception as e:
            if k == 0:
                raise
            # That backend's rows say why; the others are still measured.
            failed.append((labels[k], e))
            groups.append(False)
        inits.append(time.monotonic() - t0)
    keep = [k for k, g in enumerate(groups) if g is not False]
    n = a.world
    outs = [None] * len(keep)
    if a.rank == 0:
        for label, e in failed:
            print("# %s: not available: %s" % (label, e))
            out = open_json(a, label, {"meta": True})
            if out:
                out.write(json.dumps({"system": label, "error": str(e),
                                      "errno": getattr(e, "errno", None)}) + "\n")
                out.close()
        for k in keep:
            print("# %s: torch %s, torch.distributed.all_reduce (%s), fp32 sum, %d ranks; "
                  "import torch %.1f s, init %.1f s" % (labels[k], torch.__version__,
                                                        backends[k], n, import_s, inits[k]))
        print("#%-15s %11s %10s %10s %10s %9s %9s %7s %9s %9s" % (
            "system", "size", "count", "time", "median", "algbw", "busbw", "#wrong", "usr/op",
            "sys/op"))
        print("#%-15s %11s %10s %10s %10s %9s %9s %7s %9s %9s" % (
            "", "(B)", "(elements)", "(us)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)"))
        sys.stdout.flush()
        outs = [open_json(a, labels[k], {"meta": True, "torch": torch.__version__,
                                         "import_torch_s": round(import_s, 3),
                                         "init_s": round(inits[k], 3), "nranks": n})
                for k in keep]
    groups = [groups[k] for k in keep]
    labels = [labels[k] for k in keep]

    factor = 2.0 * (n - 1) / n
    wrong_total = 0
    prev = None
    for size in sweep(a.minbytes, a.maxbytes, a.stepfactor):
        count = max(1, size // 4)
        nbytes = count * 4
        if nbytes == prev:
            continue
        prev = nbytes
        iters, warm = a.iters, a.warmup
        if a.iter_bytes:
            iters = max(1, min(iters, a.iter_bytes // nbytes))
            warm = min(warm, iters)
        idx = torch.arange(count, dtype=torch.int64)
        ref = [((r * 7 + idx * 3 + idx // 5) % 4).to(torch.float32) for r in range(n)]
        want = torch.stack(ref).sum(0)
        for g, label, out in zip(groups, labels, outs):
            x = ref[a.rank].clone()
            for _ in range(warm):
                dist.all_reduce(x, group=g)
            dist.barrier(group=g)
            samples = []
            n0 = cpu_node()
            u0, s0 = cpu()
            for _ in range(iters):
                t = time.perf_counter()
                dist.all_reduce(x, group=g)
                samples.append(time.perf_counter() - t)
            u1, s1 = cpu()
            n1 = cpu_node()
            samples.sort()
            mean_us = sum(samples) / iters * 1e6
            med_us = (samples[iters // 2] if iters % 2 else
                      (samples[iters // 2 - 1] + samples[iters // 2]) / 2) * 1e6
            x = ref[a.rank].clone()
            dist.all_reduce(x, group=g)
            wrong = int((x != want).sum().item())
            # The statistics travel on the default group, whatever was timed.
            stats = torch.tensor([mean_us, med_us], dtype=torch.float64)
            dist.all_reduce(stats, op=dist.ReduceOp.MAX)
            acc = torch.tensor([float(wrong), (u1 - u0) / iters * 1e6 / n,
                                (s1 - s0) / iters * 1e6 / n, (n1 - n0) / iters * 1e6 / n],
                               dtype=torch.float64)
            dist.all_reduce(acc)
            if a.rank:
                continue
            t_us, m_us = stats[0].item(), stats[1].item()
            wrong_all = int(acc[0].item())
            wrong_total += wrong_all
            algbw = nbytes / t_us / 1e3
            busbw = algbw * factor
            print("%-16s %11d %10d %10.2f %10.2f %9.4f %9.4f %7d %9.2f %9.2f" % (
                label, nbytes, count, t_us, m_us, algbw, busbw, wrong_all, acc[1].item(),
                acc[2].item()))
            sys.stdout.flush()
            if out:
                out.write(json.dumps({
                    "system": label, "coll": "allreduce", "nranks": n, "dtype": "fp32",
                    "op": "sum", "size": nbytes, "count": count, "warmup": warm,
                    "iters": iters, "time_us": round(t_us, 3), "median_us": round(m_us, 3),
                    "algbw_gbs": float("%.9g" % algbw), "busbw_gbs": float("%.9g" % busbw),
                    "wrong": wrong_all, "cpu_usr_us": round(acc[1].item(), 3),
                    "cpu_sys_us": round(acc[2].item(), 3),
                    "node_cpu_us": round(acc[3].item(), 3)}) + "\n")
                out.flush()
    if a.rank == 0:
        print("# Out of bounds values : %d %s" % (wrong_total, "FAILED" if wrong_total else "OK"))
    dist.barrier()
    for g in groups[1:]:
        dist.destroy_process_group(g)
    dist.destroy_process_group()
    for out in outs:
        if out:
            out.close()
    return 1 if wrong_total else 0


if __name__ == "__main__":
    sys.exit(main())
