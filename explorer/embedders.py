"""Embedders: what turns texts into vectors, for the persistent index, `evaluate`'s
embedding retrievers and the semantic policy's curve (a low stage, so that chunking
uses it without importing retrieval).

An embedder is any object with a `name` (the vector cache's key: change it when the
vectors would change), a `dimensions` and `embed(list[str]) -> array` of shape
(len(texts), dimensions); it may say how many texts it takes per call (`batch_size`).
The default is WordLlama, whose weights and tokenizer ship inside its wheel and are
loaded from there: nothing is fetched. `--embedder package.module:factory` plugs in
anything else (OpenAI, sentence-transformers, …), `--embedder none` embeds nothing.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .errors import ErrorCode, ExplorerError
from .plugins import load_plugin

if TYPE_CHECKING:  # numpy is imported where vectors are made: most commands make none
    import numpy as np
    from numpy.typing import NDArray

    Vectors = NDArray[np.float32]

DEFAULT_EMBEDDER = "wordllama"
NO_EMBEDDER = "none"
DEFAULT_BATCH = 64
MAX_BATCH = 1024
MAX_DIMENSIONS = 4096
MAX_NAME_CHARS = 200
# What an embedder's failure is: its answer (`embedding_failed`) or its API's refusal.
EMBEDDER_FAILURES = frozenset(
    {ErrorCode.EMBEDDING_FAILED, ErrorCode.ENDPOINT_FAILED, ErrorCode.ENDPOINT_UNAUTHORIZED}
)


@runtime_checkable
class Embedder(Protocol):
    """What the store needs of an embedder."""

    @property
    def name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: list[str]) -> Any: ...


class WordLlamaEmbedder:
    """WordLlama (l2_supercat, 256 dimensions), loaded once per process from the files
    its wheel ships. `WordLlama.load` looks for the tokenizer in `<cache_dir>/tokenizers`
    (its own package folder is checked under the singular `tokenizer`), so the package's
    folder is passed as `cache_dir`, with downloads disabled."""

    dimensions = 256
    batch_size = DEFAULT_BATCH

    def __init__(self) -> None:
        self._model, version = _wordllama_model()
        self.name = f"wordllama-{version}/l2_supercat/256"

    def embed(self, texts: list[str]) -> Any:
        return self._model.embed(texts, norm=True)


@functools.cache
def _wordllama_model() -> tuple[Any, str]:
    try:
        package = importlib.import_module("wordllama")
    except ImportError:
        raise ExplorerError(
            ErrorCode.INVALID_EMBEDDER,
            "the default embedder needs the package 'wordllama' "
            "(pip install -r requirements.txt), or pass --embedder none",
        ) from None
    folder = Path(str(package.__file__)).parent
    try:
        model = package.WordLlama.load(
            config="l2_supercat", dim=256, cache_dir=folder, disable_download=True
        )
    except (OSError, ValueError) as error:
        raise ExplorerError(
            ErrorCode.INVALID_EMBEDDER,
            f"WordLlama's bundled weights could not be loaded from {str(folder)!r}: {error}",
        ) from None
    return model, str(getattr(package, "__version__", "unknown"))


def wordllama() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


def wordllama_name() -> str:
    """The name WordLlama's vectors are recorded under (its version inside)."""
    return wordllama().name


def load_embedder(spec: str) -> Embedder | None:
    """`wordllama`, `none` (None: no embedding stage) or `package.module:factory`, whose
    factory is called without arguments; refused (`invalid_embedder`) before any work.
    The embedder loaded is the one `embedder_named` finds by its name from then on."""
    if spec == NO_EMBEDDER:
        return None
    if spec == DEFAULT_EMBEDDER:
        return wordllama()
    embedder = load_plugin(
        spec, ErrorCode.INVALID_EMBEDDER, "--embedder", f"'{DEFAULT_EMBEDDER}', '{NO_EMBEDDER}'"
    )
    return register(checked(embedder, spec))


def register(embedder: Embedder) -> Embedder:
    """`embedder`, the one `embedder_named` finds by its name from now on."""
    _LOADED[embedder.name] = embedder
    return embedder


# The embedders `load_embedder` made in this process, by name, the latest of each name:
# a config names its embedder (docs/contract.md §5d) and is cut with the one loaded.
_LOADED: dict[str, Embedder] = {}
WORDLLAMA_PREFIX = "wordllama-"


def embedder_named(name: str, dimensions: int) -> Embedder:
    """The embedder a config names: WordLlama (loaded on first use) or one loaded by
    `load_embedder` in this process; `invalid_embedder` when there is none of that name
    and dimensions (another version of WordLlama, a plug-in not given)."""
    found = _LOADED.get(name)
    if found is None and name.startswith(WORDLLAMA_PREFIX):
        found = wordllama()
    if found is None or found.name != name or found.dimensions != dimensions:
        have = "" if found is None else f" (this process has {found.name!r}, {found.dimensions})"
        raise ExplorerError(
            ErrorCode.INVALID_EMBEDDER,
            f"the column's embedder {name[:MAX_NAME_CHARS]!r} of {dimensions} dimensions is not "
            f"loaded{have}: pass --embedder with the package.module:factory that makes it",
        )
    return found


def checked(embedder: object, where: str) -> Embedder:
    """The object, if it has a usable name, dimensions, embed and batch size."""
    name = getattr(embedder, "name", None)
    dimensions = getattr(embedder, "dimensions", None)
    problem = None
    if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME_CHARS:
        problem = f"a name of 1 to {MAX_NAME_CHARS} characters"
    elif type(dimensions) is not int or not 0 < dimensions <= MAX_DIMENSIONS:
        problem = f"whole-number dimensions from 1 to {MAX_DIMENSIONS}"
    elif not callable(getattr(embedder, "embed", None)):
        problem = "an embed(list[str]) method"
    elif not 0 < batch_size(embedder) <= MAX_BATCH:
        problem = f"a batch_size from 1 to {MAX_BATCH}, if it has one"
    if problem is not None or not isinstance(embedder, Embedder):
        raise ExplorerError(
            ErrorCode.INVALID_EMBEDDER, f"the embedder from {where} needs {problem}"
        )
    return embedder


def batch_size(embedder: object) -> int:
    size = getattr(embedder, "batch_size", DEFAULT_BATCH)
    return size if type(size) is int else 0


def embed_texts(embedder: Embedder, texts: list[str]) -> Vectors:
    """One call: unit-length float32 rows, one per text. An embedder that raises or
    answers with the wrong shape, a non-finite number or an all-zero vector is
    `embedding_failed`; an API's refusal keeps its code (`EMBEDDER_FAILURES`)."""
    import numpy as np

    try:
        raw = embedder.embed(list(texts))
    except ExplorerError:  # ours (`openai:`): its own code
        raise
    except Exception as error:  # a user's embedder: any failure is recorded, not raised
        raise ExplorerError(
            ErrorCode.EMBEDDING_FAILED, f"it raised {type(error).__name__}: {error}"
        ) from None
    try:
        array = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as error:
        raise ExplorerError(
            ErrorCode.EMBEDDING_FAILED, f"it returned something that is not an array ({error})"
        ) from None
    expected = (len(texts), embedder.dimensions)
    if array.shape != expected:
        raise ExplorerError(
            ErrorCode.EMBEDDING_FAILED,
            f"it returned an array of shape {array.shape} for {len(texts)} texts; "
            f"expected {expected}",
        )
    if not np.isfinite(array).all():
        raise ExplorerError(ErrorCode.EMBEDDING_FAILED, "it returned a NaN or an infinity")
    norms = np.linalg.norm(array.astype(np.float64), axis=1, keepdims=True)
    if not (norms > 0).all():  # like NaN: a vector with no direction matches nothing
        raise ExplorerError(
            ErrorCode.EMBEDDING_FAILED,
            f"it returned an all-zero vector (for text {int(np.argmin(norms)) + 1} of "
            f"{len(texts)})",
        )
    unit: Vectors = (array / norms).astype(np.float32)
    return unit
