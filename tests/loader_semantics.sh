#!/bin/sh
# The shared loader-semantics check (NVI_SHARED_CHECKS/loader-semantics.sh: the same program without
# and with the runtime preloaded, every line of loader behaviour equal) over the runtime as built and
# at -O0, since the hooks must keep the caller's semantics at every optimization. With "audit", the
# runtime is given to LD_AUDIT where the check gives it to LD_PRELOAD (the audit front must leave
# every answer the loader finds itself unchanged). Exits 77, saying why, where the shared checks are
# not beside the source tree (a source tarball, for one).
#   loader_semantics.sh [audit]
set -u
script=${NVI_SHARED_CHECKS:-(NVI_SHARED_CHECKS unset)}/loader-semantics.sh
if [ ! -r "$script" ]; then
	echo "skipped: $script is not here (the shared checks live in ../shared/checks beside the source tree)"
	exit 77
fi
runtimes="$NVI_RUNTIME $NVI_RUNTIME_O0"
if [ "${1-}" = audit ]; then
	copy=$(mktemp "${TMPDIR:-/tmp}/loader-semantics-audit.XXXXXX") || exit 1
	trap 'rm -f "$copy"' EXIT
	sed -e 's/LD_PRELOAD=/LD_AUDIT=/' -e 's/under LD_PRELOAD/under LD_AUDIT/' -e "s|^here=.*|here='$(dirname "$script")'|" "$script" >"$copy"
	grep -q 'LD_AUDIT=' "$copy" || { echo "the shared check gives the runtime otherwise than as LD_PRELOAD=: it cannot be run under LD_AUDIT"; exit 1; }
	script=$copy
	runtimes=$NVI_RUNTIME
fi
status=0
for runtime in $runtimes; do
	echo "$runtime:"
	output=$(bash "$script" "$runtime" 2>&1) || status=1
	printf '%s\n' "$output"
	case $output in *"loader-behaviour lines match"*) ;; *) status=1 ;; esac
done
exit $status
