#!/bin/sh
# The Windows suite from the Linux build: cross-builds nvinterpose.dll, nvinterpose-run.exe and
# their tests with mingw-w64 in a build folder of its own (tools/x86_64-w64-mingw32.txt) and runs
# them under Wine. Exits 77 (skipped), saying why, where mingw-w64 or Wine is missing.
#   NVI_SOURCE_ROOT    the source tree (set by meson test)
#   NVI_WINDOWS_BUILD  the Windows build folder (default: build-windows beside this script's caller)
#   WINEPREFIX         the Wine prefix (default: NVI_WINDOWS_BUILD/wineprefix, created on first use)
set -u
skip() {
	echo "skipped: $*"
	exit 77
}

source_root=${NVI_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${NVI_WINDOWS_BUILD:-$source_root/build-windows}
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 ||
	skip "x86_64-w64-mingw32-gcc not found: install mingw-w64 (tools/quickstart --windows does)"
command -v wine >/dev/null 2>&1 || skip "wine not found: install wine and wine64 (tools/quickstart --windows does)"
command -v meson >/dev/null 2>&1 || skip "meson not found"

# The suite builds in its folder and keeps its Wine prefix there (Wine refuses a prefix another
# user owns): a user who cannot write there cannot run it.
writable=$build
[ -e "$writable" ] || writable=$(dirname "$build")
[ -w "$writable" ] || skip "$writable is not writable by this user (the suite builds there and keeps its Wine prefix there; run it as the build's owner)"

own_prefix=0
[ -n "${WINEPREFIX:-}" ] || own_prefix=1
WINEPREFIX=${WINEPREFIX:-$build/wineprefix}
WINEDEBUG=${WINEDEBUG:--all}
# No Mono, no Gecko: the prefix is made without asking to download them.
WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=}
export WINEPREFIX WINEDEBUG WINEDLLOVERRIDES

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$source_root" --cross-file "$source_root/tools/x86_64-w64-mingw32.txt" ||
		{ echo "the Windows build could not be configured"; exit 1; }
fi
ninja -C "$build" || { echo "the Windows build failed"; exit 1; }

# The first start of Wine creates its prefix (a few seconds to a minute). A Wine that cannot start
# at all (no 64-bit loader) is a machine without Wine, not a failure of the runtime.
mkdir -p "$WINEPREFIX"
if ! timeout 600 wine cmd /c exit 0 >"$build/wine-start.log" 2>&1; then
	tail -5 "$build/wine-start.log"
	skip "wine cannot start a 64-bit program here (see $build/wine-start.log; Debian needs wine64)"
fi

status=0
meson test -C "$build" --suite windows --print-errorlogs --num-processes 4 || status=$?
# The Wine server outlives its last program by a few seconds: stop the one of the suite's own prefix.
[ $own_prefix = 1 ] && wineserver -k >/dev/null 2>&1
exit $status
