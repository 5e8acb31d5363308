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
rig_barrier done 300
kill $server 2>/dev/null
run modprobe -r kcoll
