#define _GNU_SOURCE
#include "elf_check.h"

#include "common.h"
#include "elf_corpus.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *or_none(const char *s) { return s ? s : "(none)"; }

char *elf_facts_text(const struct elf_facts *facts, bool with_header)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	ck_assert_ptr_nonnull(out);
	if (with_header)
		fprintf(out, "header class=%u data=%u osabi=%u machine=%u type=%u\n", facts->elf_class, facts->data,
			facts->osabi, facts->machine, facts->type);
	fprintf(out, "dynamic %d\nnodeflib %d\ninterp %s\nsoname %s\nrpath %s\nrunpath %s\n", facts->has_dynamic,
		facts->nodeflib, or_none(facts->interp), or_none(facts->soname), or_none(facts->rpath),
		or_none(facts->runpath));
	for (size_t i = 0; i < facts->needed_count && i < ELF_READER_MAX_NEEDED; i++)
		fprintf(out, "needed %s\n", or_none(facts->needed[i]));
	fclose(out);
	return text;
}

static bool invariants_hold(const struct elf_facts *facts)
{
	if (facts->needed_count > ELF_READER_MAX_NEEDED)
		return false;
	for (size_t i = 0; i < facts->needed_count; i++)
		if (!facts->needed[i])
			return false;
	for (size_t i = facts->needed_count; i < ELF_READER_MAX_NEEDED; i++)
		if (facts->needed[i])
			return false;
	/* Without a dynamic section there are no dynamic facts. */
	return facts->has_dynamic || (!facts->soname && !facts->rpath && !facts->runpath && !facts->nodeflib &&
				      facts->needed_count == 0);
}

/* The child's answer on the pipe: error, invariants, then three length-prefixed strings. */
static void write_string(FILE *out, const char *s)
{
	uint64_t length = strlen(s);
	fwrite(&length, sizeof(length), 1, out);
	fwrite(s, 1, length, out);
}

static char *read_string(const char **at, const char *end)
{
	uint64_t length;
	if ((size_t)(end - *at) < sizeof(length))
		return strdup("");
	memcpy(&length, *at, sizeof(length));
	*at += sizeof(length);
	if (length > (uint64_t)(end - *at))
		length = (uint64_t)(end - *at);
	char *s = strndup(*at, (size_t)length);
	*at += length;
	return s;
}

struct elf_child_read elf_read_in_child(const char *path, unsigned alarm_seconds)
{
	struct elf_child_read result = { .status = -1 };
	int pipe_fds[2];
	ck_assert_int_eq(pipe(pipe_fds), 0);
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(pipe_fds[0]);
		/* Check's own SIGALRM handler, inherited, would end the whole test's process group. */
		signal(SIGALRM, SIG_DFL);
		alarm(alarm_seconds);
		struct elf_facts facts;
		char message[512];
		enum elf_reader_error error = elf_read_facts(path, &facts, message, sizeof(message));
		FILE *out = fdopen(pipe_fds[1], "w");
		int32_t code = (int32_t)error;
		char holds = invariants_hold(&facts), whole = facts.whole;
		fwrite(&code, sizeof(code), 1, out);
		fwrite(&holds, 1, 1, out);
		fwrite(&whole, 1, 1, out);
		write_string(out, error == ELF_READER_OK ? "" : message);
		char *facts_text = elf_facts_text(&facts, true), *dynamic_text = elf_facts_text(&facts, false);
		write_string(out, facts_text);
		write_string(out, dynamic_text);
		fclose(out);
		elf_facts_free(&facts);
		_exit(0);
	}
	close(pipe_fds[1]);
	size_t size = 0;
	char *data = test_read_stream(fdopen(pipe_fds[0], "r"), &size);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	const char *at = data, *end = data + size;
	int32_t code = -1;
	char holds = 0, whole = 0;
	if (size >= sizeof(code) + 2) {
		memcpy(&code, at, sizeof(code));
		holds = at[sizeof(code)];
		whole = at[sizeof(code) + 1];
		at += sizeof(code) + 2;
	}
	result.error = (enum elf_reader_error)code;
	result.invariants_hold = holds != 0;
	result.whole = whole != 0;
	result.message = read_string(&at, end);
	result.facts = read_string(&at, end);
	result.dynamic = read_string(&at, end);
	free(data);
	return result;
}

void elf_child_read_free(struct elf_child_read *read)
{
	free(read->message);
	free(read->facts);
	free(read->dynamic);
	memset(read, 0, sizeof(*read));
}

static const char *expect_name(enum elf_corpus_expect expect)
{
	switch (expect) {
	case ELF_CORPUS_ANY: return "an error or valid facts";
	case ELF_CORPUS_ERROR: return "an error";
	case ELF_CORPUS_SAME_FACTS: return "the source's facts";
	case ELF_CORPUS_SAME_DYNAMIC: return "the source's dynamic facts";
	}
	return "?";
}

size_t elf_check_corpus(const char *source)
{
	struct elf_child_read original = elf_read_in_child(source, 60);
	ck_assert_msg(original.status == 0 && original.error == ELF_READER_OK, "%s: the source itself does not read: %s",
		      source, original.message);
	char *folder = test_tmpdir();
	struct elf_corpus_file *files = NULL;
	size_t count = elf_corpus_write(source, folder, &files);
	ck_assert_msg(count > 0, "no corpus written from %s", source);
	for (size_t i = 0; i < count; i++) {
		const struct elf_corpus_file *file = &files[i];
		struct elf_child_read read = elf_read_in_child(file->path, 60);
		ck_assert_msg(read.status == 0, "%s (%s): the read ended with status %d%s", file->name, source, read.status,
			      read.status == 128 + SIGALRM ? " (it hung)" : "");
		ck_assert_msg(read.error >= ELF_READER_OK && read.error <= ELF_READER_UNSUPPORTED, "%s: unknown error %d",
			      file->name, read.error);
		ck_assert_msg(read.invariants_hold, "%s (%s): facts break their invariants:\n%s", file->name, source, read.facts);
		if (read.error != ELF_READER_OK)
			ck_assert_msg(read.message[0] && !strchr(read.message, '\n'), "%s: error %d without a one-line message: '%s'",
				      file->name, read.error, read.message);
		bool met = true;
		switch (file->expect) {
		case ELF_CORPUS_ANY: break;
		case ELF_CORPUS_ERROR: met = read.error != ELF_READER_OK; break;
		case ELF_CORPUS_SAME_FACTS: met = read.error == ELF_READER_OK && strcmp(read.facts, original.facts) == 0; break;
		case ELF_CORPUS_SAME_DYNAMIC:
			met = read.error == ELF_READER_OK && strcmp(read.dynamic, original.dynamic) == 0;
			break;
		}
		ck_assert_msg(met, "%s (from %s): expected %s, got error %d '%s' with\n%s\nthe source's:\n%s", file->name, source,
			      expect_name(file->expect), read.error, read.message, read.facts, original.facts);
		elf_child_read_free(&read);
	}
	elf_corpus_free(files, count);
	elf_child_read_free(&original);
	return count;
}
