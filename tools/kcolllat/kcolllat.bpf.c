// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * kcolllat BPF side: the kcoll:* raw tracepoints of operation start and finish, a latency
 * histogram per kind of operation and message size.
 *
 * The tracepoints pass plain values (kmod/kcoll_trace.h), so no BTF of the module is needed;
 * the owning process is read from the task with CO-RE, against the running kernel's BTF.
 * The pid filter applies where an operation starts (the caller's context): completions run
 * in kernel workers.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "kcolllat.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u64 filter_comm = 0;	/* 0: every communicator */
const volatile __u32 filter_pid = 0;	/* 0: every process */

struct start_key {
	__u64 comm_id;
	__u64 id;	/* p2p: sequence number; collective: op id */
	__u32 rank;
	__u32 what;	/* p2p: peer << 1 | send; collective: 1 << 31 | coll */
};

struct start_val {
	__u64 ts;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct start_key);
	__type(value, struct start_val);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KCOLLLAT_NKINDS * KCOLLLAT_NSIZES);
	__type(key, __u32);
	__type(value, struct kcolllat_hist);
} hists SEC(".maps");

static __always_inline __u32 log2_u32(__u32 v)
{
	__u32 r, shift;

	r = (v > 0xFFFF) << 4;
	v >>= r;
	shift = (v > 0xFF) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xF) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 hi = v >> 32;

	return hi ? log2_u32(hi) + 32 : log2_u32(v);
}

static __always_inline bool selected(__u64 comm_id)
{
	struct task_struct *task;

	if (filter_comm && comm_id != filter_comm)
		return false;
	if (!filter_pid)
		return true;
	task = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(task, tgid) == filter_pid;
}

static __always_inline void op_start(__u64 comm_id, __u32 rank, __u64 id, __u32 what)
{
	struct start_key k = { .comm_id = comm_id, .id = id, .rank = rank, .what = what };
	struct start_val v = { .ts = bpf_ktime_get_ns() };

	if (selected(comm_id))
		bpf_map_update_elem(&starts, &k, &v, BPF_ANY);
}

static __always_inline void op_finish(__u64 comm_id, __u32 rank, __u64 id, __u32 what,
				      __u32 kind, __u64 bytes, int status)
{
	struct start_key k = { .comm_id = comm_id, .id = id, .rank = rank, .what = what };
	struct kcolllat_hist zero = {}, *h;
	struct start_val *v;
	__u64 ns, us;
	__u32 key, lat;

	v = bpf_map_lookup_elem(&starts, &k);
	if (!v)
		return;		/* started before we attached, or filtered out */
	ns = bpf_ktime_get_ns() - v->ts;
	bpf_map_delete_elem(&starts, &k);

	key = KCOLLLAT_KEY(kind, log2_u64(bytes ? bytes : 1));
	h = bpf_map_lookup_elem(&hists, &key);
	if (!h) {
		bpf_map_update_elem(&hists, &key, &zero, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&hists, &key);
		if (!h)
			return;
	}
	us = ns / 1000;
	lat = log2_u64(us ? us : 1);
	if (lat >= KCOLLLAT_NLAT)
		lat = KCOLLLAT_NLAT - 1;
	/*
	 * Older verifiers (6.1) lose the clamp's bound through log2's variable shifts: mask
	 * the index itself, behind a barrier so that clang keeps the mask.
	 */
	barrier_var(lat);
	lat &= KCOLLLAT_NLAT - 1;
	__sync_fetch_and_add(&h->ops, 1);
	__sync_fetch_and_add(&h->ns, ns);
	__sync_fetch_and_add(&h->lat[lat], 1);
	if (status)
		__sync_fetch_and_add(&h->errors, 1);
	else
		__sync_fetch_and_add(&h->bytes, bytes);
}

SEC("raw_tp/kcoll_p2p_start")
int BPF_PROG(p2p_start, __u64 comm_id, __u32 rank, __u32 peer, int send, __u32 seq,
	     __u64 bytes, int status)
{
	op_start(comm_id, rank, seq, peer << 1 | !!(send & 0xff));
	return 0;
}

SEC("raw_tp/kcoll_p2p_finish")
int BPF_PROG(p2p_finish, __u64 comm_id, __u32 rank, __u32 peer, int send, __u32 seq,
	     __u64 bytes, int status)
{
	bool s = send & 0xff;

	op_finish(comm_id, rank, seq, peer << 1 | s, s ? KCOLLLAT_SEND : KCOLLLAT_RECV, bytes,
		  status);
	return 0;
}

SEC("raw_tp/kcoll_op_start")
int BPF_PROG(coll_start, __u64 comm_id, __u32 rank, __u64 op_id, __u32 coll, __u32 algo,
	     __u64 bytes, __u32 nsteps)
{
	op_start(comm_id, rank, op_id, 1U << 31 | coll);
	return 0;
}

SEC("raw_tp/kcoll_op_finish")
int BPF_PROG(coll_finish, __u64 comm_id, __u32 rank, __u64 op_id, __u32 coll, __u64 bytes,
	     int status)
{
	if (coll < KCOLLLAT_NCOLL)
		op_finish(comm_id, rank, op_id, 1U << 31 | coll, KCOLLLAT_COLL0 + coll, bytes,
			  status);
	return 0;
}
