#!/usr/bin/env python3
"""Compares the machine code of the attention kernels against a base commit, without a GPU.

  scripts/sass-diff.py BASE [--build DIR] [--tu REGEX]... [--cache DIR] [--show N] [--disasm MODE]

BASE is a commit (hash, tag, HEAD~1 ...). The script checks BASE out in a temporary git
worktree (removed at the end), compiles there and in the working tree every translation unit of
the build folder's compile_commands.json whose path matches a --tu expression (default: the fa3
and fa2 kernels), each with the build's own nvcc command plus `--keep` (the per-architecture
cubins that go into the object) and `-Xptxas -v` (registers and spills), and compares, for
every kernel of every architecture:

  - the machine code. With a disassembler (cuobjdump or nvdisasm from the CUDA toolkit, looked
    for on PATH and in CUDA_HOME/bin): the SASS of each kernel, instruction by instruction, with
    register numbers, addresses, branch targets and encodings normalised away, diffed line by
    line. Without one (--disasm bytes, or none found): the kernel's .text section of the cubin,
    the encoded instructions themselves, 16 bytes per instruction; equal bytes are equal SASS
    (a stricter test: a renamed register counts as a change), and a difference is reported as
    the instruction indices that changed (difflib over the 16-byte words);
  - the kernel's attributes (.nv.info: registers, barriers, parameter layout, the offsets of
    EXIT and other listed instructions) and ptxas's report: registers, spill stores and loads,
    stack frame.

Kernel and function names are matched after the hashes of nvcc's module id are normalised (in
anonymous-namespace names and in those of internal __noinline__ functions; they depend on the
source path and contents). The base's results are kept under --cache DIR/<commit> when given (the base does
not change between runs). Compiles run under `nice -n 10`, one at a time.

Exit status: 0 when every kernel is identical, 1 when any differs or exists on one side only,
2 on usage or build errors.
"""
import argparse
import difflib
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile

DEFAULT_TUS = [r"kernels/attention/fa3_sm90/[^/]*\.cu$", r"kernels/attention/fa2_sm80/[^/]*\.cu$"]
# nvcc's module id of a translation unit, _<hash of the path>_<n>_<file name: n characters>_<hash
# of the contents, or a symbol name>, inside the names of its anonymous namespace
# (_GLOBAL__N_<id>) and of its internal-linkage functions (_INTERNAL<id>: static or
# anonymous-namespace __noinline__ device functions, which keep their own .text section).
MODULE_ID = re.compile(r"(_GLOBAL__N_|_INTERNAL)_[0-9a-f]{8}_(\d+)_")
HEX8 = re.compile(r"[0-9a-f]{8}")
ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
REGS = re.compile(r"Used (\d+) registers")
FUNC_PROPS = re.compile(r"Function properties for (\S+)")


def norm_name(name):
    """`name` with the hashes of every module id replaced by H: the same function compiled from
    another path or another version of its file gets the same name. The file name stays (its
    length prefix fixes where it ends), and so does a symbol-name tail, which names the same
    symbol on both sides."""
    out, pos = [], 0
    while True:
        m = MODULE_ID.search(name, pos)
        if not m:
            break
        end = m.end() + int(m.group(2))  # past the file name
        out.append(name[pos:m.start()] + m.group(1) + "_H_" + m.group(2) + "_" + name[m.end():end])
        if name.startswith("_", end) and HEX8.fullmatch(name, end + 1, end + 9):
            out.append("_H")
            end += 9
        pos = end
    out.append(name[pos:])
    return "".join(out)


def die(msg):
    print(f"sass-diff: {msg}", file=sys.stderr)
    sys.exit(2)


def git(repo, *args):
    r = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True)
    if r.returncode != 0:
        die(f"git {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout.strip()


# ---------------------------------------------------------------------------- building

def compile_tu(entry, src_root, tree, outdir):
    """Compiles one compile_commands entry in `tree` (the repository root the entry's paths are
    rewritten to); returns the ptxas log. Cubins land in outdir/keep."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    build_dir = os.path.realpath(entry["directory"])
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        # Paths into the source tree move to `tree`; paths into the build folder (generated
        # headers) stay.
        if tree != src_root and src_root in a and build_dir not in a:
            a = a.replace(src_root, tree)
        out.append(a)
    keep = os.path.join(outdir, "keep")
    os.makedirs(keep, exist_ok=True)
    out += ["-o", os.path.join(outdir, "tu.o"), "--keep", "--keep-dir", keep, "-Xptxas", "-v"]
    r = subprocess.run(["nice", "-n", "10", *out], cwd=entry["directory"], capture_output=True, text=True)
    log = r.stdout + r.stderr
    if r.returncode != 0:
        die(f"compiling {entry['file']} in {tree} failed ({r.returncode}):\n{log[-3000:]}")
    # Keep only the cubins and the PTX (the rest of --keep is large).
    for f in os.listdir(keep):
        if not f.endswith((".cubin", ".ptx")):
            os.remove(os.path.join(keep, f))
    with open(os.path.join(outdir, "ptxas.log"), "w") as f:
        f.write(log)
    return log


def ptxas_report(log):
    """{(arch, name): {regs, stack, spill_st, spill_ld}} from a -Xptxas -v log. A function the
    entry calls (__noinline__) has its own "Function properties" (stack and spills, kept under its
    own name); the registers line is the entry's."""
    res, entry, cur = {}, None, None
    for line in log.splitlines():
        m = ENTRY.search(line)
        if m:
            entry = cur = (m.group(2), norm_name(m.group(1)))
            res[cur] = {}
            continue
        if entry is None:
            continue
        m = FUNC_PROPS.search(line)
        if m:
            cur = (entry[0], norm_name(m.group(1)))
            res.setdefault(cur, {})
            continue
        m = PROPS.search(line)
        if m:
            res[cur].update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
        m = REGS.search(line)
        if m:
            res[entry]["regs"] = int(m.group(1))
    return res


# ---------------------------------------------------------------------------- cubins

def elf_sections(path):
    """{section name: (bytes, sh_info)} of an ELF64 little-endian file (a cubin)."""
    with open(path, "rb") as f:
        d = f.read()
    if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
        die(f"{path}: not a 64-bit little-endian ELF file")
    shoff = struct.unpack_from("<Q", d, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
    heads = []
    for i in range(shnum):
        name, typ, _flags, _addr, off, size, _link, info = struct.unpack_from("<IIQQQQII", d, shoff + i * shentsize)
        heads.append((name, typ, off, size, info))
    stro, strs = heads[shstrndx][2], heads[shstrndx][3]
    strtab = d[stro:stro + strs]
    out = {}
    for name, typ, off, size, info in heads:
        n = strtab[name:strtab.index(b"\0", name)].decode()
        out[n] = (d[off:off + size] if typ != 8 else b"", info)  # SHT_NOBITS has no bytes
    return out


def cubin_kernels(path):
    """{kernel: {'text': bytes, 'info': bytes, 'regs': int}} of one cubin."""
    secs = elf_sections(path)
    ks = {}
    for n, (data, info) in secs.items():
        if n.startswith(".text."):
            k = n[len(".text."):]
            ks[norm_name(k)] = {"text": data, "info": secs.get(".nv.info." + k, (b"", 0))[0], "regs": info >> 24,
                                "raw": k}
    return ks


def find_disasm(mode):
    if mode == "bytes":
        return None
    cands = []
    for tool in (["cuobjdump"] if mode in ("auto", "cuobjdump") else []) + (
            ["nvdisasm"] if mode in ("auto", "nvdisasm") else []):
        cands.append(shutil.which(tool))
        for base in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
            if base:
                cands.append(os.path.join(base, "bin", tool))
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    if mode != "auto":
        die(f"no {mode} found (PATH, CUDA_HOME/bin, /usr/local/cuda/bin)")
    return None


FUNC = re.compile(r"^\s*(?:Function : |\.text\.)(\S+?):?\s*$")
INSN = re.compile(r"/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;")
ENC = re.compile(r"/\* 0x[0-9a-f]{16} \*/")


def normalise_insn(s):
    s = re.sub(r"\bUR\d+\b", "UR", s)
    s = re.sub(r"\bR\d+\b", "R", s)
    s = re.sub(r"\bUP\d\b", "UP", s)
    s = re.sub(r"\bP\d\b", "P", s)
    s = re.sub(r"\bB\d+\b", "B", s)  # convergence barrier registers
    s = re.sub(r"\b0x[0-9a-f]+\b", "ADDR", s)  # branch targets, immediates that are addresses
    s = re.sub(r"`\(\.L_x_\d+\)", "LABEL", s)
    return re.sub(r"\s+", " ", s).strip()


def disassemble(tool, cubin):
    """{kernel: [normalised instruction]} of one cubin, by cuobjdump -sass or nvdisasm."""
    cmd = [tool, "-sass", cubin] if os.path.basename(tool).startswith("cuobjdump") else [tool, "-c", cubin]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return parse_sass(r.stdout)


def parse_sass(text):
    out, cur = {}, None
    for line in text.splitlines():
        m = FUNC.match(line)
        if m:
            cur = norm_name(m.group(1))
            out[cur] = []
            continue
        if cur is None:
            continue
        m = INSN.search(ENC.sub("", line))
        if m:
            out[cur].append(normalise_insn(m.group(1)))
    return out


PTX_ENTRY = re.compile(r"^(?:\.visible\s+|\.weak\s+)?\.entry\s+(\S+?)\(")


def ptx_kernels(path, keep_registers=False):
    """{kernel: [normalised PTX line]} of one .ptx file: .loc/.file lines and comments dropped,
    virtual register numbers and labels normalised (for locating a change; ptxas turns equal
    PTX into equal SASS)."""
    out, cur = {}, None
    with open(path) as f:
        for line in f:
            m = PTX_ENTRY.match(line)
            if m:
                cur = norm_name(m.group(1))
                out[cur] = []
            if cur is None:
                continue
            # The next module-level definition ends the entry (inline asm braces make "}" no end
            # marker); those start in column 0, while the entry's own declarations (a __shared__
            # variable of the kernel: ".shared" after "// demoted variable") are indented.
            if line.startswith((".visible .func", ".func", ".global", ".shared", ".const", ".extern", ".section",
                                ".weak .func")):
                cur = None
                continue
            line = line.split("//")[0].strip()
            if not line or line.startswith((".loc", ".file")):
                continue
            if not keep_registers:
                line = re.sub(r"%(r|rd|f|fd|p|rs|h|hh|b)\d+", r"%\1", line)
                line = re.sub(r"\$L__\w+", "$L", line)
            out[cur].append(norm_name(line))
    return out


# ---------------------------------------------------------------------------- comparing

def build_tree(entries, src_root, tree, workdir):
    """{tu: {'ptxas': report, 'cubins': {arch: path}}} for one source tree."""
    res = {}
    for e in entries:
        rel = os.path.relpath(os.path.realpath(e["file"]), src_root)
        outdir = os.path.join(workdir, rel.replace("/", "_"))
        if os.path.exists(os.path.join(outdir, "ptxas.log")):
            with open(os.path.join(outdir, "ptxas.log")) as f:
                log = f.read()
        else:
            print(f"  compiling {rel}", file=sys.stderr, flush=True)
            shutil.rmtree(outdir, ignore_errors=True)
            log = compile_tu(e, src_root, tree, outdir)
        cubins, ptx = kept_files(os.path.join(outdir, "keep"))
        res[rel] = {"ptxas": ptxas_report(log), "cubins": cubins, "ptx": ptx}
    return res


def kept_files(keep):
    """({arch: cubin}, {arch: ptx}) of an nvcc --keep folder. With one virtual architecture nvcc
    names them <tu>.<sm>.cubin and <tu>.ptx, with several <tu>.compute_XX.<sm>.cubin and
    <tu>.compute_XX.ptx; a plain <tu>.ptx is the PTX every cubin there was made from."""
    cubins, ptx, plain = {}, {}, []
    for f in sorted(os.listdir(keep)):
        path = os.path.join(keep, f)
        m = re.search(r"\.(sm_\w+)\.cubin$", f)
        if m:
            cubins[m.group(1)] = path
        m = re.search(r"\.compute_(\w+)\.ptx$", f)
        if m:
            ptx["sm_" + m.group(1)] = path
        elif f.endswith(".ptx"):
            plain.append(path)
    if plain:
        if len(plain) > 1 or ptx:
            die(f"{keep}: cannot tell which architectures' PTX {', '.join(map(os.path.basename, plain))} is")
        ptx = {arch: plain[0] for arch in cubins}
    return cubins, ptx


def word_diff(a, b):
    wa = [a[i:i + 16] for i in range(0, len(a), 16)]
    wb = [b[i:i + 16] for i in range(0, len(b), 16)]
    sm = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
    ops = [op for op in sm.get_opcodes() if op[0] != "equal"]
    changed = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in ops)
    return len(wa), len(wb), changed, ops


def short(name, width=110):
    return name if len(name) <= width else name[:width - 3] + "..."


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="base commit")
    ap.add_argument("--build", default=None, help="build folder with compile_commands.json (default: build-fa3, "
                    "then build)")
    ap.add_argument("--tu", action="append", help="regex on translation-unit paths (repeatable)")
    ap.add_argument("--cache", help="folder to keep the base's compiled results in, by commit")
    ap.add_argument("--show", type=int, default=40, help="diff lines shown per changed kernel (SASS mode)")
    ap.add_argument("--disasm", default="auto", choices=["auto", "cuobjdump", "nvdisasm", "bytes"])
    ap.add_argument("--ptx-registers", action="store_true", help="with --ptx: keep PTX register numbers and labels "
                    "(ptxas's output can depend on them)")
    ap.add_argument("--ptx", action="store_true", help="for each kernel whose machine code changed, also show the "
                    "change in its PTX (normalised: no line info, register numbers or labels)")
    a = ap.parse_args()

    src_root = os.path.realpath(git(os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--show-toplevel"))
    base = git(src_root, "rev-parse", "--verify", a.base + "^{commit}")
    build = a.build or next((b for b in ("build-fa3", "build") if os.path.exists(os.path.join(src_root, b,
                                                                                              "compile_commands.json"))), None)
    if not build:
        die("no build folder with compile_commands.json (configure one with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON, "
            "CUDA on, and pass --build)")
    cc = os.path.join(src_root, build, "compile_commands.json") if not os.path.isabs(build) else os.path.join(
        build, "compile_commands.json")
    try:
        with open(cc) as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        die(f"cannot read {cc}: {e}")
    pats = [re.compile(p) for p in (a.tu or DEFAULT_TUS)]
    chosen = [e for e in entries if any(p.search(e["file"]) for p in pats)]
    if not chosen:
        die(f"no translation unit of {cc} matches {[p.pattern for p in pats]}")
    tool = find_disasm(a.disasm)
    print(f"base {base}; {len(chosen)} translation units; machine code compared "
          f"{'as SASS from ' + tool if tool else 'as the encoded instructions (.text bytes): no disassembler'}")

    tmp = tempfile.mkdtemp(prefix="sass-diff-")
    wt = os.path.join(tmp, "base")
    try:
        base_dir = os.path.join(a.cache, base) if a.cache else os.path.join(tmp, "base-out")
        need_base = any(not os.path.exists(os.path.join(base_dir, os.path.relpath(os.path.realpath(e["file"]),
                                                                                     src_root).replace("/", "_"),
                                                        "ptxas.log")) for e in chosen)
        if need_base:
            git(src_root, "worktree", "add", "--detach", wt, base)
        print("building the base", file=sys.stderr)
        rb = build_tree(chosen, src_root, wt, base_dir)
        print("building the working tree", file=sys.stderr)
        rn = build_tree(chosen, src_root, src_root, os.path.join(tmp, "new-out"))
        return compare(rb, rn, tool, a.show, a.ptx, a.ptx_registers)
    finally:
        if os.path.exists(wt):
            subprocess.run(["git", "-C", src_root, "worktree", "remove", "--force", wt], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


def compare(rb, rn, tool, show, show_ptx=False, ptx_registers=False):
    per_arch = {}  # arch -> [compared, identical, [changed], [one side only], [notes]]
    reg_lines = []
    for tu in sorted(rb):
        B, N = rb[tu], rn[tu]
        for arch in sorted(set(B["cubins"]) | set(N["cubins"])):
            st = per_arch.setdefault(arch, [0, 0, [], [], []])
            if arch not in B["cubins"] or arch not in N["cubins"]:
                st[3].append(f"{tu}: architecture {arch} on one side only")
                continue
            kb, kn = cubin_kernels(B["cubins"][arch]), cubin_kernels(N["cubins"][arch])
            sb = disassemble(tool, B["cubins"][arch]) if tool else None
            sn = disassemble(tool, N["cubins"][arch]) if tool else None
            for k in sorted(set(kb) | set(kn)):
                if k not in kb or k not in kn:
                    st[3].append(f"{tu}: {'only in base' if k in kb else 'only in the working tree'}: {short(k)}")
                    continue
                st[0] += 1
                pb, pn = B["ptxas"].get((arch, k), {}), N["ptxas"].get((arch, k), {})
                res = f"{pb.get('regs', kb[k]['regs'])}->{pn.get('regs', kn[k]['regs'])} regs, spills " \
                      f"{pb.get('spill_st', '?')}/{pb.get('spill_ld', '?')}->{pn.get('spill_st', '?')}/" \
                      f"{pn.get('spill_ld', '?')}, stack {pb.get('stack', '?')}->{pn.get('stack', '?')}"
                reg_lines.append(f"{arch:8} {res:45} {short(k, 120)}")
                notes = []
                if sb is not None:
                    la, lb = sb.get(k, []), sn.get(k, [])
                    if la != lb:
                        d = list(difflib.unified_diff(la, lb, "base", "new", n=1, lineterm=""))
                        nchg = sum(1 for x in d if x[:1] in "+-" and x[:3] not in ("+++", "---"))
                        notes.append(f"SASS: {len(la)} -> {len(lb)} instructions, {nchg} lines differ\n      " +
                                     "\n      ".join(d[:show]))
                if kb[k]["text"] != kn[k]["text"]:
                    na, nb, nchg, ops = word_diff(kb[k]["text"], kn[k]["text"])
                    where = ", ".join(f"{t} [{i1}:{i2}]->[{j1}:{j2}]" for t, i1, i2, j1, j2 in ops[:8])
                    notes.append(f"code bytes: {na} -> {nb} instructions, {nchg} changed: {where}"
                                 f"{' ...' if len(ops) > 8 else ''}")
                if kb[k]["info"] != kn[k]["info"]:
                    notes.append("attributes (.nv.info) differ")
                if pb != pn:
                    notes.append(f"ptxas report differs: {pb} -> {pn}")
                # With a disassembler the normalised SASS and ptxas's report decide; without one,
                # the encoded instructions do. The attributes alone do not (they hold section
                # indices, which move when another kernel of the file changes).
                decisive = [x for x in notes if not (x.startswith("attributes") or
                                                     (sb is not None and x.startswith("code bytes")))]
                if decisive:
                    if show_ptx and arch in B["ptx"] and arch in N["ptx"]:
                        pa = ptx_kernels(B["ptx"][arch], ptx_registers).get(k, [])
                        pz = ptx_kernels(N["ptx"][arch], ptx_registers).get(k, [])
                        d = list(difflib.unified_diff(pa, pz, "base", "new", n=2, lineterm=""))
                        notes.append(f"PTX: {len(pa)} -> {len(pz)} lines" + (", identical" if not d else
                                     ":\n      " + "\n      ".join(d[:show])))
                    st[2].append((tu, k, notes))
                else:
                    st[1] += 1
                    if notes:
                        st[4].append(f"{tu}: same SASS after normalisation, but {'; '.join(notes)}: {short(k)}")
    print("\nregisters / spills (base -> working tree):")
    for line in reg_lines:
        print("  " + line)
    bad = False
    print("\nresult:")
    for arch in sorted(per_arch):
        n, same, changed, odd, info = per_arch[arch]
        print(f"  {arch}: {n} kernels compared, {same} identical, {len(changed)} differ"
              f"{', ' + str(len(odd)) + ' unmatched' if odd else ''}")
        for tu, k, notes in changed:
            print(f"    {tu}: {short(k, 140)}")
            for x in notes:
                print(f"      {x}")
        for x in odd + info:
            print(f"    {x}")
        bad = bad or bool(changed) or bool(odd)
    print("IDENTICAL" if not bad else "DIFFERENT")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
