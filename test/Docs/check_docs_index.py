#!/usr/bin/env python3
"""Checks that docs/README.md links every Markdown file under docs/ and that
each of its relative links names an existing file. Prints one line per
problem and exits 1; prints "docs index: N documents, all listed" otherwise."""
import os
import re
import sys


def main():
    docs = os.path.abspath(sys.argv[1])
    with open(os.path.join(docs, "README.md"), encoding="utf-8") as f:
        index = f.read()
    links = set(re.findall(r"\]\(([^)#\s]+)\)", index))
    problems = []
    for link in sorted(links):
        if "://" in link:
            continue
        if not os.path.exists(os.path.normpath(os.path.join(docs, link))):
            problems.append(f"docs/README.md links '{link}', which does not exist")
    count = 0
    for root, _, files in os.walk(docs):
        for name in files:
            if not name.endswith(".md"):
                continue
            rel = os.path.relpath(os.path.join(root, name), docs).replace(os.sep, "/")
            if rel == "README.md":
                continue
            count += 1
            if rel not in links:
                problems.append(f"docs/{rel} is not listed in docs/README.md")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"docs index: {count} documents, all listed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
