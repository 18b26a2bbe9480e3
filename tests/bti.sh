#!/bin/sh
# BTI on aarch64: the stub's GNU property note, and the stub under enforced BTI (bti_probe.c, the
# program given as the argument). Under
# qemu-user the probe runs with -cpu max, which has BTI. Exits 77, saying why, where BTI is not
# enforced.
set -u
status=0
note=$(mktemp -d) || exit 1
trap 'rm -rf "$note"' EXIT
"$NVI_CC" -mbranch-protection=standard -c "$NVI_SOURCE_ROOT/src/linux/passthru.S" -o "$note/passthru.o" || exit 1
if readelf -n "$note/passthru.o" | grep -q 'AArch64 feature: BTI, PAC'; then
	echo "passthru.S built with -mbranch-protection=standard says: BTI, PAC"
else
	echo "passthru.S built with -mbranch-protection=standard has no BTI, PAC property note:"
	readelf -n "$note/passthru.o"
	status=1
fi
wrapper=''
if [ -n "${NVI_QEMU_USER:-}" ]; then
	command -v qemu-aarch64-static >/dev/null 2>&1 || { echo "skipped: qemu-aarch64-static is not in the root"; exit 77; }
	wrapper='qemu-aarch64-static -cpu max'
fi
# shellcheck disable=SC2086
$wrapper "$1"
probe=$?
[ $probe = 77 ] && [ $status = 0 ] && exit 77
[ $probe = 0 ] || status=1
exit $status
