/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tools/kcoll-sim/derive.h - kcoll-sim --derive-thresholds: the module's per-collective
 * selection table, derived from the model over a grid (derive.c, Documentation/scale.rst).
 */
#ifndef _KCOLL_SIM_DERIVE_H
#define _KCOLL_SIM_DERIVE_H

#include <stdint.h>
#include <stdio.h>

#include "simnet.h"

/*
 * Parameter sets: "datacentre" (kcoll-sim's defaults: 100 Gb/s RDMA, one switch) and "rig"
 * (the QEMU rig as bench/calibrate.py fitted it on 4 VMs, Documentation/sim.rst).  Sets
 * c's link, latency, overhead and reduction parameters; -1 if the name is unknown.
 */
int derive_preset(struct simnet_cfg *c, const char *name);

/*
 * Run the grid on c's parameters and write the table as a C header (core/kcoll_sched_table.h)
 * to out, and a comparison with the threshold rules to report (NULL: none).  preset names
 * the parameters in the header's comment.  max_ranks (0: all) stops the grid there: the
 * rows printed are then the full table's rows of those rank counts, cheaply (the host
 * test).  0, or -1 with a message on stderr.
 */
int derive_thresholds(const struct simnet_cfg *c, const char *preset, uint32_t max_ranks,
		      FILE *out, FILE *report);

/*
 * kcoll-sim --derive-thresholds SET --check-table: the module's AUTO pick
 * (kcoll_sched_select(): the table, or the rules when small_bytes is not 0) against the
 * fastest algorithm, on derive_thresholds()' grid (at most 1.05 times) and between its sizes
 * and rank counts (at most 1.25 times), up to max_ranks ranks (0: all); a table of the
 * worst ratios to out.  0 within both,
 * 1 beyond one, -1 with a message on stderr when the model fails.
 */
int derive_check(const struct simnet_cfg *c, uint64_t small_bytes, uint32_t max_ranks,
		 FILE *out);

#endif /* _KCOLL_SIM_DERIVE_H */
