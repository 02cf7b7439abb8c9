"""Imports point one way (docs/ARCHITECTURE.md): a module imports from its own layer and the layers
below it, never above, and no modules import each other in a circle. Lazy imports (inside functions)
count: they are dependencies all the same, only later."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "reme_cc"

# lowest first; "pkg.*" is every module of a package, other names are one module each
LAYERS = {
    "workspace": ["reme_cc", "reme_cc.base", "reme_cc.base.*"],
    "notes": ["reme_cc.notes", "reme_cc.notes.*"],
    "index": ["reme_cc.index", "reme_cc.index.*"],
    "memory": ["reme_cc.memory", "reme_cc.memory.*"],
    "tools": ["reme_cc.tools", "reme_cc.tools.*"],
    "surfaces": ["reme_cc.surfaces", "reme_cc.surfaces.*", "reme_cc.__main__"],
}
RANK = {name: i for i, name in enumerate(LAYERS)}

# Upward imports not removed yet, each with its reason. The list may only shrink: a new upward import
# fails, and so does an entry here that is no longer needed.
KNOWN_UPWARD: set[tuple[str, str]] = set()


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> str:
    for layer, names in LAYERS.items():
        for name in names:
            if module == name or (name.endswith(".*") and module.startswith(name[:-1])):
                return layer
    raise AssertionError(f"{module} is in no layer: add it to LAYERS and docs/ARCHITECTURE.md")


def imports_of(module: str, path: Path, known: set[str]) -> set[str]:
    """Every reme_cc module ``module`` imports, anywhere in the file (function bodies too)."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # `from . import daily` names a module; `from .x import y` names x (or x.y if a module)
            names = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in known else stem for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in known and "." in name:
                name = name.rsplit(".", 1)[0]
            if name in known and name != module and name.startswith("reme_cc"):
                out.add(name)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    edges = {m: imports_of(m, p, known) for m, p in mods.items()}
    # a package's __init__ is imported on the way to each of its modules: not a dependency of theirs
    return {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in edges.items()}


def test_every_module_is_in_a_layer():
    for module in modules():
        layer_of(module)


def test_no_upward_imports():
    upward = set()
    for module, deps in graph().items():
        for dep in deps:
            if RANK[layer_of(dep)] > RANK[layer_of(module)]:
                upward.add((module, dep))
    new = sorted(upward - KNOWN_UPWARD)
    assert not new, "upward imports (a lower layer importing a higher one): " + ", ".join(f"{a} -> {b}" for a, b in new)
    fixed = sorted(KNOWN_UPWARD - upward)
    assert not fixed, f"these are fixed, remove them from KNOWN_UPWARD: {fixed}"


def test_no_import_cycles():
    edges = graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(edges.get(m, ())):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d) :] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_checker_sees_lazy_and_relative_imports(tmp_path):
    """The test above cannot pass by not looking: it finds an import inside a function."""
    mods = modules()
    deps = imports_of("reme_cc.memory.context", mods["reme_cc.memory.context"], set(mods))
    assert "reme_cc.index" in deps  # imported lazily inside Context.index
    assert "reme_cc.notes.store" in deps  # a relative import at the top


def test_one_spelling_of_normalize_and_neighbor():
    """normalise/normalize and neighbour/neighbor were both in the code: one spelling (the one
    Workspace.normalize and index.Neighbor use) keeps names greppable."""
    pattern = re.compile(r"normalis|neighbour", re.I)
    hits = [
        f"{path.relative_to(PACKAGE.parent)}:{n}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert hits == []


def test_only_the_index_layer_queries_the_index_tables():
    """brief.py used to run its own SQL on the index: the schema is the index layer's business
    (index/readonly.py serves the standard-library readers)."""
    sql = re.compile(r"\b(FROM|JOIN|INTO|UPDATE)\s+(files|links|chunks|chunks_fts|nodes_fts|embeddings|meta)\b")
    hits = [
        f"{path.relative_to(PACKAGE.parent)}:{n}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "index" not in path.relative_to(PACKAGE).parts[:1]
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if sql.search(line)
    ]
    assert hits == []
