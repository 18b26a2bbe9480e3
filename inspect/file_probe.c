#define _GNU_SOURCE
#include "file_probe.h"

#include "carried_names.h"

#include "elf_names.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void file_probe_init(struct file_probe *probe, struct loader_host *host)
{
	memset(probe, 0, sizeof(*probe));
	probe->host = host;
}

static void free_probed(void *value)
{
	struct probed_file *file = value;
	free(file->reason);
	if (file->facts)
		elf_facts_free(file->facts);
	free(file->facts);
	free(file);
}

void file_probe_free(struct file_probe *probe)
{
	string_map_clear(&probe->files, free_probed);
	string_map_clear(&probe->folders, free);
	string_map_clear(&probe->installations, free);
	string_map_clear(&probe->carried, carried_names_free);
}

char *file_probe_join(const char *folder, const char *name)
{
	return file_probe_join_into(NULL, 0, folder, name);
}

char *file_probe_join_into(char *buffer, size_t size, const char *folder, const char *name)
{
	size_t folder_length = strlen(folder), name_length = strlen(name);
	bool slash = folder_length && strcmp(folder, "/") != 0;
	size_t needed = folder_length + slash + name_length + 1;
	char *path = needed <= size ? buffer : malloc(needed);
	if (!path)
		return NULL;
	memcpy(path, folder, folder_length);
	if (slash)
		path[folder_length] = '/';
	memcpy(path + folder_length + slash, name, name_length + 1);
	return path;
}

static enum probe_result verdict(struct probed_file *file, enum probe_result result, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

static enum probe_result verdict(struct probed_file *file, enum probe_result result, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	if (vasprintf(&file->reason, format, args) < 0)
		file->reason = NULL;
	va_end(args);
	/* A reason may quote a file's own bytes: one printable line. */
	for (char *c = file->reason; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return file->result = result;
}

/* The loader's first checks (class, then machine) come before anything the libelf reader could
   refuse, so a damaged file of another kind is still only passed over. */
static bool is_other_kind(const char *path, const struct elf_host *host, char *what, size_t size)
{
	unsigned char header[20];
	char machine[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	ssize_t n = fd >= 0 ? pread(fd, header, sizeof(header), 0) : -1;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(header) || memcmp(header, ELFMAG, SELFMAG) != 0)
		return false;
	if (header[EI_CLASS] != host->elf_class && (header[EI_CLASS] == ELFCLASS32 || header[EI_CLASS] == ELFCLASS64)) {
		snprintf(what, size, "wrong ELF class: %s", elf_class_name(header[EI_CLASS]));
		return true;
	}
	if (header[EI_DATA] != host->data)
		return false;
	uint16_t file_machine;
	memcpy(&file_machine, header + 18, sizeof(file_machine));
	if (file_machine != host->machine) {
		snprintf(what, size, "another machine: %s", elf_machine_name(file_machine, machine, sizeof(machine)));
		return true;
	}
	return false;
}

/* glibc's open_verify, in its order: class and machine mismatches are passed over; everything else
   it cannot use stops the load with its message. */
static void judge_facts(struct probed_file *file, const struct elf_host *host)
{
	const struct elf_facts *f = file->facts;
	char machine[32];
	if (f->elf_class != host->elf_class)
		verdict(file, PROBE_SKIPPED, "wrong ELF class: %s", elf_class_name(f->elf_class));
	else if (f->data != host->data)
		verdict(file, PROBE_FATAL, "ELF file data encoding not %s", host->data == ELFDATA2LSB ? "little-endian" : "big-endian");
	else if (f->osabi != ELFOSABI_SYSV && f->osabi != ELFOSABI_GNU)
		verdict(file, PROBE_FATAL, "ELF file OS ABI invalid");
	else if (f->machine != host->machine)
		verdict(file, PROBE_SKIPPED, "another machine: %s", elf_machine_name(f->machine, machine, sizeof(machine)));
	else if (f->type != ET_DYN && f->type != ET_EXEC)
		verdict(file, PROBE_FATAL, "only ET_DYN and ET_EXEC can be loaded");
	else if (f->type == ET_EXEC)
		verdict(file, PROBE_FATAL, "cannot dynamically load executable");
	else if (!f->has_dynamic)
		verdict(file, PROBE_FATAL, "object file has no dynamic section");
	else if (!elf_is_compatible(f, host))
		verdict(file, PROBE_FATAL, "not a shared object this loader takes");
	else
		file->result = PROBE_FOUND;
}

static void judge(struct probed_file *file, const char *path, const struct elf_host *host)
{
	struct stat st;
	char message[512];
	if (stat(path, &st) != 0) {
		int error = errno;
		if (error == ENOENT || error == ENOTDIR || error == EACCES)
			file->result = PROBE_ABSENT;
		else
			verdict(file, PROBE_STOPS_LIST, "%s: the loader leaves this search list here", strerror(error));
		return;
	}
	/* The loader opens without O_NONBLOCK and reads: it would wait on a FIFO, and read a folder or a
	   device's bytes as a header. None of them is opened here. */
	if (S_ISDIR(st.st_mode)) {
		verdict(file, PROBE_FATAL, "a folder: the loader stops with \"cannot read file data: Is a directory\"");
		return;
	}
	if (S_ISFIFO(st.st_mode)) {
		verdict(file, PROBE_FATAL, "a FIFO: the loader would wait here for a writer");
		return;
	}
	if (S_ISSOCK(st.st_mode)) {
		verdict(file, PROBE_STOPS_LIST, "a socket (open fails with ENXIO): the loader leaves this search list here");
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		verdict(file, PROBE_FATAL, "a device, not a library: the loader fails on its contents");
		return;
	}
	file->device = st.st_dev;
	file->inode = st.st_ino;
	struct elf_facts *facts = malloc(sizeof(*facts));
	enum elf_reader_error error = facts ? elf_read_facts(path, facts, message, sizeof(message)) : ELF_READER_IO;
	if (error == ELF_READER_OK) {
		file->facts = facts;
		judge_facts(file, host);
		return;
	}
	free(facts);
	if (!facts)
		snprintf(message, sizeof(message), "%s: out of memory", path);
	char kind[64];
	if (error == ELF_READER_IO)
		verdict(file, PROBE_ABSENT, "%s", message);
	else if (is_other_kind(path, host, kind, sizeof(kind)))
		verdict(file, PROBE_SKIPPED, "%s", kind);
	else if (error == ELF_READER_NOT_ELF)
		verdict(file, PROBE_FATAL, "invalid ELF header (%s)", message);
	else
		verdict(file, PROBE_FATAL, "unreadable: %s", message);
}

const struct probed_file *file_probe_path(struct file_probe *probe, const char *path)
{
	struct probed_file *file = string_map_get(&probe->files, path);
	if (file)
		return file;
	file = calloc(1, sizeof(*file));
	if (!file)
		return NULL;
	judge(file, path, &probe->host->elf);
	if (!string_map_put(&probe->files, path, file)) {
		free_probed(file);
		return NULL;
	}
	return file;
}

static bool is_folder(const char *folder, const char *sub)
{
	struct stat st;
	char *path = file_probe_join(folder, sub);
	bool yes = path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	free(path);
	return yes;
}

const struct folder_facts *file_probe_folder(struct file_probe *probe, const char *folder)
{
	const char *key = folder[0] ? folder : ".";
	struct folder_facts *facts = string_map_get(&probe->folders, key);
	if (facts)
		return facts;
	facts = calloc(1, sizeof(*facts));
	if (!facts)
		return NULL;
	struct stat st;
	facts->exists = stat(key, &st) == 0 && S_ISDIR(st.st_mode);
	if (facts->exists) {
		facts->has_glibc_hwcaps = is_folder(key, "glibc-hwcaps");
		/* Legacy hwcap subfolders: a folder that has one of the names they can start with; the
		   exact list is the loader's, asked only when one of these exists. */
		const char *legacy[16];
		size_t n = loader_machine_legacy_names(&probe->host->machine, legacy, sizeof(legacy) / sizeof(legacy[0]));
		for (size_t i = 0; i < n && !facts->has_legacy; i++)
			facts->has_legacy = is_folder(key, legacy[i]);
	}
	if (!string_map_put(&probe->folders, key, facts)) {
		free(facts);
		return NULL;
	}
	return facts;
}
