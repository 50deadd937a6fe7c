#!/usr/bin/python3
"""Checks the links of a directory of markdown docs (the installed docs).

Usage: check_doc_links.py DOCDIR
Every relative link [text](path#anchor) in DOCDIR/**/*.md must name a file
inside DOCDIR, and its anchor a heading of that file (GitHub's slugs), so the
docs a package installs work without the source tree beside them. Absolute
URLs (scheme:...) are not fetched. Links in code blocks and code spans are
not links. Prints each broken link as FILE:LINE: LINK: why; exits 1 if any.
"""
import os
import re
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"`[^`]*`")


def prose_lines(path, keep_code_spans=False):
    """(line number, text) of the lines outside fenced code, code spans
    removed unless asked (a heading's slug keeps their text)."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield n, line if keep_code_spans else CODE_SPAN.sub("", line)


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        for _, line in prose_lines(path, keep_code_spans=True):
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                base = slug(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1)))
                k = seen.get(base, 0)
                seen[base] = k + 1
                out.add(base if k == 0 else "%s-%d" % (base, k))
        cache[path] = out
    return cache[path]


def main(argv):
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = os.path.realpath(argv[0])
    broken = checked = 0
    for d, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if not name.endswith(".md"):
                continue
            src = os.path.join(d, name)
            for n, line in prose_lines(src):
                for target in LINK.findall(line):
                    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                        continue
                    checked += 1
                    path, _, anchor = target.partition("#")
                    dest = os.path.realpath(os.path.join(d, path)) if path else src
                    why = None
                    if not (dest == root or dest.startswith(root + os.sep)):
                        why = "leaves the docs directory"
                    elif not os.path.exists(dest):
                        why = "no such file"
                    elif anchor and not dest.endswith(".md"):
                        why = "an anchor into a file that is not markdown"
                    elif anchor and anchor not in anchors(dest):
                        why = "no heading '#%s' in %s" % (anchor, os.path.relpath(dest, root))
                    if why:
                        broken += 1
                        print("%s:%d: %s: %s" % (os.path.relpath(src, root), n, target, why))
    print("check_doc_links: %d relative links in %s, %d broken" % (checked, root, broken))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
