/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kcolllat: what the BPF program and the tool share. */
#ifndef _KCOLLLAT_H
#define _KCOLLLAT_H

/* Kinds of operations: point-to-point send and receive, then one per collective. */
#define KCOLLLAT_SEND		0
#define KCOLLLAT_RECV		1
#define KCOLLLAT_COLL0		2
#define KCOLLLAT_NCOLL		12
#define KCOLLLAT_NKINDS		(KCOLLLAT_COLL0 + KCOLLLAT_NCOLL)

#define KCOLLLAT_NSIZES		48	/* log2 buckets of the message size in bytes */
#define KCOLLLAT_NLAT		32	/* log2 buckets of the latency in microseconds (2^n) */

/* Key of the histogram map: kind << 8 | log2(bytes). */
#define KCOLLLAT_KEY(kind, size)	(((kind) << 8) | (size))

struct kcolllat_hist {
	__u64 ops;
	__u64 errors;
	__u64 bytes;
	__u64 ns;
	__u64 lat[KCOLLLAT_NLAT];
};

#endif /* _KCOLLLAT_H */
