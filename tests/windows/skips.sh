#!/bin/sh
# The Windows suite (run.sh) where mingw-w64 or Wine is missing, as tools/quickstart without
# --windows leaves a machine: it exits 77 (skipped) and says what to install.
#   $1  tests/windows/run.sh
set -u
run=$1
tools=$(mktemp -d) || exit 1
trap 'rm -rf "$tools"' EXIT
status=0
expect() {
	# NVI_SOURCE_ROOT given, as meson test gives it: run.sh then needs no tool to find the tree.
	output=$(PATH=$tools NVI_SOURCE_ROOT=$tools NVI_WINDOWS_BUILD=$tools/build /bin/sh "$run" 2>&1)
	code=$?
	case $code:$output in
	"77:$1") echo "ok: $1" ;;
	*) echo "expected status 77 and '$1', got $code: $output"; status=1 ;;
	esac
}
expect "skipped: x86_64-w64-mingw32-gcc not found: install mingw-w64 (tools/quickstart --windows does)"
ln -s /bin/true "$tools/x86_64-w64-mingw32-gcc"
expect "skipped: wine not found: install wine and wine64 (tools/quickstart --windows does)"
exit $status
