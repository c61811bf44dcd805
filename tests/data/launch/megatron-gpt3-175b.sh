#!/bin/bash
# The shape of Megatron-LM's examples/gpt3/train_gpt3_175b_distributed.sh: bash
# arrays of arguments, torchrun with the arrays expanded.
GPUS_PER_NODE=8
NUM_NODES=128
DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --master_addr $MASTER_ADDR
    --master_port $MASTER_PORT
)
GPT_MODEL_ARGS=(
    --num-layers 96
    --hidden-size 12288
    --num-attention-heads 96
    --seq-length 2048
    --max-position-embeddings 2048
)
TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 1536
    --train-iters 500000
    --weight-decay 0.1
    --init-method-std 0.006
    --clip-grad 1.0
    --fp16
    --lr 6.0e-5
)
MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size 8
    --pipeline-model-parallel-size 16
)
torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${GPT_MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    --vocab-size 51200
