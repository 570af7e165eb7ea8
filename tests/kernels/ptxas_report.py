#!/usr/bin/env python3
"""Checks ptxas's resource report of the Hopper kernels without a GPU.

  ptxas_report.py COMPILE_COMMANDS.json SOURCE_REGEX...

Recompiles every translation unit of the build (compile_commands.json) whose source path matches
one of the regular expressions, with the build's own command plus `-Xptxas -v` (the object goes
to a temporary folder), and fails when ptxas reports, for any function:
  - a performance-loss diagnostic (C75xx: wgmma serialized for lack of registers, setmaxnreg
    ignored, ...), which -Werror does not catch because ptxas prints them as info lines; a
    serialized wgmma pipeline made the fp8 kernel 20-27% slower once (docs/lab/fa3-v07-v09.md, fa3 v9);
  - spill stores or loads, or a stack frame.
Prints one line per checked function and exits 1 on any finding, 2 on usage errors.
"""
import json
import re
import shlex
import subprocess
import sys
import tempfile

LOSS = re.compile(r"\(C75\d\d\)|Potential Performance Loss")
ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


def recompile(entry, tmp):
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        out.append(a)
    out += ["-o", f"{tmp}/check.o", "-Xptxas", "-v"]
    r = subprocess.run(out, cwd=entry["directory"], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def check(log):
    """(findings, functions checked) of one ptxas report."""
    findings, checked = [], 0
    current = None
    for line in log.splitlines():
        m = ENTRY.search(line)
        if m:
            current = f"{m.group(1)} ({m.group(2)})"
            continue
        if LOSS.search(line):
            findings.append(line.strip())
        m = PROPS.search(line)
        if m and current:
            checked += 1
            stack, st, ld = map(int, m.groups())
            if stack or st or ld:
                findings.append(f"{current}: {stack} bytes stack frame, {st} bytes spill stores, {ld} bytes spill loads")
            current = None
    return findings, checked


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1]) as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        print(f"ptxas_report: cannot read {sys.argv[1]}: {e}", file=sys.stderr)
        return 2
    patterns = [re.compile(p) for p in sys.argv[2:]]
    chosen = [e for e in entries if any(p.search(e["file"]) for p in patterns)]
    if not chosen:
        print(f"ptxas_report: no translation unit of {sys.argv[1]} matches {sys.argv[2:]}", file=sys.stderr)
        return 2
    bad = False
    with tempfile.TemporaryDirectory() as tmp:
        for e in chosen:
            rc, log = recompile(e, tmp)
            if rc != 0:
                print(f"FAIL {e['file']}: the compiler exited with {rc}\n{log[-2000:]}")
                bad = True
                continue
            findings, checked = check(log)
            if checked == 0:
                print(f"FAIL {e['file']}: no ptxas report (no device code compiled?)")
                bad = True
            for x in findings:
                print(f"FAIL {e['file']}: {x}")
            bad = bad or bool(findings)
            if not findings and checked:
                print(f"ok   {e['file']}: {checked} functions, no spills, no stack frame, no performance-loss report")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
