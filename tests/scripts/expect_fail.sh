#!/bin/sh
# expect_fail.sh CAPSIM FILE - run `capsim validate FILE` (with the --set
# arguments named by "<!-- set: PATH=VALUE -->" lines of FILE) and check that it
# exits with the status of "<!-- exit: N -->" (default 2) and that stderr holds
# every "<!-- expect: TEXT -->" line of FILE.
set -u
capsim=$1
file=$2
want_exit=$(sed -n 's/^<!-- exit: \([0-9]*\) -->$/\1/p' "$file" | head -n 1)
[ -n "$want_exit" ] || want_exit=2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
# build the argument list from set: lines (values may contain spaces)
set -- validate "$file"
while IFS= read -r line; do
	case "$line" in
	'<!-- set: '*' -->')
		kv=${line#'<!-- set: '}
		kv=${kv%' -->'}
		set -- "$@" --set "$kv"
		;;
	esac
done < "$file"
"$capsim" "$@" >/dev/null 2>"$err"
got=$?
status=0
if [ "$got" -ne "$want_exit" ]; then
	echo "FAIL $file: exit $got, expected $want_exit"
	status=1
fi
n=0
while IFS= read -r line; do
	case "$line" in
	'<!-- expect: '*' -->')
		text=${line#'<!-- expect: '}
		text=${text%' -->'}
		n=$((n + 1))
		if ! grep -qF -- "$text" "$err"; then
			echo "FAIL $file: stderr lacks: $text"
			status=1
		fi
		;;
	esac
done < "$file"
if [ "$n" -eq 0 ]; then
	echo "FAIL $file: no '<!-- expect: ... -->' line"
	status=1
fi
if grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$err"; then
	echo "FAIL $file: sanitizer report"
	status=1
fi
[ "$status" -eq 0 ] || { echo "--- stderr:"; cat "$err"; }
exit $status
