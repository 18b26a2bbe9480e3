#define _GNU_SOURCE
#include "what_if.h"

#include "libnames.h"
#include "log.h"
#include "registry.h"
#include "search.h"
#include "string_map.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <sys/auxv.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* /proc/PID/environ and maps are read whole, up to this: a real maps file is well under a megabyte. */
#define PROC_FILE_MAX (64u << 20)

static int say(char *message, size_t size, const char *format, const char *a, const char *b)
{
	snprintf(message, size, format, a, b);
	return -1;
}

static void remember_origin(struct what_if *what_if, const char *folder)
{
	for (size_t i = 0; i < what_if->origin_count; i++)
		if (strcmp(what_if->origins[i], folder) == 0)
			return;
	char **grown = realloc(what_if->origins, (what_if->origin_count + 1) * sizeof(char *));
	if (!grown)
		return;
	what_if->origins = grown;
	if ((grown[what_if->origin_count] = strdup(folder)))
		what_if->origin_count++;
}

/* The family of the first NVIDIA library in folder (in byte order): the runtime registers a
   folder for the family of a library it saw loaded from there. */
static int family_in_folder(const char *folder)
{
	char **names = NULL;
	int n = platform_list_folder(folder, &names), family = -1;
	for (int i = 0; i < n && family < 0; i++)
		family = libnames_match_linux(names[i], NULL);
	platform_free_names(names, n);
	return family;
}

int what_if_add_origin(struct what_if *what_if, const char *folder, char *message, size_t size)
{
	struct stat st;
	if (folder[0] != '/')
		return say(message, size, "--origin %s: an origin is an absolute folder%s", folder, "");
	if (stat(folder, &st) != 0 || !S_ISDIR(st.st_mode))
		return say(message, size, "--origin %s: %s", folder, stat(folder, &st) != 0 ? strerror(errno) : "not a folder");
	int family = family_in_folder(folder);
	/* A folder with no NVIDIA library in it is still searched; the family is only its label. */
	if (registry_add_origin(family >= 0 ? family : 0, folder) == REGISTRY_ERROR)
		return say(message, size, "--origin %s: %s", folder, strerror(errno));
	remember_origin(what_if, folder);
	return 0;
}

/* A whole small file from /proc (whose size stat cannot tell), or NULL. */
static char *read_proc_file(const char *path, size_t *length)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	size_t capacity = 1 << 16, used = 0;
	char *data = fd >= 0 ? malloc(capacity + 1) : NULL;
	while (data) {
		ssize_t n = read(fd, data + used, capacity - used);
		if (n < 0) {
			free(data);
			data = NULL;
			break;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used == capacity) {
			char *grown = capacity < PROC_FILE_MAX ? realloc(data, 2 * capacity + 1) : NULL;
			if (!grown)
				break;
			data = grown;
			capacity *= 2;
		}
	}
	if (fd >= 0)
		close(fd);
	if (data)
		data[used] = '\0';
	*length = used;
	return data;
}

char *what_if_environment_value(const char *environ_text, size_t length, const char *name)
{
	size_t n = strlen(name);
	const char *end = environ_text + length;
	for (const char *s = environ_text; s < end; s += strnlen(s, (size_t)(end - s)) + 1)
		if ((size_t)(end - s) > n && memcmp(s, name, n) == 0 && s[n] == '=')
			return strndup(s + n + 1, (size_t)(end - s) - n - 1);
	return NULL;
}

void what_if_mapped_files(char *maps, void (*visit)(const char *path, void *arg), void *arg)
{
	struct string_map seen = { 0 };
	for (char *line = maps, *end; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = '\0';
		/* address perms offset device inode path: the path is what follows the fifth field. */
		char *file = strchr(line, '/');
		if (!file || string_map_get(&seen, file))
			continue;
		size_t n = strlen(file);
		if (n > 10 && strcmp(file + n - 10, " (deleted)") == 0)
			continue;
		string_map_put(&seen, file, file);
		visit(file, arg);
	}
	string_map_clear(&seen, NULL);
}

static void add_mapped(struct what_if *what_if, struct file_probe *probe, const char *path)
{
	struct mapped_object *grown = realloc(what_if->mapped, (what_if->mapped_count + 1) * sizeof(*grown));
	if (!grown)
		return;
	what_if->mapped = grown;
	const struct probed_file *file = file_probe_path(probe, path);
	struct mapped_object *mapped = &grown[what_if->mapped_count];
	mapped->path = strdup(path);
	mapped->facts = file && file->result == PROBE_FOUND ? file->facts : NULL;
	if (mapped->path)
		what_if->mapped_count++;
}

/* The paths of the objects in the process's list of loaded objects (its link map), in its order,
   which is the order they were loaded: read through /proc/PID/mem from the r_debug that its
   program's DT_DEBUG points to. NULL, with the reason, when it cannot be read (another user's
   process without the right to trace it, a static program, one of another class). */
/* The program headers of the process's program, as its auxiliary vector names them. */
struct program_headers {
	uint64_t phdr, phnum, phent;
};

static bool read_auxv(int pid, struct program_headers *program, char *why, size_t size)
{
	char path[64];
	size_t length;
	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	char *auxv = read_proc_file(path, &length);
	*program = (struct program_headers){ 0 };
	for (size_t i = 0; auxv && i + 16 <= length; i += 16) {
		uint64_t type, value;
		memcpy(&type, auxv + i, 8);
		memcpy(&value, auxv + i + 8, 8);
		if (type == AT_PHDR)
			program->phdr = value;
		else if (type == AT_PHNUM)
			program->phnum = value;
		else if (type == AT_PHENT)
			program->phent = value;
	}
	free(auxv);
	if (!program->phdr || !program->phnum || program->phent != sizeof(Elf64_Phdr) || program->phnum > 256) {
		snprintf(why, size, "its auxiliary vector (%s) names no program headers of this inspector's class", path);
		return false;
	}
	return true;
}

/* The r_debug the loader filled in (0 when there is none): the program's DT_DEBUG, found through
   its program headers in memory (/proc/PID/mem at fd). False, with errno, when the headers cannot
   be read. */
static bool find_r_debug(int fd, const struct program_headers *program, uint64_t *r_debug)
{
	Elf64_Phdr headers[256];
	uint64_t bias = 0, dynamic = 0, dynamic_size = 0;
	bool have_bias = false;
	size_t bytes = program->phnum * sizeof(Elf64_Phdr);
	*r_debug = 0;
	errno = 0;
	if (pread(fd, headers, bytes, (off_t)program->phdr) != (ssize_t)bytes) {
		errno = errno ? errno : EIO;
		return false;
	}
	for (size_t i = 0; i < program->phnum; i++)
		if (headers[i].p_type == PT_PHDR) {
			bias = program->phdr - headers[i].p_vaddr;
			have_bias = true;
		}
	for (size_t i = 0; i < program->phnum; i++)
		if (headers[i].p_type == PT_DYNAMIC) {
			dynamic = headers[i].p_vaddr;
			dynamic_size = headers[i].p_memsz;
		}
	for (uint64_t offset = 0; have_bias && dynamic && offset + sizeof(Elf64_Dyn) <= dynamic_size && offset < (1u << 16);
	     offset += sizeof(Elf64_Dyn)) {
		Elf64_Dyn entry;
		if (pread(fd, &entry, sizeof(entry), (off_t)(bias + dynamic + offset)) != (ssize_t)sizeof(entry) || entry.d_tag == DT_NULL)
			break;
		if (entry.d_tag == DT_DEBUG)
			*r_debug = entry.d_un.d_ptr;
	}
	return true;
}

/* The names in the list of loaded objects from its first entry at map. struct link_map begins
   l_addr, l_name, l_ld, l_next, l_prev. Bounded: a list that loops or runs on is cut where a real
   one never reaches. */
static char **read_names(int fd, uint64_t map, size_t *count)
{
	char **names = NULL;
	for (size_t steps = 0; map && steps < (1u << 16); steps++) {
		uint64_t fields[5];
		char name[PATH_MAX];
		if (pread(fd, fields, sizeof(fields), (off_t)map) != (ssize_t)sizeof(fields))
			break;
		ssize_t n = fields[1] ? pread(fd, name, sizeof(name) - 1, (off_t)fields[1]) : 0;
		name[n > 0 ? (size_t)n : 0] = '\0';
		name[sizeof(name) - 1] = '\0';
		/* The program ("") and the vdso (no folder) are no files to register. */
		char **grown = name[0] == '/' ? realloc(names, (*count + 1) * sizeof(char *)) : NULL;
		if (grown && (grown[*count] = strdup(name)))
			(*count)++;
		if (grown)
			names = grown;
		map = fields[3];
	}
	return names;
}

static char **read_link_map(int pid, size_t *count, char *why, size_t size)
{
	char path[64];
	struct program_headers program;
	char **names = NULL;
	*count = 0;
	if (!read_auxv(pid, &program, why, size))
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, size, "%s: %s", path, strerror(errno));
		return NULL;
	}
	uint64_t r_debug, map = 0;
	if (!find_r_debug(fd, &program, &r_debug))
		snprintf(why, size, "%s: %s", path, strerror(errno));
	else if (!r_debug || pread(fd, &map, sizeof(map), (off_t)(r_debug + 8)) != (ssize_t)sizeof(map))
		snprintf(why, size, "its program has no DT_DEBUG the loader filled in (a static program?)");
	else if (!(names = read_names(fd, map, count)))
		snprintf(why, size, "its list of loaded objects names no file");
	close(fd);
	return names;
}

/* A path of the process's as the inspector reads it: through /proc/PID/root when the process lives
   in another mount namespace. malloc'd. */
static char *in_process_root(const struct what_if *what_if, const char *path)
{
	char *seen;
	return asprintf(&seen, "%s%s", what_if->root, path) < 0 ? NULL : seen;
}

/* A ':'-separated list of folders of the process's, each absolute one read through its root. */
static char *list_in_process_root(const struct what_if *what_if, char *list)
{
	if (!list || !what_if->root[0])
		return list;
	size_t entries = 1;
	for (const char *c = list; *c; c++)
		entries += *c == ':';
	char *seen = malloc(strlen(list) + entries * strlen(what_if->root) + 1), *end = seen;
	for (const char *s = list; seen && s;) {
		const char *next = strchr(s, ':');
		size_t length = next ? (size_t)(next - s) : strlen(s);
		end += sprintf(end, "%s%s%.*s", s == list ? "" : ":", s[0] == '/' ? what_if->root : "", (int)length, s);
		s = next ? next + 1 : NULL;
	}
	free(list);
	return seen;
}

/* An NVIDIA library loaded as path registers the folder of that path (what $ORIGIN means). */
static void register_folder_of(struct what_if *what_if, const char *file)
{
	int family = libnames_match_linux(libnames_basename(file), NULL);
	if (family < 0 || libnames_is_driver(family))
		return;
	char *folder = strndup(file, (size_t)(strrchr(file, '/') - file));
	if (folder && folder[0] && registry_add_origin(family, folder) != REGISTRY_ERROR)
		remember_origin(what_if, folder);
	free(folder);
}

/* The trust rule judges for the process of --pid (its effective user and groups), else for the
   inspector's own user. */
static struct platform_identity process_identity;

bool what_if_parse_status(const char *status, struct platform_identity *who)
{
	/* "Uid:\treal\teffective\tsaved\tfs", "Gid:" likewise, "Groups:\tg1 g2 ...". */
	memset(who, 0, sizeof(*who));
	bool have_user = false, have_group = false;
	for (const char *line = status; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		unsigned long long real, effective;
		if (sscanf(line, "Uid: %llu %llu", &real, &effective) == 2) {
			who->user = effective;
			have_user = true;
		} else if (sscanf(line, "Gid: %llu %llu", &real, &effective) == 2 && who->group_count < PLATFORM_MAX_GROUPS) {
			who->groups[who->group_count++] = effective;
			have_group = true;
		} else if (strncmp(line, "Groups:", 7) == 0) {
			const char *s = line + 7;
			char *end;
			for (unsigned long long group; who->group_count < PLATFORM_MAX_GROUPS; s = end) {
				while (*s == ' ' || *s == '\t')
					s++;
				if (*s < '0' || *s > '9')
					break;
				group = strtoull(s, &end, 10);
				who->groups[who->group_count++] = group;
			}
		}
	}
	who->known = have_user && have_group;
	return who->known;
}

struct mapped_visit {
	struct what_if *what_if;
	struct file_probe *probe;
	struct string_map *seen; /* the loaded objects' names and identities, then the mapped files' */
};

/* A mapped file as the inspector reads it: counted as loaded, its folder registered, unless it is
   one of the loaded objects under another name. */
static void add_mapped_file(struct mapped_visit *visit, const char *file)
{
	string_map_put(visit->seen, file, visit); /* a mark: the value is never read */
	const struct probed_file *probed = file_probe_path(visit->probe, file);
	char key[48];
	if (probed && probed->result == PROBE_FOUND) {
		snprintf(key, sizeof(key), "%llx:%llx", (unsigned long long)probed->device, (unsigned long long)probed->inode);
		if (string_map_get(visit->seen, key))
			return; /* in the list of loaded objects under the name it was loaded as */
	}
	add_mapped(visit->what_if, visit->probe, file);
	/* The kernel names a mapping by its real path, which is what the runtime registers for a
	   library loaded through links only if it was loaded by that path. */
	register_folder_of(visit->what_if, file);
}

/* A file mapped in the process (by its path there): what else is mapped, in address order, after
   the objects of its list of loaded objects. */
static void visit_mapped(const char *mapped_path, void *arg)
{
	struct mapped_visit *visit = arg;
	char *file = in_process_root(visit->what_if, mapped_path);
	if (file && !string_map_get(visit->seen, file))
		add_mapped_file(visit, file);
	free(file);
}


/* The state letter (R, S, D, Z, X, ...) of the State line of the text of /proc/PID/status, or 0. */
static char process_state(const char *status)
{
	for (const char *line = status; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (strncmp(line, "State:", 6) == 0)
			return line[6 + strspn(line + 6, " \t")];
	return 0;
}

/* The process's /proc/PID/status, checked: NULL, with the reason, for a process that is not there
   or has exited (a zombie keeps its pid, and no mapping, until its parent waits for it). */
static char *read_live_status(int pid, char *message, size_t size)
{
	char path[64], pid_text[32];
	size_t length;
	snprintf(pid_text, sizeof(pid_text), "%d", pid);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	char *status = read_proc_file(path, &length);
	char state = status ? process_state(status) : 0;
	if (!status)
		say(message, size, errno == ENOENT ? "--pid %s: no such process%s" : "--pid %s: cannot read %s", pid_text,
		    errno == ENOENT ? "" : path);
	else if (state == 'Z' || state == 'X')
		say(message, size, "--pid %s: the process has exited (%s): nothing is loaded in it", pid_text,
		    state == 'Z' ? "a zombie, not yet waited for by its parent" : "it is being reaped");
	else
		return status;
	free(status);
	return NULL;
}

/* "/proc/PID/root" in root when the process lives in another mount namespace than the inspector
   (its mapped paths then name files of that namespace); "" when it does not or that cannot be told. */
static void process_root(int pid, char *root, size_t size)
{
	struct stat own, theirs;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	root[0] = '\0';
	if (stat("/proc/self/ns/mnt", &own) == 0 && stat(path, &theirs) == 0 && (own.st_ino != theirs.st_ino || own.st_dev != theirs.st_dev))
		snprintf(root, size, "/proc/%d/root", pid);
}

/* The objects of the process's list of loaded objects, in load order, by the names it loaded them
   as; their identities in seen. */
static void add_loaded(struct what_if *what_if, struct file_probe *probe, int pid, struct string_map *seen)
{
	size_t loaded_count = 0;
	char **loaded = read_link_map(pid, &loaded_count, what_if->order_problem, sizeof(what_if->order_problem));
	for (size_t i = 0; i < loaded_count; i++) {
		char *path = in_process_root(what_if, loaded[i]);
		const struct probed_file *file = path ? file_probe_path(probe, path) : NULL;
		if (file && file->result == PROBE_FOUND) {
			char key[48];
			snprintf(key, sizeof(key), "%llx:%llx", (unsigned long long)file->device, (unsigned long long)file->inode);
			string_map_put(seen, key, what_if); /* a mark: the value is never read */
		}
		if (path) {
			add_mapped(what_if, probe, path);
			register_folder_of(what_if, path);
		}
		free(path);
		free(loaded[i]);
	}
	free(loaded);
}

int what_if_read_process(struct what_if *what_if, struct file_probe *probe, int pid, char **library_path,
			 char **nvinterpose_path, char *message, size_t size)
{
	char path[64], pid_text[32];
	size_t length;
	*library_path = *nvinterpose_path = NULL;
	snprintf(pid_text, sizeof(pid_text), "%d", pid);
	char *status = read_live_status(pid, message, size);
	if (!status)
		return -1;
	bool identity = what_if_parse_status(status, &process_identity);
	free(status);
	if (!identity)
		return say(message, size, "--pid %s: cannot read its user and groups from /proc/%s/status", pid_text, pid_text);
	process_root(pid, what_if->root, sizeof(what_if->root));
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	char *maps = read_proc_file(path, &length);
	if (!maps)
		return say(message, size, "--pid %s: cannot read %s", pid_text, path);
	/* A process that exited meanwhile leaves no mapping. */
	if (!length) {
		status = read_live_status(pid, message, size);
		bool alive = status != NULL;
		free(status);
		if (!alive) {
			free(maps);
			return -1;
		}
	}
	what_if->pid = pid;
	/* First the objects in the order the process loaded them, by the names it loaded them as (the
	   runtime registers origins in that order); then what else is mapped, in address order. */
	struct string_map seen = { 0 };
	add_loaded(what_if, probe, pid, &seen);
	struct mapped_visit visit = { what_if, probe, &seen };
	what_if_mapped_files(maps, visit_mapped, &visit);
	string_map_clear(&seen, NULL);
	free(maps);
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	char *environ_text = read_proc_file(path, &length);
	if (environ_text) {
		*library_path = list_in_process_root(what_if, what_if_environment_value(environ_text, length, "LD_LIBRARY_PATH"));
		*nvinterpose_path = list_in_process_root(what_if, what_if_environment_value(environ_text, length, "NVINTERPOSE_PATH"));
		free(environ_text);
	}
	return 0;
}

static const char *configured_path;

static const char *what_if_getenv(const char *name)
{
	return strcmp(name, "NVINTERPOSE_PATH") == 0 ? configured_path : NULL;
}

void what_if_configure(struct what_if *what_if, const char *nvinterpose_path)
{
	struct config config;
	configured_path = nvinterpose_path;
	config_read(&config, what_if_getenv, false);
	config.policy = what_if->policy;
	config_set(&config);
	log_set_level(LOG_WARN); /* the trust rule's skips, as the runtime would say them */
}

void what_if_free(struct what_if *what_if)
{
	for (size_t i = 0; i < what_if->origin_count; i++)
		free(what_if->origins[i]);
	free(what_if->origins);
	for (size_t i = 0; i < what_if->mapped_count; i++)
		free(what_if->mapped[i].path);
	free(what_if->mapped);
	memset(what_if, 0, sizeof(*what_if));
}

struct candidate {
	struct file_probe *probe;
	char *path;
	enum search_step step;
};

/* The runtime uses a candidate only when it is a shared object this process can load and the
   loader can map whole (src/linux/plan.c, usable_candidate). A copy cut short is skipped. */
static bool take_loadable(const char *path, enum search_step step, enum loader_step loader_step, void *arg)
{
	(void)loader_step;
	struct candidate *candidate = arg;
	const struct probed_file *file = file_probe_path(candidate->probe, path);
	if (!file || file->result != PROBE_FOUND || !file->facts->whole)
		return false;
	candidate->path = strdup(path);
	candidate->step = step;
	return true;
}

char *what_if_candidate(struct file_probe *probe, const char *name, const char *asker_folder, bool folder_only,
			enum how *how, enum search_step *step)
{
	struct candidate candidate = { .probe = probe };
	struct search_request request = { .name = name, .caller_folder = asker_folder, .caller_folder_only = folder_only,
					  .who = process_identity.known ? &process_identity : NULL };
	if (!search_candidates(&request, take_loadable, &candidate))
		return NULL;
	if (step)
		*step = candidate.step;
	switch (candidate.step) {
	case SEARCH_WHEEL_SIBLING: *how = HOW_WHEEL_SIBLING; break;
	case SEARCH_NVINTERPOSE_PATH: *how = HOW_NVINTERPOSE_PATH; break;
	/* The asker's own folder is an origin: the runtime registered it when the asker was loaded. */
	default: *how = HOW_REGISTERED_ORIGIN; break;
	}
	return candidate.path;
}
