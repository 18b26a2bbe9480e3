/* Helpers for the reader's suites: facts as comparable text, a read made in a child process (so a
   crash or a hang fails one file, not the suite), and the check of a corpus against its expectations. */
#pragma once

#include "elf/elf_reader.h"

#include <stdbool.h>
#include <stddef.h>

/* The facts, one per line: "header ..." (class, data, OS ABI, machine, type), then "dynamic ...",
   "nodeflib", "interp", "soname", "rpath", "runpath" and "needed" (each DT_NEEDED on its own line).
   Without the header line when with_header is false. malloc'd. */
char *elf_facts_text(const struct elf_facts *facts, bool with_header);

struct elf_child_read {
	int status;                  /* the child's exit status, or 128 + the signal that ended it */
	enum elf_reader_error error; /* elf_read_facts's answer, when status is 0 */
	char *message;               /* its message (empty on success) */
	char *facts;                 /* elf_facts_text with the header, on success */
	char *dynamic;               /* elf_facts_text without it */
	bool whole;                  /* the facts' whole, on success */
	bool invariants_hold;        /* counts within bounds, every string there */
};

/* elf_read_facts(path) in a forked child that gets alarm_seconds before SIGALRM ends it. */
struct elf_child_read elf_read_in_child(const char *path, unsigned alarm_seconds);
void elf_child_read_free(struct elf_child_read *read);

/* Writes source's corpus into a fresh folder and reads every file in a child: none may crash or
   hang, every error has a one-line message, every answer meets the file's expectation against the
   source's own facts. Returns how many files were checked. */
size_t elf_check_corpus(const char *source);
