#!/bin/sh
# The compat suite: the runtime built here runs in a Debian bullseye root (glibc 2.31), where the
# tests, the stand-ins and the probe are built with the root's own compiler against its own glibc
# (a program built here would need this machine's glibc), and the preload suite (the loader
# semantics check among it) and the cuda suite (the real NVRTC from a wheel folder: failing without
# the runtime, passing with LD_PRELOAD, attached late and through the launcher) run there; then the
# inspector built here, which binds the oldest symbol versions as the runtime does.
# Bullseye's meson is older than the project needs: this machine's meson, which is pure Python,
# is bound into the root and run by the root's Python. Exits 77, saying why, where the root cannot
# be made or entered (tests/roots/debian-root.sh).
#   NVI_SOURCE_ROOT, NVI_BUILD_ROOT, NVI_RUNTIME, NVI_RUNTIME_O0, NVI_CUDA_HOME  (set by meson test)
#   NVI_DEBIAN_ROOTS  where the roots are kept (see debian-root.sh)
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/debian-root.sh"

build=$build_root/compat-bullseye
cuda=${NVI_CUDA_HOME:-/usr/local/cuda}
started=$(now)
root_make bullseye amd64 gcc libc6-dev check libsubunit-dev pkg-config ninja-build python3 binutils libcap2-bin
echo "root: $root ($(($(now) - started)) s)"

root_meson "$root"
meson=$root_meson_program
root_binds
[ -d "$cuda" ] && binds="$binds $cuda"
in_root() {
	# shellcheck disable=SC2086
	root_run "$root" $binds -- "$@"
}

in_root sh -c 'echo "in the root: $(ldd --version | head -n 1), $(gcc --version | head -n 1)"'
started=$(now)
if [ ! -f "$build/build.ninja" ]; then
	in_root "$meson" setup "$build" "$source_root" -Dtests=enabled -Dnvidia_toolkit="$cuda" >"$build_root/compat-setup.log" 2>&1 ||
		{ tail -n 20 "$build_root/compat-setup.log"; fail "configuring the tests in the bullseye root (log: $build_root/compat-setup.log)"; }
fi
in_root ninja -C "$build" >"$build_root/compat-build.log" 2>&1 ||
	{ grep -E 'error|FAILED' "$build_root/compat-build.log" | head -n 20; fail "building the tests in the bullseye root (log: $build_root/compat-build.log)"; }
echo "tests built in the root in $(($(now) - started)) s"

# The runtime under test is this machine's build: it replaces the root's own, so the tests, the
# launcher and the API client all load it.
cp -f "$NVI_RUNTIME" "$build/libnvinterpose.so.0"
cp -f "$NVI_RUNTIME_O0" "$build/tests/libnvinterpose-O0.so"
echo "runtime: $NVI_RUNTIME, highest glibc version: $(objdump -T "$NVI_RUNTIME" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)"

started=$(now)
status=0
in_root "$meson" test -C "$build" --no-rebuild --print-errorlogs --suite preload --suite cuda || status=$?
echo "suites in the root: $(($(now) - started)) s"

# The inspector built here (the root has no libelf): it binds the oldest symbol versions and starts
# through the base __libc_start_main (src/linux/glibc_compat_start.c), so it runs on glibc 2.31 too,
# as the wheel that carries it promises.
if [ -n "${NVI_INSPECT:-}" ]; then
	cp -f "$NVI_INSPECT" "$build/nvinterpose-inspect-host"
	families=$(in_root "$build/nvinterpose-inspect-host" --families 2>&1)
	tree=$(in_root "$build/nvinterpose-inspect-host" --json "$build/libnvinterpose.so.0" 2>&1)
	case $families in *"nvrtc-builtins"*) ;; *) echo "the inspector in the root: $families"; status=1 ;; esac
	case $tree in *'"soname":"libnvinterpose.so.0"'*) echo "the inspector runs in the root: --families and a tree" ;;
	*) echo "the inspector's tree in the root: $tree"; status=1 ;; esac
fi
exit $status
