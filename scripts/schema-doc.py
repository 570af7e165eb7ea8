#!/usr/bin/env python3
"""Rewrites the generated part of docs/hdf5-schema.md (between its two markers) with the output of
`genbench schema --markdown`, the tables the test tests/io/schema_doc_test.cpp compares.

    scripts/schema-doc.py [docs/hdf5-schema.md] [build/bin/genbench]
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
doc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "hdf5-schema.md")
binary = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "build", "bin", "genbench")
BEGIN, END = "<!-- genbench schema --markdown: begin -->\n", "<!-- genbench schema --markdown: end -->\n"
gen = subprocess.run([binary, "schema", "--markdown"], capture_output=True, text=True, check=True).stdout
s = open(doc).read()
if BEGIN not in s or END not in s:
    sys.exit(f"{doc}: the markers {BEGIN.strip()} and {END.strip()} are missing")
s = s[:s.index(BEGIN) + len(BEGIN)] + gen + s[s.index(END):]
open(doc, "w").write(s)
print(f"{doc}: generated tables rewritten from {binary} schema --markdown")
