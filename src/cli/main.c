/* main.c - the capsim command: process set-up, then the command line
 * (dispatch.c). */
#include <malloc.h>

#include "cli.h"
#include "eval.h"

/* A sweep or a search evaluates thousands of scenarios, each edited on a
 * copy of about half a megabyte and simulated with buffers of that order.
 * glibc's defaults give such blocks back to the kernel as they are freed
 * (trimming the heap, unmapping large blocks), so that every evaluation
 * faults its pages in again, and the worker threads then serialise in the
 * kernel's page tables. The process keeps what it has freed instead: its
 * resident memory stays at its high-water mark, which is what a command
 * that runs to completion can afford (docs/performance.md, "Sweeps and the
 * optimiser"). */
static void keep_freed_memory(void)
{
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

int main(int argc, char **argv)
{
	keep_freed_memory();
	capsim_init();
	return capsim_main(argc, argv);
}
