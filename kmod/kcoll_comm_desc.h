/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one description of a communicator (kcoll_comm_desc.c): prepared once, under the
 * comm's lock, by kcoll_comm_describe(), then rendered without any lock to netlink
 * (kcoll_nl_comm.c), sysfs and the COMM_QUERY ioctl (kcoll_comm_desc.c), as net/ethtool
 * splits a reply into prepare_data() and fill_reply().
 */
#ifndef _KCOLL_COMM_DESC_H
#define _KCOLL_COMM_DESC_H

#include <linux/sysfs.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <rdma/ib_verbs.h>

struct kcoll_comm;

/**
 * struct kcoll_peer_desc - one peer's connection, as shown
 * @rank:		the peer's rank
 * @state:		enum kcoll_conn_state
 * @ready:		the peer said READY
 * @left:		the peer said BYE
 * @last_err:		the connection's last error, 0 if none
 * @pending_sends:	sends queued or in flight to the peer
 * @pending_recvs:	receives posted for the peer
 * @idle_ms:		since the peer was last heard from, 0 if never
 * @sgid_index:		source GID index of the connection, -1 if none
 * @gid_type:		its GID type, -1 if none
 * @host, @nic, @leaf:	its host, NIC and leaf group (comm->loc), U32_MAX if not known
 * @transport:		name of the transport that reaches the peer (static string)
 */
struct kcoll_peer_desc {
	u32 rank;
	u8 state;
	u8 ready;
	u8 left;
	int last_err;
	u32 pending_sends;
	u32 pending_recvs;
	u32 idle_ms;
	int sgid_index;
	int gid_type;
	u32 host;
	u32 nic;
	u32 leaf;
	const char *transport;
};

/**
 * struct kcoll_op_desc - the oldest operation of a communicator not complete
 * @type:	KCOLL_OP_TYPE_*; KCOLL_OP_TYPE_NONE: none pending (nothing else is set)
 * @coll:	collective: enum kcoll_collective
 * @id:		collective: its number; point-to-point: its sequence number
 * @bytes:	bytes it moves
 * @step:	collective: its current stage's first step
 * @nsteps:	collective: its steps
 * @wait_peer:	the first peer it waits for, U32_MAX if none
 */
struct kcoll_op_desc {
	u8 type;
	u8 coll;
	u64 id;
	u64 bytes;
	u32 step;
	u32 nsteps;
	u32 wait_peer;
};

/**
 * struct kcoll_comm_desc - everything shown about a communicator, at one instant
 * @comm_id, @rank, @nranks, @owner_pid, @owner_uid: the comm's identity
 * @netns:		inode number of its network namespace
 * @dev_name:		its RDMA device, "" if none (or not asked: see kcoll_comm_describe())
 * @tx_bytes, @rx_bytes, @tx_ops, @rx_ops:	point-to-point traffic counters
 * @coll_ops, @coll_bytes:			collectives run, and their bytes
 * @proto_errors:	protocol errors seen from peers
 * @state:		enum kcoll_comm_state
 * @error:		its error, 0 if none
 * @failed_rank:	the peer that failed it, U32_MAX if none
 * @peers_up:		connections up now
 * @op:			the oldest operation not complete
 * @npeers:		entries filled in the peer array given to kcoll_comm_describe()
 * @loc_known:		COMM_CREATE gave the ranks' locality; then:
 * @local_rank, @local_size:	this rank's index among its host's ranks, and their number
 * @nhosts, @nnics, @nleaves:	groups of the communicator
 * @host, @nic, @leaf:		this rank's groups
 */
struct kcoll_comm_desc {
	u64 comm_id;
	u32 rank;
	u32 nranks;
	pid_t owner_pid;
	kuid_t owner_uid;
	u32 netns;
	char dev_name[IB_DEVICE_NAME_MAX];
	u64 tx_bytes;
	u64 rx_bytes;
	u64 tx_ops;
	u64 rx_ops;
	u64 coll_ops;
	u64 coll_bytes;
	u64 proto_errors;
	int state;
	int error;
	u32 failed_rank;
	u32 peers_up;
	struct kcoll_op_desc op;
	u32 npeers;
	bool loc_known;
	u32 local_rank;
	u32 local_size;
	u32 nhosts;
	u32 nnics;
	u32 nleaves;
	u32 host;
	u32 nic;
	u32 leaf;
};

void kcoll_comm_describe(struct kcoll_comm *comm, struct kcoll_comm_desc *d,
			 struct kcoll_peer_desc *peers, bool listed);
void kcoll_comm_describe_ident(struct kcoll_comm *comm, struct kcoll_comm_desc *d);
void kcoll_comm_describe_status_locked(struct kcoll_comm *comm, struct kcoll_comm_desc *d);

/* kcoll_comm.c */
extern const char *const kcoll_comm_state_names[];
void kcoll_comm_walk_assert_held(void);

/* The attributes of /sys/kernel/kcoll/comms/<comm>/, for kcoll_comm.c's kobj_type. */
extern const struct attribute_group *kcoll_comm_groups[];

#endif /* _KCOLL_COMM_DESC_H */
