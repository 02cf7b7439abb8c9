"""The signatures docs/ARCHITECTURE.md shows in its ```python blocks are the code's: each ``def`` line's
parameters (names, kinds, defaults) and return annotation, and each field a dataclass lists, are compared
with the function or class they name. Types may be left out of the doc (a return type shortened to its
outer name), ``self`` too."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs/ARCHITECTURE.md"
# the package a section's blocks name things in; None: not checked
SECTION_PACKAGE = {
    "notes": "reme_cc.notes",
    "index": "reme_cc.index",
    "projects": "reme_cc",
    "memory agents": "reme_cc.surfaces.agent",
}


def blocks() -> list[tuple[str, str, int]]:
    """(package or module of the section, block text, line of the block) for every ```python block."""
    text = DOC.read_text(encoding="utf-8")
    out = []
    for m in re.finditer(r"```python\n(.*?)```", text, re.S):
        heading = re.findall(r"^## (.+)$", text[: m.start()], re.M)[-1]
        package = next(p for k, p in SECTION_PACKAGE.items() if heading.startswith(k))
        if package is None:
            continue
        out.append((package, m.group(1), text[: m.start()].count("\n") + 2))
    return out


def find(package: str, name: str, module: str | None) -> object:
    """``name`` as defined in ``module``, or in the one module of ``package`` that defines it."""
    if module:
        return getattr(importlib.import_module(module), name)
    base = importlib.import_module(package)
    if hasattr(base, name) and not inspect.ismodule(getattr(base, name)):
        return getattr(base, name)
    folder = Path(base.__file__).parent
    hits = []
    for path in sorted(folder.glob("*.py")):
        mod = importlib.import_module(f"{package}.{path.stem}" if path.stem != "__init__" else package)
        obj = getattr(mod, name, None)
        if obj is not None and getattr(obj, "__module__", None) == mod.__name__:
            hits.append(obj)
    assert len(hits) == 1, f"{name}: defined {len(hits)} times in {package}"
    return hits[0]


def module_of(package: str, comment: str) -> str:
    """``# memory/project.py (stdlib)`` in a block of package reme_cc -> reme_cc.memory.project."""
    rel = comment.split()[0].removesuffix(".py").replace("/", ".")
    for base in (package, "reme_cc"):
        try:
            return importlib.import_module(f"{base}.{rel}").__name__
        except ImportError:
            continue
    raise AssertionError(f"ARCHITECTURE.md names a module {comment!r} that does not exist")


def entries() -> list[tuple[str, str, object, str]]:
    """(where, kind, the code object, the doc's text) for every signature and field line."""
    out = []
    for package, block, first in blocks():
        module, cls = None, None
        for i, line in enumerate(block.splitlines()):
            where = f"ARCHITECTURE.md:{first + i}"
            code = line.split("  #")[0].rstrip()
            stripped = code.strip()
            if not stripped or stripped.startswith("@"):
                continue
            top = not line.startswith(" ")
            if top and stripped.startswith("#"):
                m = re.match(r"#\s*([\w/]+\.py)", stripped)
                if m:
                    module, cls = module_of(package, m.group(1)), None
                continue
            if stripped.startswith("#"):
                continue
            if top and stripped.startswith("class "):
                cls = find(package, re.match(r"class (\w+)", stripped).group(1), module)
                continue
            if top:
                cls = None
            owner = cls
            for part in re.split(r";\s*(?=def )", stripped):
                m = re.match(r"(?:async )?def ([\w /]+?)\s*(\(|$)", part)
                if m:
                    for name in m.group(1).split("/"):  # "def write_note / replace_text / ..." names several
                        obj = getattr(owner, name.strip()) if owner else find(package, name.strip(), module)
                        out.append((where, "def" if m.group(2) else "name", obj, part))
                elif owner is not None and not top:
                    for field in re.findall(r"(?:^|;\s*)(\w+)\s*:", part):
                        out.append((where, "field", owner, field))
    return out


def _doc_signature(text: str) -> ast.arguments | None:
    src = re.sub(r"\s*\.\.\.\s*$", "", text.split(" -> ")[0].rstrip(":").strip())
    if "(...same...)" in src:
        return None
    try:
        fn = ast.parse(src.removeprefix("async ") + ": pass").body[0]
    except SyntaxError:
        return None
    return fn.args if isinstance(fn, ast.FunctionDef) else None


def _params(args: ast.arguments) -> list[tuple[str, str, str | None]]:
    """(name, kind, default source) of a parsed doc signature."""
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = [(a.arg, "POSITIONAL_OR_KEYWORD", d) for a, d in zip(positional, defaults)]
    if args.vararg:
        out.append((args.vararg.arg, "VAR_POSITIONAL", None))
    out += [(a.arg, "KEYWORD_ONLY", d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        out.append((args.kwarg.arg, "VAR_KEYWORD", None))
    return [(n, k, None if d is None else ast.unparse(d)) for n, k, d in out]


def _code_params(fn: object) -> list[tuple[str, str, str | None]]:
    out = []
    for p in inspect.signature(fn).parameters.values():
        kind = "POSITIONAL_OR_KEYWORD" if p.kind is p.POSITIONAL_ONLY else p.kind.name
        out.append(
            (p.name, kind, None if p.default is p.empty else ast.unparse(ast.parse(repr(p.default), mode="eval")))
        )
    return out


def _norm(text: str) -> str:
    return re.sub(r"[\s'\"]+", "", text)  # a string annotation is the same type


ENTRIES = entries()


@pytest.mark.parametrize("where,kind,obj,text", ENTRIES, ids=[f"{e[0]}:{e[3][:40]}" for e in ENTRIES])
def test_doc_signature_is_the_code(where, kind, obj, text):
    if kind == "field":
        names = {f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else set()
        assert text in names or hasattr(obj, text), f"{where}: {obj.__qualname__} has no field {text!r}"
        return
    assert callable(obj), f"{where}: {text!r} names no function"
    args = _doc_signature(text) if kind == "def" else None
    if args is None:
        return  # a name list or "(...same...)": the names exist
    doc, code = _params(args), _code_params(obj)
    if code and code[0][0] in ("self", "cls") and (not doc or doc[0][0] not in ("self", "cls")):
        code = code[1:]  # the doc may leave out self
    elif doc and doc[0][0] == "self" and inspect.ismethod(obj) is False and code and code[0][0] != "self":
        doc = doc[1:]  # __init__ and methods taken from the class are unbound: self is in the code too
    assert doc == code, f"{where}: the doc says {text!r}; the code is {inspect.signature(obj)}"
    returns = re.search(r"\)\s*->\s*(.+?)\s*(?::\s*\.\.\.)?$", text)
    real = inspect.signature(obj).return_annotation
    if returns and real is not inspect.Signature.empty:
        real = real if isinstance(real, str) else inspect.formatannotation(real)
        doc_type, code_type = _norm(returns.group(1)), _norm(real)
        assert doc_type in (code_type, code_type.split("[")[0]), (  # "dict" may stand for dict[str, Any]
            f"{where}: returns {returns.group(1)} in the doc, {real} in the code"
        )


def test_the_doc_has_signatures_to_check():
    assert len({id(e[2]) for e in ENTRIES if e[1] == "def"}) >= 20 and any(e[1] == "field" for e in ENTRIES)
