#!/bin/sh
# Fail (exit 1, printing the offending lines) if a kernel log shows a warning, a bug, an oops,
# a refcount or list corruption, a hung task or a panic.  Usage: rig/dmesg-check.sh LOG...
pat='WARNING:|BUG:|BUG |Oops|general protection|refcount_t|list_add corruption'
pat="$pat|list_del corruption|blocked for more than|Kernel panic|KASAN|UBSAN|"
pat="${pat}possible circular locking|possible recursive locking|inconsistent lock state"
pat="$pat|unreferenced object|suspicious RCU usage|sleeping function called from invalid"
# Only kernel lines: console logs mix the jobs' output with printk lines ("[    1.234] ...").
bad=$(cat "$@" 2>/dev/null | grep -E '^(<[0-9]>)?\[ *[0-9]+\.[0-9]+\]' | grep -E "$pat")
[ -z "$bad" ] && exit 0
printf '%s\n' "$bad" | head -n 40
exit 1
