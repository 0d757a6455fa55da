#!/usr/bin/env python3
"""Checks that each Rust file does one job: no file under crates/ holds more
than LIMIT lines before its first `#[cfg(test)]`, and no crate has an import
cycle between sibling modules (references through `crate::`, `super::`,
`self::` or a child module's name; a reference from or into a module's
children counts as one from or into the module). Prints what it finds; exits 1
when a file is too long or a cycle exists. Usage: scripts/room-check.py [--all]
(--all lists every file's count)."""
import os
import re
import sys

LIMIT = 600
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates")


def code_before_tests(path):
    """The file's lines up to its first top-level `#[cfg(test)]` (tests are counted apart)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("#[cfg(test)]"):  # a test module at the top level
            return lines[:i]
    return lines[:-1] if lines and lines[-1] == "" else lines


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)


def crate_modules(src):
    """Maps each module path (a tuple) of the crate at src to its file."""
    modules = {}
    for dirpath, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] == "mod":
                parts = parts[:-1]
            elif len(parts) == 1 and parts[0] in ("lib", "main"):
                parts = []
            elif parts[0] == "bin":
                continue  # each binary is a crate of its own
            modules[tuple(parts)] = os.path.join(dirpath, name)
    return modules


def expand_use_tree(tree):
    """`a::{b, c::{d}}` -> [a::b, a::c::d] (enough to resolve modules)."""
    tree = tree.replace(" ", "").replace("\n", "")
    depth, start = 0, None
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                prefix, inner, rest = tree[:start], tree[start + 1 : i], tree[i + 1 :]
                parts, d, cur = [], 0, ""
                for c in inner:
                    if c == "," and d == 0:
                        parts.append(cur)
                        cur = ""
                        continue
                    d += c == "{"
                    d -= c == "}"
                    cur += c
                parts.append(cur)
                out = []
                for p in parts:
                    if p:
                        out += expand_use_tree(prefix + p + rest)
                return out
    return [tree]


def references(text, here, children):
    """Module paths (absolute tuples) this file's code refers to."""
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        paths += expand_use_tree(m.group(1))
    paths += re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", text)
    for child in children:
        paths += re.findall(r"(?<![:\w])(" + child + r"(?:::\w+)+)", text)
    out = []
    for p in paths:
        segs = [s for s in p.split("::") if s]
        if not segs:
            continue
        if segs[0] == "crate":
            base, segs = [], segs[1:]
        elif segs[0] in ("super", "self"):
            base = list(here)
            while segs and segs[0] in ("super", "self"):
                if segs[0] == "super" and base:
                    base.pop()
                segs = segs[1:]
        elif segs[0] in children:
            base = list(here)
        else:
            continue
        out.append(tuple(base + segs))
    return out


def resolve(path, modules):
    """The deepest module a path names (the item's home file)."""
    for n in range(len(path), -1, -1):
        if path[:n] in modules:
            return path[:n]
    return None


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def main():
    show_all = "--all" in sys.argv
    failed = False
    for dirpath, dirs, files in sorted(os.walk(ROOT)):
        dirs[:] = sorted(d for d in dirs if d != "target")
        if "Cargo.toml" not in files or not os.path.isdir(os.path.join(dirpath, "src")):
            continue
        src = os.path.join(dirpath, "src")
        modules = crate_modules(src)
        graph = {}
        for mod, path in sorted(modules.items()):
            code = code_before_tests(path)
            rel = os.path.relpath(path, os.path.join(ROOT, ".."))
            if len(code) > LIMIT:
                print(f"too long: {rel}: {len(code)} lines before its tests")
                failed = True
            elif show_all:
                print(f"{len(code):5d} {rel}")
            text = strip_comments("\n".join(code))
            children = sorted({m[len(mod)] for m in modules if len(m) == len(mod) + 1 and m[: len(mod)] == mod})
            for ref in references(text, mod, children):
                target = resolve(ref, modules)
                if target is None:
                    continue
                # A module and what lies inside it are one room; an edge joins
                # the two siblings under the closest common parent.
                k = 0
                while k < min(len(mod), len(target)) and mod[k] == target[k]:
                    k += 1
                if k < len(mod) and k < len(target):
                    graph.setdefault(mod[: k + 1], set()).add(target[: k + 1])
        for comp in cycles(graph):
            names = ", ".join(os.path.relpath(modules.get(m, os.path.join(src, *m)), src) for m in sorted(comp))
            print(f"import cycle in {os.path.relpath(dirpath, ROOT)}: {names}")
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
