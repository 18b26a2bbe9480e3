/* The child program of the preload and cuda suites: runs loader commands given on its command line
   and prints one line for each, so a test can compare a run without the runtime to one with it.
     open[:FLAGS] NAME     dlopen ("-" is the empty name); FLAGS: now,lazy,global,noload,deepbind
     close NAME            dlclose of the handle the last open of NAME returned
     call LIB SYMBOL       dlopen LIB, call int SYMBOL(void)
     same A B              dlopen both; are the handles the same?
     late LIBRARY          dlopen the runtime after what came before (late attach)
     origin FAMILY         nvi_family_origin
     origins               nvi_list_origins of every family
     rescan                nvi_rescan
     patches               nvi_list_patches: one line an entry
     report                nvi_report: the totals, then one line an entry (places joined by '|')
     bound                 the object the probe's own dlopen binding leads into
     dlsym NAME            the object dlsym(RTLD_DEFAULT, NAME) leads into
     use LIBRARY           the API calls after it go to this loaded library
     register FAMILY DIR   nvi_register_folder
     forkcall LIB SYMBOL   call, in a forked child; the parent waits
     mapsperm TEXT         the mappings whose path contains TEXT, with their protection
     deny-mprotect-write   from now on mprotect fails with EACCES when it would grant write
                           permission (seccomp), as a security policy can refuse it
     maps TEXT             the mapped files whose path contains TEXT
     errno[:FLAGS] NAME    dlopen NAME with errno set to EDOM before; prints errno and dlerror after
     self[:FLAGS]          dlopen(NULL)
     dlmopen NAME          dlmopen(LM_ID_NEWLM, NAME): the object, and whether the namespace is new
     dlerror               what dlerror says now (reading it clears it)
     nvrtc LIB             NVRTC: create and compile a small kernel (real libnvrtc)
     cd FOLDER             change the working folder
     rename FROM TO        rename(2): move a prepared file or folder into place between loads
     setlocale             setlocale(LC_ALL, ""), as programs that follow the user's locale do */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <locale.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvinterpose.h"
#include "nvrtc-compile.h"

static void *runtime;

struct handle {
	char name[4096];
	void *handle;
};
static struct handle handles[256];
static int handle_count;

static const char *where(void *h)
{
	struct link_map *map = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &map) != 0 || !map)
		return "(no link map)";
	return map->l_name[0] ? map->l_name : "(main program)";
}

static int parse_flags(const char *text)
{
	int flags = 0;
	if (!text)
		return RTLD_NOW;
	if (strstr(text, "now"))
		flags |= RTLD_NOW;
	if (strstr(text, "lazy"))
		flags |= RTLD_LAZY;
	if (strstr(text, "global"))
		flags |= RTLD_GLOBAL;
	if (strstr(text, "noload"))
		flags |= RTLD_NOLOAD;
	if (strstr(text, "deepbind"))
		flags |= RTLD_DEEPBIND;
	return flags & (RTLD_NOW | RTLD_LAZY) ? flags : flags | RTLD_NOW;
}

static void *api(const char *symbol)
{
	void *f = dlsym(runtime ? runtime : RTLD_DEFAULT, symbol);
	if (!f) {
		printf("%s: not available\n", symbol);
		exit(3);
	}
	return f;
}

/* Where the probe's own dlopen binding leads now: the address comes from its GOT each time. */
__attribute__((noinline)) static void *dlopen_binding(void)
{
	void *(*volatile binding)(const char *, int) = dlopen;
	return (void *)binding;
}

static void *open_library(const char *name, int flags)
{
	void *h = dlopen(name[0] == '-' && !name[1] ? "" : name, flags);
	if (h && handle_count < 256) {
		snprintf(handles[handle_count].name, sizeof(handles[0].name), "%s", name);
		handles[handle_count++].handle = h;
	}
	return h;
}

static void print_maps(const char *text)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[8192], last[4096] = "";
	while (maps && fgets(line, sizeof(line), maps)) {
		char *path = strchr(line, '/');
		if (!path || !strstr(path, text))
			continue;
		path[strcspn(path, "\n")] = '\0';
		if (strcmp(path, last) != 0)
			printf("maps: %s\n", path);
		snprintf(last, sizeof(last), "%s", path);
	}
	if (maps)
		fclose(maps);
}

static void print_maps_with_protection(const char *text)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[8192];
	while (maps && fgets(line, sizeof(line), maps)) {
		char *path = strchr(line, '/'), *perm = strchr(line, ' ');
		if (!path || !perm || !strstr(path, text))
			continue;
		path[strcspn(path, "\n")] = '\0';
		printf("mapsperm: %.4s %s\n", perm + 1, path);
	}
	if (maps)
		fclose(maps);
}

/* mprotect with PROT_WRITE in its third argument fails with EACCES; every other call is allowed. */
static int deny_mprotect_write(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_WRITE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog program = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0 ? 0 : -1;
}

static int nvrtc(const char *library)
{
	void *h = open_library(library, RTLD_NOW);
	if (!h) {
		printf("nvrtc: %s\n", dlerror());
		return 1;
	}
	char log[4096];
	int result = nvrtc_compile_kernel(h, log, sizeof(log));
	printf("nvrtc compile: %s%s%s\n", result == 0 ? "ok" : "failed", log[0] ? ": " : "", log);
	return result == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	int status = 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	for (int i = 1; i < argc; i++) {
		const char *command = argv[i];
		const char *arg = i + 1 < argc ? argv[i + 1] : "";
		if (strncmp(command, "open", 4) == 0 && (command[4] == '\0' || command[4] == ':')) {
			void *h = open_library(arg, parse_flags(command[4] ? command + 5 : NULL));
			const char *error = h ? NULL : dlerror();
			if (h)
				printf("open %s: %s\n", arg, where(h));
			else /* RTLD_NOLOAD of a file that is there but not loaded: no handle, no error */
				printf("open %s: error: %s\n", arg, error ? error : "none");
			i++;
		} else if (strcmp(command, "close") == 0) {
			for (int k = handle_count - 1; k >= 0; k--)
				if (handles[k].handle && strcmp(handles[k].name, arg) == 0) {
					printf("close %s: %d\n", arg, dlclose(handles[k].handle));
					handles[k].handle = NULL;
					break;
				}
			i++;
		} else if (strcmp(command, "call") == 0) {
			void *h = open_library(arg, RTLD_NOW);
			int (*f)(void) = h ? (int (*)(void))dlsym(h, argv[i + 2]) : NULL;
			if (!h)
				printf("call %s: error: %s\n", argv[i + 2], dlerror());
			else
				printf("call %s: %d\n", argv[i + 2], f ? f() : -100);
			i += 2;
		} else if (strcmp(command, "same") == 0) {
			void *a = open_library(arg, RTLD_NOW), *b = open_library(argv[i + 2], RTLD_NOW);
			printf("same %s %s: %s\n", arg, argv[i + 2], a && a == b ? "yes" : "no");
			i += 2;
		} else if (strcmp(command, "late") == 0) {
			runtime = dlopen(arg, RTLD_NOW | RTLD_LOCAL);
			printf("late: %s\n", runtime ? "attached" : dlerror());
			i++;
		} else if (strcmp(command, "origin") == 0) {
			char folder[4096];
			int (*origin)(const char *, char *, size_t) = (int (*)(const char *, char *, size_t))api("nvi_family_origin");
			int rc = origin(arg, folder, sizeof(folder));
			printf("origin %s: %s\n", arg, rc == 0 ? folder : strerror(-rc));
			i++;
		} else if (strcmp(command, "origins") == 0) {
			struct nvi_origin list[64];
			int (*origins)(const char *, struct nvi_origin *, size_t) =
				(int (*)(const char *, struct nvi_origin *, size_t))api("nvi_list_origins");
			int n = origins(NULL, list, 64);
			for (int k = 0; k < n && k < 64; k++)
				printf("origins: %s %s\n", list[k].family, list[k].folder);
		} else if (strcmp(command, "rescan") == 0) {
			int (*rescan)(void) = (int (*)(void))api("nvi_rescan");
			printf("rescan: %d\n", rescan());
		} else if (strcmp(command, "patches") == 0) {
			struct nvi_patch list[64];
			int (*patches)(struct nvi_patch *, size_t) = (int (*)(struct nvi_patch *, size_t))api("nvi_list_patches");
			int n = patches(list, 64);
			printf("patches: %d\n", n);
			for (int k = 0; k < n && k < 64; k++)
				printf("patch: %s %s %s %s %d%s%s%s%s\n", list[k].object[0] ? list[k].object : "(main program)", list[k].symbol,
				       list[k].place, list[k].state, list[k].count, list[k].target ? " " : "", list[k].target ? list[k].target : "",
				       list[k].error ? " " : "", list[k].error ? strerror(list[k].error) : "");
		} else if (strcmp(command, "report") == 0) {
			struct nvi_report_totals totals;
			struct nvi_report_entry list[64];
			int (*report)(struct nvi_report_totals *, struct nvi_report_entry *, size_t) =
				(int (*)(struct nvi_report_totals *, struct nvi_report_entry *, size_t))api("nvi_report");
			int n = report(&totals, list, 64);
			printf("report: %d lines, kept %d, left out %lld; %lld origins, %lld supplied, %lld misses, %lld mixed origins\n", n,
			       totals.kept, totals.left_out, totals.origins, totals.supplied, totals.misses, totals.mixed_origins);
			for (int k = 0; k < n && k < 64; k++) {
				char places[4096] = "";
				for (const char *p = list[k].places; p && *p && strlen(places) < sizeof(places) - 1; p++)
					places[strlen(places)] = *p == '\n' ? '|' : *p;
				printf("report %s: name=%s family=%s event=%s asker=%s path=%s reason=%s own=%s places=%s count=%d times=%lld warning=%d\n",
				       list[k].kind, list[k].name, list[k].family ? list[k].family : "(null)", list[k].event,
				       list[k].asker ? list[k].asker : "(null)", list[k].path ? list[k].path : "(null)",
				       list[k].reason ? list[k].reason : "(null)", list[k].own ? list[k].own : "(null)",
				       list[k].places ? places : "(null)", list[k].place_count, list[k].times, list[k].warning);
			}
		} else if (strcmp(command, "bound") == 0) {
			Dl_info info;
			void *target = dlopen_binding();
			printf("bound: %s\n", dladdr(target, &info) && info.dli_fname ? info.dli_fname : "(nowhere)");
		} else if (strcmp(command, "dlsym") == 0) {
			Dl_info info;
			void *target = dlsym(RTLD_DEFAULT, arg);
			printf("dlsym %s: %s\n", arg, target && dladdr(target, &info) && info.dli_fname ? info.dli_fname : "(nowhere)");
			i++;
		} else if (strcmp(command, "use") == 0) {
			runtime = dlopen(arg, RTLD_NOW | RTLD_NOLOAD);
			printf("use: %s\n", runtime ? "yes" : dlerror());
			i++;
		} else if (strcmp(command, "register") == 0) {
			int (*add)(const char *, const char *) = (int (*)(const char *, const char *))api("nvi_register_folder");
			int rc = add(arg, argv[i + 2]);
			printf("register %s: %s\n", arg, rc == 0 ? "ok" : strerror(-rc));
			i += 2;
		} else if (strcmp(command, "forkcall") == 0) {
			pid_t pid = fork();
			if (pid == 0) {
				void *h = dlopen(arg, RTLD_NOW);
				int (*f)(void) = h ? (int (*)(void))dlsym(h, argv[i + 2]) : NULL;
				printf("forkcall %s: %d\n", argv[i + 2], f ? f() : -100);
				_exit(0);
			}
			int child = -1;
			printf("forkcall: child %s\n", pid > 0 && waitpid(pid, &child, 0) == pid && WIFEXITED(child) ? "exited" : "failed");
			i += 2;
		} else if (strcmp(command, "mapsperm") == 0) {
			print_maps_with_protection(arg);
			i++;
		} else if (strcmp(command, "deny-mprotect-write") == 0) {
			printf("deny-mprotect-write: %s\n", deny_mprotect_write() == 0 ? "on" : strerror(errno));
		} else if (strcmp(command, "maps") == 0) {
			print_maps(arg);
			i++;
		} else if (strncmp(command, "errno", 5) == 0 && (command[5] == '\0' || command[5] == ':')) {
			int flags = parse_flags(command[5] ? command + 6 : NULL);
			dlerror();
			errno = EDOM;
			void *h = dlopen(arg[0] == '-' && !arg[1] ? NULL : arg, flags);
			int after = errno;
			const char *error = dlerror();
			printf("errno %s: %s, errno %s, dlerror %s\n", arg, h ? "loaded" : "failed",
			       after == EDOM ? "EDOM kept" : strerror(after), error ? error : "none");
			i++;
		} else if (strncmp(command, "self", 4) == 0 && (command[4] == '\0' || command[4] == ':')) {
			void *h = dlopen(NULL, parse_flags(command[4] ? command + 5 : NULL));
			printf("self: %s\n", h ? where(h) : dlerror());
		} else if (strcmp(command, "dlmopen") == 0) {
			void *h = dlmopen(LM_ID_NEWLM, arg, RTLD_NOW);
			Lmid_t namespace = LM_ID_BASE;
			if (h && dlinfo(h, RTLD_DI_LMID, &namespace) != 0)
				namespace = LM_ID_BASE;
			if (h)
				printf("dlmopen %s: %s in the %s namespace\n", arg, where(h), namespace != LM_ID_BASE ? "new" : "base");
			else
				printf("dlmopen %s: error: %s\n", arg, dlerror());
			i++;
		} else if (strcmp(command, "dlerror") == 0) {
			const char *error = dlerror();
			printf("dlerror: %s\n", error ? error : "none");
		} else if (strcmp(command, "setenv") == 0) { /* NAME=VALUE, or NAME= to unset */
			char *entry = strdup(arg), *equals = entry ? strchr(entry, '=') : NULL;
			if (equals)
				*equals = '\0';
			int result = !equals ? -1 : equals[1] ? setenv(entry, equals + 1, 1) : unsetenv(entry);
			printf("setenv %s: %s\n", arg, result == 0 ? "ok" : "refused");
			free(entry);
			i++;
		} else if (strcmp(command, "cd") == 0) {
			printf("cd %s: %s\n", arg, chdir(arg) == 0 ? "ok" : strerror(errno));
			i++;
		} else if (strcmp(command, "rename") == 0 && i + 2 < argc) {
			printf("rename %s: %s\n", arg, rename(arg, argv[i + 2]) == 0 ? "ok" : strerror(errno));
			i += 2;
		} else if (strcmp(command, "setlocale") == 0) {
			const char *locale = setlocale(LC_ALL, "");
			printf("setlocale: %s\n", locale ? locale : "(refused)");
		} else if (strcmp(command, "nvrtc") == 0) {
			status |= nvrtc(arg);
			i++;
		} else {
			fprintf(stderr, "probe: unknown command '%s'\n", command);
			return 2;
		}
	}
	return status;
}
