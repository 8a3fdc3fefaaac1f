#!/usr/bin/env python3
"""Checks that docs/README.md links every Markdown file under docs/, that
each of its relative links names an existing file, and that every reference
to a section of a document (`cost-model.md, "MoE load"` or
`docs/gpu.md ("Measured on a GPU")`) names a heading or a bold paragraph
title of it. Prints one line per problem and exits 1; otherwise one line
with the counts."""
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
    refs = 0
    for doc, section, where in section_references(docs):
        refs += 1
        titles = section_titles(os.path.join(docs, doc))
        if not any(t.startswith(section) for t in titles):
            problems.append(f"{where} refers to {doc}, \"{section}\": no such "
                            f"heading or bold paragraph title there")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"docs index: {count} documents, all listed; {refs} section "
          f"references, all found")
    return 0


def section_titles(path):
    """Headings and bold paragraph titles (`**Title.**`) of a document."""
    titles = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#+\s+(.*)", line)
            if m:
                titles.append(m.group(1).strip())
            m = re.match(r"\s*(?:- )?\*\*([^*]+)\*\*", line)
            if m:
                titles.append(m.group(1).strip())
    return titles


def section_references(docs):
    """(document, section, "file:line") of every `X.md, "Section"` in the
    documents under docs/ and the top-level README, for X a document under
    docs/."""
    known = set()
    for root, _, files in os.walk(docs):
        for name in files:
            if name.endswith(".md"):
                known.add(os.path.relpath(os.path.join(root, name), docs).replace(os.sep, "/"))
    sources = [os.path.join(root, n) for root, _, files in os.walk(docs)
               for n in files if n.endswith(".md")]
    sources.append(os.path.join(docs, "..", "README.md"))
    pattern = re.compile(r'(?:docs/)?((?:[a-z0-9-]+/)*[a-z][a-z0-9-]*\.md)[,:]?\s*'
                         r'(?:§[0-9a-z]+,?\s*)?\(?"([^"\n]{3,80})"')
    for src in sources:
        if not os.path.exists(src):
            continue
        with open(src, encoding="utf-8") as f:
            text = f.read()
        for m in pattern.finditer(text):
            doc, section = m.group(1), m.group(2)
            if doc not in known:
                continue
            line = text.count("\n", 0, m.start()) + 1
            yield doc, section, f"{os.path.relpath(src, os.path.join(docs, '..'))}:{line}"


if __name__ == "__main__":
    sys.exit(main())
