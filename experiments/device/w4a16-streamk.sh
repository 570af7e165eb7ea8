#!/usr/bin/env bash
# The call of docs/lab/w4a16.md v9 (the streaming kernel's stream-K grid, with
# patches/w4a16-streamk.patch applied to the tree built as .w4/w4a16_check): w4a16-probe-ab.sh at
# m = 1 and 8 with racecheck of that patch's test of ranges across tiles.
AB_NAME=w4a16-streamk RACE_FILTER=W4a16Mma.StreamingKernelRangesAcrossTiles \
  exec "$(dirname "$0")/w4a16-probe-ab.sh" "$@"
