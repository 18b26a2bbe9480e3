#!/bin/sh
# The manual pages: each renders without a warning (groff -ww); every option of each tool's --help
# is in its page. (The settings and events of nvinterpose(7) are held to the code's tables by the
# documents test.) Exits 77, saying why, where groff is missing.
#   man_pages.sh MAN_DIR LAUNCHER [INSPECTOR]
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

exit $status
