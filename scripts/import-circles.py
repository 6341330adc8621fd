#!/usr/bin/env python3
"""Import circles between the files of a crate's sources (test modules left out).

Builds the file-level graph of `use` trees and `crate::`/`super::`/`self::` paths, following
re-exports, then prints each pair of files that use each other and each longer circle, and
exits 1 when there is any. A file using its own parent module is not counted: the parent
(`mod.rs`, `lib.rs`) is its map.

    python3 scripts/import-circles.py zwave-mcp-server/src mcp-client/src ...
"""
import os
import re
import sys


def modules(root):
    """Module path (a tuple of names) -> file, for every .rs file under root."""
    files = {}
    for folder, _, names in os.walk(root):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(folder, name)
                parts = os.path.relpath(path, root)[:-3].split("/")
                if parts[-1] in ("mod", "lib", "main"):
                    parts = parts[:-1]
                files[tuple(parts)] = path
    return files


def source(path):
    """The file's text before its `#[cfg(test)] mod …`, without line comments."""
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if line.strip() == "#[cfg(test)]" and i + 1 < len(lines) and re.match(r"\s*mod\s+\w+", lines[i + 1]):
            lines = lines[:i]
            break
    return re.sub(r"//[^\n]*", "", "\n".join(lines))


def use_paths(prefix, tree):
    """`a::{b, c::{d, e}}` -> [[…a, b], […a, c, d], […a, c, e]]."""
    parts, depth, current = [], 0, ""
    for ch in tree:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    out = []
    for part in (p.strip() for p in parts):
        if not part:
            continue
        nested = re.match(r"^([\w:]*?)(::)?\{(.*)\}$", part, re.S)
        if nested:
            out += use_paths(prefix + [s for s in nested.group(1).split("::") if s], nested.group(3))
        else:
            out.append(prefix + [s for s in part.split(" as ")[0].strip().split("::") if s])
    return out


def absolute(files, module, segments):
    """A path written in `module`, from the crate root; None for other crates."""
    if not segments:
        return None
    if segments[0] == "crate":
        base, segments = [], segments[1:]
    elif segments[0] in ("self", "super"):
        base = list(module)
        if segments[0] == "self":
            segments = segments[1:]
    elif tuple(list(module) + [segments[0]]) in files:
        base = list(module)
    else:
        return None
    for segment in segments:
        base = base[:-1] if segment == "super" else base + [segment]
    return base


def graph(root):
    files = modules(root)
    uses, reexports = {}, {}
    for module, path in files.items():
        text, paths = source(path), []
        for m in re.finditer(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", text):
            for segments in use_paths([], m.group(2)):
                target = absolute(files, module, segments)
                if target is None:
                    continue
                paths.append(target)
                if m.group(1):
                    name = segments[-1] if segments[-1] != "self" else segments[-2]
                    reexports[(module, name)] = target
        for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", text):
            target = absolute(files, module, m.group(1).split("::"))
            if target:
                paths.append(target)
        uses[module] = paths

    def file_of(path, hops=0):
        for k in range(len(path), 0, -1):
            module = tuple(path[:k])
            if module in files:
                if k < len(path) and (module, path[k]) in reexports and hops < 5:
                    return file_of(reexports[(module, path[k])], hops + 1)
                return module
        return None

    edges = {}
    for module, paths in uses.items():
        for path in paths:
            target = file_of(path)
            if target is not None and target != module and target != module[: len(target)]:
                edges.setdefault(module, set()).add(target)
    return files, edges


def strongly_connected(nodes, edges):
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in nodes:
        if v not in index:
            visit(v)
    return found


def main(roots):
    bad = False
    for root in roots:
        files, edges = graph(root)
        name = lambda m: root + "/" + ("/".join(m) or "lib")
        for component in strongly_connected(list(files), edges):
            bad = True
            print("import circle:", ", ".join(sorted(name(m) for m in component)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
