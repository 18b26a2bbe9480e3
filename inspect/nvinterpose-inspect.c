/* nvinterpose-inspect: what the loader will do with a file, and what the runtime would change.
   For each FILE, its ELF facts and its dependency tree resolved as glibc's loader would, each
   dependency with how it was found and its NVIDIA family, every place looked for a missing one,
   the run-time dependents the table names; with --policy, --origin or --pid, the tree as it would
   be with the runtime; with --scan, every copy of every NVIDIA library the environment holds. */
#define _GNU_SOURCE
#include "exit_status.h"
#include "loader/ld_cache.h"
#include "loader_host.h"
#include "mixed_origin.h"
#include "render.h"
#include "resolve.h"
#include "scan.h"
#include "what_if.h"

#include "config.h"
#include "log.h"
#include "nvinterpose.h"
#include "python_paths.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_CACHE "/etc/ld.so.cache"
/* Real trees hold tens of objects; a tree past this is cut, and a run resolves at most
   RUN_BOUND_FACTOR times as many in all (a ring of files, each the start of a deep chain). */
#define DEFAULT_MAX_OBJECTS 4096
#define RUN_BOUND_FACTOR 64

enum format { FORMAT_TEXT, FORMAT_JSON, FORMAT_DOT };

struct options {
	enum format format;
	bool what_if;
	enum policy policy;
	char **origins;
	size_t origin_count;
	int pid;
	const char *nvinterpose_path;
	const char *cache_path;
	bool cache_given;
	bool families;
	bool scan;
	const char *python;
	size_t python_timeout_s;
	bool python_timeout_given;
	size_t max_depth;
	size_t max_objects;
	bool all;
};

static void usage(FILE *out)
{
	fputs("Usage: nvinterpose-inspect [OPTION]... FILE...\n"
	      "  or:  nvinterpose-inspect --scan [--json] [--python=PY] [--python-timeout=S]\n"
	      "  or:  nvinterpose-inspect --families [--json]\n"
	      "Shows each FILE's ELF facts and its dependency tree as glibc's loader would resolve it: where\n"
	      "each library comes from and why (rpath, runpath, ld_library_path, cache, default,\n"
	      "already_loaded, path), its NVIDIA family, every place looked for a missing one, and the\n"
	      "libraries an NVIDIA library loads by name at run time (from the table: required or optional).\n"
	      "NVIDIA libraries of one tree taken from different installations are reported (mixed origins).\n"
	      "\n"
	      "Output (default: a tree, in colour on a terminal unless NO_COLOR is set):\n"
	      "      --json             one JSON document for all the files (objects in a flat list)\n"
	      "      --dot              a Graphviz graph (dot -Tsvg)\n"
	      "      --max-depth=N      text and dot: show N levels of the tree (default: all)\n"
	      "      --all              text: show the C library and compiler runtime, folded by default\n"
	      "      --max-objects=N    follow at most N objects a tree (default 4096; a run follows at most\n"
	      "                         64 times as many in all); a tree cut there says so\n"
	      "\n"
	      "What-if: the tree as it would be with nvinterpose, for FILE loaded by path:\n"
	      "      --policy=POLICY    fallback, coherent or off\n"
	      "      --origin=DIR       a folder NVIDIA libraries were loaded from (repeatable)\n"
	      "      --pid=PID          the folders of the NVIDIA libraries loaded in process PID, in the\n"
	      "                         order it loaded them; every library mapped there counts as loaded,\n"
	      "                         and its LD_LIBRARY_PATH and NVINTERPOSE_PATH are used when readable\n"
	      "      --path=LIST        NVINTERPOSE_PATH for the what-if (default: the environment's)\n"
	      "      (--origin and --pid imply --policy=fallback)\n"
	      "\n"
	      "Scan: every copy of every NVIDIA library in this environment, grouped by library, and the\n"
	      "mix each would load:\n"
	      "      --scan             site-packages of the python on PATH, CONDA_PREFIX, CUDA_HOME and\n"
	      "                         CUDA_PATH, LD_LIBRARY_PATH and ld.so.cache\n"
	      "      --python=PY        the python whose site-packages are scanned\n"
	      "      --python-timeout=S how long the python may take, from its start to its exit (default 30)\n"
	      "\n"
	      "Other:\n"
	      "      --cache=FILE       read FILE in place of /etc/ld.so.cache (\"none\": no cache)\n"
	      "      --families         list the NVIDIA families the runtime recognizes\n"
	      "  -h, --help             this help\n"
	      "  -V, --version          the version\n"
	      "\n"
	      "Exit status: 0 when everything needed is found, 1 when a DT_NEEDED dependency or a required\n"
	      "run-time dependent is missing (--scan: a mix or a missing one found), 2 for a usage error or a\n"
	      "file that cannot be inspected, 3 when a tree was cut at its bound and nothing was found\n"
	      "missing before it.\n",
	      out);
}

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Every line on stderr is "nvinterpose-inspect: " and the text. Its values (an option's value, a
   file's name) have their control characters shown as \xNN, as the runtime's messages do. */
static void vsay(const char *format, va_list args)
{
	char *text = NULL;
	if (vasprintf(&text, format, args) < 0)
		return;
	fputs("nvinterpose-inspect: ", stderr);
	render_text_safe(stderr, text);
	fputc('\n', stderr);
	free(text);
}

static void say(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsay(format, args);
	va_end(args);
}

/* The one shape of a usage error: the tool's name, the problem, where to read more; status 2. */
static int usage_error(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsay(format, args);
	va_end(args);
	fputs("Try 'nvinterpose-inspect --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

static bool parse_count(const char *text, size_t *value)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || n == 0 || n > SIZE_MAX / RUN_BOUND_FACTOR)
		return false;
	*value = (size_t)n;
	return true;
}

/* The options given go together, and FILEs are given where they are needed: -1, else a usage
   error's status. */
static int check_combination(const struct options *options, int argc, char **argv)
{
	if (options->families && options->scan)
		return usage_error("--families and --scan go alone");
	if ((options->families || options->scan) && optind < argc)
		return usage_error("unexpected argument '%s': --%s takes no FILE", argv[optind], options->scan ? "scan" : "families");
	if ((options->families || options->scan) && options->format == FORMAT_DOT)
		return usage_error("--%s writes text or --json, not --dot", options->scan ? "scan" : "families");
	if (options->families && (options->what_if || options->nvinterpose_path || options->cache_given || options->max_depth ||
				  options->all || options->python || options->python_timeout_given))
		return usage_error("--families takes only --json");
	if (options->scan && (options->what_if || options->nvinterpose_path || options->max_depth || options->all))
		return usage_error("--scan takes only --json, --python, --python-timeout, --cache and --max-objects");
	if (options->python && !options->scan)
		return usage_error("--python goes with --scan");
	if (options->python_timeout_given && !options->scan)
		return usage_error("--python-timeout goes with --scan");
	if (!options->families && !options->scan && optind >= argc)
		return usage_error("no FILE to inspect");
	return -1;
}

enum { OPT_JSON = 256, OPT_DOT, OPT_POLICY, OPT_ORIGIN, OPT_PID, OPT_PATH, OPT_CACHE, OPT_FAMILIES, OPT_SCAN, OPT_PYTHON,
       OPT_PYTHON_TIMEOUT, OPT_MAX_DEPTH, OPT_MAX_OBJECTS, OPT_ALL };

static const struct option long_options[] = {
	{ "json", no_argument, NULL, OPT_JSON },       { "dot", no_argument, NULL, OPT_DOT },
	{ "policy", required_argument, NULL, OPT_POLICY }, { "origin", required_argument, NULL, OPT_ORIGIN },
	{ "pid", required_argument, NULL, OPT_PID },    { "path", required_argument, NULL, OPT_PATH },
	{ "cache", required_argument, NULL, OPT_CACHE }, { "families", no_argument, NULL, OPT_FAMILIES },
	{ "scan", no_argument, NULL, OPT_SCAN },        { "python", required_argument, NULL, OPT_PYTHON },
	{ "python-timeout", required_argument, NULL, OPT_PYTHON_TIMEOUT },
	{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH }, { "max-objects", required_argument, NULL, OPT_MAX_OBJECTS },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "help", no_argument, NULL, 'h' },            { "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* What the command line says beyond the options: whether to print the help or the version, and
   whether --policy was given (--origin and --pid imply fallback). */
struct parsing {
	bool policy_given, help, version;
};

/* An option of the what-if (--policy, --origin, --pid); -1 to go on, else a usage error's status. */
static int take_what_if_option(int c, struct options *options, struct parsing *parsing)
{
	char *end;
	long pid;
	options->what_if = true;
	switch (c) {
	case OPT_POLICY:
		if (!config_parse_policy(optarg, &options->policy))
			return usage_error("--policy '%s': not one of fallback, coherent, off", optarg);
		parsing->policy_given = true;
		return -1;
	case OPT_ORIGIN: {
		char **grown = realloc(options->origins, (options->origin_count + 1) * sizeof(char *));
		if (!grown)
			return usage_error("out of memory");
		options->origins = grown;
		grown[options->origin_count++] = optarg;
		return -1;
	}
	default: /* OPT_PID */
		errno = 0;
		pid = strtol(optarg, &end, 10);
		if (errno || end == optarg || *end || pid <= 0 || pid > 0x7fffffff)
			return usage_error("--pid '%s': not a process id", optarg);
		options->pid = (int)pid;
		return -1;
	}
}

/* An option whose value is a count (--python-timeout, --max-depth, --max-objects). */
static int take_count_option(int c, struct options *options)
{
	if (c == OPT_PYTHON_TIMEOUT) {
		if (!parse_count(optarg, &options->python_timeout_s) || options->python_timeout_s > 86400)
			return usage_error("--python-timeout '%s': not a number of seconds (1 to 86400)", optarg);
		options->python_timeout_given = true;
	} else if (c == OPT_MAX_DEPTH) {
		if (!parse_count(optarg, &options->max_depth))
			return usage_error("--max-depth '%s': not a number of levels (1 or more)", optarg);
	} else if (!parse_count(optarg, &options->max_objects)) {
		return usage_error("--max-objects '%s': not a number of objects (1 or more)", optarg);
	}
	return -1;
}

/* What getopt_long refused: an unknown option, or a value missing or given where none is taken. */
static int refused_option(int c, char **argv)
{
	if (c == ':')
		return usage_error("option '%s' needs a value", argv[optind - 1]);
	if (optopt >= OPT_JSON)
		return usage_error("option '%.*s' takes no value", (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
	if (optopt)
		return usage_error("unknown option '-%c'", optopt);
	return usage_error("unknown option '%s'", argv[optind - 1]);
}

/* One option; -1 to go on, else the exit status. */
static int take_option(int c, char **argv, struct options *options, struct parsing *parsing)
{
	switch (c) {
	case OPT_JSON:
	case OPT_DOT:
		if (options->format != FORMAT_TEXT && options->format != (c == OPT_JSON ? FORMAT_JSON : FORMAT_DOT))
			return usage_error("--json and --dot go alone");
		options->format = c == OPT_JSON ? FORMAT_JSON : FORMAT_DOT;
		return -1;
	case OPT_POLICY:
	case OPT_ORIGIN:
	case OPT_PID: return take_what_if_option(c, options, parsing);
	case OPT_PYTHON_TIMEOUT:
	case OPT_MAX_DEPTH:
	case OPT_MAX_OBJECTS: return take_count_option(c, options);
	case OPT_PATH: options->nvinterpose_path = optarg; return -1;
	case OPT_CACHE:
		options->cache_path = strcmp(optarg, "none") == 0 ? NULL : optarg;
		options->cache_given = true;
		return -1;
	case OPT_FAMILIES: options->families = true; return -1;
	case OPT_SCAN: options->scan = true; return -1;
	case OPT_PYTHON: options->python = optarg; return -1;
	case OPT_ALL: options->all = true; return -1;
	case 'h': parsing->help = true; return -1;
	case 'V': parsing->version = true; return -1;
	default: return refused_option(c, argv);
	}
}

/* Parses the command line; -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct options *options)
{
	struct parsing parsing = { 0 };
	options->cache_path = DEFAULT_CACHE;
	options->max_objects = DEFAULT_MAX_OBJECTS;
	options->python_timeout_s = PYTHON_PATHS_TIMEOUT_S;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, ":hV", long_options, NULL)) != -1;) {
		int status = take_option(c, argv, options, &parsing);
		if (status >= 0)
			return status;
	}
	if (parsing.help) {
		usage(stdout);
		return EXIT_SUCCESS;
	}
	if (parsing.version) {
		printf("nvinterpose-inspect %s\n", NVI_VERSION);
		return EXIT_SUCCESS;
	}
	if (options->what_if && !parsing.policy_given)
		options->policy = POLICY_FALLBACK;
	return check_combination(options, argc, argv);
}

static bool use_color(void)
{
	const char *no_color = getenv("NO_COLOR");
	return isatty(STDOUT_FILENO) && !(no_color && no_color[0]);
}

static const struct renderer *renderer_of(enum format format)
{
	return format == FORMAT_JSON ? &render_json : format == FORMAT_DOT ? &render_dot : &render_text;
}

/* The status of a run from those of its files: a usage error, then something missing, then a cut. */
static int worse(int a, int b)
{
	static const int rank[] = { [EXIT_SUCCESS] = 0, [EXIT_CUT] = 1, [EXIT_FINDINGS] = 2, [EXIT_USAGE] = 3 };
	return rank[b] > rank[a] ? b : a;
}

/* A run that could not be done: said on stderr and, with --json, in a document of its own whose
   "error" says why (no files), so that a tool reading the output always gets one. */
static int run_error(enum format format, struct render_context *context, const char *message)
{
	say("%s", message);
	const struct renderer *renderer = renderer_of(format);
	context->error = message;
	context->what_if = NULL;
	if (renderer->fail)
		renderer->fail(context);
	return EXIT_USAGE;
}

/* What --pid read of the process's environment. */
struct process_settings {
	char *library_path, *nvinterpose_path;
};

/* --policy, --origin, --pid: the origins registered and the settings the runtime would read (the
   NVINTERPOSE_PATH taken in *nvinterpose_path); the process's LD_LIBRARY_PATH replaces the
   inspector's. 0, or -1 with the reason in message. */
static int set_up_what_if(const struct options *options, struct what_if *what_if, struct file_probe *probe,
			  struct loader_host *host, struct process_settings *process, const char **nvinterpose_path,
			  char *message, size_t size)
{
	what_if->policy = options->policy;
	for (size_t i = 0; i < options->origin_count; i++)
		if (what_if_add_origin(what_if, options->origins[i], message, size) != 0)
			return -1;
	if (options->pid &&
	    what_if_read_process(what_if, probe, options->pid, &process->library_path, &process->nvinterpose_path, message, size) != 0)
		return -1;
	if (what_if->root[0])
		say("warning: process %d lives in another mount namespace (a container): its files are read through %s, where an "
		    "absolute symbolic link still leads into this one's; the loader's own folders and ld.so.cache are this system's",
		    options->pid, what_if->root);
	if (process->library_path) {
		free(host->library_path);
		host->library_path = strdup(process->library_path);
	}
	*nvinterpose_path = options->nvinterpose_path;
	if (!*nvinterpose_path)
		*nvinterpose_path = options->pid && process->nvinterpose_path ? process->nvinterpose_path : getenv("NVINTERPOSE_PATH");
	what_if_configure(what_if, *nvinterpose_path);
	return 0;
}

/* Each FILE of argv from first resolved and rendered; the run's status. */
static int inspect_files(char **files, int count, enum format format, struct resolver *resolver, struct render_context *context)
{
	char message[4096];
	size_t missing = 0;
	int status = EXIT_SUCCESS;
	const struct renderer *renderer = renderer_of(format);
	if (renderer->begin)
		renderer->begin(context);
	for (int i = 0; i < count; i++, context->file_index++) {
		struct tree tree;
		const char *error = NULL;
		if (resolve_tree(resolver, files[i], &tree, message, sizeof(message)) != 0) {
			say("%s", message);
			error = message;
			status = worse(status, EXIT_USAGE);
		} else {
			mixed_origin_check(&tree, resolver->probe);
			missing += tree.missing;
			if (tree.missing)
				status = worse(status, EXIT_FINDINGS);
			if (tree.cut) {
				status = worse(status, EXIT_CUT);
				context->cut = true;
			}
		}
		renderer->file(context, &tree, error);
		tree_free(&tree);
	}
	if (renderer->end)
		renderer->end(context, missing, status);
	return status;
}

int main(int argc, char **argv)
{
	struct options options = { 0 };
	struct loader_host host;
	struct file_probe probe;
	struct ld_cache cache;
	struct family_files family_files;
	struct what_if what_if = { 0 }, default_view = { 0 };
	struct process_settings process = { 0 };
	char message[4096], cache_problem[1024] = "";
	bool cache_read = false;
	int status = parse_options(argc, argv, &options);
	if (status >= 0)
		goto done;
	if (options.families) {
		render_families(stdout, options.format == FORMAT_JSON);
		status = EXIT_SUCCESS;
		goto done;
	}
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, 1 << 14);
	struct render_context context = {
		.out = stdout,
		.color = options.format == FORMAT_TEXT && use_color(),
		.max_depth = options.max_depth,
		.all = options.all,
	};
	if (loader_host_init(&host, getenv("LD_LIBRARY_PATH"), message, sizeof(message)) != 0) {
		status = run_error(options.format, &context, message);
		goto flush_only;
	}
	context.host = &host;
	file_probe_init(&probe, &host);
	if (options.cache_path)
		cache_read = ld_cache_read(options.cache_path, &cache, cache_problem, sizeof(cache_problem)) == 0;
	/* The loader goes on without a cache it cannot read, and so does the inspector; one asked for
	   by name is worth a word. */
	if (options.cache_given && cache_problem[0])
		say("warning: --cache: %s; the loader's cache step is left out", cache_problem);
	family_files_init(&family_files, cache_read ? &cache : NULL);

	size_t run_objects_left = options.max_objects * RUN_BOUND_FACTOR;
	struct resolver resolver = { .host = &host, .probe = &probe, .cache = cache_read ? &cache : NULL,
				    .cache_path = cache_read ? options.cache_path : NULL, .family_files = &family_files,
				    .max_objects = options.max_objects, .run_max_objects = run_objects_left,
				    .run_objects_left = &run_objects_left };
	context.cache_path = resolver.cache_path;
	context.cache_problem = cache_problem[0] ? cache_problem : NULL;
	if (options.scan) {
		struct scan_request request = { .resolver = &resolver, .python = options.python,
						.python_timeout_s = (unsigned)options.python_timeout_s, .json = options.format == FORMAT_JSON,
						.color = context.color, .cache_problem = context.cache_problem };
		status = scan_run(&request, stdout);
	} else if (options.what_if &&
		   set_up_what_if(&options, &what_if, &probe, &host, &process, &context.nvinterpose_path, message, sizeof(message)) != 0) {
		status = run_error(options.format, &context, message);
	} else {
		resolver.what_if = options.what_if ? &what_if : NULL;
		context.what_if = resolver.what_if;
		/* The loader's view names, for what it misses, what --policy=fallback would show supplied. */
		struct options fallback = { .policy = POLICY_FALLBACK, .nvinterpose_path = options.nvinterpose_path };
		const char *fallback_path;
		if (!options.what_if && set_up_what_if(&fallback, &default_view, &probe, &host, &(struct process_settings){ 0 },
						       &fallback_path, message, sizeof(message)) == 0)
			resolver.default_view = &default_view;
		status = inspect_files(argv + optind, argc - optind, options.format, &resolver, &context);
	}
	what_if_free(&default_view);
	what_if_free(&what_if);
	family_files_free(&family_files);
	if (cache_read)
		ld_cache_free(&cache);
	file_probe_free(&probe);
	loader_host_free(&host);
flush_only:
	if (fflush(stdout) != 0 && status == EXIT_SUCCESS)
		status = EXIT_USAGE;
done:
	free(options.origins);
	free(process.library_path);
	free(process.nvinterpose_path);
	return status;
}
