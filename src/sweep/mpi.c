/* mpi.c - the MPI transport of a sweep run (run.h): rank 0 hands out chunks
 * of point indices to the ranks that ask and takes their finished points
 * back in the same message (dynamic load balancing: a rank asks again as
 * soon as it is done); see runint.h. Built with Open MPI when CMake finds
 * it (CAPSIM_HAVE_MPI), else every call but the first two is unreachable. */
#include "runint.h"

#include <stdio.h>
#include <stdlib.h>

#include "xalloc.h"

int capsim_sweep_mpi_launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL;
}

#ifdef CAPSIM_HAVE_MPI

#include <mpi.h>

enum { TAG_REQUEST = 1, TAG_CHUNK = 2, TAG_INT = 3 };

int capsim_sweep_mpi_built(void)
{
	return 1;
}

int capsim_sweep_mpi_init(int *argc, char ***argv, int *rank, int *size)
{
	int provided;
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
		fprintf(stderr, "capsim sweep: MPI_Init_thread failed\n");
		return -1;
	}
	if (provided < MPI_THREAD_FUNNELED) {
		fprintf(stderr, "capsim sweep: this MPI does not allow threads beside MPI "
			"(MPI_THREAD_FUNNELED)\n");
		MPI_Finalize();
		return -1;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return 0;
}

void capsim_sweep_mpi_finalize(void)
{
	MPI_Finalize();
}

void capsim_sweep_mpi_abort(int status)
{
	MPI_Abort(MPI_COMM_WORLD, status);
}

int sweep_mpi_poll(sweep_buf *results, int *worker)
{
	int flag;
	MPI_Status st;
	MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQUEST, MPI_COMM_WORLD, &flag, &st);
	if (!flag)
		return 0;
	int n;
	MPI_Get_count(&st, MPI_BYTE, &n);
	sweep_buf_free(results);
	results->p = capsim_xmalloc(n > 0 ? (size_t)n : 1);
	results->cap = results->n = (size_t)n;
	MPI_Recv(results->p, n, MPI_BYTE, st.MPI_SOURCE, TAG_REQUEST, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	*worker = st.MPI_SOURCE;
	return 1;
}

void sweep_mpi_send_chunk(int worker, const int64_t *idx, size_t n)
{
	MPI_Send(idx, (int)n, MPI_INT64_T, worker, TAG_CHUNK, MPI_COMM_WORLD);
}

void sweep_mpi_request(const sweep_buf *b, int64_t **idx, size_t *n)
{
	MPI_Send(b->p, (int)b->n, MPI_BYTE, 0, TAG_REQUEST, MPI_COMM_WORLD);
	MPI_Status st;
	MPI_Probe(0, TAG_CHUNK, MPI_COMM_WORLD, &st);
	int count;
	MPI_Get_count(&st, MPI_INT64_T, &count);
	*idx = capsim_xcalloc(count > 0 ? (size_t)count : 1, sizeof **idx);
	MPI_Recv(*idx, count, MPI_INT64_T, 0, TAG_CHUNK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	*n = (size_t)count;
}

#else

int capsim_sweep_mpi_built(void)
{
	return 0;
}

int capsim_sweep_mpi_init(int *argc, char ***argv, int *rank, int *size)
{
	(void)argc;
	(void)argv;
	*rank = 0;
	*size = 1;
	fprintf(stderr, "capsim sweep: built without MPI\n");
	return -1;
}

void capsim_sweep_mpi_finalize(void)
{
}

void capsim_sweep_mpi_abort(int status)
{
	exit(status);
}

int sweep_mpi_poll(sweep_buf *results, int *worker)
{
	(void)results;
	*worker = 0;
	return 0;
}

void sweep_mpi_send_chunk(int worker, const int64_t *idx, size_t n)
{
	(void)worker;
	(void)idx;
	(void)n;
}

void sweep_mpi_request(const sweep_buf *b, int64_t **idx, size_t *n)
{
	(void)b;
	*idx = NULL;
	*n = 0;
}

#endif
