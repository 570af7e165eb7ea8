#!/usr/bin/env python3
"""Rewrites the generated sections of docs/config.md with the output of `genbench list --markdown`:
each op's section between its two markers is replaced, the section of an op the doc lacks goes
above the new-ops marker, and the section of an op no longer registered is removed. The prose
around the sections is kept. tests/ops/config_doc_test.cpp fails while the doc and the registry
differ.

    scripts/config-doc.py [docs/config.md] [build/bin/genbench] [--check]

--check writes nothing and exits 1, naming the ops whose sections differ, when the doc is stale.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = [a for a in sys.argv[1:] if a != "--check"]
check = "--check" in sys.argv[1:]
doc = args[0] if len(args) > 0 else os.path.join(ROOT, "docs", "config.md")
binary = args[1] if len(args) > 1 else os.path.join(ROOT, "build", "bin", "genbench")
NEW_OPS = "<!-- genbench list --markdown: the sections of new ops go above this line -->\n"
SECTION = re.compile(r"<!-- genbench list --markdown (\w+): begin -->\n.*?<!-- genbench list --markdown \1: end -->\n",
                     re.S)


def sections(text):
    return {m.group(1): m for m in SECTION.finditer(text)}


gen = subprocess.run([binary, "list", "--markdown"], capture_output=True, text=True, check=True).stdout
generated = {op: m.group(0) for op, m in sections(gen).items()}
if not generated:
    sys.exit(f"{binary} list --markdown printed no op sections")
s = open(doc).read()
if NEW_OPS not in s:
    sys.exit(f"{doc}: the marker {NEW_OPS.strip()} is missing")
changed = []
for op, m in sorted(sections(s).items(), key=lambda kv: -kv[1].start()):  # from the end: offsets stay valid
    if op not in generated:
        s = s[:m.start()] + s[m.end():].lstrip("\n")
        changed.append(f"{op} (removed: no such op)")
    elif m.group(0) != generated[op]:
        s = s[:m.start()] + generated[op] + s[m.end():]
        changed.append(op)
have = sections(s)
for op in sorted(generated):
    if op not in have:
        at = s.index(NEW_OPS)
        s = s[:at] + generated[op] + "\n" + s[at:]
        changed.append(f"{op} (added)")
if check:
    if changed:
        print(f"{doc}: stale sections: {', '.join(sorted(changed))}; run scripts/config-doc.py {doc} {binary}")
        sys.exit(1)
    print(f"{doc}: every op's section is what {binary} list --markdown prints")
    sys.exit(0)
open(doc, "w").write(s)
print(f"{doc}: {len(changed)} section(s) rewritten from {binary} list --markdown"
      + (f": {', '.join(sorted(changed))}" if changed else ""))
