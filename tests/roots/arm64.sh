#!/bin/sh
# The arm64 suite: the project cross-built for aarch64 here (tools/aarch64-linux-gnu.txt) and its
# unit and preload suites (the loader-semantics check among them) run in an arm64 Debian bookworm
# root, whose programs run under qemu-user through binfmt_misc. The tests build their stand-ins
# with the root's own gcc. Running the cross-built programs here instead, against the cross
# toolchain's libc (qemu -L), pairs two builds of libc and hangs forks: the root has one glibc.
# Exits 77, saying why, where the cross compiler, the arm64 packages, qemu or binfmt_misc are missing.
#   NVI_SOURCE_ROOT, NVI_BUILD_ROOT   (set by meson test)
#   NVI_DEBIAN_ROOTS  where the roots are kept (see debian-root.sh)
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/debian-root.sh"

build=$build_root/build-arm64
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 ||
	skip "aarch64-linux-gnu-gcc not found: install gcc-aarch64-linux-gnu and libc6-dev-arm64-cross (.ci/run does)"
[ -f /usr/lib/aarch64-linux-gnu/pkgconfig/check.pc ] ||
	skip "Check for arm64 not found: dpkg --add-architecture arm64; install check:arm64 libsubunit-dev:arm64 (.ci/run does)"
command -v meson >/dev/null 2>&1 || skip "meson not found"

started=$(now)
root_make bookworm arm64 gcc libc6-dev check libsubunit0 libelf1 python3 binutils libcap2-bin
echo "root: $root ($(($(now) - started)) s)"

# The tests run in the root, where the cross-built programs are native: tell meson so.
mkdir -p "$build_root"
printf '[properties]\nneeds_exe_wrapper = false\n' >"$build_root/arm64-in-root.txt"
started=$(now)
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$source_root" --cross-file "$source_root/tools/aarch64-linux-gnu.txt" \
		--cross-file "$build_root/arm64-in-root.txt" -Dtests=enabled >"$build_root/arm64-setup.log" 2>&1 ||
		{ tail -n 20 "$build_root/arm64-setup.log"; fail "configuring the aarch64 cross build (log: $build_root/arm64-setup.log)"; }
fi
ninja -C "$build" >"$build_root/arm64-build.log" 2>&1 ||
	{ grep -E 'error|FAILED' "$build_root/arm64-build.log" | head -n 20; fail "the aarch64 cross build (log: $build_root/arm64-build.log)"; }
echo "cross-built in $(($(now) - started)) s; the runtime's highest glibc version: $(aarch64-linux-gnu-objdump -T "$build/libnvinterpose.so.0" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)"

root_meson "$root"
# qemu-user for the BTI test, which runs its probe with -cpu max.
cp -f "$(command -v qemu-aarch64-static)" "$root/usr/local/bin/qemu-aarch64-static" 2>/dev/null ||
	echo "qemu-aarch64-static not found here: the BTI test will skip"
root_binds

# qemu-user 7.2 deadlocks a child forked while another thread is in a system call, once the child
# makes one: show it without the runtime. The registry's fork test, which does the same, is left
# out, and the stress test runs without forks (NVI_QEMU_USER).
# A hung child ignores SIGTERM (qemu never gets to deliver it): SIGKILL, to the whole group.
aarch64-linux-gnu-gcc -O2 -pthread "$here/qemu_fork_syscall.c" -o "$build/qemu-fork-syscall" &&
	root_run "$root" $binds -- timeout -s KILL 30 "$build/qemu-fork-syscall" ||
	echo "qemu-user hung or failed on forks beside a thread in system calls (status $?)"

# The runtime's suites (unit, preload: the loader-semantics checks and the BTI test among them); the
# inspector's suites are left out, which under qemu take longer than all of these together.
tests="config libnames search log registry dynamic preload needed coherent loader_rules bad_input stress secure launcher loader_semantics caller_semantics bti"
started=$(now)
status=0
# shellcheck disable=SC2086
root_run "$root" $binds -- env NVI_QEMU_USER=1 "$root_meson_program" test -C "$build" --no-rebuild --print-errorlogs \
	$tests "$@" || status=$?
echo "suites in the root under qemu: $(($(now) - started)) s"
exit $status
