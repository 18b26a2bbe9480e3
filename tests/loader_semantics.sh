#!/bin/sh
# The shared loader-semantics check (NVI_SHARED_CHECKS/loader-semantics.sh: the same program without
# and with the runtime preloaded, every line of loader behaviour equal) over the runtime as built and
# at -O0, since the hooks must keep the caller's semantics at every optimization. Exits 77, saying
# why, where the shared checks are not beside the source tree.
set -u
script=${NVI_SHARED_CHECKS:-(NVI_SHARED_CHECKS unset)}/loader-semantics.sh
if [ ! -r "$script" ]; then
	echo "skipped: $script is not here (the shared checks live in ../shared/checks beside the source tree)"
	exit 77
fi
status=0
for runtime in "$NVI_RUNTIME" "$NVI_RUNTIME_O0"; do
	echo "$runtime:"
	bash "$script" "$runtime" || status=1
done
exit $status
