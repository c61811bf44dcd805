/* loader.c - the data loader; see loader.h and docs/model.md ("Data
 * loader"). */
#include "loader.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

const char *const capsim_load_bound_names[CAPSIM_LOAD__COUNT] = {
	"aggregate bandwidth", "client bandwidth", "IOPS", "metadata",
};

/* Nodes that read: the first pipeline stage reads the inputs and, with
 * pipeline parallelism, the last reads the labels (Megatron-LM); stages are
 * the outermost rank dimension, so each holds nodes / pp of the nodes. */
static int reading_nodes(const capsim_scenario *s)
{
	int stages = s->pp > 1 ? 2 : 1;
	if (s->nodes < s->pp)
		return s->nodes;
	int n = (int)((long)s->nodes * stages / s->pp);
	return n < 1 ? 1 : n;
}

void capsim_loader_plan(const capsim_scenario *s, double tokens_per_step, capsim_loader *out)
{
	memset(out, 0, sizeof *out);
	const capsim_storage *t = s->has_shared_storage ? &s->shared_storage :
				  s->has_local_storage ? &s->local_storage : NULL;
	/* tokens as uint16 where the vocabulary fits, else int32 (Megatron-LM's
	 * indexed datasets, DType.optimal_dtype), unless the scenario says */
	out->bytes_per_token = s->data_bytes_per_token > 0 ? s->data_bytes_per_token :
			       s->model.vocab <= 65500 ? 2.0 : 4.0;
	out->workers = s->loader_workers;
	out->prefetch = s->loader_prefetch;
	if (s->dataset_bytes > 0)
		out->epochs = s->tokens * out->bytes_per_token / s->dataset_bytes;
	if (!t || !(t->read_bytes_per_s > 0))
		return;
	out->has_loader = 1;
	out->shared = t == &s->shared_storage;
	/* inputs by the first stage, labels by the last (one copy without a
	 * pipeline: the labels are the inputs shifted); each tensor-parallel
	 * group reads once */
	double copies = s->pp > 1 ? 2.0 : 1.0;
	double bytes = tokens_per_step * out->bytes_per_token * copies;
	out->bytes_per_step = bytes;
	out->clients = reading_nodes(s);
	/* whole files of shard-size each, read in read-size requests; without
	 * a shard size the data is one memory-mapped file a corpus, opened once */
	double rs = s->data_read_size > 0 ? s->data_read_size : 131072.0;
	if (s->data_shard_bytes > 0) {
		out->files_per_step = bytes / s->data_shard_bytes;
		out->reads_per_step = out->files_per_step * ceil(s->data_shard_bytes / rs);
	} else {
		out->reads_per_step = bytes / rs;
	}
	double per_node = bytes / out->clients;
	double *L = out->limit_s;
	if (out->shared) {
		L[CAPSIM_LOAD_AGGREGATE] = bytes / t->read_bytes_per_s;
		if (t->client_read_bytes_per_s > 0)
			L[CAPSIM_LOAD_CLIENT] = per_node / t->client_read_bytes_per_s;
		if (t->read_iops > 0)
			L[CAPSIM_LOAD_IOPS] = out->reads_per_step / t->read_iops;
		/* one metadata service for every client: its rate is shared */
		if (t->metadata_ops_per_s > 0)
			L[CAPSIM_LOAD_METADATA] = out->files_per_step * s->data_md_ops_per_file /
						  t->metadata_ops_per_s;
	} else {
		/* each node from its own drives */
		L[CAPSIM_LOAD_CLIENT] = per_node / t->read_bytes_per_s;
		if (t->read_iops > 0)
			L[CAPSIM_LOAD_IOPS] = out->reads_per_step / out->clients / t->read_iops;
	}
	for (int k = 0; k < CAPSIM_LOAD__COUNT; k++)
		if (L[k] > out->read_s) {
			out->read_s = L[k];
			out->bound = k;
		}
}

double capsim_loader_pipeline(double read_s, double compute_s, int workers, int prefetch,
			      int steps, double *first_s)
{
	*first_s = read_s;
	if (!(read_s > 0))
		return 0.0;
	if (workers <= 0)
		return read_s; /* read between steps, in the training process */
	if (steps < 1)
		steps = 1;
	if (prefetch < 1)
		prefetch = 1;
	long cap = (long)workers * prefetch;
	double *rem = capsim_xmalloc((size_t)workers * sizeof *rem); /* FIFO, in batch-reads */
	double *gap = capsim_xcalloc((size_t)steps, sizeof *gap);
	int n = 0, issued = 0, done = 0, consumed = 0, stepping = 0;
	double t = 0.0, step_end = 0.0, last_end = 0.0;
	while (consumed < steps || stepping) {
		/* idle workers take the next batches while the budget allows
		 * (the data does not run out: no end effect on the last steps) */
		while (n < workers && issued - consumed < cap) {
			rem[n++] = 1.0;
			issued++;
		}
		if (!stepping && done > consumed && consumed < steps) {
			if (consumed > 0)
				gap[consumed] = t - last_end;
			consumed++;
			stepping = 1;
			step_end = t + compute_s;
			continue; /* its slot is free: hand out more */
		}
		double tf = n ? t + rem[0] * read_s * n : INFINITY;
		double te = stepping ? step_end : INFINITY;
		double next = tf <= te ? tf : te;
		if (isinf(next))
			break; /* cannot happen: a batch is always in flight or ready */
		/* in flight share the rate equally, so the oldest finishes first */
		for (int i = 0; i < n; i++)
			rem[i] -= (next - t) / (read_s * n);
		t = next;
		if (tf <= te) {
			memmove(rem, rem + 1, (size_t)(n - 1) * sizeof *rem);
			n--;
			if (++done == 1)
				*first_s = t;
		} else {
			stepping = 0;
			last_end = t;
		}
	}
	int w = workers < steps - 1 ? workers : steps - 1;
	double stall = 0.0;
	for (int k = steps - w; k < steps; k++)
		stall += gap[k];
	free(rem);
	free(gap);
	return w > 0 ? stall / w : 0.0;
}
