#!/bin/sh
# layouts_at_scale.sh - the default job (Llama 3.1 70B) at 524,288 H100s
# (65,536 nodes, 3 tiers of 128-port switches) in the layouts an optimiser
# visits: tp 1-8, pp 1-16, cp 1-4, ZeRO 0, 1 and 3, each replica 16
# micro-batches, under adaptive routing and ECMP. Each is one whole
# `capsim run` process; prints its user CPU seconds and peak resident KB
# (GNU time), the slowest first.
#
# Usage: sh tests/bench/layouts_at_scale.sh CAPSIM   (from the source tree)
set -u
capsim=${1:?usage: layouts_at_scale.sh CAPSIM}
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)" >&2; exit 2; }
out=$(mktemp) || exit 1
t=$(mktemp) || exit 1
trap 'rm -f "$out" "$t"' EXIT
fabric="--set cluster.nodes=65536 --set cluster.fabric.tiers=3 --set cluster.fabric.switch.ports.count=128"
sched="--set workload.parallelism.schedule=1f1b --set workload.parallelism.virtual-stages=1"
for rt in adaptive ecmp; do
	for tp in 1 2 4 8; do for pp in 1 2 4 8 16; do for cp in 1 2 4; do for z in 0 1 3; do
		dp=$((524288 / (tp * pp * cp)))
		# shellcheck disable=SC2086
		if ! CAPSIM_DATA=. /usr/bin/time -f "%U %M" -o "$t" "$capsim" run scenarios/default.xml \
			$fabric $sched --set cluster.fabric.routing=$rt \
			--set workload.parallelism.tp=$tp --set workload.parallelism.pp=$pp \
			--set workload.parallelism.cp=$cp --set workload.parallelism.dp=$dp \
			--set workload.parallelism.zero=$z --set workload.global-batch=$((dp * 16)) \
			>/dev/null 2>&1; then
			echo "$rt tp $tp pp $pp cp $cp zero $z: capsim run failed" >&2
			exit 1
		fi
		read -r cpu kb <"$t"
		echo "$cpu $kb $rt tp $tp pp $pp cp $cp zero $z" >>"$out"
	done; done; done; done
done
echo "user CPU s, peak KB, layout ($(wc -l <"$out") runs)"
sort -g -r "$out"
