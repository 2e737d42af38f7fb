"""Every reference to a result file in the project's text resolves (a step of scripts/lint.sh).

bench/results keeps the current runs only; a removed one is cited as `bench/results/PATH@COMMIT` (bench/results/
README.md). This check reads every tracked Markdown, C++, CUDA, Python and shell file: a Markdown link whose target
lies under bench/results, and a mention `bench/results/...` not followed by `@`, must name a file or folder in the
tree. Not checked: the design notes' dated folders of before the results were grouped (`bench/results/2026-...`,
found as bench/results/README.md says) and placeholders in capitals (NAME, COMMIT, FOLDER, PATH).
Usage: python3 scripts/check-result-links.py (exits 1 naming each dangling reference)."""

import os
import re
import subprocess
import sys

tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split()
present = set(tracked)
for f in tracked:
    while "/" in f:
        f = f.rsplit("/", 1)[0]
        present.add(f)
link = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
mention = re.compile(r"(?<![\w/.@-])bench/results/[A-Za-z0-9_./-]*[A-Za-z0-9_-]/?")
skip = re.compile(r"bench/results/(20\d\d-|.*\b(NAME|COMMIT|FOLDER|PATH|THAT_COMMIT)\b)")
dangling = []
for f in tracked:
    if not f.endswith((".md", ".h", ".cuh", ".cu", ".cxx", ".py", ".sh")) or not os.path.isfile(f):
        continue
    text = open(f, encoding="utf-8", errors="replace").read()
    for m in link.finditer(text):
        target = m.group(1).split("#")[0]
        if "://" in target or not target:
            continue
        full = os.path.normpath(os.path.join(os.path.dirname(f), target))
        if full.startswith("bench/results") and full not in present and not skip.match(full):
            dangling.append(f"{f}: link {m.group(1)}")
    for m in mention.finditer(text):
        path = m.group(0).rstrip("/")
        if text[m.end() : m.end() + 1] == "@" or path == "bench/results" or skip.match(path):
            continue
        if path not in present:
            dangling.append(f"{f}: {m.group(0)}")
if dangling:
    print("result references that name nothing in the tree (cite removed runs as bench/results/PATH@COMMIT):")
    print("\n".join("  " + d for d in dangling))
    sys.exit(1)
