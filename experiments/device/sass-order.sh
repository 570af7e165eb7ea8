#!/usr/bin/env bash
# Prints, per fa3 kernel, the order of wgmma waits (W0/W1), wgmma issues (G), named barriers
# (B), mbarrier waits (T), max (M) and exp2 (E) in the SASS of the built objects (cuobjdump),
# runs of one letter collapsed: shows whether the softmax (M..E) sits between W1 and W0 as the
# source orders it (intra-warpgroup overlap) or after W0.
# Usage: experiments/device/sass-order.sh BUILD_DIR
set -uo pipefail
B=${1:-build-dev}
for o in $(find "$B" -name 'fa3_*sm90.cu.o'); do
  cuobjdump -sass "$o" | awk '
    /Function :/ { if (seq != "") print name ": " seq; name = substr($3, length($3) - 60, 40); seq = ""; last = ""; next }
    { op = "" }
    /DEPBAR.LE gsb0, 0x0/ { op = "W0" } /DEPBAR.LE gsb0, 0x1/ { op = "W1" }
    /[HQ]GMMA/ { op = "G" } /BAR.SYNC|BAR.ARV/ { op = "B" } /TRYWAIT/ { op = "T" }
    /FMNMX/ { op = "M" } /MUFU.EX2/ { op = "E" }
    op != "" && op != last { seq = seq op " "; last = op }
    END { print name ": " seq }' | cut -c1-400
done
