#!/bin/bash
# A Slurm batch script as clusters run Megatron-LM: 8 nodes of 8 GPUs, torchrun
# under srun with the c10d rendezvous (the public sbatch, srun and torchrun
# formats; the model flags are Megatron-LM's, megatron/training/arguments.py).
#SBATCH --job-name=llama3-8b
#SBATCH --nodes=8
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=96
#SBATCH --time=48:00:00
#SBATCH --exclusive

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=29500
export CUDA_DEVICE_MAX_CONNECTIONS=1

TP=2
PP=1
SEQ=8192

srun torchrun --nnodes $SLURM_NNODES --nproc-per-node=8 \
    --rdzv-backend=c10d --rdzv-endpoint=$MASTER_ADDR:$MASTER_PORT \
    pretrain_gpt.py \
    --tensor-model-parallel-size $TP \
    --pipeline-model-parallel-size $PP \
    --sequence-parallel \
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 \
    --group-query-attention --num-query-groups 8 \
    --ffn-hidden-size 14336 --swiglu --normalization RMSNorm \
    --position-embedding-type rope --untie-embeddings-and-output-weights \
    --vocab-size 128256 --max-position-embeddings 131072 \
    --seq-length $SEQ --micro-batch-size 1 --global-batch-size 512 \
    --train-iters 250000 --lr 3.0e-4 --min-lr 3.0e-5 --lr-decay-style cosine \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --bf16 --recompute-granularity selective \
    --data-path /lustre/data/tokens_text_document --tokenizer-type HuggingFaceTokenizer
