#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The seed example in PyTorch, on the kcoll backend: N processes (4 in the seed) each
all-reduce [rank + 1]; every rank prints n(n+1)/2 (10 with 4).

Launch it as any torch.distributed program (env:// rendezvous):

    torchrun --nnodes 2 --nproc-per-node 2 --node-rank I --master-addr HOST allreduce_seed.py
    MASTER_ADDR=HOST MASTER_PORT=29500 RANK=i WORLD_SIZE=4 python3 allreduce_seed.py

The only differences from the seed: the import that registers the backend, and its name.
"""
import torch
import torch.distributed as dist

import kcoll.torch  # noqa: F401  registers backend "kcoll"


def main():
    dist.init_process_group(backend="kcoll")
    rank = dist.get_rank()
    tensor = torch.tensor([rank + 1.0])
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    print(f"rank {rank}: {tensor.item():g}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
