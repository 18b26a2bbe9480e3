/* The documents against the code's tables: every table of settings and of events that a document
   shows (docs/, HACKING.md, the manual pages' sources) lists what the code's one table lists, in
   its order (config_setting in src/config.c; log_event_kind and log_event_field in src/log.c); the
   reference, nvinterpose(7), and the event log's page show them; every link between the documents
   leads to a file of the tree and, with an anchor, to a heading of that file; and the runtime's
   readers of dynamic sections are described as their code reads (never as mapping a file). */
#define _GNU_SOURCE
#include "common.h"

#include "config.h"
#include "log.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* A table of one document: its rows' names (a setting, an event kind) and, for events, each row's
   fields joined by spaces. */
struct shown_table {
	size_t count;
	const char *names[64];
	char *fields[64];
};

/* The code's tables, in the same form. */
static struct shown_table code_settings(void)
{
	struct shown_table table = { 0 };
	for (const char *name; (name = config_setting(table.count, NULL)) && table.count < 64;)
		table.names[table.count++] = name;
	return table;
}

static struct shown_table code_events(void)
{
	struct shown_table table = { 0 };
	for (const char *kind; (kind = log_event_kind(table.count)) && table.count < 64; table.count++) {
		table.names[table.count] = kind;
		char *fields = test_format("%s", "");
		for (size_t j = 0; log_event_field(table.count, j); j++)
			fields = test_format("%s%s%s", fields, j ? " " : "", log_event_field(table.count, j));
		table.fields[table.count] = fields;
	}
	return table;
}

static void assert_same_table(const char *where, const char *what, const struct shown_table *shown, const struct shown_table *code)
{
	for (size_t i = 0; i < shown->count || i < code->count; i++) {
		const char *name = i < shown->count ? shown->names[i] : "(nothing)", *expected = i < code->count ? code->names[i] : "(nothing)";
		ck_assert_msg(strcmp(name, expected) == 0, "%s: %s %zu is %s where the code's table has %s", where, what, i + 1, name, expected);
		if (code->fields[i])
			ck_assert_msg(shown->fields[i] && strcmp(shown->fields[i], code->fields[i]) == 0,
				      "%s: the %s event's fields are \"%s\" where the code's table has \"%s\"", where, name,
				      shown->fields[i] ? shown->fields[i] : "(none)", code->fields[i]);
	}
}

/* The words in backticks of a Markdown table's cell, joined by spaces. */
static char *ticked_words(const char *cell, size_t length)
{
	char *words = test_format("%s", "");
	const char *end = cell + length;
	for (const char *tick = memchr(cell, '`', length), *close; tick && (close = memchr(tick + 1, '`', (size_t)(end - tick - 1)));
	     tick = memchr(close + 1, '`', (size_t)(end - close - 1)))
		words = test_format("%s%s%.*s", words, words[0] ? " " : "", (int)(close - tick - 1), tick + 1);
	return words;
}

/* The Markdown table whose header row starts with header, from there: the first column's word of
   each row, and its second column's words (events' fields) when fields. */
static struct shown_table markdown_table(const char *header, bool fields)
{
	struct shown_table table = { 0 };
	const char *line = strchr(header, '\n');
	line = line ? strchr(line + 1, '\n') : NULL; /* past the |---| row */
	for (const char *end; line && line[1] == '|' && (end = strchr(line + 1, '\n')) && table.count < 64; line = end) {
		const char *first = line + 2, *second = strchr(first, '|');
		const char *third = second ? strchr(second + 1, '|') : NULL;
		ck_assert_msg(third && third < end, "a short row: %.*s", (int)(end - line - 1), line + 1);
		table.names[table.count] = ticked_words(first, (size_t)(second - first));
		table.fields[table.count++] = fields ? ticked_words(second + 1, (size_t)(third - second - 1)) : NULL;
	}
	return table;
}

/* The tags of a manual page's section (".SH NAME" up to the next .SH): the line after each .TP
   (".B NAME"), and, when fields, the line after that (".BR field \", \" field ... :"). */
static struct shown_table roff_section(const char *text, const char *section, bool fields)
{
	struct shown_table table = { 0 };
	const char *start = strstr(text, test_format("\n.SH %s\n", section));
	if (!start)
		return table;
	const char *stop = strstr(start + 1, "\n.SH ");
	for (const char *tp = strstr(start, "\n.TP\n"); tp && (!stop || tp < stop) && table.count < 64; tp = strstr(tp + 1, "\n.TP\n")) {
		const char *tag = tp + 5, *tag_end = strchr(tag, '\n');
		ck_assert_msg(strncmp(tag, ".B ", 3) == 0 && tag_end, "%s: a tag that is not .B NAME: %.40s", section, tag);
		table.names[table.count] = test_format("%.*s", (int)(tag_end - tag - 3), tag + 3);
		if (fields) {
			const char *list = tag_end + 1, *list_end = strchr(list, '\n');
			ck_assert_msg(strncmp(list, ".BR ", 4) == 0 && list_end, "%s: no .BR line of fields under it", table.names[table.count]);
			char *words = test_format("%s", "");
			for (const char *p = list + 4; p < list_end;) {
				size_t skip = strspn(p, " \",:");
				p += skip;
				size_t n = strcspn(p, " \",:\n");
				if (n)
					words = test_format("%s%s%.*s", words, words[0] ? " " : "", (int)n, p);
				p += n;
			}
			table.fields[table.count] = words;
		}
		table.count++;
	}
	return table;
}

/* Every table of the document whose header row starts with header, each held to code; how many. */
static size_t shown_in(const struct test_document *document, const char *header, bool fields, const struct shown_table *code,
		       const char *what)
{
	size_t found = 0;
	for (const char *at = strstr(document->text, header); at; at = strstr(at + 1, header)) {
		if (at != document->text && at[-1] != '\n')
			continue;
		struct shown_table shown = markdown_table(at, fields);
		assert_same_table(document->path, what, &shown, code);
		found++;
	}
	return found;
}

START_TEST(test_every_table_of_settings_and_events_is_the_codes)
{
	const struct test_document *documents;
	size_t count = test_documents(&documents);
	struct shown_table settings = code_settings(), events = code_events();
	ck_assert_uint_ge(settings.count, 8);
	ck_assert_uint_ge(events.count, 10);
	bool reference_settings = false, reference_events = false, event_page = false;
	for (size_t i = 0; i < count; i++) {
		const struct test_document *document = &documents[i];
		size_t tables = shown_in(document, "| setting |", false, &settings, "setting");
		/* A row of settings under another header would escape the check. */
		size_t rows = 0;
		for (const char *row = strstr(document->text, "\n| `NVINTERPOSE_"); row; row = strstr(row + 1, "\n| `NVINTERPOSE_"))
			rows++;
		ck_assert_msg(rows == tables * settings.count, "%s: %zu rows of settings outside a table that starts \"| setting |\"",
			      document->path, rows - tables * settings.count);
		size_t event_tables = shown_in(document, "| event | fields |", true, &events, "event");
		if (strcmp(document->path, "docs/event-log.md") == 0)
			event_page = event_tables > 0;
		if (strcmp(document->path, "man/nvinterpose.7.in") == 0) {
			struct shown_table shown = roff_section(document->text, "SETTINGS", false);
			assert_same_table(document->path, "setting", &shown, &settings);
			shown = roff_section(document->text, "EVENTS", true);
			assert_same_table(document->path, "event", &shown, &events);
			reference_settings = reference_events = true;
			printf("%s: its SETTINGS and EVENTS are the code's\n", document->path);
		}
		if (tables || event_tables)
			printf("%s: %zu tables of settings, %zu of events, each the code's\n", document->path, tables, event_tables);
	}
	ck_assert_msg(reference_settings && reference_events, "no man/nvinterpose.7.in");
	ck_assert_msg(event_page, "docs/event-log.md shows no table of events (\"| event | fields | ...\")");
}
END_TEST

/* GitHub's anchor of a heading: lower case, spaces as hyphens, punctuation but - and _ dropped. */
static char *anchor_of(const char *heading, size_t length)
{
	char *anchor = malloc(length + 1), *out = anchor;
	for (size_t i = 0; i < length; i++) {
		unsigned char c = (unsigned char)heading[i];
		if (isalnum(c) || c == '-' || c == '_' || c >= 0x80)
			*out++ = (char)tolower(c);
		else if (c == ' ')
			*out++ = '-';
	}
	*out = '\0';
	return anchor;
}

static bool has_heading(const char *text, const char *anchor)
{
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (line[0] != '#')
			continue;
		const char *title = line + strspn(line, "#");
		title += strspn(title, " ");
		if (strcmp(anchor_of(title, strcspn(title, "\n")), anchor) == 0)
			return true;
	}
	return false;
}

/* The Markdown document at path (from the source root), or NULL. */
static char *markdown_at(const char *path)
{
	return test_read_file(test_format("%s/%s", test_setting("NVI_SOURCE_ROOT"), path));
}

START_TEST(test_every_link_between_the_documents_leads_somewhere)
{
	const struct test_document *documents;
	size_t count = test_documents(&documents), links = 0;
	char *root = realpath(test_setting("NVI_SOURCE_ROOT"), NULL);
	ck_assert_ptr_nonnull(root);
	bool hacking = false;
	for (size_t i = 0; i < count; i++) {
		const struct test_document *document = &documents[i];
		hacking |= strcmp(document->path, "HACKING.md") == 0;
		const char *slash = strrchr(document->path, '/');
		char *folder = slash ? test_format("%.*s/", (int)(slash - document->path), document->path) : test_format("%s", "");
		for (const char *at = strstr(document->text, "]("); at; at = strstr(at + 1, "](")) {
			const char *target = at + 2;
			size_t length = strcspn(target, ") \n");
			if (strncmp(target, "http://", 7) == 0 || strncmp(target, "https://", 8) == 0 || strncmp(target, "mailto:", 7) == 0)
				continue;
			char *link = test_format("%.*s", (int)length, target), *hash = strchr(link, '#');
			if (hash)
				*hash++ = '\0';
			char *path = link[0] ? test_format("%s%s", folder, link) : test_format("%s", document->path);
			char *resolved = realpath(test_format("%s/%s", test_setting("NVI_SOURCE_ROOT"), path), NULL);
			ck_assert_msg(resolved, "%s: the link (%s) leads to no file of the tree", document->path, link);
			ck_assert_msg(strncmp(resolved, root, strlen(root)) == 0 && resolved[strlen(root)] == '/',
				      "%s: the link (%s) leads out of the tree, which a clone does not have", document->path, link);
			/* README.md is no test's: a link names the page that holds its subject, not a section of it. */
			ck_assert_msg(!hash || strcmp(path, "README.md") != 0, "%s: the link (%s#%s) names a section of README.md",
				      document->path, link, hash);
			if (hash && hash[0]) {
				char *text = markdown_at(path);
				ck_assert_msg(text && has_heading(text, hash), "%s: the link (%s#%s) names no heading of %s", document->path, link,
					      hash, path);
			}
			free(resolved);
			links++;
		}
	}
	printf("%zu links between the documents lead somewhere\n", links);
	ck_assert_msg(hacking, "HACKING.md is not among the documents");
	ck_assert_uint_gt(links, 0);
}
END_TEST

/* A word of text, whole and in any case. */
static bool has_word(const char *text, size_t length, const char *word)
{
	size_t n = strlen(word);
	for (size_t i = 0; i + n <= length; i++)
		if (strncasecmp(text + i, word, n) == 0 && (i == 0 || !isalpha((unsigned char)text[i - 1])) &&
		    (i + n == length || !isalpha((unsigned char)text[i + n])))
			return true;
	return false;
}

/* The part of a paragraph that says the file is mapped, or NULL: a stretch between ';', '(' and
   ')' that says "maps", "mapped" or "mapping", but not "never mapped" and the like. */
static char *says_mapped(const char *paragraph)
{
	static const char *const denials[] = { "never mapp", "not mapp", "no mapp", "maps none", "maps nothing" };
	for (const char *part = paragraph; *part;) {
		size_t length = strcspn(part, ";()");
		char *text = test_format("%.*s", (int)length, part);
		bool denied = false;
		for (size_t i = 0; i < sizeof(denials) / sizeof(denials[0]); i++)
			denied |= strcasestr(text, denials[i]) != NULL;
		if (!denied && (has_word(text, length, "maps") || has_word(text, length, "mapped") || has_word(text, length, "mapping")))
			return text;
		part += length + (part[length] != '\0');
	}
	return NULL;
}

/* The runtime reads a file with pread, a piece at a time, never mapping it, so that a file cut
   short while it is read is an error, not a SIGBUS. A paragraph of the documents that names one of
   its readers must not say it maps the file (a paragraph ends before a blank line, a list item or
   a table row). */
START_TEST(test_the_readers_of_dynamic_sections_are_described_as_they_read)
{
	static const char *const readers[] = { "src/linux/dynamic_file.c", "src/linux/dynamic.c" };
	const struct test_document *documents;
	size_t count = test_documents(&documents), named = 0;
	for (size_t r = 0; r < sizeof(readers) / sizeof(readers[0]); r++) {
		char *code = test_read_file(test_format("%s/%s", test_setting("NVI_SOURCE_ROOT"), readers[r]));
		ck_assert_msg(code, "%s: cannot be read", readers[r]);
		if (strstr(code, "mmap(") || strstr(code, "mmap (")) {
			printf("%s maps files: the documents' account of it is not checked\n", readers[r]);
			continue;
		}
		const char *name = strrchr(readers[r], '/') + 1;
		for (size_t i = 0; i < count; i++) {
			const char *text = documents[i].text;
			for (const char *start = text, *line = text; *start; start = line) {
				line = strchr(line, '\n');
				while (line && line[1] && line[1] != '\n' && strncmp(line + 1, "- ", 2) != 0 && line[1] != '|')
					line = strchr(line + 1, '\n');
				line = line ? line + 1 : start + strlen(start);
				char *paragraph = test_format("%.*s", (int)(line - start), start);
				const char *at = strstr(paragraph, name);
				if (!at || (at > paragraph && (isalnum((unsigned char)at[-1]) || at[-1] == '_')))
					continue;
				named++;
				char *said = says_mapped(paragraph);
				ck_assert_msg(!said, "%s says %s maps the file, which it never does: %s", documents[i].path, readers[r], said);
			}
		}
	}
	printf("%zu paragraphs name a reader of dynamic sections, none says it maps the file\n", named);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("documents");
	TCase *tc = tcase_create("documents");
	tcase_add_test(tc, test_every_table_of_settings_and_events_is_the_codes);
	tcase_add_test(tc, test_every_link_between_the_documents_leads_somewhere);
	tcase_add_test(tc, test_the_readers_of_dynamic_sections_are_described_as_they_read);
	suite_add_tcase(suite, tc);
	return test_main(suite);
}
