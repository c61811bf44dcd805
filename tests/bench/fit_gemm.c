/* fit_gemm.c - fits capsim's GEMM efficiency curve S(F) = sat / (1 + (f0/F)^p)
 * to the square FP8 cuBLASLt rows of tests/data/reference/gemm.csv with GSL
 * (capsim_gemm_fit_curve), prints the constants to record in src/plan/ops.c,
 * every row's residual, and the best bf16 fraction of each GPU.
 *
 * Usage: fit_gemm [gemm.csv]   (default: the copy under tests/data/reference) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "csv.h"
#include "ops.h"

#define MAX_ROWS 64

typedef struct row {
	char gpu[128], dtype[32];
	double m, n, k, tflops, peak;
} row;

static int read_rows(const char *path, row *r, int max)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		perror(path);
		return -1;
	}
	char line[2048];
	int n = 0, header = 1;
	while (fgets(line, sizeof line, fp) && n < max) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (header) {
			header = 0;
			continue;
		}
		char *f[10];
		if (csv_split(line, f, 10) < 8)
			continue;
		snprintf(r[n].gpu, sizeof r[n].gpu, "%s", f[0]);
		snprintf(r[n].dtype, sizeof r[n].dtype, "%s", f[1]);
		r[n].m = atof(f[3]);
		r[n].n = atof(f[4]);
		r[n].k = atof(f[5]);
		r[n].tflops = atof(f[6]);
		r[n].peak = atof(f[7]);
		n++;
	}
	fclose(fp);
	return n;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] :
				      CAPSIM_SOURCE_DIR "/tests/data/reference/gemm.csv";
	gsl_set_error_handler_off();
	row r[MAX_ROWS];
	int n = read_rows(path, r, MAX_ROWS);
	if (n < 0)
		return 1;
	double flop[MAX_ROWS], frac[MAX_ROWS];
	int idx[MAX_ROWS];
	size_t k = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(r[i].dtype, "FP8") != 0 || r[i].m != r[i].n || r[i].n != r[i].k)
			continue;
		flop[k] = 2.0 * r[i].m * r[i].n * r[i].k;
		frac[k] = r[i].tflops / r[i].peak;
		idx[k++] = i;
	}
	capsim_gemm_fit fit;
	int rc = capsim_gemm_fit_curve(flop, frac, k, &fit);
	if (rc) {
		fprintf(stderr, "fit_gemm: fit failed: %s\n", gsl_strerror(rc));
		return 1;
	}
	printf("rows %zu, iterations %zu\n", k, fit.iterations);
	printf("#define GEMM_FIT_SAT %.6g\n#define GEMM_FIT_F0 %.6g\n#define GEMM_FIT_P %.6g\n",
	       fit.sat, fit.f0_flop, fit.p);
	printf("#define GEMM_FIT_RMS %.3g\n#define GEMM_FIT_MAX %.3g\n", fit.rms, fit.max_abs);
	printf("\n%-36s %6s %10s %8s %8s %9s\n", "gpu", "m", "flop", "frac", "model", "residual");
	for (size_t i = 0; i < k; i++) {
		double model = fit.sat / (1.0 + pow(fit.f0_flop / flop[i], fit.p));
		printf("%-36s %6.0f %10.3e %8.4f %8.4f %+9.4f\n", r[idx[i]].gpu, r[idx[i]].m,
		       flop[i], frac[i], model, model - frac[i]);
	}
	printf("\nbest bf16 fraction of peak (saturation):\n");
	for (int i = 0; i < n; i++)
		if (strcmp(r[i].dtype, "BF16") == 0)
			printf("  %-24s %.1f / %.0f = %.4f\n", r[i].gpu, r[i].tflops,
			       r[i].peak, r[i].tflops / r[i].peak);
	return 0;
}
