#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host test of bench/trace_local.py (no VM): a synthetic trace of two ranks, whose phases are
known, must come out exactly; a call whose operation never started is not counted; CPU shares
and interrupt wake-ups are counted from the scheduler's events.  TAP.  Run by
selftests/host's test_trace_local.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench"))
import trace_local  # noqa: E402

C = "comm=abc"


def ev(task, pid, cpu, us, text, flags="....."):
    return "%16s-%-5d [%03d] %s %12.6f: %s\n" % (task, pid, cpu, flags, us / 1e6, text)


def trace():
    t = []
    # rank 0 (pid 10, cpu 0) and rank 1 (pid 11, cpu 1): enter, queue, worker starts the op
    t.append(ev("kcoll-perf", 10, 0, 1000, "sys_ioctl(fd: 3, cmd: cc09, arg: 1)"))
    t.append(ev("kcoll-perf", 11, 1, 1001, "sys_ioctl(fd: 3, cmd: cc09, arg: 1)"))
    t.append(ev("kcoll-perf", 10, 0, 1010, "workqueue_queue_work: work struct=aa "
                "function=kcoll_op_work [kcoll] workqueue=kcoll req_cpu=8192 cpu=-1"))
    t.append(ev("kcoll-perf", 11, 1, 1031, "workqueue_queue_work: work struct=bb "
                "function=kcoll_op_work [kcoll] workqueue=kcoll req_cpu=8192 cpu=-1"))
    t.append(ev("kcoll-perf", 10, 0, 1040, "sched_switch: prev_comm=kcoll-perf prev_pid=10 "
                "prev_prio=120 prev_state=D ==> next_comm=kworker/u4:1 next_pid=5 next_prio=120"))
    t.append(ev("kworker/u4:1", 5, 0, 1100, "workqueue_execute_start: work struct aa: "
                "function kcoll_op_work [kcoll]"))
    t.append(ev("kworker/u4:1", 5, 0, 1110, "kcoll_op_start: %s rank=0 op=7 coll=4" % C))
    t.append(ev("kworker/u4:1", 5, 0, 1200, "workqueue_execute_start: work struct bb: "
                "function kcoll_op_work [kcoll]"))
    t.append(ev("kworker/u4:1", 5, 0, 1201, "kcoll_op_start: %s rank=1 op=7 coll=4" % C))
    t.append(ev("kworker/u4:1", 5, 0, 1500, "kcoll_op_finish: %s rank=1 op=7 status=0" % C))
    t.append(ev("kworker/u4:1", 5, 0, 1600, "kcoll_op_finish: %s rank=0 op=7 status=0" % C))
    t.append(ev("kworker/u4:1", 5, 0, 1610, "sched_switch: prev_comm=kworker/u4:1 prev_pid=5 "
                "prev_prio=120 prev_state=I ==> next_comm=swapper/0 next_pid=0 next_prio=120"))
    t.append(ev("<idle>", 0, 1, 1700, "sched_wakeup: comm=kcoll-perf pid=11 prio=120 "
                "target_cpu=001", "dNh2."))
    t.append(ev("<idle>", 0, 0, 1750, "sched_wakeup: comm=kcoll-perf pid=10 prio=120 "
                "target_cpu=000", "dNh2."))
    t.append(ev("kcoll-perf", 11, 1, 1801, "sys_ioctl -> 0x0"))
    t.append(ev("kcoll-perf", 10, 0, 1900, "sys_ioctl -> 0x0"))
    # pid 12: a call whose op never started (an error): not a row
    t.append(ev("kcoll-perf", 12, 1, 1950, "sys_ioctl(fd: 3, cmd: cc09, arg: 1)"))
    t.append(ev("kworker/u4:1", 5, 1, 1960, "sched_wakeup: comm=kcoll-perf pid=10 prio=120 "
                "target_cpu=000"))
    t.append(ev("kcoll-perf", 12, 1, 2000, "sys_ioctl -> 0xffffffffffffffea"))
    return t


def main():
    n, fails = 0, 0

    def ok(cond, name):
        nonlocal n, fails
        n += 1
        fails += not cond
        print("%s %d - %s" % ("ok" if cond else "not ok", n, name))

    rows, share, wakeups = trace_local.parse(trace())
    rows = [{k: round(v, 3) for k, v in r.items()} for r in rows]
    print("1..7")
    ok(len(rows) == 2, "two calls matched with their operations (got %d)" % len(rows))
    r1 = next((r for r in rows if r["total"] == 800), None)
    r0 = next((r for r in rows if r["total"] == 900), None)
    ok(r0 == {"queue": 10, "start": 100, "run": 490, "wake": 300, "total": 900},
       "rank 0's phases: %s" % r0)
    ok(r1 == {"queue": 30, "start": 170, "run": 299, "wake": 301, "total": 800},
       "rank 1's phases: %s" % r1)
    ok(wakeups == [1, 2], "wake-ups by a task / by an interrupt on an idle CPU: %s" % wakeups)
    ok(abs(share[0]["kworker"] - 570) < 1e-3, "cpu 0 in a kworker 570 us: %s" % share[0])
    ok(abs(share[0]["idle"] - (2000 - 1610)) < 1e-3, "cpu 0 idle to the end: %s" % share[0])
    ok(trace_local.main([]) == 2, "no trace named: usage, exit status 2")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
