"""cmake/GenbenchRevision.cmake: the header that names a build's revision.

The build runs the script on every build, so these tests run it the same way (script mode)
on a scratch git repository: it must follow commits and edits made after configuring, leave
the header untouched when nothing changed (no needless recompiles), honour the
GENBENCH_GIT_REVISION override, take a stamped revision in a copy without .git, and fall back to
"unknown" outside a git tree.
"""
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "cmake", "GenbenchRevision.cmake")
CMAKE = os.environ.get("GENBENCH_CMAKE", "cmake")
GIT = shutil.which("git")

pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")


def run_script(src, out, env_rev=None, revision=None):
    env = {k: v for k, v in os.environ.items() if k != "GENBENCH_GIT_REVISION"}
    if env_rev is not None:
        env["GENBENCH_GIT_REVISION"] = env_rev
    cmd = [CMAKE, f"-DSOURCE_DIR={src}", f"-DOUTPUT={out}", "-DVERSION=1.2.3", f"-DGIT={GIT}"]
    if revision is not None:
        cmd.append(f"-DREVISION={revision}")
    subprocess.run(cmd + ["-P", SCRIPT], check=True, env=env, capture_output=True, text=True)
    text = open(out).read()
    assert '#define GENBENCH_VERSION "1.2.3"' in text
    return re.search(r'#define GENBENCH_GIT_REVISION "([^"]*)"', text).group(1)


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run([GIT, "-C", str(repo), *args], check=True, env=env, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "tree"
    r.mkdir()
    git(r, "init", "-q")
    (r / "a.txt").write_text("one\n")
    git(r, "add", "a.txt")
    git(r, "commit", "-q", "-m", "first")
    return r


def test_follows_commits_and_edits_after_configure(repo, tmp_path):
    out = tmp_path / "version.h"
    first = git(repo, "rev-parse", "--short=12", "HEAD")
    assert run_script(repo, out) == first
    (repo / "a.txt").write_text("two\n")
    assert run_script(repo, out) == first + "-dirty"
    git(repo, "commit", "-q", "-am", "second")
    second = git(repo, "rev-parse", "--short=12", "HEAD")
    assert second != first
    assert run_script(repo, out) == second


def test_unchanged_tree_leaves_the_header_alone(repo, tmp_path):
    out = tmp_path / "version.h"
    run_script(repo, out)
    os.utime(out, (1_000_000_000, 1_000_000_000))
    run_script(repo, out)
    assert os.stat(out).st_mtime == 1_000_000_000
    (repo / "a.txt").write_text("edited\n")
    run_script(repo, out)
    assert os.stat(out).st_mtime != 1_000_000_000


def test_override_from_the_build_environment_then_the_configure_one(repo, tmp_path):
    out = tmp_path / "version.h"
    assert run_script(repo, out, revision="from-configure") == "from-configure"
    assert run_script(repo, out, env_rev="v1.0-node7", revision="from-configure") == "v1.0-node7"
    # Characters that would break the C string literal are replaced.
    assert run_script(repo, out, env_rev='a"b\\c d') == "a_b_c_d"


def test_outside_a_git_tree_the_revision_is_unknown(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert run_script(plain, tmp_path / "version.h") == "unknown"


def source_tree(src, out):
    run_script(src, out)
    return re.search(r'#define GENBENCH_SOURCE_TREE "([0-9a-f]{16})"', open(out).read()).group(1)


def test_source_tree_names_the_content_not_the_checkout(repo, tmp_path):
    """The tree hash is the same for two checkouts of one commit (other paths, other file times,
    one called dirty by git after a touch), ignores build folders and result files, and changes
    with any file's content, a new file git would commit, or a rename."""
    out = tmp_path / "version.h"
    (repo / ".gitignore").write_text("/build*/\n")
    (repo / "src").mkdir()
    (repo / "src" / "k.cu").write_text("kernel\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tree")
    h = source_tree(repo, out)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    os.utime(clone / "a.txt", (1_000_000_000, 1_000_000_000))
    assert source_tree(clone, out) == h
    (clone / "build-x").mkdir()
    (clone / "build-x" / "k.o").write_text("object\n")
    (clone / "results").mkdir()
    (clone / "results" / "run.h5").write_text("data\n")
    assert source_tree(clone, out) == h
    (clone / "src" / "k.cu").write_text("kernel edited\n")
    edited = source_tree(clone, out)
    assert edited != h
    (clone / "src" / "k.cu").write_text("kernel\n")
    assert source_tree(clone, out) == h
    (clone / "src" / "new.cpp").write_text("x\n")  # untracked, not ignored: it would be built
    assert source_tree(clone, out) not in (h, edited)
    os.remove(clone / "src" / "new.cpp")
    git(clone, "mv", "a.txt", "b.txt")
    assert source_tree(clone, out) != h


def test_tree_hash_script_matches_the_build(tmp_path):
    """scripts/tree-hash.sh gives, for HEAD, what a build of a clean checkout of HEAD records."""
    script = os.path.join(ROOT, "scripts", "tree-hash.sh")
    if subprocess.run([GIT, "-C", ROOT, "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.skip("the source folder is not a git checkout")
    printed = subprocess.run([script, "HEAD"], check=True, capture_output=True, text=True).stdout.split()
    clone = tmp_path / "head"
    git(tmp_path, "clone", "-q", "--no-checkout", ROOT, str(clone))
    git(clone, "checkout", "-q", subprocess.run([GIT, "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                                                 text=True).stdout.strip())
    assert printed[1] == source_tree(clone, tmp_path / "version.h")


def test_a_copy_without_git_takes_the_stamped_revision(repo, tmp_path):
    """A copy of the tree without .git (a GPU node's) names its build with the revision in
    .genbench-revision (scripts/stamp-revision.sh's "REV TREE" line); the stamp itself is not
    part of the tree's hash, a copy whose content is not the stamped tree's says -modified, and a
    damaged stamp is ignored (unknown)."""
    out = tmp_path / "version.h"
    rev = git(repo, "rev-parse", "--short=12", "HEAD")
    tree = source_tree(repo, out)
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
    assert run_script(copy, out) == "unknown"
    (copy / ".genbench-revision").write_text(f"{rev} {tree}\n")
    assert source_tree(copy, out) == tree
    assert run_script(copy, out) == rev
    (copy / "a.txt").write_text("edited on the node\n")
    assert run_script(copy, out) == rev + "-modified"
    (copy / ".genbench-revision").write_text("not a stamp\n")
    assert run_script(copy, out) == "unknown"
    # A tree with .git keeps git's own answer whatever a stale stamp says.
    (repo / ".genbench-revision").write_text(f"something-else {tree}\n")
    (repo / ".gitignore").write_text("/.genbench-revision\n")
    assert run_script(repo, out) == rev
