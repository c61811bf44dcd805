/* torchtitan.h - a torchtitan job config (its TOML: [model], [training],
 * [parallelism], [activation_checkpoint], [compile], [quantize...]) read
 * into a launch (launch.h), whose scenario writer makes it capsim's. */
#ifndef CAPSIM_TORCHTITAN_H
#define CAPSIM_TORCHTITAN_H

#include <stddef.h>

#include "diag.h"
#include "launch.h"
#include "toml.h"

/* Read config text (len bytes) of file, run on nodes nodes (0: the config
 * does not say, one assumed) of node_gpus GPUs, into *l (started empty):
 * - [model] (where *model, the caller's model id, is NULL on entry: else
 *   its name and flavor are noted as planned as that model) name "llama3"
 *   with flavor 8B, 70B or 405B gives *model, the
 *   catalog's llama-3.1-* id; flavor debugmodel gives *model NULL and l's
 *   architecture (torchtitan's own: 6 layers, 256 wide, 16 heads, vocabulary
 *   2048, SwiGLU FFN 768, RMSNorm, RoPE, untied); converters ["float8"] fp8
 *   with the current (tensorwise) recipe;
 * - [training] local_batch_size (the micro-batch), global_batch_size (-1:
 *   local x data-parallel), seq_len, steps (the token budget: steps x global
 *   batch x seq_len), mixed_precision_param;
 * - [parallelism] the data-parallel replicate and shard degrees (shard -1:
 *   the GPUs the other degrees leave), TP, PP, CP, EP, the pipeline schedule,
 *   async TP (the TP overlap), fsdp_reshard_after_forward (never: ZeRO 2);
 * - [activation_checkpoint] mode; [compile] enable (execution compiled; the
 *   older training.compile too);
 * - [optimizer] name (AdamW, or Adam: another is noted, planned as AdamW).
 * torchtitan's defaults (its config/job_config.py) where a key is absent,
 * each noted. The framework is fsdp2, ZeRO 3 where the shard degree passes
 * 1, else 0. Every other key is noted in l as not modelled, by table.
 * Returns 0, or -1 with each reason at file:line in d: the TOML (toml.h), a
 * value of the wrong kind or range, a model other than those above (Llama 4
 * and others: no catalog model), a converter other than float8, degrees
 * whose product is not the GPUs, a global batch not a multiple of local x
 * data-parallel, a pipeline schedule torchtitan does not name (GPipe and
 * 1F1B are read as capsim's; Interleaved1F1B, LoopedBFS,
 * InterleavedZeroBubble, ZBVZeroBubble and DualPipeV as interleaved 1F1B of
 * two stages a rank, the last four noted as not modelled), a key torchtitan
 * has since moved (training.batch_size,
 * the degrees under [training], enable_float8_linear). */
int capsim_torchtitan_read(const char *text, size_t len, const char *file, long nodes,
			   int node_gpus, capsim_launch *l, const char **model, capsim_diags *d);

/* capsim_torchtitan_read of a document already read (and perhaps
 * overridden: capsim_toml_override), into l as it stands (not emptied: a
 * launcher's notes kept); its keys are marked read. */
int capsim_torchtitan_read_doc(capsim_toml *t, const char *file, long nodes, int node_gpus,
			       capsim_launch *l, const char **model, capsim_diags *d);

#endif
