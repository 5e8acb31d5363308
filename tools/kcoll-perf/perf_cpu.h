/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The node's busy CPU, for kcoll-perf and the benchmark's peers that report it the same way
 * (bench/mpi_timing.c): header-only, so a program built alone (mpicc) can include it.
 */
#ifndef KCOLL_PERF_CPU_H
#define KCOLL_PERF_CPU_H

#include <stdio.h>
#include <unistd.h>

/*
 * The node's busy CPU seconds (user, nice, system, irq, softirq, steal over all CPUs):
 * includes the kernel threads and interrupts that drive kcoll's progress, which no process
 * is charged for.  Tick resolution (USER_HZ): meaningful over long rows only.
 */
static inline double perf_cpu_node(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int got;

	if (!f)
		return 0;
	got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		     &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (got < 7)
		return 0;
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / sysconf(_SC_CLK_TCK);
}

#endif /* KCOLL_PERF_CPU_H */
