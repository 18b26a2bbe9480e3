# Debian roots for the suites that run the runtime where the build machine is not: another glibc
# (compat: bullseye, glibc 2.31) and another machine (arm64: bookworm under qemu-user). Sourced by
# tests/roots/compat.sh and tests/roots/arm64.sh.
#
# A root is made once with debootstrap from Debian's archive and kept in a folder outside the build
# (NVI_DEBIAN_ROOTS, which meson test sets from the option debian_roots as the build was
# configured; default $XDG_CACHE_HOME/nvinterpose/debian-roots),
# named for its suite, architecture and package list, and reused while it is there. Whatever the
# machine lacks to make or enter one is a skip (exit 77) that says why.
#   NVI_SOURCE_ROOT, NVI_BUILD_ROOT  the source and build trees (set by meson test)
#   NVI_DEBIAN_ROOTS   the cache folder
#   NVI_DEBIAN_MIRROR  the archive debootstrap uses (default: debootstrap's own)

source_root=${NVI_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
build_root=${NVI_BUILD_ROOT:?set by meson test}

skip() {
	echo "skipped: $*"
	exit 77
}

fail() {
	echo "failed: $*"
	exit 1
}

roots_folder() {
	if [ -n "${NVI_DEBIAN_ROOTS:-}" ]; then
		printf '%s\n' "$NVI_DEBIAN_ROOTS"
	else
		printf '%s\n' "${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/nvinterpose/debian-roots"
	fi
}

# Seconds since the epoch, for the times the suites print.
now() { date +%s; }

# root_make SUITE ARCH PACKAGE...: sets root to the root's folder; makes it first when it is not in
# the cache (a few minutes). The root is made in a temporary folder and renamed when complete, so
# a run that was stopped leaves nothing that looks usable; a lock keeps two runs from making it at once.
root_make() {
	suite=$1 arch=$2
	shift 2
	[ "$(id -u)" = 0 ] || skip "making and entering a Debian root needs root (debootstrap, chroot, mount)"
	command -v debootstrap >/dev/null 2>&1 || skip "debootstrap not found: install debootstrap (.ci/run does)"
	command -v unshare >/dev/null 2>&1 || skip "unshare not found (util-linux)"
	command -v flock >/dev/null 2>&1 || skip "flock not found (util-linux)"
	if [ "$arch" != "$(dpkg --print-architecture 2>/dev/null)" ]; then
		root_can_run_foreign "$arch" || skip "$root_foreign_reason"
	fi
	packages=$(printf '%s\n' "$@" | sort -u | tr '\n' ',' | sed 's/,$//')
	tag=$(printf '%s %s %s\n' "$suite" "$arch" "$packages" | md5sum | cut -c1-8)
	folder=$(roots_folder)
	root=$folder/$suite-$arch-$tag
	if [ ! -f "$root/.nvinterpose-root" ]; then
		mkdir -p "$folder" || skip "cannot create the roots folder $folder (meson configure -Ddebian_roots=DIR)"
		exec 9>"$folder/.lock"
		flock 9
		if [ ! -f "$root/.nvinterpose-root" ]; then
			rm -rf "$root.partial"
			started=$(now)
			echo "making the $suite $arch root in $root (debootstrap --variant=minbase, a few minutes)" >&2
			# shellcheck disable=SC2086
			if ! debootstrap --variant=minbase --arch="$arch" --include="$packages" "$suite" "$root.partial" \
				${NVI_DEBIAN_MIRROR:-} >"$folder/$suite-$arch-$tag.log" 2>&1; then
				tail -n 5 "$folder/$suite-$arch-$tag.log" >&2
				rm -rf "$root.partial"
				skip "debootstrap of $suite ($arch) failed: the archive may be unreachable (log: $folder/$suite-$arch-$tag.log)"
			fi
			printf '%s %s %s\n' "$suite" "$arch" "$packages" >"$root.partial/.nvinterpose-root"
			mv "$root.partial" "$root"
			echo "made the $suite $arch root in $(($(now) - started)) s" >&2
		fi
		exec 9>&-
	fi
}

# Whether this machine runs ARCH's programs: qemu-user registered with binfmt_misc, with the F flag
# (the interpreter opened when it was registered, so that it works inside a root that lacks it).
root_can_run_foreign() {
	case $1 in
	arm64) qemu=aarch64 ;;
	*) root_foreign_reason="no qemu-user mapping for $1"; return 1 ;;
	esac
	entry=/proc/sys/fs/binfmt_misc/qemu-$qemu
	if [ ! -d /proc/sys/fs/binfmt_misc ] || [ ! -f /proc/sys/fs/binfmt_misc/status ]; then
		root_foreign_reason="binfmt_misc is not mounted (mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc)"
		return 1
	fi
	if [ ! -f "$entry" ] || ! grep -q '^enabled' "$entry"; then
		root_foreign_reason="no qemu-$qemu binfmt entry: install qemu-user-static and binfmt-support (update-binfmts --enable qemu-$qemu)"
		return 1
	fi
	if ! grep -q '^flags:.*F' "$entry"; then
		root_foreign_reason="the qemu-$qemu binfmt entry lacks the F flag, so it cannot run inside a root (use qemu-user-static)"
		return 1
	fi
	return 0
}

# root_run ROOT FOLDER... -- COMMAND...: runs COMMAND in ROOT, in a mount namespace of its own (no
# mount outlives the command), with /proc, /dev, an empty /tmp and each FOLDER bound at its own path,
# and a clean environment (PATH, HOME, TMPDIR, the locale); COMMAND sets what else it needs with env.
root_run() {
	run_root=$1
	shift
	run_binds=''
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		run_binds="$run_binds$1
"
		shift
	done
	[ $# -gt 0 ] && shift
	ROOT_RUN_BINDS=$run_binds unshare --mount --propagation private /bin/sh -c '
		set -e
		root=$1
		shift
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
		printf "%s" "$ROOT_RUN_BINDS" | while IFS= read -r folder; do
			[ -n "$folder" ] || continue
			mkdir -p "$root$folder"
			mount --bind "$folder" "$root$folder"
		done
		exec chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root TMPDIR=/tmp LC_ALL=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 "$@"
	' root-run "$run_root" "$@"
}

# root_meson ROOT: this machine's meson, which is pure Python, for the root's Python (the roots'
# own meson is older than the project needs). Sets meson_package (to bind into the root at its own
# path) and root_meson_program (the launcher written into the root).
root_meson() {
	meson_program=$(command -v meson) || skip "meson not found"
	meson_python=$(sed -n '1s/^#! *//p' "$meson_program")
	# shellcheck disable=SC2086
	meson_package=$(${meson_python:-python3} -c 'import mesonbuild, os; print(os.path.dirname(mesonbuild.__file__))' 2>/dev/null) ||
		skip "the mesonbuild package of $meson_program was not found"
	mkdir -p "$1/opt/nvinterpose-meson"
	cat >"$1/opt/nvinterpose-meson/meson" <<PY
#!/usr/bin/python3
import sys
sys.path.insert(0, '$(dirname "$meson_package")')
from mesonbuild import mesonmain
sys.exit(mesonmain.main())
PY
	chmod 755 "$1/opt/nvinterpose-meson/meson"
	root_meson_program=/opt/nvinterpose-meson/meson
}

# root_binds: sets binds to the folders a suite binds into its root at their own paths: the source
# and build trees, this machine's meson package (root_meson first) and the shared checks beside the
# source tree, where they are.
root_binds() {
	binds="$source_root $build_root $meson_package"
	shared=$(cd "$source_root/.." && pwd)/shared
	[ -d "$shared" ] && binds="$binds $shared"
	return 0
}
