/* The scan's data, shared by its parts: the places and the copies found there (scan_places.c),
   the mix each copy would load (scan.c), and the report (scan_render.c). */
#pragma once

#include "libnames.h"
#include "scan.h"
#include "string_map.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

enum place_kind { PLACE_SITE_PACKAGES, PLACE_CONDA, PLACE_CUDA_HOME, PLACE_CUDA_PATH, PLACE_LD_LIBRARY_PATH, PLACE_CACHE, PLACE_KINDS };

extern const char *const place_names[PLACE_KINDS];



struct place {
	enum place_kind kind;
	char *folder;  /* the folder scanned (the cache's file for PLACE_CACHE), or NULL when there is none */
	char *note;    /* why it was not scanned, or NULL */
	size_t copies; /* NVIDIA files found there */
};

struct copy {
	char *path;        /* as first found */
	char *real_path;
	char **names;      /* every path it was found as */
	size_t name_count;
	unsigned found_in; /* bit per place kind */
	char *version;     /* NULL when neither its file name nor a wheel's RECORD says */
	char *version_from;
	char *installation;
	const char *site_packages; /* the site-packages folder it lies in, or NULL */
	dev_t device;
	ino_t inode;
	size_t library;    /* index in scan->libraries */
};

struct library {
	char *name; /* its SONAME, else its file name */
	int family;
	size_t *copies;
	size_t copy_count;
	size_t installations;
};

enum finding_kind { FINDING_MIXED_ORIGIN, FINDING_MISSING, FINDING_CUT };

struct finding {
	enum finding_kind kind;
	char *library, *dependency, *got, *own;
	enum how how;
	bool run_time, required;
	char *text, *hint;
};

struct scan {
	const struct scan_request *request;
	char *python_executable;
	char *python_problem;
	struct place *places;
	size_t place_count;
	struct copy *copies;
	size_t copy_count;
	struct library *libraries;
	size_t library_count;
	struct string_map by_inode;   /* "dev:ino" -> copy index + 1 */
	struct string_map by_name;    /* library name -> library index + 1 */
	struct string_map records;    /* site-packages folder -> its RECORD map (path -> "version\tdist") */
	struct finding *findings;
	size_t finding_count;
	bool cut;
};

/* Room for one more element at the end of an array of count (a scan holds hundreds at most). */
static inline void *append(void *array, size_t *count, size_t size, void **element)
{
	char *grown = realloc(array, (*count + 1) * size);
	*element = grown ? grown + (*count)++ * size : NULL;
	return grown ? grown : array;
}

#define APPEND(array, count, element) ((array) = append((array), &(count), sizeof(*(array)), (void **)&(element)), (element))

static inline char *copy_of(const char *s) { return s ? strdup(s) : NULL; }

/* The folder of a path ("/" for a file at the root). */
static inline char *folder_part(const char *path)
{
	const char *base = libnames_basename(path);
	return strndup(path, base > path + 1 ? (size_t)(base - path - 1) : 1);
}

/* Scans every place, in order, for the NVIDIA libraries they hold: the python's site-packages,
   CONDA_PREFIX, CUDA_HOME, CUDA_PATH, LD_LIBRARY_PATH and ld.so.cache. */
void scan_places(struct scan *scan);
/* Frees what scan_places found. */
void scan_free_places(struct scan *scan);

/* The report, as one JSON document or as text for a person. */
void scan_write_json(const struct scan *scan, FILE *out, size_t counted, int status);
void scan_write_text(const struct scan *scan, FILE *out, size_t counted);
