/* What the loader makes of a candidate file, as its open_verify decides, and of a folder; each path
   looked at once per run, however many trees name it. No file is ever opened in a way that can
   block: a FIFO or a device is judged by its type alone. */
#pragma once

#include "loader_host.h"
#include "string_map.h"

#include "elf/elf_reader.h"

#include <stdbool.h>
#include <sys/types.h>

enum probe_result {
	PROBE_ABSENT,     /* no such file, or unreadable (ENOENT, EACCES): the loader goes on */
	PROBE_SKIPPED,    /* an ELF file of another class or machine: the loader passes over it */
	PROBE_FOUND,      /* a shared object this loader takes */
	PROBE_STOPS_LIST, /* any other error (ELOOP, ENAMETOOLONG, ...): the loader leaves this search list */
	PROBE_FATAL,      /* the loader stops the whole load here (invalid ELF header, a folder, ...) */
};

struct probed_file {
	enum probe_result result;
	char *reason; /* why it was skipped, stopped or fatal; NULL otherwise */
	/* What the reader read, whatever the loader makes of it; NULL when it could not read it. Apart
	   (it is two kilobytes) from the many probes that find no file at all. */
	struct elf_facts *facts;
	dev_t device;
	ino_t inode;
};

struct folder_facts {
	bool exists;          /* a folder */
	bool has_glibc_hwcaps;/* FOLDER/glibc-hwcaps is a folder */
	bool has_legacy;      /* FOLDER has a subfolder a legacy hwcap subfolder's name could start with */
};

struct file_probe {
	struct loader_host *host;
	struct string_map files;
	struct string_map folders;
	struct string_map installations; /* folder -> the installation it belongs to (mixed_origin.c) */
	struct string_map carried;       /* path -> the names it carries, or none read (carried_names.c) */
};

void file_probe_init(struct file_probe *probe, struct loader_host *host);
void file_probe_free(struct file_probe *probe);

const struct probed_file *file_probe_path(struct file_probe *probe, const char *path);
const struct folder_facts *file_probe_folder(struct file_probe *probe, const char *folder);

/* The file path of name in folder as glibc builds it ("" is the current folder: the bare name). */
char *file_probe_join(const char *folder, const char *name);
/* The same in buffer when it fits (the search's hot path), else malloc'd: free it when it is not
   buffer. NULL when memory runs out. */
char *file_probe_join_into(char *buffer, size_t size, const char *folder, const char *name);
