#!/bin/bash
srun torchrun --nproc-per-node=8 pretrain_gpt.py --recompute-granularity partial --seq-length 2048
