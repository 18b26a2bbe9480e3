/* The runtime's own loads. */
#define _GNU_SOURCE
#include "carry_out.h"

#include "loaded.h"
#include "loader_facts.h"
#include "log.h"
#include "real.h"
#include "report.h"

#include <dlfcn.h>
#include <stdlib.h>

__thread bool carry_out_busy __attribute__((tls_model("initial-exec")));

void *carry_out_dlopen(const char *file, int mode)
{
	carry_out_busy = false;
	void *handle = real_dlopen(file, mode);
	carry_out_busy = true;
	return handle;
}

/* The reason of the register event of what the runtime loads: it names the asker too. */
static const char loaded_for_asker[] = "loaded by the runtime for its caller";

void *carry_out_load(const struct plan_load *load, int mode, const struct plan_request *request)
{
	loaded_note_asker(load->name, request->asker, loaded_for_asker);
	if (load->answer.by_name_first) {
		void *handle = carry_out_dlopen(load->name, mode);
		if (handle) {
			loaded_sync(); /* the loader's ld.so.cache had it, its own answer: registered now, for the asker */
			return handle;
		}
	}
	/* glibc opens the file again by its path. It has no call that takes the descriptor the check
	   read, and a /proc/self/fd path would become the library's name and its $ORIGIN. A copy that
	   changed since the check (an upgrade rewriting it) is not given to it. */
	if (!dynamic_file_unchanged(load->path, &load->identity)) {
		log_message(LOG_WARN, "%s for %s: %s changed since it was checked; not loaded", load->name, request->asker, load->path);
		return NULL;
	}
	void *handle = carry_out_dlopen(load->path, mode);
	if (!handle) {
		log_message(LOG_WARN, "%s for %s: %s did not load: %s", load->name, request->asker, load->path, real_dlerror());
		return NULL;
	}
	report_outcome(&(struct outcome){ .kind = OUTCOME_LOADED, .request = request->kind, .answer = &load->answer,
					  .name = load->name, .family = load->family, .caller = request->asker, .path = load->path });
	loaded_sync(); /* its origin registered now, for the asker */
	return handle;
}

void *carry_out_with_needs(const char *path, int mode, const struct plan *plan)
{
	void **handles = malloc(plan->count * sizeof(*handles));
	size_t held = 0;
	void *handle = NULL;
	struct plan_request request = { .kind = POLICY_NEEDED, .asker = path };
	for (size_t i = 0; handles && i < plan->count; i++) {
		const struct plan_load *load = &plan->loads[i];
		/* First loaded wins, even when it arrived a moment ago (another thread). */
		if (load->answer.action == POLICY_LOAD_OWN && loader_facts_loaded_by_name(load->name))
			continue;
		void *needed = carry_out_load(load, (mode & (RTLD_NOW | RTLD_LAZY)) | RTLD_LOCAL, &request);
		if (needed)
			handles[held++] = needed;
	}
	if (held)
		handle = carry_out_dlopen(path, mode);
	for (size_t i = 0; i < held; i++)
		real_dlclose(handles[i]);
	free(handles);
	return handle;
}
