#!/bin/bash
#SBATCH --nodes=2
echo hello
sleep 10
