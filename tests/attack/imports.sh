# imports.sh - hostile inputs to capsim import hf, cmdline and slurm: text
# that would end the XML comment it is written into, expansion bombs, lines
# joined past their limit, what bash or the schema refuses, oversized and
# overfull configs, names that are not ids. Each hostile file is made in $T.

LLAMA=$SRC/tests/data/hf/Meta-Llama-3.1-8B/config.json

# no_element FILE: FILE holds no <evil element outside its comments (it
# validates, so the schema would have refused one, and no line begins one)
no_element() {
	if grep -q '^<evil' "$1"; then
		fail "$1: an <evil> element was written"
	fi
	"$CAPSIM" validate "$1" >/dev/null 2>"$T/.io/verr" ||
		fail "$1 does not validate: $(head -c 300 "$T/.io/verr")"
}

# a config key holding "-->" and markup: the comment holds it escaped
case_hf_key_comment() {
	mkdir m
	{ printf '{"a-->\\n<evil/><!--": 1,'; tail -c +2 "$LLAMA"; } >m/config.json
	cap 0 '' import hf m/config.json --out m.xml
	no_element m.xml
	grep -qF 'a-\x2d>\x0a<evil/><!-\x2d: not modelled' m.xml ||
		fail "the key does not read back in the comment"
	[ "$(grep -c -- '-->' m.xml)" -eq "$(grep -c -- '<!--' m.xml)" ] ||
		fail "a comment is closed more often than opened"
}

# a launch flag holding "-->": the scenario's comment holds it escaped
case_cmdline_flag_comment() {
	cap 0 '' import cmdline --model llama-2-13b --out s.xml -- torchrun --nproc-per-node 8 \
		train.py --seq-length 2048 '--x-->' '<evil/><!--'
	no_element s.xml
	grep -qF -- '-\x2dx-\x2d> <evil/><!-\x2d: not modelled' s.xml ||
		fail "the flag does not read back in the comment"
}

# a script whose path holds "--" (libxml2 refused the scenario: a double hyphen)
case_script_path_hyphens() {
	mkdir -p 'jobs--x'
	printf 'torchrun --nproc-per-node 8 train.py --seq-length 2048\n' >'jobs--x/run--1.sh'
	cap 0 '' import slurm 'jobs--x/run--1.sh' --model llama-2-13b --out s.xml
	no_element s.xml
	grep -qF 'jobs-\x2dx/run-\x2d1.sh' s.xml || fail "the path does not read back"
}

# A=x; A=$A$A ... 40 times (it took 3.2 GB): refused where it passes 1 MiB
case_expansion_bomb() {
	{ echo 'A=x'; for i in $(seq 40); do echo 'A=$A$A'; done
	  echo 'torchrun train.py --seq-length $A'; } >bomb.sh
	cap 2 'bomb.sh:21: error: the line' import slurm bomb.sh --model llama-2-13b
	has 'pass 1048576 bytes, the limit on a line of a launch script'
	# the same on one line (the fuzzer's 550-byte variant)
	{ echo 'A=x'; for i in $(seq 19); do echo 'A=$A$A'; done
	  printf 'torchrun train.py --seq-length 2048 --x'; for i in $(seq 200); do printf '$A'; done
	  echo; } >one.sh
	cap 2 'one.sh:21: error: the line' import slurm one.sh --model llama-2-13b
	# under the line's limit each, over the script's 16 MiB together
	{ echo 'A=x'; for i in $(seq 19); do echo 'A=$A$A'; done
	  for i in $(seq 40); do echo 'B=$A'; done; echo 'torchrun train.py'; } >total.sh
	cap 2 'pass 16777216 bytes together, the limit of a launch script' \
		import slurm total.sh --model llama-2-13b
}

# 750,000 continued lines (they took minutes to join): refused at 1 MiB
case_continued_lines() {
	{ printf 'torchrun train.py --seq-length 2048 \\\n'; yes '  -a \' | head -n 750000
	  echo '  --b'; } >cont.sh
	cap 2 'cont.sh:1: error: a logical line (lines joined by a backslash' \
		import slurm cont.sh --model llama-2-13b
	has 'longer than 1048576 bytes, the limit on a line of a launch script'
	# an array never closed: where it opened
	{ echo 'ARGS=('; yes '  --a 1' | head -n 1000; } >arr.sh
	cap 2 'arr.sh:1: error: unterminated ( (a bash array)' import slurm arr.sh \
		--model llama-2-13b
}

# what bash refuses as a syntax error (it was taken as one word)
case_unterminated() {
	printf 'torchrun train.py --seq-length 2048 --lr "3e-4\n' >dq.sh
	cap 2 'dq.sh:1: error: unterminated " (a double quote)' import slurm dq.sh --model llama-2-13b
	printf '#!/bin/bash\nHOST=$(hostname\ntorchrun train.py --seq-length 2048\n' >sub.sh
	cap 2 'sub.sh:2: error: unterminated $( (a command substitution)' import slurm sub.sh \
		--model llama-2-13b
	printf 'torchrun train.py --seq-length 2048 --host `hostname\n' >tick.sh
	cap 2 'tick.sh:1: error: unterminated ` (a command substitution)' import slurm tick.sh \
		--model llama-2-13b
	printf "torchrun train.py --seq-length 2048 --name 'x\n" >sq.sh
	cap 2 "sq.sh:1: error: unterminated ' (a single quote)" import slurm sq.sh \
		--model llama-2-13b
}

# zero and negative sizes and batches (--global-batch-size 0 became 32)
case_zero_sizes() {
	local f
	for f in '--global-batch-size 0' '--micro-batch-size 0' '--seq-length -4096' \
		'--tensor-model-parallel-size 0' '--num-layers 99999999999999999999'; do
		# shellcheck disable=SC2086
		cap 2 'expected a positive whole number' import cmdline --model llama-2-13b -- \
			torchrun --nproc-per-node 8 train.py --seq-length 2048 $f
		has "${f%% *}"
	done
	mkdir m
	{ printf '{"head_dim": 0,'; tail -c +2 "$LLAMA"; } >m/config.json
	cap 2 'head_dim: expected a positive whole number, found 0' import hf m/config.json \
		--name zero-head
	sed 's/"hidden_act": *"silu"/"hidden_act": 7/' "$LLAMA" >m/config.json
	cap 2 'hidden_act: expected a string, found an integer' import hf m/config.json --name act
}

# a 12 MiB config (the cap on input files is 8 MiB) and a 12 MiB script
case_oversized() {
	mkdir m
	{ printf '{"model_type":"llama","x":"'; head -c 12582912 /dev/zero | tr '\0' a
	  printf '"}'; } >m/config.json
	cap 2 'larger than the 8388608-byte' import hf m/config.json
	{ echo 'torchrun train.py --seq-length 2048'; head -c 12582912 /dev/zero | tr '\0' '#'
	  echo; } >big.sh
	cap 2 'larger than the 8388608-byte' import slurm big.sh \
		--model llama-2-13b
	[ ! -s "$OUT" ] || fail "something was written on standard output"
}

# 100,000 keys capsim does not read: 12 named, the rest counted
case_many_keys() {
	mkdir m
	{ printf '{'; seq -f '"k%.0f": 1,' 1 100000; tail -c +2 "$LLAMA"; } >m/config.json
	cap 0 '' import hf m/config.json --out m.xml
	has 'warning: and 99988 more keys: not modelled (left out)'
	[ "$(grep -c 'warning: k[0-9]*: not modelled' "$ERR")" -eq 12 ] ||
		fail "expected 12 keys named on stderr"
	no_element m.xml
}

# --name, --model and --node are ids (common.xsd), refused with the rule
case_bad_names() {
	local n
	for n in 'My Model' 'x"/><evil a="' '-x' '' 'a b' "$(printf 'x\033]0;t\007')"; do
		cap 2 'expected an id (an id is a lower-case letter or digit' import cmdline \
			--name "$n" --models m.xml -- torchrun train.py --seq-length 2048
		cap 2 'expected an id (an id is a lower-case letter or digit' import hf "$LLAMA" \
			--name "$n"
	done
	grep -q "$(printf '\033')" "$ERR" && fail "an escape character reached stderr"
	cap 2 "--model 'llama\"/>': expected an id" import cmdline --model 'llama"/>' -- \
		torchrun train.py --seq-length 2048
	cap 2 "--node 'DGX H100': expected an id" import cmdline --model llama-2-13b \
		--node 'DGX H100' -- torchrun train.py --seq-length 2048
	[ ! -e m.xml ] || fail "a models file was written"
}
