#!/bin/bash
# NeMo's Hydra overrides on a Megatron GPT pre-training run (key=value).
python /opt/NeMo/examples/nlp/language_modeling/megatron_gpt_pretraining.py \
    --config-path=conf --config-name=megatron_gpt_config \
    trainer.num_nodes=4 trainer.devices=8 trainer.max_steps=10000 \
    model.tensor_model_parallel_size=2 model.pipeline_model_parallel_size=2 \
    model.virtual_pipeline_model_parallel_size=null \
    model.micro_batch_size=1 model.global_batch_size=128 model.encoder_seq_length=4096 \
    model.num_layers=32 model.hidden_size=4096 model.num_attention_heads=32 \
    model.ffn_hidden_size=11008 model.sequence_parallel=True model.optim.name=distributed_fused_adam
