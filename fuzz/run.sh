#!/bin/sh
# Builds a libFuzzer target of nvinterpose's readers, seeds it and runs it.
#
#   fuzz/run.sh [-t SECONDS] [-j JOBS] [-o DIR] [TARGET]
#
#   TARGET      elf_reader (default): inspect/elf/elf_reader.c, through fuzz/fuzz_elf_reader.c
#               dynamic: the runtime's reader (src/linux/dynamic.c) against the libelf reader
#   -t SECONDS  how long to fuzz (default 60)
#   -j JOBS     fuzzing processes (libFuzzer's -fork; default 1)
#   -o DIR      work folder (default build/fuzz/TARGET): the fuzzer, seeds/ (rebuilt each run),
#               corpus/ (what the fuzzer found worth keeping; kept between runs), artifacts/ (inputs
#               that crashed, leaked, hung or allocated too much)
#
# Needs clang with libFuzzer (Debian: apt-get install clang libclang-rt-14-dev), libelf-dev and a C
# compiler ($CC, default cc). The seeds are written at run time, never committed: stand-in libraries
# compiled from tests/fixtures/value.c (a SONAME, DT_NEEDED, RPATH, RUNPATH, NODEFLIB, a load base
# above 0), this machine's libc and libelf, the seed generator itself (it has PT_INTERP) and, where
# $CUDA_HOME/lib64 exists (default /usr/local/cuda), every lib*.so.* there; each one goes through
# tests/elf_corpus.c (truncations, bit flips, lying header and dynamic fields, converted copies),
# large libraries reduced first to their headers, dynamic section and strings.
#
# The fuzzer runs under AddressSanitizer and UBSan, with -malloc_limit_mb=64 (inputs are at most
# 128 KiB: a larger allocation is a missing bound) and -timeout=10 (a hang). Reproduce a finding:
#   build/fuzz/TARGET/fuzz_TARGET build/fuzz/TARGET/artifacts/crash-...
#
# Adding a target: write fuzz/fuzz_NAME.c (LLVMFuzzerTestOneInput; fuzz_file_of gives the input as
# a path) and give it a sources_NAME and a libs_NAME line below; the seeds serve every target.
set -eu

sources_elf_reader="fuzz/fuzz_elf_reader.c fuzz/fuzz_file.c inspect/elf/elf_reader.c src/loader/dst.c"
libs_elf_reader="-lelf"
sources_dynamic="fuzz/fuzz_dynamic.c fuzz/fuzz_file.c src/linux/dynamic.c inspect/elf/elf_reader.c src/loader/dst.c"
libs_dynamic="-lelf"

usage() {
	sed -n '2,/^set -eu/p' "$0" | sed -e '/^set -eu/d' -e 's/^# \{0,1\}//'
	exit "${1:-0}"
}

die() {
	echo "fuzz/run.sh: $*" >&2
	exit 1
}

seconds=60
jobs=1
work=
while getopts t:j:o:h option; do
	case $option in
	t) seconds=$OPTARG ;;
	j) jobs=$OPTARG ;;
	o) work=$OPTARG ;;
	h) usage 0 ;;
	*) usage 2 >&2 ;;
	esac
done
shift $((OPTIND - 1))
target=${1:-elf_reader}
case $target in *[!a-z0-9_]*) die "unknown target: $target" ;; esac
eval "sources=\${sources_$target:-}"
eval "libs=\${libs_$target:-}"
[ -n "$sources" ] || die "unknown target: $target"

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=${work:-build/fuzz/$target}
mkdir -p "$work/corpus" "$work/artifacts"
work=$(cd "$work" && pwd)
clang=${CLANG:-clang}
cc=${CC:-cc}

# libFuzzer ships apart from clang on Debian.
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
	>"$work/probe.c"
"$clang" -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" 2>"$work/probe.log" ||
	die "$clang cannot link libFuzzer (see $work/probe.log); on Debian: apt-get install clang libclang-rt-14-dev"

echo "building fuzz_$target"
# shellcheck disable=SC2086 # the lists are words
"$clang" -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Iinclude -Isrc -Iinspect -Ifuzz $sources $libs -o "$work/fuzz_$target"

echo "writing seeds"
rm -rf "$work/seeds" "$work/standins"
mkdir -p "$work/seeds" "$work/standins"
value=tests/fixtures/value.c
standins=$work/standins
"$cc" -shared -fPIC -O1 -o "$standins/libplain.so.1" "$value" -Wl,-soname,libplain.so.1
"$cc" -shared -fPIC -O1 -o "$standins/libnvrtc.so.13" "$value" -Wl,-soname,libnvrtc.so.13 \
	-L"$standins" -Wl,--no-as-needed -l:libplain.so.1 -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib:/opt/x' \
	-Wl,-z,nodefaultlib
"$cc" -shared -fPIC -O1 -o "$standins/libcudnn.so.9" "$value" -Wl,-soname,libcudnn.so.9 \
	-L"$standins" -Wl,--no-as-needed -l:libplain.so.1 -Wl,--disable-new-dtags,-rpath,'${ORIGIN}:$LIB/x' \
	-Wl,-Ttext-segment=0x200000
"$cc" -O1 -Itests -o "$work/make_seeds" tests/elf_corpus.c fuzz/make_seeds.c

set -- "$standins/libplain.so.1" "$standins/libnvrtc.so.13" "$standins/libcudnn.so.9" "$work/make_seeds"
for name in libc.so.6 libelf.so.1; do
	path=$("$cc" -print-file-name=$name)
	[ -f "$path" ] && set -- "$@" "$path"
done
cuda_lib64=${CUDA_HOME:-/usr/local/cuda}/lib64
if [ -d "$cuda_lib64" ]; then
	for path in "$cuda_lib64"/lib*.so.*; do
		[ -f "$path" ] && [ ! -L "$path" ] && set -- "$@" "$path"
	done
fi
"$work/make_seeds" "$work/seeds" "$@"

echo "fuzzing fuzz_$target for $seconds s with $jobs job(s); corpus in $work/corpus"
fork=
[ "$jobs" -gt 1 ] && fork="-fork=$jobs"
# shellcheck disable=SC2086 # fork is empty or one word
"$work/fuzz_$target" $fork -max_total_time="$seconds" -max_len=131072 -timeout=10 -rss_limit_mb=2048 \
	-malloc_limit_mb=64 -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" "$work/seeds"
