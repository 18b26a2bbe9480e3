/* The shared rooms built for Windows: the table's DLL names, the registry's folder identity
   (volume serial number and file index: the same folder under another case or separator is one
   origin), the wheel-sibling rule with "bin", the ';'-separated settings and the Windows switches,
   the event log's appends, and the platform's folder listing. */
#include "config.h"
#include "import_table.h"
#include "harness.h"
#include "libnames.h"
#include "log.h"
#include "platform.h"
#include "registry.h"
#include "search.h"

#include <ctype.h>
#include <errno.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[HARNESS_PATH_MAX * 3]; /* UTF-8 */

static void make_folder(const char *relative)
{
	wchar_t wide[HARNESS_PATH_MAX];
	char path[HARNESS_PATH_MAX * 3];
	snprintf(path, sizeof(path), "%s\\%s", root, relative);
	MultiByteToWideChar(CP_UTF8, 0, path, -1, wide, HARNESS_PATH_MAX);
	if (!harness_make_folders(wide))
		harness_skip("cannot create %s", path);
}

static void make_file(const char *relative)
{
	wchar_t wide[HARNESS_PATH_MAX];
	char path[HARNESS_PATH_MAX * 3];
	snprintf(path, sizeof(path), "%s\\%s", root, relative);
	MultiByteToWideChar(CP_UTF8, 0, path, -1, wide, HARNESS_PATH_MAX);
	if (!harness_write_text(wide, "x"))
		harness_skip("cannot write %s", path);
}

static const char *at(const char *relative)
{
	static char paths[4][HARNESS_PATH_MAX * 3];
	static int next;
	char *path = paths[next++ % 4];
	snprintf(path, sizeof(paths[0]), "%s\\%s", root, relative);
	return path;
}

static void test_dll_names(void)
{
	static const struct {
		const char *name;
		const char *family; /* NULL: no match */
	} rows[] = {
		{ "nvrtc64_130_0.dll", "nvrtc" },
		{ "NVRTC-BUILTINS64_130.DLL", "nvrtc-builtins" },
		{ "nvrtc-builtins64_129.dll", "nvrtc-builtins" },
		{ "cublasLt64_13.dll", "cublasLt" },
		{ "nvJitLink_130_0.dll", "nvJitLink" },
		{ "nvcuda.dll", "cuda" },
		{ "nvrtc64_130_0.dll.bak", NULL },
		{ "nvrtc64_130_0.so", NULL },
		{ "kernel32.dll", NULL },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int family = libnames_match(rows[i].name, NULL);
		const char *got = family >= 0 ? libnames[family].family : NULL;
		harness_check(rows[i].family ? got && strcmp(got, rows[i].family) == 0 : !got, "%s -> %s", rows[i].name,
			      got ? got : "(not NVIDIA)");
	}
	harness_check(libnames_is_driver(libnames_match("NVCUDA.DLL", NULL)), "nvcuda.dll is a driver library");
}

static void test_registry_folder_identity(void)
{
	int nvrtc = libnames_family_index("nvrtc");
	make_folder("site-packages\\nvidia\\cuda_nvrtc\\bin");
	make_file("site-packages\\nvidia\\cuda_nvrtc\\bin\\nvrtc64_130_0.dll");
	const char *folder = at("site-packages\\nvidia\\cuda_nvrtc\\bin");
	harness_check(registry_add_origin(nvrtc, folder) == REGISTRY_ADDED, "a wheel folder is registered");
	char variant[HARNESS_PATH_MAX * 3];
	snprintf(variant, sizeof(variant), "%s\\", folder);
	harness_check(registry_add_origin(nvrtc, variant) == REGISTRY_KNOWN, "with a trailing separator it is the same origin");
	strcpy(variant, folder);
	for (char *s = variant; *s; s++)
		*s = *s == '\\' ? '/' : (char)toupper((unsigned char)*s);
	harness_check(registry_add_origin(nvrtc, variant) == REGISTRY_KNOWN,
		      "in capitals and with '/' it is the same origin (%s)", variant);
	harness_check(registry_count() == 1, "one entry");
	errno = 0;
	harness_check(registry_add_origin(nvrtc, at("site-packages\\nvidia\\cuda_nvrtc\\bin\\nvrtc64_130_0.dll")) == REGISTRY_ERROR &&
			      errno == ENOTDIR,
		      "a file is refused with ENOTDIR (errno %d)", errno);
	errno = 0;
	harness_check(registry_add_origin(nvrtc, at("no-such-folder")) == REGISTRY_ERROR && errno == ENOENT,
		      "a missing folder is refused with ENOENT (errno %d)", errno);
}

struct visit {
	char path[HARNESS_PATH_MAX * 3];
	enum search_step step;
};

static bool remember(const char *path, enum search_step step, enum loader_step loader_step, void *arg)
{
	(void)loader_step;
	struct visit *visit = arg;
	snprintf(visit->path, sizeof(visit->path), "%s", path);
	visit->step = step;
	return true;
}

static void test_wheel_siblings(void)
{
	make_folder("site-packages\\nvidia\\nvjitlink\\bin");
	make_folder("site-packages\\nvidia\\.hidden\\bin");
	make_file("site-packages\\nvidia\\nvjitlink\\bin\\nvJitLink_130_0.dll");
	make_file("site-packages\\nvidia\\.hidden\\bin\\nvfatbin_130_0.dll");
	struct visit visit = { "", SEARCH_LOADER };
	struct search_request request = { .name = "nvJitLink_130_0.dll" };
	harness_check(search_candidates(&request, remember, &visit) && visit.step == SEARCH_WHEEL_SIBLING &&
			      _stricmp(visit.path, at("site-packages\\nvidia\\nvjitlink\\bin\\nvJitLink_130_0.dll")) == 0,
		      "nvJitLink is found in the sibling wheel's bin (%s)", visit.path);
	request.name = "nvfatbin_130_0.dll";
	harness_check(!search_candidates(&request, remember, &visit), "a hidden folder is not a sibling wheel");
	char parent[HARNESS_PATH_MAX * 3];
	const char *leaf = NULL;
	harness_check(search_wheel_root("C:\\Python\\Lib\\Site-Packages\\NVIDIA\\cuda_nvrtc\\Bin", parent, sizeof(parent), &leaf) &&
			      strcmp(parent, "C:\\Python\\Lib\\Site-Packages\\NVIDIA") == 0 && strcmp(leaf, "bin") == 0,
		      "the wheel rule ignores case (%s)", parent);
	harness_check(!search_wheel_root("C:\\Python\\site-packages\\nvidia\\cuda_nvrtc\\lib", parent, sizeof(parent), &leaf),
		      "on Windows a wheel's folder is bin, not lib");
}

static const char *const *fake_environment;

static const char *fake_getenv(const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; fake_environment && fake_environment[i]; i++)
		if (strncmp(fake_environment[i], name, n) == 0 && fake_environment[i][n] == '=')
			return fake_environment[i] + n + 1;
	return NULL;
}

static void test_settings(void)
{
	static struct config config;
	char path[HARNESS_PATH_MAX * 6];
	snprintf(path, sizeof(path), "NVINTERPOSE_PATH=%s;relative\\folder;%s;C:\\no\\such\\folder", at("site-packages"),
		 at("site-packages\\nvidia"));
	const char *env[] = { path, NULL };
	fake_environment = env;
	config_read(&config, fake_getenv, false);
	harness_check(config.path_count == 2 && strcmp(config_path(&config, 0), at("site-packages")) == 0,
		      "NVINTERPOSE_PATH is ';'-separated; relative and missing entries are dropped (%zu kept)", config.path_count);
	harness_check(config.add_dll_directory && config.inject_children, "AddDllDirectory and children are on by default");
	const char *off[] = { "NVINTERPOSE_ADD_DLL_DIRECTORY=0", "NVINTERPOSE_CHILDREN=0", NULL };
	fake_environment = off;
	config_read(&config, fake_getenv, false);
	harness_check(!config.add_dll_directory && !config.inject_children, "0 turns them off");
	const char *bad[] = { "NVINTERPOSE_ADD_DLL_DIRECTORY=no", "NVINTERPOSE_CHILDREN=2", NULL };
	fake_environment = bad;
	config_read(&config, fake_getenv, false);
	harness_check(config.add_dll_directory && config.inject_children, "a value that is not 0 or 1 keeps the default");
	char log_file[HARNESS_PATH_MAX + 32];
	snprintf(log_file, sizeof(log_file), "NVINTERPOSE_LOG_FILE=%s", at("disabled.jsonl"));
	const char *disabled[] = { "NVINTERPOSE_DISABLE=1", "NVINTERPOSE_POLICY=bogus", log_file, path, NULL };
	fake_environment = disabled;
	config_read(&config, fake_getenv, false);
	harness_check(config.disabled && config.policy == POLICY_FALLBACK && !config.log_file[0] && config.path_count == 0,
		      "NVINTERPOSE_DISABLE=1: no other setting read (no log file, no folders)");
	const char *not_a_switch[] = { "NVINTERPOSE_DISABLE=false", NULL };
	fake_environment = not_a_switch;
	config_read(&config, fake_getenv, false);
	harness_check(!config.disabled, "NVINTERPOSE_DISABLE=false is not 0 or 1: the runtime stays on");
	fake_environment = NULL;
}

static void test_event_log(void)
{
	const char *path = at("events.jsonl");
	harness_check(log_open_event_file(path), "the event log opens");
	log_event(&(struct log_event){ .event = "register", .name = "nvrtc64_130_0.dll", .folder = "C:\\a\\b", .family = "nvrtc",
				       .reason = "loaded" });
	log_event(&(struct log_event){ .event = "redirect", .name = "nvrtc-builtins64_130.dll", .reason = "caller's folder" });
	harness_check(log_open_event_file(path), "it opens again, appending");
	log_event(&(struct log_event){ .event = "third", .reason = "a kind the log does not know" }); /* not written */
	log_event(&(struct log_event){ .event = "register", .name = "caf\xe9.dll", .reason = "loaded" });
	wchar_t wide[HARNESS_PATH_MAX];
	MultiByteToWideChar(CP_UTF8, 0, path, -1, wide, HARNESS_PATH_MAX);
	char *text = harness_read_text(wide);
	char pid[32];
	snprintf(pid, sizeof(pid), "\"pid\":%lu,", GetCurrentProcessId());
	int lines = 0;
	for (const char *s = text; s && (s = strchr(s, '\n')); s++)
		lines++;
	harness_check(text && lines == 3 && strstr(text, "\"folder\":\"C:\\\\a\\\\b\"") && strstr(text, pid) &&
			      !strstr(text, "\"event\":\"third\"") && !strstr(text, "\r\n") &&
			      strstr(text, "\"name\":\"caf\xef\xbf\xbd.dll\",\"name_hex\":\"636166e92e646c6c\""),
		      "three JSON lines, appended, backslashes escaped, no carriage returns, no unknown kind, UTF-8 with the "
		      "bytes in hex:\n%s", text ? text : "(none)");
	long long seconds;
	long microseconds;
	platform_wall_clock(&seconds, &microseconds);
	harness_check(seconds > 1700000000 && microseconds >= 0 && microseconds < 1000000, "the wall clock is in Unix time (%lld)",
		      seconds);
}

/* The event log is a file on disk or nothing (platform.h): a pipe blocks the writer when nobody
   reads it, and opening its name connects to its server, which is refused before opening; so are
   the device namespace and the reserved names (NUL, CON) in any folder. */
static void test_event_log_refuses_pipes_and_devices(void)
{
	char pipe_name[128];
	wchar_t wide_pipe[128];
	snprintf(pipe_name, sizeof(pipe_name), "nvinterpose-test-%lu", GetCurrentProcessId());
	_snwprintf(wide_pipe, 128, L"\\\\.\\pipe\\%hs", pipe_name);
	HANDLE server = CreateNamedPipeW(wide_pipe, PIPE_ACCESS_INBOUND | FILE_FLAG_OVERLAPPED, PIPE_TYPE_BYTE | PIPE_WAIT,
					 PIPE_UNLIMITED_INSTANCES, 4096, 4096, 0, NULL);
	if (server == INVALID_HANDLE_VALUE)
		harness_skip("no named pipe can be created here (error %lu)", GetLastError());
	char rows[9][HARNESS_PATH_MAX * 3];
	snprintf(rows[0], sizeof(rows[0]), "\\\\.\\pipe\\%s", pipe_name);
	snprintf(rows[1], sizeof(rows[1]), "\\\\?\\pipe\\%s", pipe_name);
	snprintf(rows[2], sizeof(rows[2]), "//./pipe/%s", pipe_name);
	snprintf(rows[3], sizeof(rows[3]), "\\\\localhost\\pipe\\%s", pipe_name);
	snprintf(rows[4], sizeof(rows[4]), "\\\\?\\UNC\\localhost\\PIPE\\%s", pipe_name);
	snprintf(rows[5], sizeof(rows[5]), "%s", at("NUL"));
	snprintf(rows[6], sizeof(rows[6]), "CON");
	snprintf(rows[7], sizeof(rows[7]), "\\\\.\\NUL");
	snprintf(rows[8], sizeof(rows[8]), "\\\\?\\GLOBALROOT\\Device\\Null");
	for (int i = 0; i < 9; i++) {
		errno = 0;
		int fd = platform_open_append(rows[i]);
		harness_check(fd < 0 && errno == EINVAL, "the event log refuses %s (fd %d, errno %d)", rows[i], fd, errno);
		if (fd >= 0)
			close(fd);
	}
	harness_check(!log_open_event_file(rows[0]), "log_open_event_file refuses the pipe and says so");
	OVERLAPPED overlapped = { .hEvent = CreateEventW(NULL, TRUE, FALSE, NULL) };
	BOOL connected = ConnectNamedPipe(server, &overlapped);
	DWORD error = GetLastError();
	harness_check(!connected && error == ERROR_IO_PENDING,
		      "the pipe's server saw no client connect (ConnectNamedPipe: %d, error %lu)", connected, error);
	CancelIo(server);
	CloseHandle(overlapped.hEvent);
	CloseHandle(server);

	/* Files on disk still open, by a drive path or its \\?\ form. */
	char long_form[HARNESS_PATH_MAX * 3 + 8];
	snprintf(long_form, sizeof(long_form), "\\\\?\\%s", at("events-long-form.jsonl"));
	const char *files[] = { at("events-plain.jsonl"), long_form };
	for (int i = 0; i < 2; i++) {
		int fd = platform_open_append(files[i]);
		harness_check(fd >= 0, "a file on disk opens: %s (errno %d)", files[i], fd < 0 ? errno : 0);
		if (fd >= 0)
			close(fd);
	}
}

static void test_folder_listing(void)
{
	char **names = NULL;
	int n = platform_list_folder(at("site-packages\\nvidia"), &names);
	char joined[512] = "";
	for (int i = 0; i < n; i++) {
		strcat(joined, names[i]);
		strcat(joined, " ");
	}
	harness_check(n == 3 && strcmp(joined, ".hidden cuda_nvrtc nvjitlink ") == 0,
		      "a folder lists its entries, sorted, without . and .. (%s)", joined);
	platform_free_names(names, n);
	errno = 0;
	harness_check(platform_list_folder(at("no-such-folder"), &names) == -1 && errno == ENOENT, "a missing folder: ENOENT");
	harness_check(platform_is_file(at("site-packages\\nvidia\\nvjitlink\\bin\\nvJitLink_130_0.dll")) &&
			      !platform_is_file(at("site-packages")),
		      "platform_is_file tells files from folders");
}

/* A module image as mapped: headers at 64, an import directory at 0x1000 naming one DLL whose
   import address table starts at table_rva and holds one slot with the real function. */
static unsigned char *image_with_import_table(DWORD table_rva, void *real)
{
	static __attribute__((aligned(16))) unsigned char image[0x3000];
	memset(image, 0, sizeof(image));
	IMAGE_DOS_HEADER *dos = (IMAGE_DOS_HEADER *)image;
	dos->e_magic = IMAGE_DOS_SIGNATURE;
	dos->e_lfanew = 64;
	IMAGE_NT_HEADERS *nt = (IMAGE_NT_HEADERS *)(image + 64);
	nt->Signature = IMAGE_NT_SIGNATURE;
	nt->OptionalHeader.Magic = IMAGE_NT_OPTIONAL_HDR_MAGIC;
	nt->OptionalHeader.SizeOfImage = sizeof(image);
	nt->OptionalHeader.NumberOfRvaAndSizes = IMAGE_NUMBEROF_DIRECTORY_ENTRIES;
	nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT] = (IMAGE_DATA_DIRECTORY){ 0x1000, 2 * sizeof(IMAGE_IMPORT_DESCRIPTOR) };
	IMAGE_IMPORT_DESCRIPTOR *descriptor = (IMAGE_IMPORT_DESCRIPTOR *)(image + 0x1000);
	descriptor->Name = 0x1100;
	descriptor->FirstThunk = table_rva;
	memcpy(image + table_rva, &real, sizeof(real));
	return image;
}

static void test_import_table_patching(void)
{
	static int real_function, replacement;
	struct hook hook = { .name = "LoadLibraryW", .replacement = &replacement, .real = { &real_function, NULL } };
	unsigned char *image = image_with_import_table(0x2000, &real_function);
	void *slot;
	harness_check(import_table_patch(image, &hook, 1) == 1 && memcpy(&slot, image + 0x2000, sizeof(slot)) && slot == &replacement,
		      "an import slot holding the real function gets the hook");
	/* A table that is not where a table of pointers is aligned belongs to a malformed module: its
	   slots are neither read nor written as pointers (which the C language does not allow). */
	image = image_with_import_table(0x2004, &real_function);
	harness_check(import_table_patch(image, &hook, 1) == 0 && memcpy(&slot, image + 0x2004, sizeof(slot)) && slot == &real_function,
		      "a misaligned import address table is left as it is");
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	wchar_t folder[HARNESS_PATH_MAX];
	harness_fresh_folder("rooms", folder);
	WideCharToMultiByte(CP_UTF8, 0, folder, -1, root, sizeof(root), NULL, NULL);
	registry_init();
	test_dll_names();
	test_registry_folder_identity();
	test_wheel_siblings();
	test_settings();
	test_event_log();
	test_event_log_refuses_pipes_and_devices();
	test_folder_listing();
	test_import_table_patching();
	return harness_result();
}
