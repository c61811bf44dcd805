#!/bin/bash
torchrun train.py --seq-length 2048 --lr "3e-4
ARGS=(
  --a 1
