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
	local objects="info dev comm help"
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
			COMPREPLY=($(compgen -W "show list help" -- "$cur"))
		elif ((nargs == 2)) && [[ $prev == show || $prev == list ]]; then
			COMPREPLY=($(compgen -W "$(_kcollctl_devices)" -- "$cur"))
		fi
		;;
	comm)
		if ((nargs == 1)); then
			COMPREPLY=($(compgen -W "show list help" -- "$cur"))
		elif ((nargs == 2)) && [[ $prev == show || $prev == list ]]; then
			COMPREPLY=($(compgen -W "$(_kcollctl_comms)" -- "$cur"))
		fi
		;;
	esac
} &&
	complete -F _kcollctl kcollctl

# ex: filetype=sh
