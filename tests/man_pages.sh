#!/bin/sh
# The manual pages: each renders without a warning (groff -ww); every option of each tool's --help
# is in its page; every setting and every event (with its fields, in order) of the README's tables
# is in nvinterpose(7); the README describes the runtime's DT_NEEDED reader as its code reads.
# Exits 77, saying why, where groff is missing.
#   man_pages.sh MAN_DIR LAUNCHER [INSPECTOR]      (NVI_SOURCE_ROOT: the README)
set -u
man_dir=$1 launcher=$2 inspector=${3-}
command -v groff >/dev/null 2>&1 || { echo "SKIP: groff is not installed (Debian: groff-base)"; exit 77; }
status=0
fail() {
	echo "FAIL: $*"
	status=1
}
# The page as a reader sees it, one paragraph a line (no line breaks to hyphenate at).
render() { groff -mandoc -Tascii -P-cbou -rLL=4000n "$1" 2>/dev/null; }

for page in nvinterpose-run.1 nvinterpose-inspect.1 nvinterpose.7; do
	[ -f "$man_dir/$page" ] || { fail "$page: not built"; continue; }
	warnings=$(groff -mandoc -ww -z "$man_dir/$page" 2>&1)
	[ -z "$warnings" ] || fail "$page: groff warns: $warnings"
	[ -n "$(render "$man_dir/$page")" ] || fail "$page: renders empty"
	echo "$page: renders without a warning"
done

# Each option of --help, as a whole word of the page (--audit is not found in --audit-only).
check_options() {
	tool=$1 page=$2
	help=$("$tool" --help) || { fail "$tool --help failed"; return; }
	text=$(render "$man_dir/$page")
	options=$( { printf '%s\n' "$help" | grep -oE -- '--[a-z][a-z-]*'; printf '%s\n' "$help" | sed -n 's/^ *\(-[a-zA-Z]\),.*/\1/p'; } | sort -u)
	count=0
	for option in $options; do
		count=$((count + 1))
		printf '%s\n' "$text" | grep -qE -- "(^|[^-a-zA-Z])$option([^-a-zA-Z]|\$)" || fail "$page lacks $option (from $(basename "$tool") --help)"
	done
	[ $count -gt 3 ] || fail "$(basename "$tool") --help: only $count options found"
	echo "$page: the $count options of $(basename "$tool") --help"
}
check_options "$launcher" nvinterpose-run.1
if [ -n "$inspector" ]; then check_options "$inspector" nvinterpose-inspect.1; else echo "nvinterpose-inspect.1: not checked against --help (no inspector: built without libelf)"; fi

readme=$NVI_SOURCE_ROOT/README.md
text=$(render "$man_dir/nvinterpose.7")
settings=$(sed -n 's/^| `\(NVINTERPOSE_[A-Z_]*\)` |.*/\1/p' "$readme")
[ -n "$settings" ] || fail "README.md: no table of settings"
for setting in $settings; do
	printf '%s\n' "$text" | grep -qE "^ +$setting\$" || fail "nvinterpose.7 lacks the setting $setting"
done
events=$(sed -n '/^| event | fields | meaning |/,/^$/s/^| `\([a-z-]*\)` | \([^|]*\) |.*/\1=\2/p' "$readme" | tr -d '`' | tr ' ' '~')
[ -n "$events" ] || fail "README.md: no table of events"
for event in $events; do
	name=${event%%=*} fields=$(printf '%s' "${event#*=}" | tr '~' ' ' | sed 's/ *$//')
	# A tag shorter than the indent shares its line with the text.
	printf '%s\n' "$text" | grep -qE "^ +$name( |\$)" || fail "nvinterpose.7 lacks the event $name"
	printf '%s\n' "$text" | grep -qF "$fields:" || fail "nvinterpose.7: the event $name lacks its fields as the README gives them: $fields"
done
echo "nvinterpose.7: $(echo $settings | wc -w) settings and $(echo $events | wc -w) events of the README"

# How the runtime's reader of DT_NEEDED takes a file, as its code does it: a reader that calls no
# mmap must not be described as mapping the file (the paragraphs that name src/linux/dynamic.c).
reader=$NVI_SOURCE_ROOT/src/linux/dynamic.c
if grep -qE '(^|[^_a-z])mmap *\(' "$reader"; then
	echo "src/linux/dynamic.c maps files: the docs' account of the reader is not checked"
else
	said=$(awk '/^$|^- |^\|/{ if (p ~ /dynamic\.c/) print p; p = "" } { p = p " " $0 } END { if (p ~ /dynamic\.c/) print p }' "$readme" |
		tr -s ' ' | grep -oiE '[^;()]*\<(maps|mapped|mapping)\>[^;()]*' | grep -viE 'never mapp|not mapp|no mapp|maps none|maps nothing')
	[ -z "$said" ] || fail "README.md says the DT_NEEDED reader maps the file, which src/linux/dynamic.c never does: $said"
	echo "README.md: the reader of src/linux/dynamic.c described as its code reads files (pread, no mmap)"
fi
exit $status
