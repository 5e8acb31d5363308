#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""PyTorch's Gloo backend: torch.distributed.all_reduce timed the way kcoll-perf times kcoll.

--backend kcoll times the same script on kcoll's PyTorch backend (python/kcoll, import
kcoll.torch): the torch+kcoll vs torch+Gloo comparison, backend switched and nothing else.

Every rank is started on its own (no launcher): init_method=tcp://MASTER:PORT with an explicit
rank and world size.  Same size sweep, warm-up and iteration rule as kcoll-perf; time per
operation of the slowest rank, algbw = size / time, busbw = algbw x 2(n-1)/n, and a result
check (#wrong).  fp32 sum of small integers (exact).  Rank 0 prints a table and, with --json,
one JSON object per row; the first line of that file records how long `import torch` took.

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
    ap.add_argument("--backend", choices=("gloo", "kcoll"), default="gloo")
    ap.add_argument("-L", "--label")
    ap.add_argument("-J", "--json")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds")
    a = ap.parse_args()
    a.label = a.label or ("gloo" if a.backend == "gloo" else "torch-kcoll")
    if a.stepfactor <= 1 or a.minbytes < 1 or a.minbytes > a.maxbytes or a.iters < 1:
        ap.error("need 1 <= minbytes <= maxbytes, stepfactor > 1, iters >= 1")

    t0 = time.monotonic()
    import datetime
    import torch
    import torch.distributed as dist
    if a.backend == "kcoll":
        import kcoll.torch  # noqa: F401  registers the backend
    import_s = time.monotonic() - t0
    torch.set_num_threads(1)

    t0 = time.monotonic()
    dist.init_process_group(a.backend, init_method="tcp://" + a.master, rank=a.rank,
                            world_size=a.world,
                            timeout=datetime.timedelta(seconds=a.timeout))
    init_s = time.monotonic() - t0
    n = a.world
    out = None
    if a.rank == 0:
        print("# %s: torch %s, torch.distributed.all_reduce (%s), fp32 sum, %d ranks; "
              "import torch %.1f s, init %.1f s" % (a.label, torch.__version__, a.backend, n,
                                                    import_s, init_s))
        print("#%11s %10s %10s %10s %9s %9s %7s %9s %9s" % (
            "size", "count", "time", "median", "algbw", "busbw", "#wrong", "usr/op", "sys/op"))
        print("#%11s %10s %10s %10s %9s %9s %7s %9s %9s" % (
            "(B)", "(elements)", "(us)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)"))
        sys.stdout.flush()
        if a.json:
            out = open(a.json, "w")
            out.write(json.dumps({"system": a.label, "meta": True, "torch": torch.__version__,
                                  "import_torch_s": round(import_s, 3),
                                  "init_s": round(init_s, 3), "nranks": n}) + "\n")
            out.flush()

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
        x = ref[a.rank].clone()
        for _ in range(warm):
            dist.all_reduce(x)
        dist.barrier()
        samples = []
        u0, s0 = cpu()
        for _ in range(iters):
            t = time.perf_counter()
            dist.all_reduce(x)
            samples.append(time.perf_counter() - t)
        u1, s1 = cpu()
        samples.sort()
        mean_us = sum(samples) / iters * 1e6
        med_us = (samples[iters // 2] if iters % 2 else
                  (samples[iters // 2 - 1] + samples[iters // 2]) / 2) * 1e6
        x = ref[a.rank].clone()
        dist.all_reduce(x)
        want = torch.stack(ref).sum(0)
        wrong = int((x != want).sum().item())
        stats = torch.tensor([mean_us, med_us], dtype=torch.float64)
        dist.all_reduce(stats, op=dist.ReduceOp.MAX)
        acc = torch.tensor([float(wrong), (u1 - u0) / iters * 1e6 / n,
                            (s1 - s0) / iters * 1e6 / n], dtype=torch.float64)
        dist.all_reduce(acc)
        if a.rank:
            continue
        t_us, m_us = stats[0].item(), stats[1].item()
        wrong_all = int(acc[0].item())
        wrong_total += wrong_all
        algbw = nbytes / t_us / 1e3
        busbw = algbw * factor
        print("%12d %10d %10.2f %10.2f %9.4f %9.4f %7d %9.2f %9.2f" % (
            nbytes, count, t_us, m_us, algbw, busbw, wrong_all, acc[1].item(), acc[2].item()))
        sys.stdout.flush()
        if out:
            out.write(json.dumps({
                "system": a.label, "coll": "allreduce", "nranks": n, "dtype": "fp32",
                "op": "sum", "size": nbytes, "count": count, "warmup": warm, "iters": iters,
                "time_us": round(t_us, 3), "median_us": round(m_us, 3),
                "algbw_gbs": float("%.9g" % algbw), "busbw_gbs": float("%.9g" % busbw),
                "wrong": wrong_all, "cpu_usr_us": round(acc[1].item(), 3),
                "cpu_sys_us": round(acc[2].item(), 3)}) + "\n")
            out.flush()
    if a.rank == 0:
        print("# Out of bounds values : %d %s" % (wrong_total, "FAILED" if wrong_total else "OK"))
    dist.barrier()
    dist.destroy_process_group()
    if out:
        out.close()
    return 1 if wrong_total else 0


if __name__ == "__main__":
    sys.exit(main())
