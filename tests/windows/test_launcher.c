/* nvinterpose-run.exe's command line: --print-env in each format, each output parsed as its consumer
 * reads it (cmd itself runs the cmd lines), and the one convention of the project's tools: GNU long
 * options with --opt=value, -h/--help, -V/--version, usage errors "nvinterpose-run: SUBJECT: ..."
 * with exit 2, policy names in any case, no stray argument. Usage: test_launcher CASE. */
#include "harness.h"
#include "nvinterpose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTPUT_BYTES 65536
#define MAX_VARIABLES 16

static wchar_t launcher_path[HARNESS_PATH_MAX], folder[HARNESS_PATH_MAX];
static char output[OUTPUT_BYTES];

/* Runs the launcher with arguments (in the scratch folder), prints what it said. */
static long launch(const wchar_t *arguments)
{
	wchar_t line[HARNESS_PATH_MAX * 4];
	_snwprintf(line, HARNESS_PATH_MAX * 4, L"\"%ls\" %ls", launcher_path, arguments);
	line[HARNESS_PATH_MAX * 4 - 1] = L'\0';
	printf("  nvinterpose-run %s\n", harness_utf8(arguments));
	long code = harness_run(line, output, OUTPUT_BYTES);
	harness_print_indented(output);
	return code;
}

/* ---- What each format's consumer reads ---------------------------------------------------------- */

struct variables {
	int count;
	char name[MAX_VARIABLES][64];
	char value[MAX_VARIABLES][HARNESS_PATH_MAX * 3]; /* UTF-8 */
	bool malformed;
};

static void add(struct variables *vars, const char *name, size_t name_length, const char *value, size_t value_length)
{
	if (vars->count == MAX_VARIABLES || name_length >= 64 || value_length >= sizeof(vars->value[0])) {
		vars->malformed = true;
		return;
	}
	memcpy(vars->name[vars->count], name, name_length);
	vars->name[vars->count][name_length] = '\0';
	memcpy(vars->value[vars->count], value, value_length);
	vars->value[vars->count][value_length] = '\0';
	vars->count++;
}

static const char *lookup(const struct variables *vars, const char *name)
{
	for (int i = 0; i < vars->count; i++)
		if (strcmp(vars->name[i], name) == 0)
			return vars->value[i];
	return NULL;
}

/* Lines of text, each without its "\n" or "\r\n". */
static const char *next_line(const char *s, size_t *length, const char **rest)
{
	if (!*s)
		return NULL;
	size_t n = strcspn(s, "\n");
	*rest = s + n + (s[n] == '\n');
	*length = n && s[n - 1] == '\r' ? n - 1 : n;
	return s;
}

/* cmd: @set "NAME=value" */
static void parse_cmd(const char *text, struct variables *vars)
{
	size_t n;
	for (const char *line, *rest = text; (line = next_line(rest, &n, &rest));) {
		const char *equals = memchr(line, '=', n);
		if (n < 8 || memcmp(line, "@set \"", 6) != 0 || line[n - 1] != '"' || !equals) {
			vars->malformed = true;
			continue;
		}
		add(vars, line + 6, (size_t)(equals - line - 6), equals + 1, (size_t)(line + n - 1 - equals - 1));
	}
}

/* powershell: $env:NAME = 'value' with '' for each quote. */
static void parse_powershell(const char *text, struct variables *vars)
{
	size_t n;
	for (const char *line, *rest = text; (line = next_line(rest, &n, &rest));) {
		const char *separator = strstr(line, " = '");
		if (n < 10 || memcmp(line, "$env:", 5) != 0 || !separator || separator > line + n || line[n - 1] != '\'') {
			vars->malformed = true;
			continue;
		}
		char value[HARNESS_PATH_MAX * 3];
		size_t used = 0;
		for (const char *s = separator + 4; s < line + n - 1 && used + 1 < sizeof(value); s++) {
			if (*s == '\'') {
				if (s + 1 >= line + n - 1 || s[1] != '\'')
					vars->malformed = true; /* a lone quote ends the string early */
				s++;
			}
			value[used++] = *s;
		}
		add(vars, line + 5, (size_t)(separator - line - 5), value, used);
	}
}

/* github: NAME=value */
static void parse_github(const char *text, struct variables *vars)
{
	size_t n;
	for (const char *line, *rest = text; (line = next_line(rest, &n, &rest));) {
		const char *equals = memchr(line, '=', n);
		if (!equals || line[n] == '\r') {
			vars->malformed = true;
			continue;
		}
		add(vars, line, (size_t)(equals - line), equals + 1, (size_t)(line + n - equals - 1));
	}
}

static size_t put_utf8(char *out, unsigned code)
{
	if (code < 0x80) {
		out[0] = (char)code;
		return 1;
	}
	if (code < 0x800) {
		out[0] = (char)(0xc0 | code >> 6);
		out[1] = (char)(0x80 | (code & 0x3f));
		return 2;
	}
	out[0] = (char)(0xe0 | code >> 12);
	out[1] = (char)(0x80 | ((code >> 6) & 0x3f));
	out[2] = (char)(0x80 | (code & 0x3f));
	return 3;
}

/* A JSON string at *s (past its opening quote) into out as UTF-8; false when malformed. UTF-8
   bytes stand as they are; escapes are decoded (no surrogate pairs: none is needed here). */
static bool json_string(const char **s, char *out, size_t size)
{
	size_t used = 0;
	for (const char *p = *s; *p; p++) {
		if (used + 4 >= size || (unsigned char)*p < 0x20)
			return false;
		if (*p == '"') {
			out[used] = '\0';
			*s = p + 1;
			return true;
		}
		if (*p != '\\') {
			out[used++] = *p;
			continue;
		}
		unsigned code;
		switch (*++p) {
		case '"': case '\\': case '/': code = (unsigned char)*p; break;
		case 'n': code = '\n'; break;
		case 'r': code = '\r'; break;
		case 't': code = '\t'; break;
		case 'u':
			if (sscanf(p + 1, "%4x", &code) != 1)
				return false;
			p += 4;
			break;
		default: return false;
		}
		used += put_utf8(out + used, code);
	}
	return false;
}

static void skip_space(const char **s)
{
	while (**s == ' ' || **s == '\n' || **s == '\r' || **s == '\t')
		(*s)++;
}

/* json: one object of string values, then nothing. */
static void parse_json(const char *text, struct variables *vars)
{
	const char *s = text;
	skip_space(&s);
	if (*s++ != '{') {
		vars->malformed = true;
		return;
	}
	skip_space(&s);
	if (*s == '}') {
		s++;
	} else {
		for (;;) {
			char name[64], value[HARNESS_PATH_MAX * 3];
			skip_space(&s);
			if (*s++ != '"' || !json_string(&s, name, sizeof(name)))
				break;
			skip_space(&s);
			if (*s++ != ':')
				break;
			skip_space(&s);
			if (*s++ != '"' || !json_string(&s, value, sizeof(value)))
				break;
			add(vars, name, strlen(name), value, strlen(value));
			skip_space(&s);
			if (*s == ',') {
				s++;
				continue;
			}
			if (*s++ == '}')
				goto end;
			break;
		}
		vars->malformed = true;
		return;
	}
end:
	skip_space(&s);
	if (*s)
		vars->malformed = true;
}

/* ---- The cases --------------------------------------------------------------------------------- */

static void expect_variables(const char *format, const struct variables *vars, const char *const *expected)
{
	harness_check(!vars->malformed, "%s: every line parses", format);
	int count = 0;
	for (const char *const *e = expected; *e; e += 2, count++) {
		const char *got = lookup(vars, e[0]);
		harness_check(got && strcmp(got, e[1]) == 0, "%s: %s is '%s' (got '%s')", format, e[0], e[1], got ? got : "(none)");
	}
	harness_check(vars->count == count, "%s: %d variables, no more (got %d)", format, count, vars->count);
}

/* The launcher with options and a --print-env flag: its output parsed as format reads it. */
static void check_format(const wchar_t *options, const wchar_t *flag, void (*parse)(const char *, struct variables *),
			 const char *format, const char *const *expected)
{
	wchar_t arguments[1024];
	struct variables vars;
	memset(&vars, 0, sizeof(vars));
	_snwprintf(arguments, 1024, L"%ls %ls", options, flag);
	harness_check(launch(arguments) == 0, "%s: exit 0", harness_utf8(flag));
	parse(output, &vars);
	expect_variables(format, &vars, expected);
}

/* The settings given as options, each format. Relative paths come out absolute. */
static void case_print_env_formats(void)
{
	char folder_utf8[HARNESS_PATH_MAX * 3], log_file[HARNESS_PATH_MAX * 3], path[HARNESS_PATH_MAX * 6];
	snprintf(folder_utf8, sizeof(folder_utf8), "%s", harness_utf8(folder));
	snprintf(log_file, sizeof(log_file), "%s\\it's here.jsonl", folder_utf8);
	snprintf(path, sizeof(path), "%s\\lib;Z:\\opt\\my libs", folder_utf8);
	const char *const expected[] = {
		"NVINTERPOSE_POLICY", "Coherent", "NVINTERPOSE_LOG", "warn", "NVINTERPOSE_LOG_FILE", log_file,
		"NVINTERPOSE_PATH", path, "NVINTERPOSE_CHILDREN", "0", NULL,
	};
	static const wchar_t options[] = L"--policy=Coherent --log warn --log-file \"it's here.jsonl\" --path=\"lib;Z:\\opt\\my libs\" --no-children";
	struct variables vars;

	check_format(options, L"--print-env", parse_cmd, "cmd, the default", expected);
	harness_check(harness_contains(output, "\r\n"), "cmd: lines end in CRLF, as batch files do");

	/* cmd itself reads them, as a batch file called from another. */
	wchar_t batch[HARNESS_PATH_MAX], line[HARNESS_PATH_MAX * 2];
	harness_join(batch, folder, L"nvi.cmd");
	char *saved = _strdup(output);
	harness_check(harness_write_text(batch, saved), "the lines written to %s", harness_utf8(batch));
	free(saved);
	_snwprintf(line, HARNESS_PATH_MAX * 2, L"cmd.exe /c \"call \"%ls\" && set NVINTERPOSE_\"", batch);
	long code = harness_run(line, output, OUTPUT_BYTES);
	harness_print_indented(output);
	memset(&vars, 0, sizeof(vars));
	size_t n;
	for (const char *text_line, *rest = output; (text_line = next_line(rest, &n, &rest));) {
		const char *equals = memchr(text_line, '=', n);
		if (equals)
			add(&vars, text_line, (size_t)(equals - text_line), equals + 1, (size_t)(text_line + n - equals - 1));
	}
	if (code != 0 && !vars.count)
		harness_skip("cmd.exe did not run here (%ld)", code);
	expect_variables("cmd.exe after call", &vars, expected);

	check_format(options, L"--print-env=powershell", parse_powershell, "powershell", expected);
	harness_check(harness_contains(output, "it''s here"), "powershell: the quote in a value is doubled");
	check_format(options, L"--print-env=GitHub", parse_github, "github (the format's name in any case)", expected);
	/* Linux's spelling of the same. */
	check_format(options, L"--print-env --format json", parse_json, "json", expected);
}

/* Values only some formats can hold, and text beyond ASCII. */
static void case_print_env_values(void)
{
	struct variables vars;
	char folder_utf8[HARNESS_PATH_MAX * 3], expected_value[HARNESS_PATH_MAX * 3];
	snprintf(folder_utf8, sizeof(folder_utf8), "%s", harness_utf8(folder));

	/* cmd expands % even inside quotes: refused for cmd, carried by json. */
	harness_check(launch(L"--log-file=100%.jsonl --print-env=cmd") == 2 &&
			      harness_contains(output, "nvinterpose-run: NVINTERPOSE_LOG_FILE: ") && harness_contains(output, "json"),
		      "a value with %% cannot be a cmd line: exit 2, pointing to json");
	snprintf(expected_value, sizeof(expected_value), "%s\\100%%.jsonl", folder_utf8);
	memset(&vars, 0, sizeof(vars));
	harness_check(launch(L"--log-file=100%.jsonl --print-env=json") == 0, "json carries it");
	parse_json(output, &vars);
	harness_check(!vars.malformed && lookup(&vars, "NVINTERPOSE_LOG_FILE") &&
			      strcmp(lookup(&vars, "NVINTERPOSE_LOG_FILE"), expected_value) == 0,
		      "json: the value is exact (%s)", expected_value);

	/* An inherited value with a line break: no line format holds it; json escapes it. */
	SetEnvironmentVariableW(L"NVINTERPOSE_PATH", L"Z:\\a\nZ:\\b");
	harness_check(launch(L"--print-env=github") == 2 && harness_contains(output, "nvinterpose-run: NVINTERPOSE_PATH: "),
		      "github refuses a value with a line break");
	memset(&vars, 0, sizeof(vars));
	harness_check(launch(L"--print-env=json") == 0 && strchr(output, '\n') == output + strlen(output) - 1,
		      "json escapes it: one line");
	parse_json(output, &vars);
	harness_check(!vars.malformed && lookup(&vars, "NVINTERPOSE_PATH") && strcmp(lookup(&vars, "NVINTERPOSE_PATH"), "Z:\\a\nZ:\\b") == 0,
		      "json: the value comes back exact");
	SetEnvironmentVariableW(L"NVINTERPOSE_PATH", NULL);

	/* Beyond ASCII: github and json in UTF-8; cmd and powershell in the console's code page,
	   which cmd reads batch files in and PowerShell decodes output with. */
	memset(&vars, 0, sizeof(vars));
	harness_check(launch(L"--log-file=Z:\\caf\u00e9\u0142.jsonl --print-env=github") == 0, "github: exit 0");
	parse_github(output, &vars);
	harness_check(lookup(&vars, "NVINTERPOSE_LOG_FILE") && strcmp(lookup(&vars, "NVINTERPOSE_LOG_FILE"), "Z:\\caf\xc3\xa9\xc5\x82.jsonl") == 0,
		      "github: the value in UTF-8");
	UINT code_page = GetConsoleOutputCP() ? GetConsoleOutputCP() : GetOEMCP();
	BOOL lost = FALSE;
	char encoded[64];
	WideCharToMultiByte(code_page, WC_NO_BEST_FIT_CHARS, L"\u0142", -1, encoded, sizeof(encoded), NULL, code_page == CP_UTF8 ? NULL : &lost);
	long code = launch(L"--log-file=Z:\\caf\u00e9\u0142.jsonl --print-env=powershell");
	if (lost) {
		harness_check(code == 2 && harness_contains(output, "code page"),
			      "powershell: a character code page %u lacks is refused, naming the code page", code_page);
	} else {
		wchar_t wide[256];
		MultiByteToWideChar(code_page, 0, output, -1, wide, 256);
		harness_check(code == 0 && wcsstr(wide, L"caf\u00e9\u0142.jsonl"), "powershell: the value in code page %u", code_page);
	}
	code = launch(L"--log-file=Z:\\caf\u00e9.jsonl --print-env=cmd");
	wchar_t wide[256];
	MultiByteToWideChar(code_page, 0, output, -1, wide, 256);
	harness_check(code == 0 && wcsstr(wide, L"@set \"NVINTERPOSE_LOG_FILE=Z:\\caf\u00e9.jsonl\""),
		      "cmd: the value in code page %u", code_page);
}

/* Settings inherited from the environment are checked as the runtime would read them. */
static void case_print_env_checks(void)
{
	SetEnvironmentVariableW(L"NVINTERPOSE_POLICY", L"bogus");
	harness_check(launch(L"--print-env") == 2 && harness_contains(output, "nvinterpose-run: NVINTERPOSE_POLICY: 'bogus' is not one of"),
		      "an inherited NVINTERPOSE_POLICY=bogus: exit 2, named");
	harness_check(launch(L"--policy=fallback --print-env") == 0 && harness_contains(output, "NVINTERPOSE_POLICY=fallback"),
		      "an option replaces it");
	SetEnvironmentVariableW(L"NVINTERPOSE_POLICY", L"OFF");
	harness_check(launch(L"--print-env") == 0 && harness_contains(output, "@set \"NVINTERPOSE_POLICY=OFF\""),
		      "OFF is a policy, as the runtime reads it");
	SetEnvironmentVariableW(L"NVINTERPOSE_POLICY", NULL);
	SetEnvironmentVariableW(L"NVINTERPOSE_LOG_FILE", L"relative.jsonl");
	harness_check(launch(L"--print-env") == 2 && harness_contains(output, "nvinterpose-run: NVINTERPOSE_LOG_FILE: ") &&
			      harness_contains(output, "absolute"),
		      "an inherited relative NVINTERPOSE_LOG_FILE: exit 2");
	SetEnvironmentVariableW(L"NVINTERPOSE_LOG_FILE", NULL);
	SetEnvironmentVariableW(L"NVINTERPOSE_CHILDREN", L"yes");
	harness_check(launch(L"--print-env") == 2 && harness_contains(output, "nvinterpose-run: NVINTERPOSE_CHILDREN: 'yes' is not 0 or 1"),
		      "an inherited NVINTERPOSE_CHILDREN=yes: exit 2");
	SetEnvironmentVariableW(L"NVINTERPOSE_CHILDREN", NULL);
	SetEnvironmentVariableW(L"NVINTERPOSE_POLICY", L"x\x1b[2J\ny");
	harness_check(launch(L"--print-env") == 2 && harness_contains(output, "nvinterpose-run: NVINTERPOSE_POLICY: 'x\\x1b[2J\\x0ay' is not one of") &&
			      !strchr(output, '\x1b'),
		      "a control character in a value is shown as \\xNN");
	SetEnvironmentVariableW(L"NVINTERPOSE_POLICY", NULL);
	SetEnvironmentVariableW(L"NVINTERPOSE_DISABLE", L"false");
	harness_check(launch(L"--print-env") == 2 && harness_contains(output, "nvinterpose-run: NVINTERPOSE_DISABLE: 'false' is not 0 or 1"),
		      "an inherited NVINTERPOSE_DISABLE=false: exit 2");
	SetEnvironmentVariableW(L"NVINTERPOSE_DISABLE", NULL);
	harness_check(launch(L"--print-env") == 0 && output[0] == '\0', "nothing set: nothing printed, exit 0");
	harness_check(launch(L"--print-env=json") == 0 && strcmp(output, "{}\n") == 0, "nothing set, json: {}");
}

/* One usage error: exit 2 and one line "nvinterpose-run: SUBJECT: PROBLEM". */
static void expect_usage_error(const wchar_t *arguments, const char *subject_and_problem)
{
	long code = launch(arguments);
	char expected[256];
	snprintf(expected, sizeof(expected), "nvinterpose-run: %s", subject_and_problem);
	const char *newline = strchr(output, '\n');
	harness_check(code == 2 && strncmp(output, expected, strlen(expected)) == 0 && newline && !newline[1],
		      "%s: exit 2, one line '%s...' (exit %ld)", harness_utf8(arguments), expected, code);
}

static void case_options(void)
{
	expect_usage_error(L"--frobnicate x", "--frobnicate: unknown option");
	expect_usage_error(L"-x prog", "-x: unknown option");
	expect_usage_error(L"--no", "--no: ambiguous option");
	expect_usage_error(L"--policy", "--policy: needs a value");
	expect_usage_error(L"--policy=sideways x", "--policy: 'sideways' is not one of fallback, coherent, off");
	expect_usage_error(L"--log loud x", "--log: 'loud' is not one of error, warn, info, debug");
	expect_usage_error(L"--no-children=1 x", "--no-children: takes no value");
	expect_usage_error(L"--print-env=xml", "--print-env: 'xml' is not one of cmd, powershell, github, json");
	expect_usage_error(L"--print-env prog.exe", "--print-env: takes no program");
	expect_usage_error(L"--print-env -- prog.exe", "--print-env: takes no program");
	expect_usage_error(L"--format=json", "--format: goes with --print-env");
	expect_usage_error(L"", "PROGRAM: no program given");
	expect_usage_error(L"--log-file=", "--log-file: needs a file");
	expect_usage_error(L"--report --print-env", "--report: goes with a program");
	expect_usage_error(L"--report", "--report: goes with a program");
	expect_usage_error(L"--report=1 x", "--report: takes no value");

	harness_check(launch(L"--pol=OFF --print-env=github") == 0 && harness_contains(output, "NVINTERPOSE_POLICY=OFF"),
		      "--pol abbreviates --policy, and OFF is a policy in any case");
	harness_check(launch(L"--policy coherent --print-env=github") == 0 && harness_contains(output, "NVINTERPOSE_POLICY=coherent"),
		      "--policy VALUE, as --policy=VALUE");
	/* The C runtime's text mode ends lines in CRLF. */
	harness_check(launch(L"-V") == 0 && strcmp(output, "nvinterpose-run " NVI_VERSION "\r\n") == 0, "-V prints the version");
	harness_check(launch(L"--version") == 0 && strcmp(output, "nvinterpose-run " NVI_VERSION "\r\n") == 0,
		      "--version prints the version");
	harness_check(launch(L"-h") == 0 && harness_contains(output, "Usage: nvinterpose-run") && harness_contains(output, "--print-env[=FORMAT]") &&
			      harness_contains(output, "powershell") && harness_contains(output, "github") && harness_contains(output, "json") &&
			      harness_contains(output, "--report"),
		      "-h: the usage, with --print-env's formats and --report");
	harness_check(launch(L"--help") == 0 && harness_contains(output, "Usage: nvinterpose-run"), "--help");
}

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{ "print_env_formats", case_print_env_formats },
	{ "print_env_values", case_print_env_values },
	{ "print_env_checks", case_print_env_checks },
	{ "options", case_options },
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: test_launcher CASE\n");
		return 2;
	}
	harness_path_from_environment("NVI_LAUNCHER", launcher_path);
	/* The launcher's settings come from this environment only. */
	static const wchar_t *const settings[] = { L"NVINTERPOSE_POLICY", L"NVINTERPOSE_LOG", L"NVINTERPOSE_LOG_FILE",
						   L"NVINTERPOSE_PATH", L"NVINTERPOSE_ADD_DLL_DIRECTORY", L"NVINTERPOSE_CHILDREN",
						   L"NVINTERPOSE_DISABLE" };
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		SetEnvironmentVariableW(settings[i], NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(cases[i].name, argv[1]) != 0)
			continue;
		char name[64];
		snprintf(name, sizeof(name), "launcher_%s", argv[1]);
		harness_fresh_folder(name, folder);
		SetCurrentDirectoryW(folder);
		cases[i].run();
		return harness_result();
	}
	fprintf(stderr, "test_launcher: no case '%s'\n", argv[1]);
	return 2;
}
