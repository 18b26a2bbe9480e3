/* Quantiles of a sample: a child's blocks, the rounds of an arm, the rounds' ratios. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_quantile(const double *values, size_t n, double q)
{
	double *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	size_t k = 0;
	for (size_t i = 0; sorted && i < n; i++)
		if (isfinite(values[i]))
			sorted[k++] = values[i];
	double result = NAN;
	if (k > 0) {
		qsort(sorted, k, sizeof(*sorted), compare_doubles);
		double at = q * (double)(k - 1);
		size_t low = (size_t)at;
		result = low + 1 < k ? sorted[low] + (at - (double)low) * (sorted[low + 1] - sorted[low]) : sorted[low];
	}
	free(sorted);
	return result;
}
