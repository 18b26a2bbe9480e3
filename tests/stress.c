/* The stress program: threads loading and unloading NVIDIA, other and missing libraries while
   the main thread forks children that load the NVRTC-like library and compile, and (under the
   runtime) one more thread calls the runtime's API without pause. It prints counts that must be
   the same with and without the runtime (except what the runtime fixes), and exits non-zero on
   any inconsistency. Usage: stress NVRTC_LIB OTHER_LIB THREADS ITERATIONS FORKS

   glibc cannot fork while another thread is inside dlopen (the child inherits a loader list in
   the middle of a change and asserts on its next dlopen, with or without an interposer), so the
   forks wait for the loads in flight; the API thread is not held back, so a fork can catch the
   runtime's own registry lock taken. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *nvrtc_path, *other_path;
static int iterations;
static atomic_long loaded_nvidia, loaded_other, missing_failed, errors;
static atomic_bool done;
static pthread_rwlock_t loading = PTHREAD_RWLOCK_INITIALIZER;

static void *api_worker(void *arg)
{
	int (*list)(const char *, void *, size_t) = (int (*)(const char *, void *, size_t))dlsym(RTLD_DEFAULT, "nvi_list_origins");
	int (*add)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_DEFAULT, "nvi_register_folder");
	static const char *const folders[] = { "/usr", "/usr/lib", "/tmp", "/", "/var", "/etc" };
	(void)arg;
	for (unsigned i = 0; list && add && !done; i++) {
		add("cublas", folders[i % 6]);
		list(NULL, NULL, 0);
	}
	return NULL;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	static const char *const missing[] = { "libnvrtc-builtins.so.99.9", "libdoes-not-exist.so.1", "libcublas.so.99" };
	for (int i = 0; i < iterations; i++) {
		void *h;
		pthread_rwlock_rdlock(&loading);
		switch ((i + id) % 4) {
		case 0:
			h = dlopen(nvrtc_path, RTLD_NOW);
			if (h) {
				loaded_nvidia++;
				dlclose(h);
			} else {
				errors++;
			}
			break;
		case 1:
			h = dlopen(other_path, RTLD_LAZY);
			if (h) {
				loaded_other++;
				dlclose(h);
			} else {
				errors++;
			}
			break;
		case 2:
			h = dlopen("libnvrtc.so.77", RTLD_NOW | RTLD_NOLOAD);
			if (h)
				dlclose(h);
			break;
		default:
			h = dlopen(missing[i % 3], RTLD_NOW);
			if (h) {
				errors++;
				dlclose(h);
			} else {
				missing_failed++;
			}
		}
		pthread_rwlock_unlock(&loading);
	}
	return NULL;
}

static int child(void)
{
	void *h = dlopen(nvrtc_path, RTLD_NOW);
	int (*compile)(void) = h ? (int (*)(void))dlsym(h, "nvrtc_like_compile") : NULL;
	return compile && compile() == 42 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: stress NVRTC_LIB OTHER_LIB THREADS ITERATIONS FORKS\n");
		return 2;
	}
	nvrtc_path = argv[1];
	other_path = argv[2];
	int threads = atoi(argv[3]), forks = atoi(argv[5]);
	iterations = atoi(argv[4]);
	pthread_t *ids = calloc((size_t)threads, sizeof(*ids));
	for (long t = 0; t < threads; t++)
		pthread_create(&ids[t], NULL, worker, (void *)t);
	pthread_t api;
	pthread_create(&api, NULL, api_worker, NULL);
	int children_ok = 0;
	for (int f = 0; f < forks; f++) {
		pthread_rwlock_wrlock(&loading);
		pid_t pid = fork();
		pthread_rwlock_unlock(&loading);
		if (pid == 0) {
			alarm(60);
			_exit(child());
		}
		int status = 0;
		if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			children_ok++;
	}
	for (int t = 0; t < threads; t++)
		pthread_join(ids[t], NULL);
	done = true;
	pthread_join(api, NULL);
	printf("nvidia loads: %ld\nother loads: %ld\nmissing failed: %ld\nerrors: %ld\nchildren compiled: %d of %d\n",
	       (long)loaded_nvidia, (long)loaded_other, (long)missing_failed, (long)errors, children_ok, forks);
	return errors ? 1 : 0;
}
