# SPDX-License-Identifier: GPL-2.0-only
# bash completion for kcollctl(8)

_kcollctl_devices()
{
	local root=${KCOLL_SYSFS_ROOT:-/sys/kernel/kcoll}

	[[ -d $root/devices ]] || return
	command ls "$root/devices" 2>/dev/null
}

# Communicator ids (every rank of one) and directory names, as "comm show" takes them.
_kcollctl_comms()
{
	local root=${KCOLL_SYSFS_ROOT:-/sys/kernel/kcoll} d

	[[ -d $root/comms ]] || return
	for d in "$root"/comms/*/; do
		[[ -d $d ]] || continue
		d=${d%/}
		d=${d##*/}
		echo "${d%%-*}"
		echo "$d"
	done | sort -u
}

_kcollctl()
{
	local cur prev words cword
	# Without the bash-completion package, fall back to the raw COMP_* variables.
	if declare -F _init_completion >/dev/null; then
		_init_completion || return
	else
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
	fi

	local opts="-j --json -p --pretty -V --version -h --help --device"
	local objects="info dev comm config engine stats monitor help"
	local i obj="" objidx=0

	# The object is the first word that is not an option (or --device's argument).
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--device) ((i++)) ;;
		-*) ;;
		*) obj=${words[i]}; objidx=$i; break ;;
		esac
	done

	if [[ $prev == --device ]]; then
		if declare -F _filedir >/dev/null; then
			_filedir
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return
	fi

	if [[ -z $obj ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$objects" -- "$cur"))
		fi
		return
	fi

	local nargs=$((cword - objidx))
	case $obj in
	info)
		((nargs == 1)) && COMPREPLY=($(compgen -W "show help" -- "$cur"))
		;;
	dev)
		if ((nargs == 1)); then
			COMPREPLY=($(compgen -W "show list set help" -- "$cur"))
		elif ((nargs == 2)) && [[ $prev == show || $prev == list || $prev == set ]]; then
			COMPREPLY=($(compgen -W "$(_kcollctl_devices)" -- "$cur"))
		elif ((nargs >= 3)) && [[ ${words[objidx + 1]} == set ]]; then
			case $prev in
			allowed) COMPREPLY=($(compgen -W "yes no" -- "$cur")) ;;
			tos) COMPREPLY=($(compgen -W "default" -- "$cur")) ;;
			gid)
				# auto, or an index of the device's GID table (the "gid N" lines).
				local gids
				gids=$(kcollctl dev show "${words[objidx + 2]}" 2>/dev/null |
					awk '$1 == "gid" { print $2 }' | sort -un)
				COMPREPLY=($(compgen -W "auto $gids" -- "$cur"))
				;;
			*) ((nargs % 2 == 1)) && COMPREPLY=($(compgen -W "allowed tos gid" -- "$cur")) ;;
			esac
		fi
		;;
	comm)
		if ((nargs == 1)); then
			COMPREPLY=($(compgen -W "show list abort help" -- "$cur"))
		elif ((nargs == 2)) && [[ $prev == show || $prev == list ]]; then
			COMPREPLY=($(compgen -W "$(_kcollctl_comms)" -- "$cur"))
		elif ((nargs == 2)) && [[ $prev == abort ]]; then
			COMPREPLY=($(compgen -W "$(_kcollctl_comms | grep -- -)" -- "$cur"))
		fi
		;;
	config)
		local keys="listen_port connect_timeout_ms op_timeout_ms tos chunk_bytes small_bytes
			    medium_bytes tree_ranks transport tcp_port algo"
		local transports="auto rdma tcp"
		local colls="broadcast scatter gather reduce allreduce allgather reduce_scatter
			     alltoall barrier allgatherv alltoallv reduce_scatterv"
		local algos="auto ring recdbl rabenseifner binomial dbtree chain pairwise bruck hier"
		if ((nargs == 1)); then
			COMPREPLY=($(compgen -W "show set help" -- "$cur"))
		elif [[ ${words[objidx + 1]} == set ]]; then
			if [[ $prev == algo ]]; then
				COMPREPLY=($(compgen -W "$colls" -- "$cur"))
			elif [[ ${words[cword - 2]} == algo ]]; then
				COMPREPLY=($(compgen -W "$algos" -- "$cur"))
			elif [[ $prev == tos ]]; then
				COMPREPLY=($(compgen -W "default" -- "$cur"))
			elif [[ $prev == transport ]]; then
				COMPREPLY=($(compgen -W "$transports" -- "$cur"))
			elif [[ $prev == set || " $algos $transports " == *" $prev "* ]] ||
			     [[ $prev =~ ^-?[0-9]+$ || $prev == default ]]; then
				COMPREPLY=($(compgen -W "$keys" -- "$cur"))
			fi
		fi
		;;
	engine)
		if ((nargs == 1)); then
			COMPREPLY=($(compgen -W "show set help" -- "$cur"))
		elif [[ ${words[objidx + 1]} == set ]]; then
			case $prev in
			set) COMPREPLY=($(compgen -W "$(ls /sys/kernel/kcoll/engines 2>/dev/null)" \
					 -- "$cur")) ;;
			dtype) COMPREPLY=($(compgen -W "int8 uint8 int32 uint32 int64 uint64 fp16
							bf16 fp32 fp64" -- "$cur")) ;;
			op) COMPREPLY=($(compgen -W "sum prod min max avg" -- "$cur")) ;;
			*) COMPREPLY=($(compgen -W "dtype op" -- "$cur")) ;;
			esac
		fi
		;;
	stats)
		((nargs == 1)) && COMPREPLY=($(compgen -W "show help" -- "$cur"))
		;;
	monitor)
		case $prev in
		count|timeout) ;;
		*) COMPREPLY=($(compgen -W "show count timeout help" -- "$cur")) ;;
		esac
		;;
	esac
} &&
	complete -F _kcollctl kcollctl

# ex: filetype=sh
