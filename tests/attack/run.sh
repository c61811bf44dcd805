#!/bin/bash
# run.sh - the attack suite's driver (tests/attack/README.md).
#
#   bash run.sh --list                    every GROUP/CASE, one a line (CMake reads it)
#   bash run.sh CAPSIM GROUP CASE         run one case
#
# A case is the shell function case_CASE of GROUP.sh. It runs in a scratch
# directory of its own ($T, removed afterwards) with $CAPSIM the binary under
# test and $SRC the source tree. Exit status: 0 pass, 1 fail, 77 skipped
# (the environment lacks a privilege or a tool; never a failure).
#
# Cases named in GROUP.sh's NS_CASES run inside `unshare -m` (a private mount
# namespace: tmpfs mounts and device nodes made there vanish with it, and the
# real /dev is never touched), else `unshare -rm` (a user namespace: tmpfs
# but no device nodes); a case skips what the namespace does not permit.
#
# A case listed in xfail.list is a known bug of capsim outside the files this
# suite may fix: its failure is reported as XFAIL and passes; if it passes,
# that is XPASS and fails, so that the list is kept true.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# every GROUP.sh beside this file but the driver and its library
groups=$(cd "$here" && for f in *.sh; do
	case $f in run.sh | lib.sh) ;; *) echo "${f%.sh}" ;; esac
done)

if [ "${1:-}" = "--list" ]; then
	for g in $groups; do
		sed -n 's/^case_\([a-z0-9_]*\)() *{.*/\1/p' "$here/$g.sh" | sed "s|^|$g/|"
	done
	exit 0
fi
if [ $# -ne 3 ]; then
	echo "usage: run.sh --list | run.sh CAPSIM GROUP CASE" >&2
	exit 2
fi
CAPSIM=$1
GROUP=$2
CASE=$3
case $CAPSIM in /*) ;; *) CAPSIM=$PWD/$CAPSIM ;; esac
SRC=$(cd "$here/../.." && pwd)
export CAPSIM SRC GROUP CASE
: "${CAPSIM_DATA:=$SRC}"
export CAPSIM_DATA

. "$here/$GROUP.sh"
type "case_$CASE" >/dev/null 2>&1 || { echo "no case $GROUP/$CASE" >&2; exit 2; }

# into a private mount namespace, once, before anything else
case " ${NS_CASES:-} " in
*" $CASE "*)
	if [ -z "${ATTACK_IN_NS:-}" ]; then
		# root with CAP_SYS_ADMIN: a mount namespace; else a user namespace
		# with one (tmpfs mounts work there, device nodes do not)
		for ns in -m -rm; do
			if unshare $ns --propagation private true 2>/dev/null; then
				ATTACK_IN_NS=1 exec unshare $ns --propagation private bash "$0" "$@"
			fi
		done
		echo "SKIP $GROUP/$CASE: unshare -m (and -rm) is not permitted here"
		exit 77
	fi
	;;
esac

T=$(mktemp -d "${TMPDIR:-/tmp}/capsim-attack-XXXXXX") || exit 1
export T
cleanup() {
	# a mount left inside $T goes with the namespace; unmount to remove it
	if [ -n "${ATTACK_IN_NS:-}" ]; then
		grep -o " $T[^ ]*" /proc/self/mounts 2>/dev/null | sort -r |
			while read -r m; do umount "$m" 2>/dev/null; done
	fi
	rm -rf "$T"
}
trap cleanup EXIT
cd "$T" || exit 1
mkdir .io
. "$here/lib.sh"

( failed=0; "case_$CASE"; exit "$failed" )
rc=$?

reason=$(awk -v c="$GROUP/$CASE" '$1 == c { $1 = ""; sub(/^ /, ""); print; exit }' \
	"$here/xfail.list")
if [ -n "$reason" ]; then
	case $rc in
	0)	echo "XPASS $GROUP/$CASE: passes now; remove it from tests/attack/xfail.list ($reason)"
		exit 1 ;;
	77)	exit 77 ;;
	*)	echo "XFAIL $GROUP/$CASE: known bug: $reason"
		exit 0 ;;
	esac
fi
case $rc in
0)	echo "PASS $GROUP/$CASE" ;;
77)	;;
*)	echo "FAIL $GROUP/$CASE"; rc=1 ;;
esac
exit $rc
