/* launch_conf.h - the config files a launch line names, read under the
 * line's own overrides: the NeMo Framework Launcher's config groups
 * (training=gpt3/5b, peft=llama/sft, fine_tuning=...: a YAML file under its
 * conf/ directory) and torchtitan's --job.config_file (a TOML job config)
 * with the --section.key overrides after it. Both are found under the
 * launch's config roots (capsim_launch's config_roots). Internal to the
 * launch reader. */
#ifndef CAPSIM_LAUNCH_CONF_H
#define CAPSIM_LAUNCH_CONF_H

#include "diag.h"
#include "launch.h"

/* Hydra's resolvers nest at most this deep, and a value refers through at
 * most this many others; deeper is refused */
#define CAPSIM_CONF_MAX_DEPTH 16

/* Each NeMo launcher config group the words argv[0..argc) select (stage=NAME,
 * stage one of training, fine_tuning, peft), its YAML read into l before
 * the words' own overrides (which the caller reads next, so they win): the
 * values capsim reads (capsim_launch_nemo_value) applied, Hydra's
 * interpolations (${a.b}, ${.sibling}, ${..uncle}, ${multiply:x, y},
 * ${divide_ceil:x, y}, ${divide_floor:x, y}) resolved against the file and
 * the words' overrides, keys the words delete (~stage.key) skipped, and the
 * keys not read noted by section. Returns 0, or -1 with each reason in d:
 * at where, a group named without a config root (naming the file and
 * --config-root) or not found under any; at file:line, YAML that does not
 * parse, a value capsim reads that is missing (???), a list, refers to what
 * neither the file nor the launch gives (or through an unknown resolver), or
 * is not of its kind; and the limits: mappings nested past 64, more than
 * 65536 values (aliases multiply them), more than 100000 interpolations
 * resolved for one value, or its text past CAPSIM_LAUNCH_MAX_LINE. */
int capsim_launch_nemo_configs(char **argv, int argc, const char *where, capsim_launch *l,
			       capsim_diags *d);

/* Whether a NeMo override key (its stage removed: "model.micro_batch_size")
 * is one the launch reader reads. */
int capsim_launch_nemo_reads(const char *key);

/* Read one NeMo key (its stage removed) and value into l: 1 read, 0 not
 * modelled (the caller notes it), -1 after a refusal at where. A whole
 * number's null leaves l as it is. */
int capsim_launch_nemo_value(capsim_launch *l, const char *key, const char *value,
			     const char *where, capsim_diags *d);

/* The words after torchtitan's training module (-m torchtitan.train):
 * --job.config_file PATH (PATH under a config root, or the defaults where
 * none is named) read as a torchtitan job config (torchtitan.h), after each
 * other --section.key VALUE, --section.key=VALUE, --section.key (true) and
 * --section.no-key (false) replaced it in the config, on l's nodes (one
 * where it does not say) of l's GPUs a node. The catalog model its flavor
 * gives goes to l->model. Returns 0, or -1 with each reason in d: at where,
 * a config named without a config root or not found, no GPUs a node in the
 * launch, an override without a value or of the wrong kind; the config's
 * own refusals at file:line. */
int capsim_launch_torchtitan(char **argv, int argc, const char *where, capsim_launch *l,
			     capsim_diags *d);

/* NeMo 2.0's command line (nemo llm pretrain ...): the index of its "nemo"
 * word among argv[0..argc), or -1. */
int capsim_launch_nemo_run_at(char **argv, int argc);

/* Whether argv[i] names a NeMo recipe: 2 where it and the next word do
 * (--factory NAME, and -f NAME on NeMo's command line), 1 where it does
 * alone (--factory=NAME, recipe=NAME), else 0. */
int capsim_launch_nemo_factory_word(char **argv, int argc, int i);

/* The NeMo 2.0 pre-training recipe argv[0..argc) names (--factory NAME or
 * "NAME(num_nodes=N, num_gpus_per_node=G, ...)", recipe=NAME), its defaults
 * read into l (nodes, GPUs a node, TP, PP, virtual stages, CP, EP, sequence
 * parallelism, sequence, global and micro-batch, steps, bf16, the
 * distributed optimizer, the catalog model in l->model) before the launch's
 * own overrides, each row's source NeMo's recipe file at a stated commit
 * (nemo_recipe.c). Returns 0 (also where none is named), or -1 with the
 * reason at where: a recipe not in the table (naming it and those known), a
 * fine-tuning command (nemo llm finetune), a factory argument that is not a
 * positive whole number. */
int capsim_launch_nemo_recipe(char **argv, int argc, const char *where, capsim_launch *l,
			      capsim_diags *d);

#endif
