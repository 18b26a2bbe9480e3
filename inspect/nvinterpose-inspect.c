/* nvinterpose-inspect: what the loader will do with a file, and what the runtime would change.
   For each FILE, its ELF facts and its dependency tree resolved as glibc's loader would, each
   dependency with how it was found and its NVIDIA family, every place looked for a missing one;
   with --policy, --origin or --pid, the tree as it would be with the runtime. */
#define _GNU_SOURCE
#include "loader/ld_cache.h"
#include "loader_host.h"
#include "mixed_origin.h"
#include "render.h"
#include "resolve.h"
#include "what_if.h"

#include "config.h"
#include "nvinterpose.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_MISSING 1
#define EXIT_USAGE 2
#define DEFAULT_CACHE "/etc/ld.so.cache"

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
	bool families;
};

static void usage(FILE *out)
{
	fputs("Usage: nvinterpose-inspect [OPTION]... FILE...\n"
	      "Shows each FILE's ELF facts and its dependency tree as glibc's loader would resolve it: where\n"
	      "each library comes from and why (rpath, runpath, ld_library_path, cache, default,\n"
	      "already_loaded, path), its NVIDIA family, and every place looked for a missing one. NVIDIA\n"
	      "libraries of one tree taken from different installations are reported (mixed origins).\n"
	      "\n"
	      "Output (default: a tree, in colour on a terminal unless NO_COLOR is set):\n"
	      "      --json           one JSON document for all the files\n"
	      "      --dot            a Graphviz graph (dot -Tsvg)\n"
	      "\n"
	      "What-if: the tree as it would be with nvinterpose, for FILE loaded by path:\n"
	      "      --policy POLICY  fallback, coherent or off\n"
	      "      --origin DIR     a folder NVIDIA libraries were loaded from (repeatable)\n"
	      "      --pid PID        the folders of the NVIDIA libraries mapped in process PID; every\n"
	      "                       library mapped there counts as loaded, and its LD_LIBRARY_PATH and\n"
	      "                       NVINTERPOSE_PATH are used when readable\n"
	      "      --path LIST      NVINTERPOSE_PATH for the what-if (default: the environment's)\n"
	      "      (--origin and --pid imply --policy fallback)\n"
	      "\n"
	      "Other:\n"
	      "      --cache FILE     read FILE in place of /etc/ld.so.cache (\"none\": no cache)\n"
	      "      --families       list the NVIDIA families the runtime recognizes\n"
	      "  -h, --help           this help\n"
	      "  -V, --version        the version\n"
	      "\n"
	      "Exit status: 0 when every dependency is found, 1 when one is missing, 2 for a usage error or\n"
	      "a file that cannot be inspected.\n",
	      out);
}

static int usage_error(const char *format, const char *argument)
{
	fputs("nvinterpose-inspect: ", stderr);
	fprintf(stderr, format, argument);
	fputs("\nTry 'nvinterpose-inspect --help'.\n", stderr);
	return EXIT_USAGE;
}

/* Parses the command line; -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct options *options)
{
	enum { OPT_JSON = 256, OPT_DOT, OPT_POLICY, OPT_ORIGIN, OPT_PID, OPT_PATH, OPT_CACHE, OPT_FAMILIES };
	static const struct option longs[] = {
		{ "json", no_argument, NULL, OPT_JSON },       { "dot", no_argument, NULL, OPT_DOT },
		{ "policy", required_argument, NULL, OPT_POLICY }, { "origin", required_argument, NULL, OPT_ORIGIN },
		{ "pid", required_argument, NULL, OPT_PID },    { "path", required_argument, NULL, OPT_PATH },
		{ "cache", required_argument, NULL, OPT_CACHE }, { "families", no_argument, NULL, OPT_FAMILIES },
		{ "help", no_argument, NULL, 'h' },            { "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool policy_given = false;
	options->cache_path = DEFAULT_CACHE;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, "+:hV", longs, NULL)) != -1;) {
		char *end;
		long pid;
		switch (c) {
		case OPT_JSON:
		case OPT_DOT:
			if (options->format != FORMAT_TEXT && options->format != (c == OPT_JSON ? FORMAT_JSON : FORMAT_DOT))
				return usage_error("--json and --dot go alone%s", "");
			options->format = c == OPT_JSON ? FORMAT_JSON : FORMAT_DOT;
			break;
		case OPT_POLICY:
			if (!config_parse_policy(optarg, &options->policy))
				return usage_error("--policy '%s': not one of fallback, coherent, off", optarg);
			policy_given = options->what_if = true;
			break;
		case OPT_ORIGIN: {
			char **grown = realloc(options->origins, (options->origin_count + 1) * sizeof(char *));
			if (!grown)
				return usage_error("out of memory%s", "");
			options->origins = grown;
			grown[options->origin_count++] = optarg;
			options->what_if = true;
			break;
		}
		case OPT_PID:
			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || pid <= 0 || pid > 0x7fffffff)
				return usage_error("--pid '%s': not a process id", optarg);
			options->pid = (int)pid;
			options->what_if = true;
			break;
		case OPT_PATH: options->nvinterpose_path = optarg; break;
		case OPT_CACHE: options->cache_path = strcmp(optarg, "none") == 0 ? NULL : optarg; break;
		case OPT_FAMILIES: options->families = true; break;
		case 'h': usage(stdout); return EXIT_SUCCESS;
		case 'V': printf("nvinterpose-inspect %s\n", NVI_VERSION); return EXIT_SUCCESS;
		case ':': return usage_error("%s needs a value", argv[optind - 1]);
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (options->what_if && !policy_given)
		options->policy = POLICY_FALLBACK;
	if (!options->families && optind >= argc)
		return usage_error("no FILE to inspect%s", "");
	return -1;
}

static bool use_color(void)
{
	const char *no_color = getenv("NO_COLOR");
	return isatty(STDOUT_FILENO) && !(no_color && no_color[0]);
}

int main(int argc, char **argv)
{
	struct options options = { 0 };
	struct loader_host host;
	struct file_probe probe;
	struct ld_cache cache;
	struct what_if what_if = { 0 };
	char message[4096], cache_problem[1024];
	char *process_library_path = NULL, *process_nvinterpose_path = NULL;
	bool cache_read = false;
	int status = parse_options(argc, argv, &options);
	if (status >= 0)
		goto done;
	status = EXIT_SUCCESS;
	if (options.families) {
		render_families(stdout, options.format == FORMAT_JSON);
		goto done;
	}
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, 1 << 14);
	if (loader_host_init(&host, getenv("LD_LIBRARY_PATH"), message, sizeof(message)) != 0) {
		fprintf(stderr, "nvinterpose-inspect: %s\n", message);
		status = EXIT_USAGE;
		goto done;
	}
	file_probe_init(&probe, &host);
	cache_problem[0] = '\0';
	if (options.cache_path)
		cache_read = ld_cache_read(options.cache_path, &cache, cache_problem, sizeof(cache_problem)) == 0;
	else
		snprintf(cache_problem, sizeof(cache_problem), "--cache none");

	const char *nvinterpose_path = options.nvinterpose_path;
	if (options.what_if) {
		what_if.policy = options.policy;
		for (size_t i = 0; i < options.origin_count && status == EXIT_SUCCESS; i++)
			if (what_if_add_origin(&what_if, options.origins[i], message, sizeof(message)) != 0)
				status = EXIT_USAGE;
		if (status == EXIT_SUCCESS && options.pid &&
		    what_if_read_process(&what_if, &probe, options.pid, &process_library_path, &process_nvinterpose_path, message,
					 sizeof(message)) != 0)
			status = EXIT_USAGE;
		if (status != EXIT_SUCCESS) {
			fprintf(stderr, "nvinterpose-inspect: %s\n", message);
			goto cleanup;
		}
		if (process_library_path) {
			free(host.library_path);
			host.library_path = strdup(process_library_path);
		}
		if (!nvinterpose_path)
			nvinterpose_path = options.pid && process_nvinterpose_path ? process_nvinterpose_path : getenv("NVINTERPOSE_PATH");
		what_if_configure(&what_if, nvinterpose_path);
	}

	struct resolver resolver = {
		.host = &host,
		.probe = &probe,
		.cache = cache_read ? &cache : NULL,
		.cache_path = cache_read ? options.cache_path : NULL,
		.what_if = options.what_if ? &what_if : NULL,
	};
	struct render_context context = {
		.out = stdout,
		.color = options.format == FORMAT_TEXT && use_color(),
		.host = &host,
		.cache_path = resolver.cache_path,
		.cache_problem = cache_problem[0] ? cache_problem : NULL,
		.what_if = resolver.what_if,
		.nvinterpose_path = nvinterpose_path,
	};
	size_t missing = 0;
	if (options.format == FORMAT_JSON)
		render_json_begin(&context);
	else if (options.format == FORMAT_DOT)
		render_dot_begin(&context);
	for (int i = optind; i < argc; i++, context.file_index++) {
		struct tree tree;
		const char *error = NULL;
		if (resolve_tree(&resolver, argv[i], &tree, message, sizeof(message)) != 0) {
			/* The message names the file; control bytes from its name are not sent to a terminal. */
			for (char *c = message; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					*c = '?';
			fprintf(stderr, "nvinterpose-inspect: %s\n", message);
			error = message;
			status = EXIT_USAGE;
		} else {
			mixed_origin_check(&tree, &probe);
			missing += tree.missing;
			if (tree.missing && status == EXIT_SUCCESS)
				status = EXIT_MISSING;
		}
		if (options.format == FORMAT_JSON)
			render_json_file(&context, &tree, error);
		else if (options.format == FORMAT_DOT)
			render_dot_file(&context, &tree, error);
		else
			render_text_file(&context, &tree, error);
		tree_free(&tree);
	}
	if (options.format == FORMAT_JSON)
		render_json_end(&context, missing, status);
	else if (options.format == FORMAT_DOT)
		render_dot_end(&context);
	if (fflush(stdout) != 0 && status == EXIT_SUCCESS)
		status = EXIT_USAGE;
cleanup:
	what_if_free(&what_if);
	if (cache_read)
		ld_cache_free(&cache);
	file_probe_free(&probe);
	loader_host_free(&host);
done:
	free(options.origins);
	free(process_library_path);
	free(process_nvinterpose_path);
	return status;
}
