#!/bin/sh
# One node of `make demo`: bring up Soft-RoCE, load kcoll, show what an admin sees, and check
# the other nodes are reachable over RDMA.  Output goes to $RIG_DIR/demo.out.
. rig/guest/lib.sh
exec >"$RIG_DIR/demo.out" 2>&1
KCOLLCTL=tools/kcollctl/kcollctl
run() { echo "\$ $*"; "$@"; echo; }

rig_net_up
rig_rxe_up
run modprobe kcoll
run rdma link show
run $KCOLLCTL info
run $KCOLLCTL dev show
run $KCOLLCTL -j -p dev show
run grep -r . /sys/kernel/kcoll/
rping -s -P -a "$(rig_ip "$RIG_NODE")" >/dev/null 2>&1 &
server=$!
i=0
while [ $i -lt 30 ] && ! rdma resource show cm_id | grep -q LISTEN; do sleep 1; i=$((i + 1)); done
rig_barrier up 180
i=0
while [ $i -lt "$RIG_NNODES" ]; do
	if [ $i -ne "$RIG_NODE" ]; then
		if rping -c -a "$(rig_ip $i)" -C 3 -S 4096 -V >/dev/null 2>&1; then
			echo "RDMA to node$i ($(rig_ip $i)): ok"
		else
			echo "RDMA to node$i ($(rig_ip $i)): FAILED"
		fi
	fi
	i=$((i + 1))
done
rig_barrier rping-done 300
kill $server 2>/dev/null

# kcoll itself: every node joins one communicator through libkcoll's bootstrap (rank 0's
# node is the rendezvous), then rank 0 and rank 1 ping-pong 1 MiB, checked byte by byte.
export KCOLL_RANK=$RIG_NODE KCOLL_NRANKS=$RIG_NNODES KCOLL_BOOTSTRAP_ADDR=$(rig_ip 0)
( sleep 2; echo "\$ ls /sys/kernel/kcoll/comms/ (while the communicator is up)";
  grep -r . /sys/kernel/kcoll/comms/ 2>/dev/null; echo ) &
run examples/p2p_ping -n 20 1M
wait
rig_barrier ping-done 300

# The seed example: every rank all-reduces [rank + 1] with SUM (prints n(n+1)/2; 10 on 4).
run examples/allreduce_seed
rig_barrier seed-done 300

# Collectives timed nccl-tests style (small sweep: the machine is emulated), checked.
run tools/kcoll-perf/kcoll-perf -C allreduce,allgather,broadcast -b 8 -e 1M -f 16 -w 1 -n 3 -q
rig_barrier perf-done 600
echo "\$ kcollctl engine show"
tools/kcollctl/kcollctl engine show
rig_barrier done 300
run modprobe -r kcoll
