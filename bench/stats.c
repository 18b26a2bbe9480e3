/* Quantiles of a sample (a child's blocks, the rounds of an arm, the rounds' ratios), the tests of
   counts the fork benchmark reports, and the small helpers the benchmarks share. */
#define _GNU_SOURCE
#include "bench.h"

#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool bench_in_list(const char *list, const char *name)
{
	size_t length = strlen(name);
	for (const char *s = list; s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL)
		if (strncmp(s, name, length) == 0 && (s[length] == ',' || s[length] == '\0'))
			return true;
	return false;
}

char *bench_format(const char *fmt, ...)
{
	va_list args;
	char *s;
	va_start(args, fmt);
	if (vasprintf(&s, fmt, args) < 0)
		abort();
	va_end(args);
	return s;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

void bench_remove_tree(const char *folder) { nftw(folder, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

static bool is_set_here(const char *entry)
{
	return strncmp(entry, "LD_PRELOAD=", 11) == 0 || strncmp(entry, "LD_LIBRARY_PATH=", 16) == 0;
}

char **bench_environment(const char *preload, const char *library_path)
{
	extern char **environ;
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 3, sizeof(*env));
	if (!env)
		abort();
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!is_set_here(environ[i]))
			env[k++] = environ[i];
	if (preload && preload[0])
		env[k++] = bench_format("LD_PRELOAD=%s", preload);
	if (library_path)
		env[k++] = bench_format("LD_LIBRARY_PATH=%s", library_path);
	env[k] = NULL;
	return env;
}

void bench_free_environment(char **env)
{
	for (size_t i = 0; env[i]; i++)
		if (is_set_here(env[i]))
			free(env[i]);
	free(env);
}

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

/* log of n choose k */
static double log_choose(double n, double k) { return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1); }

double bench_fisher_greater(long k1, long n1, long k2, long n2)
{
	/* Given k1 + k2 events among n1 + n2 trials, how likely k1 or more fall among the first n1 if
	   both groups share one rate: the hypergeometric upper tail. */
	long total = k1 + k2, high = total < n1 ? total : n1;
	double log_all = log_choose((double)(n1 + n2), (double)total), p = 0;
	for (long k = k1; k <= high; k++)
		if (total - k <= n2)
			p += exp(log_choose((double)n1, (double)k) + log_choose((double)n2, (double)(total - k)) - log_all);
	return p > 1 ? 1 : p;
}

/* P(Binomial(n, rate) <= k) */
static double binomial_cdf(long k, long n, double rate)
{
	if (rate <= 0)
		return 1;
	if (rate >= 1)
		return k >= n ? 1 : 0;
	double p = 0;
	for (long i = 0; i <= k; i++)
		p += exp(log_choose((double)n, (double)i) + (double)i * log(rate) + (double)(n - i) * log1p(-rate));
	return p > 1 ? 1 : p;
}

double bench_rate_upper_bound(long k, long n, double confidence)
{
	/* Clopper-Pearson, one-sided: the rate at which k or fewer events are as unlikely as
	   1 - confidence (3/n for k = 0 at 95%, the rule of three). */
	if (n <= 0)
		return 1;
	if (k >= n)
		return 1;
	double low = (double)k / (double)n, high = 1;
	for (int i = 0; i < 100; i++) {
		double mid = (low + high) / 2;
		if (binomial_cdf(k, n, mid) > 1 - confidence)
			low = mid;
		else
			high = mid;
	}
	return high;
}

double bench_sign_test_greater(long more, long less)
{
	/* Of the pairs that differ, how likely this many or more favour the first if either is as
	   likely: the binomial upper tail at one half. */
	long n = more + less;
	return more <= 0 ? 1 : 1 - binomial_cdf(more - 1, n, 0.5);
}
