/* The shared rooms' platform functions (src/platform.h) on Windows. Paths arrive in UTF-8 and go
   to the wide (UTF-16) Win32 functions, so that any folder name works, not only the code page's. */
#include "platform.h"

#include "report_section.h"
#include "utf16.h"

#include <errno.h>
#include <io.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

/* Long enough for the settings' longest folder (CONFIG_FOLDER_MAX) with a file name after it. */
#define WIDE_PATH_MAX 4352

static void set_errno_from_last_error(void) { errno = utf16_errno_from_win32(GetLastError()); }

/* The file or folder's information (its volume and index say which it is); false with errno. */
static bool file_information(const char *path, BY_HANDLE_FILE_INFORMATION *info)
{
	wchar_t wide[WIDE_PATH_MAX];
	if (!utf16_from_utf8(path, wide, WIDE_PATH_MAX))
		return false;
	/* FILE_FLAG_BACKUP_SEMANTICS opens a folder too; no access right is needed to read its identity. */
	HANDLE handle = CreateFileW(wide, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
				    FILE_FLAG_BACKUP_SEMANTICS, NULL);
	if (handle == INVALID_HANDLE_VALUE) {
		set_errno_from_last_error();
		return false;
	}
	bool ok = GetFileInformationByHandle(handle, info);
	DWORD error = GetLastError();
	CloseHandle(handle);
	if (!ok)
		errno = utf16_errno_from_win32(error);
	return ok;
}

bool platform_folder_identity(const char *folder, struct folder_identity *identity)
{
	BY_HANDLE_FILE_INFORMATION info;
	if (!file_information(folder, &info))
		return false;
	if (!(info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
		errno = ENOTDIR;
		return false;
	}
	identity->device = info.dwVolumeSerialNumber;
	identity->inode = (unsigned long long)info.nFileIndexHigh << 32 | info.nFileIndexLow;
	identity->no_subfolders = false;
	identity->changed_ns = 0;
	identity->settled = false;
	return true;
}

bool platform_same_file(const char *a, const char *b)
{
	BY_HANDLE_FILE_INFORMATION x, y;
	return file_information(a, &x) && file_information(b, &y) && x.dwVolumeSerialNumber == y.dwVolumeSerialNumber &&
	       x.nFileIndexHigh == y.nFileIndexHigh && x.nFileIndexLow == y.nFileIndexLow;
}

bool platform_is_file(const char *path)
{
	wchar_t wide[WIDE_PATH_MAX];
	if (!utf16_from_utf8(path, wide, WIDE_PATH_MAX))
		return false;
	DWORD attributes = GetFileAttributesW(wide);
	return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY);
}

/* Case-insensitive first, as Windows compares names; the exact bytes break ties. */
static int compare_names(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	int order = _stricmp(x, y);
	return order ? order : strcmp(x, y);
}

int platform_list_folder(const char *folder, char ***names)
{
	wchar_t pattern[WIDE_PATH_MAX];
	*names = NULL;
	if (!utf16_from_utf8(folder, pattern, WIDE_PATH_MAX - 2))
		return -1;
	size_t length = wcslen(pattern);
	if (length && pattern[length - 1] != L'\\' && pattern[length - 1] != L'/')
		pattern[length++] = L'\\';
	pattern[length++] = L'*';
	pattern[length] = L'\0';

	WIN32_FIND_DATAW found;
	HANDLE find = FindFirstFileExW(pattern, FindExInfoBasic, &found, FindExSearchNameMatch, NULL, 0);
	if (find == INVALID_HANDLE_VALUE) {
		if (GetLastError() == ERROR_FILE_NOT_FOUND)
			return 0; /* an empty volume root has not even "." */
		set_errno_from_last_error();
		return -1;
	}
	int count = 0, capacity = 0;
	char **list = NULL;
	do {
		const wchar_t *name = found.cFileName;
		if (name[0] == L'.' && (name[1] == L'\0' || (name[1] == L'.' && name[2] == L'\0')))
			continue;
		char utf8[MAX_PATH * 4];
		if (!utf8_from_utf16(name, utf8, sizeof(utf8)))
			continue;
		if (count == capacity) {
			int grown = capacity ? capacity * 2 : 16;
			char **bigger = realloc(list, sizeof(*list) * (size_t)grown);
			if (!bigger)
				goto out_of_memory;
			list = bigger;
			capacity = grown;
		}
		if (!(list[count] = _strdup(utf8)))
			goto out_of_memory;
		count++;
	} while (FindNextFileW(find, &found));
	FindClose(find);
	if (count)
		qsort(list, (size_t)count, sizeof(*list), compare_names);
	*names = list;
	return count;
out_of_memory:
	FindClose(find);
	platform_free_names(list, count);
	errno = ENOMEM;
	return -1;
}

void platform_free_names(char **names, int count)
{
	for (int i = 0; names && i < count; i++)
		free(names[i]);
	free(names);
}

static bool is_separator(wchar_t c) { return c == L'\\' || c == L'/'; }

/* \\SERVER\pipe\NAME (and \\?\UNC\SERVER\pipe\NAME): a pipe on that machine, this one too. */
static bool names_a_remote_pipe(const wchar_t *share_path)
{
	const wchar_t *s = share_path;
	while (*s && !is_separator(*s))
		s++;
	return *s && _wcsnicmp(s + 1, L"pipe", 4) == 0 && (is_separator(s[5]) || !s[5]);
}

/* A reserved DOS device name in any folder (NUL, CON, COM1, C:\\logs\\nul.txt), as the system reads it. */
static bool is_dos_device_name(const wchar_t *path)
{
	ULONG(NTAPI * is_device)(PCWSTR) =
		(ULONG(NTAPI *)(PCWSTR))(void (*)(void))GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "RtlIsDosDeviceName_U");
	return is_device && is_device(path) != 0;
}

/* A name in the device namespace (\\.\pipe\x, \\.\COM1, \\?\GLOBALROOT\...) that is not a drive's path,
   a pipe's UNC name, or a reserved device name: opening a pipe's name connects to its server, and
   opening a serial port raises its lines, so each is refused unopened. */
static bool names_a_device(const wchar_t *path)
{
	if (is_dos_device_name(path))
		return true;
	if (!is_separator(path[0]) || !is_separator(path[1]))
		return false;
	if (!((path[2] == L'.' || path[2] == L'?') && is_separator(path[3])))
		return names_a_remote_pipe(path + 2);
	const wchar_t *rest = path + 4;
	bool drive = ((rest[0] >= L'A' && rest[0] <= L'Z') || (rest[0] >= L'a' && rest[0] <= L'z')) && rest[1] == L':' &&
		     is_separator(rest[2]);
	if (drive)
		return false;
	if (_wcsnicmp(rest, L"UNC", 3) == 0 && is_separator(rest[3]))
		return names_a_remote_pipe(rest + 4);
	return true;
}

/* Windows decides who may write a folder by its access-control list, not by an owner and mode
   bits, and Wine, where this build is tested, does not enforce file ACLs: the trust rule is not
   applied on Windows (docs/windows.md). */
bool platform_access_of(const char *path, struct platform_access *access)
{
	(void)path, (void)access;
	errno = ENOSYS;
	return false;
}

void platform_current_identity(struct platform_identity *identity) { identity->known = false; }

bool platform_is_privileged(void) { return false; }

int platform_open_append(const char *path)
{
	wchar_t wide[WIDE_PATH_MAX];
	if (!utf16_from_utf8(path, wide, WIDE_PATH_MAX))
		return -1;
	if (names_a_device(wide)) {
		errno = EINVAL;
		return -1;
	}
	/* FILE_APPEND_DATA without FILE_WRITE_DATA: the system puts every write at the end of the file,
	   atomically, as O_APPEND does. Not inherited: a child opens its own. */
	HANDLE handle = CreateFileW(wide, FILE_APPEND_DATA | SYNCHRONIZE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
				    NULL, OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	if (handle == INVALID_HANDLE_VALUE) {
		set_errno_from_last_error();
		return -1;
	}
	/* A reserved name in any folder (C:\logs\NUL, CON, COM1) is a device too: only a file on disk
	   never blocks the host process. */
	if (GetFileType(handle) != FILE_TYPE_DISK) {
		CloseHandle(handle);
		errno = EINVAL;
		return -1;
	}
	/* Without _O_TEXT the descriptor is binary: the C library writes the bytes as they are. */
	int fd = _open_osfhandle((intptr_t)handle, 0);
	if (fd < 0) {
		CloseHandle(handle);
		errno = EMFILE;
	}
	return fd;
}

/* The last byte of the file, read through a handle of its own (the append handle cannot read). */
static char last_byte(const wchar_t *wide)
{
	char last = '\n';
	HANDLE handle = CreateFileW(wide, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
				    OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	LARGE_INTEGER size, at;
	DWORD got;
	if (handle == INVALID_HANDLE_VALUE)
		return last;
	if (GetFileSizeEx(handle, &size) && size.QuadPart > 0) {
		at.QuadPart = size.QuadPart - 1;
		if (!SetFilePointerEx(handle, at, NULL, FILE_BEGIN) || !ReadFile(handle, &last, 1, &got, NULL) || got != 1)
			last = '\n';
	}
	CloseHandle(handle);
	return last;
}

int platform_append_line(const char *path, const char *line, size_t length)
{
	wchar_t wide[WIDE_PATH_MAX];
	int saved_errno = errno, result = 0;
	int fd = platform_open_append(path);
	if (fd < 0) {
		result = -errno;
		goto out;
	}
	/* A partial line left by an earlier short write: the new line starts on a line of its own. */
	if (line && utf16_from_utf8(path, wide, WIDE_PATH_MAX) && last_byte(wide) != '\n')
		_write(fd, "\n", 1);
	if (line && _write(fd, line, (unsigned)length) != (int)length)
		result = -EIO;
	_close(fd);
out:
	errno = saved_errno;
	return result;
}

bool platform_absolute_path(const char *path, char *absolute, size_t size)
{
	wchar_t wide[WIDE_PATH_MAX], full[WIDE_PATH_MAX];
	if (!utf16_from_utf8(path, wide, WIDE_PATH_MAX))
		return false;
	DWORD n = GetFullPathNameW(wide, WIDE_PATH_MAX, full, NULL);
	if (n == 0 || n >= WIDE_PATH_MAX) {
		errno = n ? ENAMETOOLONG : utf16_errno_from_win32(GetLastError());
		return false;
	}
	if (!utf8_from_utf16(full, absolute, size)) {
		errno = ENAMETOOLONG;
		return false;
	}
	return true;
}

void platform_wall_clock(long long *seconds, long *microseconds)
{
	FILETIME now;
	GetSystemTimePreciseAsFileTime(&now);
	/* 100-nanosecond ticks since 1601; 11644473600 seconds separate 1601 from 1970. */
	unsigned long long ticks = (unsigned long long)now.dwHighDateTime << 32 | now.dwLowDateTime;
	ticks -= 116444736000000000ull;
	*seconds = (long long)(ticks / 10000000ull);
	*microseconds = (long)(ticks % 10000000ull / 10);
}

long platform_process_id(void) { return (long)GetCurrentProcessId(); }

static HANDLE kept_stderr;

void platform_keep_stderr(void)
{
	HANDLE process = GetCurrentProcess(), handle = GetStdHandle(STD_ERROR_HANDLE), kept;
	if (!kept_stderr && handle && handle != INVALID_HANDLE_VALUE &&
	    DuplicateHandle(process, handle, process, &kept, 0, FALSE, DUPLICATE_SAME_ACCESS))
		kept_stderr = kept;
}

void platform_write_stderr(const char *text, size_t length)
{
	HANDLE handle = kept_stderr ? kept_stderr : GetStdHandle(STD_ERROR_HANDLE);
	DWORD saved = GetLastError(), written;
	while (length > 0 && handle && handle != INVALID_HANDLE_VALUE &&
	       WriteFile(handle, text, length > MAXDWORD ? MAXDWORD : (DWORD)length, &written, NULL) && written > 0) {
		text += written;
		length -= written;
	}
	SetLastError(saved);
}

bool platform_report_file(long report_pid, const char *tmpdir, char *path, size_t size)
{
	(void)report_pid, (void)tmpdir, (void)path, (void)size;
	return false;
}

char *platform_take_file(const char *path, size_t max)
{
	(void)path, (void)max;
	return NULL;
}

bool platform_reports_for(long report_pid)
{
	DWORD self = GetCurrentProcessId();
	if (report_pid <= 0)
		return false;
	if ((DWORD)report_pid == self)
		return true;
	/* Kernel objects only: no DLL is loaded, so this holds under the loader lock at exit. */
	wchar_t name[REPORT_SECTION_NAME_MAX];
	_snwprintf(name, REPORT_SECTION_NAME_MAX, REPORT_SECTION_FORMAT, (unsigned long)report_pid);
	name[REPORT_SECTION_NAME_MAX - 1] = L'\0';
	HANDLE section = OpenFileMappingW(FILE_MAP_READ, FALSE, name);
	if (!section)
		return false;
	const volatile DWORD *pid = MapViewOfFile(section, FILE_MAP_READ, 0, 0, sizeof(DWORD));
	bool named = pid && *pid == self;
	if (pid)
		UnmapViewOfFile((const void *)pid);
	CloseHandle(section);
	return named;
}

void platform_yield(void) { SwitchToThread(); }

void platform_after_fork_in_child(void (*handler)(void)) { (void)handler; }
