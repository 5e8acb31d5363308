#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where a same-host collective's time goes: several ranks in one VM, one tracefs text trace
of the kcoll:* events, sched_switch, sched_wakeup, workqueue_queue_work/execute_start and
kcoll-perf's ioctl system calls (bench/profile-local.sh records one).

Each blocking KCOLL_IOC_COLL call of a rank is matched with its operation: the call queues
the operation's work, whose next run starts the operation (kcoll_op_start names the rank).
Per call, in us:
  queue      ioctl entry -> the operation's work queued
  start      work queued -> kcoll_op_start (a worker woken and scheduled)
  run        kcoll_op_start -> kcoll_op_finish (the schedule, peers' data included)
  wake       kcoll_op_finish -> ioctl exit (the caller woken, scheduled and returned)
  total      ioctl entry -> exit
and over the traced span: each CPU's share of time idle, in kcoll-perf and in kworkers,
and how many wake-ups ran in an interrupt on an idle CPU (another CPU's wake-up, sent by an
inter-processor interrupt: its cost is that CPU leaving idle, slow under TCG).
Usage: trace_local.py TRACE"""
import re
import statistics
import sys

LINE = re.compile(r"^\s*(?P<task>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<flags>\S+)\s+"
                  r"(?P<ts>\d+\.\d+):\s+(?P<ev>\w+)(?P<sep>:|\(|\s+->)\s*(?P<body>.*)$")
PHASES = ("queue", "start", "run", "wake", "total")
KV = re.compile(r"(\w+)=(\S+)")


def parse(lines):
    """The per-call phases (a list of dicts) and the per-CPU time shares of a trace."""
    open_call = {}          # pid -> the call in progress
    by_work = {}            # work struct -> the call that queued it, until its op starts
    running = {}            # (comm, rank, op) -> call
    current = {}            # cpu -> the kcoll_op_work running there
    calls = []
    cpu_state = {}          # cpu -> (since, kind)
    share = {}              # cpu -> kind -> us
    wakeups = [0, 0]        # [in a task's context, in an interrupt on an idle CPU]
    first = last = None
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        ts = float(m["ts"]) * 1e6
        first = ts if first is None else first
        last = ts
        ev, body, pid, cpu = m["ev"], m["body"], int(m["pid"]), int(m["cpu"])
        exit_ = m["sep"].strip() == "->"
        if ev == "sys_ioctl" and not exit_:
            open_call[pid] = {"enter": ts}
        elif ev == "sys_ioctl":
            c = open_call.pop(pid, None)
            if c and "op_finish" in c:
                c["exit"] = ts
                calls.append(c)
        elif ev == "workqueue_queue_work" and "kcoll_op_work" in body:
            c = open_call.get(pid)
            work = KV.search(body)
            if c is not None and "queued" not in c and work:
                c["queued"] = ts
                by_work[work.group(2)] = c
        elif ev == "workqueue_execute_start" and "kcoll_op_work" in body:
            current[cpu] = body.split()[2].rstrip(":")
        elif ev in ("kcoll_op_start", "kcoll_op_finish"):
            kv = dict(KV.findall(body))
            key = (kv.get("comm"), kv.get("rank"), kv.get("op"))
            if ev == "kcoll_op_start":
                c = by_work.pop(current.get(cpu), None)
                if c is not None:
                    c["op_start"] = ts
                    running[key] = c
            else:
                c = running.pop(key, None)
                if c is not None:
                    c["op_finish"] = ts
        elif ev == "sched_switch":
            kv = dict(KV.findall(body))
            nxt = kv.get("next_comm", "")
            kind = ("idle" if nxt.startswith("swapper") else
                    "kworker" if nxt.startswith("kworker") else
                    "kcoll-perf" if nxt.startswith("kcoll-perf") else "other")
            since, prev = cpu_state.get(cpu, (first, None))
            if prev:
                share.setdefault(cpu, {}).setdefault(prev, 0.0)
                share[cpu][prev] += ts - since
            cpu_state[cpu] = (ts, kind)
        elif ev == "sched_wakeup":
            wakeups[m["task"] == "<idle>" and "h" in m["flags"]] += 1
    for cpu, (since, kind) in cpu_state.items():
        share.setdefault(cpu, {}).setdefault(kind, 0.0)
        share[cpu][kind] += last - since
    rows = [{"queue": c["queued"] - c["enter"], "start": c["op_start"] - c["queued"],
             "run": c["op_finish"] - c["op_start"], "wake": c["exit"] - c["op_finish"],
             "total": c["exit"] - c["enter"]} for c in calls if "queued" in c]
    return rows, share, wakeups


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    with open(argv[0], errors="replace") as f:
        rows, share, wakeups = parse(f)
    print("%s: %d calls" % (argv[0], len(rows)))
    if rows:
        print("  %-8s %10s %10s" % ("phase", "median us", "mean us"))
        for p in PHASES:
            v = [r[p] for r in rows]
            print("  %-8s %10.1f %10.1f" % (p, statistics.median(v), statistics.fmean(v)))
    for cpu in sorted(share):
        tot = sum(share[cpu].values()) or 1.0
        print("  cpu %d: " % cpu + ", ".join("%s %.0f%%" % (k, 100 * v / tot)
                                            for k, v in sorted(share[cpu].items())))
    print("  wake-ups: %d by a running task, %d by an interrupt on an idle CPU" % tuple(wakeups))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
