#!/bin/sh
# Builds a libFuzzer target of nvinterpose's parsers, seeds it and runs it.
#
#   fuzz/run.sh [-t SECONDS] [-n RUNS] [-j JOBS] [-o DIR] [TARGET | all]
#   fuzz/run.sh -l
#
#   TARGET      elf_reader (default): the libelf reader, inspect/elf/elf_reader.c
#               dynamic: the runtime's reader of files (src/linux/dynamic_file.c) against the libelf reader
#               config: the settings and NVINTERPOSE_PATH (src/config.c, config_read)
#               libnames: the name matcher, Linux and Windows names (src/libnames.c)
#               dst: $ORIGIN, $LIB, $PLATFORM expansion (src/loader/dst.c)
#               machine: the loader's machine facts from its output (src/loader/machine.c)
#               wheel_root: the wheel-root rule, Linux and Windows (search_wheel_root, src/search.c)
#               log: the JSON and terminal escapers and the event writer (src/log.c)
#               ld_cache: the ld.so.cache reader (src/loader/ld_cache.c)
#               loader_host: the inspector's reading of the loader's output (inspect/loader_host.c)
#               proc: the inspector's parsers of /proc/PID/maps, environ, status (inspect/what_if.c)
#               pe_file: the Windows candidate check (src/windows/pe_file.c)
#               import_table: the Windows import-table walker (src/windows/import_table.c)
#               utf16: the Windows UTF-8/UTF-16 conversions' bounds (src/windows/utf16.c)
#               all: each of them in turn, SECONDS each
#   -t SECONDS  how long to fuzz (default 60)
#   -n RUNS     stop after this many inputs, if that comes first (default: no limit)
#   -j JOBS     fuzzing processes (libFuzzer's -fork; default 1)
#   -o DIR      work folder (default build/fuzz/TARGET): the fuzzer, seeds/ (rebuilt each run),
#               corpus/ (what the fuzzer found worth keeping; kept between runs), artifacts/ (inputs
#               that crashed, leaked, hung or allocated too much)
#   -l          lists the targets
#
# Needs clang with libFuzzer (Debian: apt-get install clang libclang-rt-14-dev), libelf-dev and a C
# compiler ($CC, default cc). The seeds are written at run time, never committed, each target's
# from this machine: the ELF readers' from stand-in libraries compiled from tests/fixtures/value.c
# (a SONAME, DT_NEEDED, RPATH, RUNPATH, NODEFLIB, a load base above 0), this machine's libc and
# libelf, the seed generator itself (it has PT_INTERP) and, where $CUDA_HOME/lib64 exists (default
# /usr/local/cuda), every lib*.so.* there, each through tests/elf_corpus.c (truncations, bit flips,
# lying header and dynamic fields, converted copies; large libraries reduced first to their
# headers, dynamic section and strings); the text parsers' from settings, names, search lists and
# the loader's own output for its probe; ld_cache's from /etc/ld.so.cache; proc's from this
# process's /proc files (a made-up environment: a real one may hold secrets); the Windows ones from
# Wine's PE DLLs and the cross-built runtime, as files and as mapped images (fuzz/make_pe_seeds.c).
#
# The fuzzer runs under AddressSanitizer and UBSan, with -malloc_limit_mb=64 (inputs are at most
# 128 KiB: a larger allocation is a missing bound) and -timeout=10 (a hang). Reproduce a finding:
#   build/fuzz/TARGET/fuzz_TARGET build/fuzz/TARGET/artifacts/crash-...
# The Windows targets compile src/windows' parsers for Linux against fuzz/windows/windows.h (the
# PE structures with Windows' own layouts, -fshort-wchar) and fuzz/windows/shim.c; what needs
# Windows itself (Win32's converters, page protection, a real loader) is the windows suite's.
#
# Adding a target: write fuzz/fuzz_NAME.c (LLVMFuzzerTestOneInput; fuzz_file_of gives the input as
# a path, fuzz_parts_of as strings) and give it sources_NAME, libs_NAME (and flags_NAME) and
# seeds_NAME (one of the write_*_seeds functions below) lines, and a name in targets.
set -eu

targets="elf_reader dynamic config libnames dst machine wheel_root log ld_cache loader_host proc pe_file import_table utf16"
text="fuzz/fuzz_text.c"
quiet="fuzz/quiet_log.c"
loader="src/loader/dst.c src/loader/machine.c src/loader/search_order.c"
sources_elf_reader="fuzz/fuzz_elf_reader.c fuzz/fuzz_file.c inspect/elf/elf_reader.c src/loader/dst.c"
libs_elf_reader="-lelf"
seeds_elf_reader=write_elf_seeds
sources_dynamic="fuzz/fuzz_dynamic.c fuzz/fuzz_file.c src/linux/dynamic.c src/linux/dynamic_file.c inspect/elf/elf_reader.c src/loader/dst.c"
libs_dynamic="-lelf"
seeds_dynamic=write_elf_seeds
sources_config="fuzz/fuzz_config.c $text $quiet src/config.c src/linux/platform.c"
seeds_config=write_config_seeds
sources_libnames="fuzz/fuzz_libnames.c $text src/libnames.c src/linux/platform.c"
seeds_libnames=write_name_seeds
sources_dst="fuzz/fuzz_dst.c $text src/loader/dst.c"
seeds_dst=write_search_list_seeds
sources_machine="fuzz/fuzz_machine.c $text src/loader/machine.c"
seeds_machine=write_loader_output_seeds
# search.c twice (the Linux and the Windows rule), with what it links to.
rooms="src/search.c src/trust.c src/registry.c src/config.c src/libnames.c src/linux/platform.c $loader"
sources_wheel_root="fuzz/fuzz_wheel_root.c fuzz/search_windows.c $text $quiet $rooms"
seeds_wheel_root=write_wheel_seeds
sources_log="fuzz/fuzz_log.c $text src/log.c src/linux/platform.c"
seeds_log=write_event_seeds
sources_ld_cache="fuzz/fuzz_ld_cache.c fuzz/fuzz_file.c src/loader/ld_cache.c"
seeds_ld_cache=write_ld_cache_seeds
sources_loader_host="fuzz/fuzz_loader_host.c $text inspect/loader_host.c inspect/elf/elf_reader.c src/loader/dst.c src/loader/machine.c"
libs_loader_host="-lelf"
seeds_loader_host=write_loader_output_seeds
sources_proc="fuzz/fuzz_proc.c $text $quiet inspect/what_if.c inspect/file_probe.c inspect/carried_names.c inspect/family_files.c src/loader/ld_cache.c inspect/elf_names.c inspect/string_map.c inspect/loader_host.c inspect/elf/elf_reader.c $rooms"
libs_proc="-lelf"
seeds_proc=write_proc_seeds
windows="-D_WIN64 -Isrc/windows -Ifuzz/windows -fshort-wchar"
sources_pe_file="fuzz/fuzz_pe_file.c fuzz/windows/shim.c $text src/windows/pe_file.c"
flags_pe_file=$windows
seeds_pe_file=write_pe_file_seeds
sources_import_table="fuzz/fuzz_import_table.c fuzz/windows/shim.c $text $quiet src/windows/import_table.c src/windows/utf16.c"
flags_import_table=$windows
seeds_import_table=write_pe_image_seeds
sources_utf16="fuzz/fuzz_utf16.c fuzz/windows/shim.c $text src/windows/utf16.c"
flags_utf16=$windows
seeds_utf16=write_name_seeds

usage() {
	sed -n '2,/^set -eu/p' "$0" | sed -e '/^set -eu/d' -e 's/^# \{0,1\}//'
	exit "${1:-0}"
}

die() {
	echo "fuzz/run.sh: $*" >&2
	exit 1
}

# ---- seeds: each writer fills $1 ------------------------------------------------------------

write_elf_seeds() {
	seeds=$1
	standins=$work/standins
	rm -rf "$standins"
	mkdir -p "$standins"
	value=tests/fixtures/value.c
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
	"$work/make_seeds" "$seeds" "$@"
}

# printf's format in $2 (with \0 for the NUL bytes that cut an input into parts) into file $1.
seed() {
	printf "$2" >"$1"
}

write_config_seeds() {
	seed "$1/plain" '\000NVINTERPOSE_POLICY=coherent\000NVINTERPOSE_LOG=debug\000NVINTERPOSE_PATH=/usr/lib:/tmp\000NVINTERPOSE_LOG_FILE=/tmp/events'
	seed "$1/secure" '\001NVINTERPOSE_POLICY=off\000NVINTERPOSE_PATH=/\000NVINTERPOSE_DISABLE=1'
	seed "$1/bad" '\000NVINTERPOSE_POLICY=sometimes\000NVINTERPOSE_LOG=loud\000NVINTERPOSE_PATH=::relative:/nonexistent:/usr/lib/:\000NVINTERPOSE_CHILDREN=2\000NVINTERPOSE_ADD_DLL_DIRECTORY=0'
	long=$(printf '/usr%.0s' $(seq 1 1100))
	seed "$1/long" "\\000NVINTERPOSE_PATH=$long:/tmp\\000NVINTERPOSE_LOG_FILE=$long"
	many=$(printf '/tmp:%.0s' $(seq 1 40))
	seed "$1/many" "\\000NVINTERPOSE_PATH=$many"
}

write_name_seeds() {
	n=0
	for folder in "${CUDA_HOME:-/usr/local/cuda}/lib64" /lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu; do
		[ -d "$folder" ] || continue
		for path in "$folder"/lib*; do
			n=$((n + 1))
			[ $n -le 400 ] && printf 'A%s' "${path##*/}" >"$1/name-$n"
		done
	done
	for name in libnvrtc-builtins.so.13.0 libnvrtc-builtins.alt.so.13.0 libnvrtc-builtins-2dc4bf68.so.11.8 libnvrtc.so.13 \
		libcuda.so.1 libnvidia-ml.so.1 nvrtc64_130_0.dll nvrtc-builtins64_130.dll cublas64_13.dll cublasLt64_13.dll \
		cudnn64_9.dll nvcuda.dll nvml.dll NVRTC64_130_0.DLL 'C:\Windows\nvcuda.dll' libnvrtc-fake.so libnvrtc.so.13.bak; do
		n=$((n + 1))
		printf 'A%s' "$name" >"$1/name-$n"
	done
	# A UTF-16 name for the utf16 target (the first byte sizes its buffers): "nvcuda.dll".
	printf '\100n\000v\000c\000u\000d\000a\000.\000d\000l\000l\000' >"$1/utf16-name"
	printf '\010h\303\251llo \360\237\230\200' >"$1/utf8-name"
}

write_search_list_seeds() {
	seed "$1/tokens" '$ORIGIN/../lib:${ORIGIN}/x:$LIB/a:${LIB}:$PLATFORM/b:${PLATFORM}\000/opt/app/lib\000lib/x86_64-linux-gnu\000haswell'
	seed "$1/literal" '$ORIGINX:$ORIG:${ORIGIN:$:$$:${}:x$:\000/o\000lib64\000x86_64'
	seed "$1/empty" '::$ORIGIN::\000\000\000'
	seed "$1/no-values" '$LIB:$PLATFORM:$ORIGIN'
}

write_loader_output_seeds() {
	probe='/proc/nvinterpose-probe-P/$PLATFORM/nvinterpose-probe-L/$LIB/nvinterpose-probe-E'
	interp=$(readelf -lW /bin/true 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	if [ -n "$interp" ] && [ -x "$interp" ]; then
		LD_LIBRARY_PATH=$probe LD_DEBUG=libs "$interp" --list /bin/true 2>"$1/loader-output" >/dev/null || true
		# The loader-host target's list and origin after the output.
		{ cat "$1/loader-output"; printf '\000$ORIGIN/../lib:$LIB:/usr/lib/:;/a\000/opt/app'; } >"$1/loader-output-and-list"
	fi
	seed "$1/element" '/proc/nvinterpose-probe-P/haswell/nvinterpose-probe-L/lib/x86_64-linux-gnu/nvinterpose-probe-E'
	seed "$1/made-up" '      search path=/proc/nvinterpose-probe-P/x/nvinterpose-probe-L/lib/nvinterpose-probe-E/glibc-hwcaps/x86-64-v3:/proc/nvinterpose-probe-P/x/nvinterpose-probe-L/lib/nvinterpose-probe-E\t\t(LD_LIBRARY_PATH)\n'
}

write_wheel_seeds() {
	seed "$1/linux" '\100/venv/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib'
	seed "$1/linux-slashes" '\040/site-packages/nvidia/cusparse/lib///'
	seed "$1/windows" '\100C:\\venv\\Lib\\site-packages\\nvidia\\cuda_nvrtc\\bin'
	seed "$1/short" '\010/nvidia/x/lib'
	seed "$1/empty-package" '\100/a/nvidia//lib'
}

write_event_seeds() {
	# The escaper's buffer size, the kind of event (an index into the writer's table), then the
	# text fields (name, path, folder, caller, family, policy, reason, own) and "looked" pairs.
	seed "$1/register" '\100\000libnvrtc.so.13\000/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.13\000/site-packages/nvidia/cuda_nvrtc/lib\000/usr/bin/python3\000nvrtc\000fallback\000seen loaded\000'
	seed "$1/miss" '\100\007libnvrtc-builtins.so.13.0\000\000\000/x/libnvrtc.so.13\000nvrtc-builtins\000fallback\000not found\000\000/a\000rpath\000/b\000registered_origin'
	seed "$1/quotes" '\010\001"quoted"\000back\\slash\000tab\there\000\001\037\177\000policy\000reason'
	seed "$1/utf8" '\377\002h\303\251llo\000\360\237\230\200/lib\000\342\202\254'
	seed "$1/invalid" '\377\003\377\376\000\300\200\000\355\240\200\000\342\202'
	long=$(printf 'abcdefgh%.0s' $(seq 1 1200))
	seed "$1/long" "\\377\\000$long\\000$long\\000$long"
}

write_ld_cache_seeds() {
	if [ -f /etc/ld.so.cache ]; then
		cp /etc/ld.so.cache "$1/ld.so.cache"
		size=$(wc -c </etc/ld.so.cache)
		for cut in 16 48 100 1000 $((size / 2)); do
			[ "$cut" -lt "$size" ] && head -c "$cut" /etc/ld.so.cache >"$1/cut-$cut"
		done
	fi
	seed "$1/old-only" 'ld.so-1.7.0\000\000\000\000\000\000\000\000\000'
}

write_proc_seeds() {
	{ printf '\000'; cat /proc/self/maps; } >"$1/maps"
	{ printf '\000'; printf '7f00-7f01 r-xp 0 08:01 12 /x/lib (deleted)\n7f01-7f02 r-xp 0 08:01 12 /x/lib\n7f02 [heap]\n'; } >"$1/maps-made-up"
	printf '\001HOME=/root\000LD_LIBRARY_PATH=/usr/local/cuda/lib64:/opt\000NVINTERPOSE_PATH=/site-packages/nvidia/cublas/lib\000' >"$1/environ"
	printf '\001NVINTERPOSE_PATH' >"$1/environ-cut"
	{ printf '\002'; cat /proc/self/status; } >"$1/status"
	printf '\002Uid:\t1000\t1001\t1000\t1000\nGid:\t100\t101\t100\t100\nGroups:\t4 24 27 1000 \n' >"$1/status-made-up"
}

# DLLs to read: Wine's PE ones and the cross-built runtime, where they are.
pe_dlls() {
	for folder in /usr/lib/x86_64-linux-gnu/wine/x86_64-windows /usr/lib/wine/x86_64-windows build/build-windows; do
		[ -d "$folder" ] && find "$folder" -maxdepth 1 -name '*.dll' -size -129k 2>/dev/null | sort | head -150
	done
}

write_pe_seeds() {
	"$cc" -O1 -o "$work/make_pe_seeds" fuzz/make_pe_seeds.c
	mkdir -p "$work/pe-files" "$work/pe-images"
	# shellcheck disable=SC2046 # one DLL a word (their names hold no spaces)
	"$work/make_pe_seeds" "$work/pe-files" "$work/pe-images" $(pe_dlls) || true
	printf 'MZ' >"$1/mz"
}

write_pe_file_seeds() {
	write_pe_seeds "$1"
	cp "$work"/pe-files/* "$1/" 2>/dev/null || true
}

write_pe_image_seeds() {
	write_pe_seeds "$1"
	cp "$work"/pe-images/* "$1/" 2>/dev/null || true
}

# ---- building and running one target ---------------------------------------------------------

run_target() {
	target=$1
	case $target in *[!a-z0-9_]*) die "unknown target: $target" ;; esac
	eval "sources=\${sources_$target:-}"
	eval "libs=\${libs_$target:-}"
	eval "flags=\${flags_$target:-}"
	eval "writer=\${seeds_$target:-}"
	[ -n "$sources" ] || die "unknown target: $target"
	work=${work_option:-build/fuzz/$target}
	mkdir -p "$work/corpus" "$work/artifacts"
	work=$(cd "$work" && pwd)

	echo "building fuzz_$target"
	# shellcheck disable=SC2086 # the lists are words
	"$clang" -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		$flags -Iinclude -Isrc -Iinspect -Ifuzz $sources $libs -o "$work/fuzz_$target"

	echo "writing seeds"
	rm -rf "$work/seeds"
	mkdir -p "$work/seeds"
	"$writer" "$work/seeds"

	echo "fuzzing fuzz_$target for $seconds s${runs:+ or $runs inputs} with $jobs job(s); corpus in $work/corpus"
	fork=
	[ "$jobs" -gt 1 ] && fork="-fork=$jobs"
	# shellcheck disable=SC2086 # fork and the run limit are empty or one word
	"$work/fuzz_$target" $fork ${runs:+-runs=$runs} -max_total_time="$seconds" -max_len=131072 -timeout=10 \
		-rss_limit_mb=2048 -malloc_limit_mb=64 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
		"$work/corpus" "$work/seeds"
}

seconds=60
runs=
jobs=1
work_option=
case ${1-} in --help) usage 0 ;; --list) set -- -l ;; esac
while getopts t:n:j:o:lh option; do
	case $option in
	t) seconds=$OPTARG ;;
	n) runs=$OPTARG ;;
	j) jobs=$OPTARG ;;
	o) work_option=$OPTARG ;;
	l) echo "$targets"; exit 0 ;;
	h) usage 0 ;;
	*) usage 2 >&2 ;;
	esac
done
shift $((OPTIND - 1))
target=${1:-elf_reader}

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
clang=${CLANG:-clang}
cc=${CC:-cc}

# libFuzzer ships apart from clang on Debian.
mkdir -p build/fuzz
probe_dir=$(mktemp -d build/fuzz/probe.XXXXXX)
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
	>"$probe_dir/probe.c"
"$clang" -fsanitize=fuzzer "$probe_dir/probe.c" -o "$probe_dir/probe" 2>"$probe_dir/probe.log" ||
	die "$clang cannot link libFuzzer (see $probe_dir/probe.log); on Debian: apt-get install clang libclang-rt-14-dev"
rm -rf "$probe_dir"

if [ "$target" = all ]; then
	[ -z "$work_option" ] || die "-o names one target's folder: give a target with it"
	failed=
	for name in $targets; do
		run_target "$name" || failed="$failed $name"
	done
	[ -z "$failed" ] || die "findings or failures in:$failed"
else
	run_target "$target"
fi
