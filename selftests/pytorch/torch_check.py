#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""torch.distributed on the kcoll backend, one process per rank (env:// rendezvous: MASTER_ADDR,
MASTER_PORT, RANK, WORLD_SIZE), as TAP on stdout.

Every collective is checked against the result computed from every rank's (deterministic)
input; then a small DDP training loop runs on kcoll and on Gloo (a group of its own) from the
same seed, and the losses must agree within 1e-6 relative.  Last, the last rank kills itself
and the others must get an exception, not hang.  One process does all of it: under TCG
`import torch` alone takes a minute or two.
"""
import datetime
import os
import signal
import sys
import time
import traceback

import torch
import torch.distributed as dist
import torch.nn as nn

import kcoll
import kcoll.torch  # noqa: F401  registers backend "kcoll"

STEPS = int(os.environ.get("TORCH_CHECK_STEPS", "20"))
results = []


def case(fn):
    results.append(fn)
    return fn


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def inp(r, n=5, dtype=torch.float32):
    """Rank r's input: small integers, exact in every dtype."""
    return (torch.arange(n) % 7 + r + 1).to(dtype)


R = W = None


@case
def all_reduce_every_op_and_dtype():
    ops = [(dist.ReduceOp.SUM, lambda xs: sum(xs)),
           (dist.ReduceOp.PRODUCT, lambda xs: torch.stack(xs).prod(0)),
           (dist.ReduceOp.MIN, lambda xs: torch.stack(xs).min(0).values),
           (dist.ReduceOp.MAX, lambda xs: torch.stack(xs).max(0).values)]
    for dt in (torch.float32, torch.float64, torch.int32, torch.int64, torch.int8,
               torch.uint8, torch.float16, torch.bfloat16):
        for op, ref in ops:
            if op == dist.ReduceOp.PRODUCT and dt in (torch.int8, torch.uint8):
                continue  # products of W inputs wrap in 8 bits
            t = inp(R, dtype=dt)
            dist.all_reduce(t, op)
            want = ref([inp(r, dtype=torch.float64) for r in range(W)]).to(dt)
            expect(torch.equal(t, want), "%s %s: %s != %s" % (dt, op, t, want))
    t = inp(R)
    dist.all_reduce(t, dist.ReduceOp.AVG)
    want = sum(inp(r, dtype=torch.float64) for r in range(W)) / W
    expect(torch.allclose(t.double(), want), "avg %s != %s" % (t, want))
    b = torch.tensor([R == 0, False, True])
    dist.all_reduce(b)
    expect(b.tolist() == [True, False, True], "bool %s" % b)


@case
def all_reduce_large_and_non_contiguous():
    t = torch.full((1 << 18,), float(R + 1))
    dist.all_reduce(t)
    expect(bool((t == W * (W + 1) / 2).all()), "1 MiB all-reduce")
    m = torch.zeros(4, 3)
    m[:, 1] = R + 1
    dist.all_reduce(m[:, 1])
    expect(m[:, 1].tolist() == [W * (W + 1) / 2] * 4 and m[:, 0].abs().sum() == 0, str(m))


@case
def broadcast_and_reduce():
    root = W - 1
    t = inp(R) * (R + 1)
    dist.broadcast(t, root)
    expect(torch.equal(t, inp(root) * (root + 1)), "broadcast %s" % t)
    t = inp(R)
    dist.reduce(t, 0, dist.ReduceOp.SUM)
    if R == 0:
        expect(torch.equal(t, sum(inp(r) for r in range(W))), "reduce %s" % t)


@case
def all_gather_gather_scatter():
    outs = [torch.zeros(5) for _ in range(W)]
    dist.all_gather(outs, inp(R))
    expect(all(torch.equal(outs[r], inp(r)) for r in range(W)), "all_gather %s" % outs)
    out = torch.zeros(5 * W)
    getattr(dist, "all_gather_into_tensor", dist._all_gather_base)(out, inp(R))
    expect(torch.equal(out, torch.cat([inp(r) for r in range(W)])), "all_gather_base")
    root = W - 1
    outs = [torch.zeros(5) for _ in range(W)] if R == root else None
    dist.gather(inp(R), outs, dst=root)
    if R == root:
        expect(all(torch.equal(outs[r], inp(r)) for r in range(W)), "gather %s" % outs)
    o = torch.zeros(5)
    dist.scatter(o, [inp(r) * 3 for r in range(W)] if R == 0 else None, src=0)
    expect(torch.equal(o, inp(R) * 3), "scatter %s" % o)


@case
def reduce_scatter_both_forms():
    o = torch.zeros(5)
    dist.reduce_scatter(o, [inp(R) + j for j in range(W)])
    expect(torch.equal(o, sum(inp(r) + R for r in range(W))), "reduce_scatter %s" % o)
    o = torch.zeros(5)
    getattr(dist, "reduce_scatter_tensor", dist._reduce_scatter_base)(
        o, torch.cat([inp(R) + j for j in range(W)]))
    expect(torch.equal(o, sum(inp(r) + R for r in range(W))), "reduce_scatter_base %s" % o)


@case
def all_to_all_equal_and_split():
    t = torch.arange(W * 2, dtype=torch.float32) + 100 * R
    o = torch.zeros(W * 2)
    dist.all_to_all_single(o, t)
    want = torch.cat([torch.arange(2 * R, 2 * R + 2, dtype=torch.float32) + 100 * r
                      for r in range(W)])
    expect(torch.equal(o, want), "all_to_all_single %s != %s" % (o, want))
    # rank r sends j + 1 rows of 2 to rank j; it gets r + 1 rows from every rank
    rows = [j + 1 for j in range(W)]
    t = torch.cat([torch.full((j + 1, 2), float(10 * R + j)) for j in range(W)])
    o = torch.zeros(W * (R + 1), 2)
    dist.all_to_all_single(o, t, [R + 1] * W, rows)
    want = torch.cat([torch.full((R + 1, 2), float(10 * r + R)) for r in range(W)])
    expect(torch.equal(o, want), "all_to_all_single splits %s != %s" % (o, want))
    outs = [torch.zeros(R + 1) for _ in range(W)]
    dist.all_to_all(outs, [torch.full((j + 1,), float(10 * R + j)) for j in range(W)])
    expect(all(torch.equal(outs[r], torch.full((R + 1,), float(10 * r + R)))
               for r in range(W)), "all_to_all %s" % outs)


@case
def barrier_send_recv_ring():
    dist.barrier()
    nxt, prv = (R + 1) % W, (R - 1) % W
    t = torch.zeros(3)
    # even ranks send first, odd ones receive first (the suites run 2 or 4 ranks)
    if R % 2 == 0:
        dist.send(inp(R, 3), nxt)
        dist.recv(t, prv)
    else:
        dist.recv(t, prv)
        dist.send(inp(R, 3), nxt)
    expect(torch.equal(t, inp(prv, 3)), "recv %s" % t)
    # every rank isends first: a send completes only once its receive is posted, so this
    # needs isend to return before it completes (1 MiB: the rendezvous path, not eager)
    for n in (3, 1 << 18):
        t = torch.zeros(n)
        reqs = [dist.isend(inp(R, n) * 2, nxt), dist.irecv(t, prv)]
        for q in reqs:
            q.wait()
        expect(torch.equal(t, inp(prv, n) * 2), "irecv of %d: %s" % (n, t))
    ops = [dist.P2POp(dist.isend, inp(R, 4), nxt), dist.P2POp(dist.irecv, torch.zeros(4), prv)]
    for q in dist.batch_isend_irecv(ops):
        q.wait()
    expect(torch.equal(ops[1].tensor, inp(prv, 4)), "batch_isend_irecv %s" % ops[1].tensor)


@case
def async_ops_overlap_and_keep_order():
    """Several async_op=True collectives in flight at once, waited for in reverse order."""
    a, b = inp(R, n=1000), inp(R, n=7, dtype=torch.int64)
    c = inp(R, n=3)
    outs = [torch.zeros(3) for _ in range(W)]
    works = [dist.all_reduce(a, async_op=True),
             dist.broadcast(b, W - 1, async_op=True),
             dist.all_gather(outs, c, async_op=True),
             dist.all_reduce(c, dist.ReduceOp.MAX, async_op=True)]
    for w in reversed(works):
        expect(w.wait(), "wait")
    expect(all(w.is_completed() and w.is_success() for w in works), "completed")
    expect(torch.equal(a, sum(inp(r, n=1000) for r in range(W))), "all-reduce")
    expect(torch.equal(b, inp(W - 1, n=7, dtype=torch.int64)), "broadcast")
    expect(all(torch.equal(outs[r], inp(r, n=3)) for r in range(W)), "all-gather")
    expect(torch.equal(c, inp(W - 1, n=3)), "max")
    expect(torch.equal(works[0].get_future().wait()[0], a), "the future's value")


@case
def new_group_is_a_split():
    """new_group splits the default group (kcoll_comm_split): overlapping groups, and every
    rank also calls new_group for the groups it is not in."""
    everyone = dist.new_group(list(range(W)))
    last = dist.new_group([W - 1])
    evens = dist.new_group(list(range(0, W, 2)))
    for g, members in ((everyone, range(W)), (last, [W - 1]), (evens, range(0, W, 2))):
        if R not in members:
            expect(g == dist.GroupMember.NON_GROUP_MEMBER, "not a member")
            continue
        expect(isinstance(g, kcoll.torch.ProcessGroupKcoll), type(g))
        expect(g.size() == len(members) and g.rank() == list(members).index(R), "ranks")
        t = inp(R)
        dist.all_reduce(t, group=g)
        expect(torch.equal(t, sum(inp(r) for r in members)), "sum in a group")
    dist.barrier()


def train(group, steps):
    torch.manual_seed(1234)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))
    ddp = nn.parallel.DistributedDataParallel(model, process_group=group)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(99 + R)
    losses = []
    for _ in range(steps):
        x = torch.randn(8, 16, generator=g)
        y = torch.randn(8, 4, generator=g)
        opt.zero_grad()
        loss = nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in model.parameters()]


@case
def ddp_losses_match_gloo():
    t0 = time.time()
    lk, pk = train(None, STEPS)
    t1 = time.time()
    gloo = dist.new_group(backend="gloo")
    lg, pg = train(gloo, STEPS)
    t2 = time.time()
    print("# rank %d: %d steps: kcoll %.2f s, gloo %.2f s; last loss %.8f / %.8f" %
          (R, STEPS, t1 - t0, t2 - t1, lk[-1], lg[-1]))
    for i, (a, b) in enumerate(zip(lk, lg)):
        expect(abs(a - b) <= 1e-6 * max(abs(a), abs(b)), "step %d: loss %r vs %r" % (i, a, b))
    for a, b in zip(pk, pg):
        expect(torch.allclose(a, b, rtol=1e-6, atol=1e-7), "parameters differ")
    # the same model everywhere: rank 0's parameters broadcast equal everyone's
    flat = torch.cat([p.reshape(-1) for p in pk])
    ref = flat.clone()
    dist.broadcast(ref, 0)
    expect(torch.equal(flat, ref), "ranks disagree on the parameters")


VICTIM_SECONDS = 60
comm_failed = False


@case
def kill_one_rank_raises_in_the_others():
    """The last rank kills itself (SIGKILL) between two all-reduces; every other rank's
    all-reduce must raise KcollError well within the group's timeout, not hang.  main()
    reports the case for the victim before it dies."""
    global comm_failed
    dist.barrier()
    if R == W - 1:
        os.kill(os.getpid(), signal.SIGKILL)
    t0 = time.time()
    try:
        for _ in range(1000):
            dist.all_reduce(torch.ones(1 << 18))
    except kcoll.KcollError as e:
        comm_failed = True
        took = time.time() - t0
        print("# rank %d: %.1f s after the kill: %s" % (R, took, e))
        expect(took < VICTIM_SECONDS, "took %.1f s" % took)
        return
    raise AssertionError("1000 all-reduces succeeded without rank %d" % (W - 1))


def main():
    global R, W
    t0 = time.time()
    dist.init_process_group(backend="kcoll", timeout=datetime.timedelta(seconds=300))
    R, W = dist.get_rank(), dist.get_world_size()
    print("TAP version 13")
    print("# rank %d of %d, torch %s, init %.1f s" % (R, W, torch.__version__, time.time() - t0))
    print("1..%d" % len(results))
    failed = 0
    for i, fn in enumerate(results, 1):
        if fn is kill_one_rank_raises_in_the_others and R == W - 1:
            print("ok %d %s # this rank is the one killed" % (i, fn.__name__))
            sys.stdout.flush()
        try:
            fn()
            print("ok %d %s" % (i, fn.__name__))
        except Exception:
            failed += 1
            for line in traceback.format_exc().splitlines():
                print("# " + line)
            print("not ok %d %s" % (i, fn.__name__))
        sys.stdout.flush()
    if not comm_failed:
        dist.barrier()
    dist.destroy_process_group()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
