#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Launchers: which rank and size python/kcoll takes from mpirun, mpiexec, srun, torchrun
(kcoll.LAUNCHERS, kcoll.launcher_env(), which import kcoll.torch runs for torch's env://
rendezvous), against libkcoll's own table (lib/boot_env.c).  No library, no torch.  TAP.
"""
import os
import re
import sys
import traceback

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "python"))

import kcoll  # noqa: E402


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def test_launchers_match_libkcoll():
    """kcoll.LAUNCHERS is lib/boot_env.c's table, in the same order."""
    src = open(os.path.join(TOP, "lib", "boot_env.c")).read()
    table = src[src.index("kcoll_env_sources[] = {"):]
    table = table[:table.index("};")]
    rows = [tuple(None if f == "NULL" else f.strip('"') for f in
                  re.findall(r'"[^"]*"|NULL', row))
            for row in re.findall(r"\{([^{}]*)\}", table)]
    expect(rows == list(kcoll.LAUNCHERS), (rows, kcoll.LAUNCHERS))


def test_launcher_env_for_mpirun_and_srun():
    """What import kcoll.torch adds to the environment for torch's env:// rendezvous."""
    cases = [  # (environment, launcher named, variables added)
        ({}, None, {}),
        ({"RANK": "1", "WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0"}, None, {}),
        ({"WORLD_SIZE": "2", "SLURM_PROCID": "1"}, None, {}),
        ({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2",
          "OMPI_COMM_WORLD_LOCAL_RANK": "1"}, "Open MPI",
         {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"}),
        # mpirun in an sbatch script: the script's SLURM_PROCID is not the rank
        ({"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "OMPI_COMM_WORLD_RANK": "3",
          "OMPI_COMM_WORLD_SIZE": "4"}, "Open MPI", {"RANK": "3", "WORLD_SIZE": "4"}),
        ({"PMI_RANK": "2", "PMI_SIZE": "3", "MPI_LOCALRANKID": "0"}, "MPICH (PMI)",
         {"RANK": "2", "WORLD_SIZE": "3", "LOCAL_RANK": "0"}),
        ({"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1"}, "Slurm",
         {"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1"}),
        ({"KCOLL_RANK": "0", "KCOLL_NRANKS": "2", "SLURM_PROCID": "1"}, "KCOLL",
         {"RANK": "0", "WORLD_SIZE": "2"}),
        ({"KCOLL_RANK": "", "SLURM_PROCID": "1", "SLURM_NTASKS": "2"}, "Slurm",
         {"RANK": "1", "WORLD_SIZE": "2"}),
        ({"SLURM_NTASKS": "2"}, None, {}),
    ]
    for env, name, added in cases:
        e = dict(env)
        got = kcoll.launcher_env(e)
        expect(got == name and e == dict(env, **added), (env, got, e))


def main():
    tests = [test_launchers_match_libkcoll, test_launcher_env_for_mpirun_and_srun]
    print("TAP version 13")
    print("1..%d" % len(tests))
    failed = 0
    for i, fn in enumerate(tests, 1):
        try:
            fn()
            print("ok %d %s" % (i, fn.__name__))
        except Exception:
            failed += 1
            for line in traceback.format_exc().splitlines():
                print("# " + line)
            print("not ok %d %s" % (i, fn.__name__))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
