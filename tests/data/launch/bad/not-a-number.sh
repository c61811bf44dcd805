#!/bin/bash
#SBATCH --nodes=2
srun torchrun --nproc-per-node=8 pretrain_gpt.py --num-layers twelve --seq-length 2048
