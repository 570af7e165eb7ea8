#!/usr/bin/env bash
# The call of docs/lab/w4a16.md v10 (the streaming kernel's two splits as a cluster):
# w4a16-probe-ab.sh with torch's int4 kernel and racecheck of the cluster test; the v10 calls
# set MS="1 4 8" and VARIANTS (dflt, pad, both) for b-policy/.
AB_NAME=w4a16-cluster TORCH=1 RACE_FILTER=W4a16Mma.StreamingSplitsInAClusterOrTheWorkspace \
  exec "$(dirname "$0")/w4a16-probe-ab.sh" "$@"
