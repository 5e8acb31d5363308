#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where the time of each blocking collective call goes, from a tracefs text trace of the
kcoll:* events and kcoll-perf's ioctl system calls (bench/profile-job.sh records one).

Each KCOLL_IOC_COLL call is the span from its sys_enter_ioctl to its sys_exit_ioctl that
contains a kcoll_op_start.  Reported per phase, median and mean over the calls, in us:
  setup      ioctl entry -> op_start (arguments, pinning and mapping, op work scheduled)
  post       op_start -> the first step's p2p_start (schedule, first stage posted)
  data       first p2p_start -> last receive's p2p_finish (the peer's data arriving)
  send       first p2p_start -> last send's p2p_finish (its acknowledgment and CTS)
  finish     the later of those two -> op_finish (reduction, op work scheduled again)
  wake       op_finish -> ioctl exit (the caller woken, unpinning)
  total      ioctl entry -> exit
Usage: trace_phases.py TRACE [TRACE...]"""
import re
import statistics
import sys

LINE = re.compile(r"^\s*(?P<task>.+?)-(?P<pid>\d+)\s+\[\d+\]\s+\S+\s+(?P<ts>\d+\.\d+):\s+"
                  r"(?P<ev>\w+)(?P<sep>:|\(|\s+->)\s*(?P<body>.*)$")
PHASES = ("setup", "post", "data", "send", "finish", "wake", "total")


def calls(path):
    """Yield one dict of event times per traced collective call."""
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            ts = float(m["ts"]) * 1e6
            ev, body = m["ev"], m["body"]
            exit_ = m["sep"].strip() == "->"
            if ev == "sys_ioctl" and not exit_ and "kcoll-perf" in m["task"]:
                cur = {"enter": ts, "recv": [], "send": [], "start": []}
            elif ev == "sys_ioctl" and cur is not None:
                cur["exit"] = ts
                if "op_start" in cur and "op_finish" in cur:
                    yield cur
                cur = None
            elif cur is None:
                continue
            elif ev == "kcoll_op_start":
                cur["op_start"] = ts
            elif ev == "kcoll_op_finish":
                cur["op_finish"] = ts
            elif ev == "kcoll_p2p_start":
                cur["start"].append(ts)
            elif ev == "kcoll_p2p_finish":
                cur["send" if " send " in body else "recv"].append(ts)


def phases(c):
    first = min(c["start"]) if c["start"] else c["op_start"]
    data = max(c["recv"]) if c["recv"] else first
    send = max(c["send"]) if c["send"] else first
    return {
        "setup": c["op_start"] - c["enter"],
        "post": first - c["op_start"],
        "data": data - first,
        "send": send - first,
        "finish": c["op_finish"] - max(data, send),
        "wake": c["exit"] - c["op_finish"],
        "total": c["exit"] - c["enter"],
    }


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    for path in paths:
        rows = [phases(c) for c in calls(path)]
        print("%s: %d calls" % (path, len(rows)))
        if not rows:
            continue
        print("  %-8s %10s %10s" % ("phase", "median us", "mean us"))
        for p in PHASES:
            v = [r[p] for r in rows]
            print("  %-8s %10.1f %10.1f" % (p, statistics.median(v), statistics.fmean(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
