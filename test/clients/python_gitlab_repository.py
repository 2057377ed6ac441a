"""python-gitlab against a running Hearth: the repository API, checked against git on the same repository.

Usage: python3 python_gitlab_repository.py <url> <token> <project_id> <bare_dir>
Prints one line per check; exits non-zero on the first disagreement.
"""
import base64
import io
import subprocess
import sys
import tarfile
import zipfile

import gitlab

url, token, project_id, bare = sys.argv[1:5]
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(int(project_id))


def git(*args):
    return subprocess.run(["git", "--git-dir", bare, *args], check=True, capture_output=True).stdout


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (": " + detail if detail and not ok else ""))
    if not ok:
        sys.exit(1)


# tree, recursive, every page through the iterator
tree = list(project.repository_tree(recursive=True, iterator=True, per_page=7))
expected = git("ls-tree", "-r", "-t", "--format=%(objectname) %(objecttype) %(path)", "main").decode().splitlines()
got = sorted(f"{e['id']} {e['type']} {e['path']}" for e in tree)
check("repository_tree(recursive=True, iterator=True)", got == sorted(expected), f"{len(got)} vs {len(expected)}")
keyset = list(project.repository_tree(recursive=True, iterator=True, pagination="keyset", per_page=5))
check("repository_tree keyset", sorted(e["path"] for e in keyset) == sorted(e["path"] for e in tree))

# blob and raw blob
sha = git("rev-parse", "main:README.md").decode().strip()
blob = project.repository_blob(sha)
check("repository_blob", base64.b64decode(blob["content"]) == git("cat-file", "blob", sha) and blob["size"] == len(git("cat-file", "blob", sha)))
check("repository_raw_blob", project.repository_raw_blob(sha) == git("cat-file", "blob", sha))

# archives
for fmt in ["tar.gz", "zip", "tar", "tar.bz2"]:
    data = project.repository_archive(format=fmt)
    if fmt == "zip":
        names = sorted(n.split("/", 1)[1] for n in zipfile.ZipFile(io.BytesIO(data)).namelist() if not n.endswith("/"))
    else:
        mode = {"tar.gz": "r:gz", "tar": "r:", "tar.bz2": "r:bz2"}[fmt]
        names = sorted(m.name.split("/", 1)[1] for m in tarfile.open(fileobj=io.BytesIO(data), mode=mode).getmembers() if m.isfile())
    files = sorted(git("ls-tree", "-r", "--name-only", "main").decode().splitlines())
    check(f"repository_archive(format={fmt})", names == files, f"{names[:5]} vs {files[:5]}")

# compare, contributors, merge base
cmp = project.repository_compare("feature", "main")
base = git("merge-base", "feature", "main").decode().strip()
log = git("log", "--format=%H", "--reverse", f"{base}..main").decode().split()
check("repository_compare commits", [c["id"] for c in cmp["commits"]] == log, f"{[c['id'] for c in cmp['commits']]} vs {log}")
names = git("diff", "--name-only", base, "main").decode().split()
check("repository_compare diffs", sorted(d["new_path"] for d in cmp["diffs"]) == sorted(names))
contributors = project.repository_contributors()
emails = set(git("log", "--no-merges", "--format=%ae", "main").decode().split())
check("repository_contributors", {c["email"] for c in contributors} == emails and sum(c["commits"] for c in contributors) == int(git("rev-list", "--count", "--no-merges", "main")))
mb = project.repository_merge_base(["main", "feature"])
check("repository_merge_base", mb["id"] == base)

# branches, commits, files
branches = sorted(b.name for b in project.branches.list(get_all=True))
check("project.branches", branches == sorted(git("for-each-ref", "--format=%(refname:short)", "refs/heads").decode().split()))
b = project.branches.create({"branch": "from-python", "ref": "main"})
check("project.branches.create", git("rev-parse", "from-python") == git("rev-parse", "main"))
commits = [c.id for c in project.commits.list(ref_name="main", get_all=True)]
check("project.commits", commits == git("log", "--format=%H", "main").decode().split())
one = project.commits.get(commits[0])
check("project.commits.get", one.id == commits[0] and one.message.rstrip() == git("log", "-1", "--format=%B", commits[0]).decode().rstrip())
f = project.files.get(file_path="README.md", ref="main")
check("project.files.get", f.decode() == git("show", "main:README.md"))
project.files.create({"file_path": "docs/py.md", "branch": "from-python", "content": "from python\n", "commit_message": "Add py.md"})
check("project.files.create", git("show", "from-python:docs/py.md") == b"from python\n")
f = project.files.get(file_path="docs/py.md", ref="from-python")
f.content = "changed\n"
f.save(branch="from-python", commit_message="Change py.md")
check("project.files save", git("show", "from-python:docs/py.md") == b"changed\n")
f.delete(branch="from-python", commit_message="Remove py.md")
check("project.files delete", subprocess.run(["git", "--git-dir", bare, "cat-file", "-e", "from-python:docs/py.md"], capture_output=True).returncode != 0)
print("all ok")
