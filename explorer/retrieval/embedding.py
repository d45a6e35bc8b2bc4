"""Embedders: what turns chunk texts into vectors for the persistent index.

An embedder is any object with a `name` (the vector cache's key: change it when the
vectors would change), a `dimensions` and `embed(list[str]) -> array` of shape
(len(texts), dimensions); it may say how many texts it takes per call (`batch_size`).
The default is WordLlama, whose weights and tokenizer ship inside its wheel and are
loaded from there: nothing is fetched. `--embedder openai:MODEL` embeds with a model
behind an OpenAI-compatible API (`endpoint`), `--embedder package.module:factory` plugs
in anything else (sentence-transformers, …), `--embedder none` embeds nothing.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from typing_extensions import TypedDict

from ..errors import ErrorCode, ExplorerError
from ..models import strict_shape
from ..plugins import load_plugin
from .endpoint import PREFIX, BadAnswer, Endpoint, EndpointOptions, model_of

if TYPE_CHECKING:  # numpy is imported where vectors are made: most commands make none
    import numpy as np
    from numpy.typing import NDArray

    Vectors = NDArray[np.float32]

DEFAULT_EMBEDDER = "wordllama"
NO_EMBEDDER = "none"
DEFAULT_BATCH = 64
DEFAULT_API_BATCH = 256  # inputs a request to an API (`--embed-batch`)
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


@strict_shape
class EmbedderUsage(TypedDict):
    """What an API embedded a run with (the evaluation file's `embedder`): its `name` (the
    vector cache's key), `model`, `dimensions`, the HTTP `requests` sent (retries
    included; 0 when every vector was cached) and the `input_tokens` it reported."""

    name: str
    model: str
    dimensions: int
    requests: int
    input_tokens: int


class ApiEmbedder:
    """A model behind an OpenAI-compatible API: `POST /embeddings`, `batch_size` inputs a
    request. Its name, the vector cache's key, is the API, the base URL's host, the model
    and the dimensions asked for (never the key). Without `dimensions` asked for, they
    are learnt from the first answer (or, by `learn`, from the vectors cached under its
    name) and every later answer must have as many. Counts the requests it sent and the
    input tokens the server reported."""

    def __init__(
        self, model: str, options: EndpointOptions, batch: int, dimensions: int | None
    ) -> None:
        self.endpoint = Endpoint(options, ErrorCode.INVALID_EMBEDDER)
        self.model = model
        self.batch_size = batch
        self.asked = dimensions
        self.dimensions = dimensions or 0
        asked = f"/{dimensions}" if dimensions else ""
        self.name = f"{PREFIX}{self.endpoint.host}/{model}{asked}"
        self.input_tokens = 0

    @property
    def requests(self) -> int:
        return self.endpoint.requests

    def usage(self) -> EmbedderUsage:
        return {
            "name": self.name,
            "model": self.model,
            "dimensions": self.dimensions,
            "requests": self.requests,
            "input_tokens": self.input_tokens,
        }

    def learn(self, dimensions: int) -> None:
        if not self.dimensions:
            self.dimensions = dimensions

    def embed(self, texts: list[str]) -> Any:
        payload: dict[str, object] = {"model": self.model, "input": texts}
        if self.asked:
            payload["dimensions"] = self.asked
        try:
            rows = self._rows(self.endpoint.post("/embeddings", payload), len(texts))
        except BadAnswer as error:
            raise ExplorerError(
                ErrorCode.EMBEDDING_FAILED, f"{self.endpoint.host} answered with {error}"
            ) from None
        self.learn(rows.shape[1])
        return rows

    def _rows(self, answer: Any, count: int) -> Vectors:
        """The answer's vectors in input order, each of `dimensions` finite numbers."""
        import numpy as np

        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
            raise BadAnswer("a body that is not the API's shape (no list 'data' of objects)")
        if len(data) != count:
            raise BadAnswer(f"{len(data)} vectors for {count} inputs")
        indexes = [item.get("index", number) for number, item in enumerate(data)]
        if sorted(indexes) != list(range(count)):
            raise BadAnswer("indexes that are not 0 to the number of inputs less one")
        rows = [item.get("embedding") for item in data]
        if not all(isinstance(row, list) and row for row in rows):
            raise BadAnswer("an 'embedding' that is not a list of numbers")
        expected = self.dimensions or len(rows[0])
        changed = next((len(row) for row in rows if len(row) != expected), None)
        if changed is not None and self.asked:
            raise BadAnswer(f"{changed} dimensions, not the {self.asked} asked for")
        if changed is not None:
            raise BadAnswer(f"dimensions that change ({changed} after {expected})")
        try:
            array = np.array(rows, dtype=np.float64)
        except (TypeError, ValueError):
            raise BadAnswer("an 'embedding' that is not a list of numbers") from None
        if not np.isfinite(array).all():
            raise BadAnswer("a NaN or infinite value")
        usage = answer.get("usage")
        tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        if type(tokens) is int and tokens >= 0:
            self.input_tokens += tokens
        ordered: Vectors = array[np.argsort(indexes)].astype(np.float32)
        return ordered


def api_embedder(
    spec: str,
    options: EndpointOptions,
    batch: int = DEFAULT_API_BATCH,
    dimensions: int | None = None,
) -> ApiEmbedder:
    """`openai:MODEL` with its endpoint; refused (`invalid_embedder`) before any work."""
    model = model_of(spec, ErrorCode.INVALID_EMBEDDER, "--embedder")
    if not 0 < batch <= MAX_BATCH or not 0 < (dimensions or 1) <= MAX_DIMENSIONS:
        raise ExplorerError(
            ErrorCode.INVALID_EMBEDDER,
            f"--embed-batch is 1 to {MAX_BATCH}, --dimensions 1 to {MAX_DIMENSIONS}",
        )
    return ApiEmbedder(model, options, batch, dimensions)


def load_embedder(
    spec: str,
    options: EndpointOptions | None = None,
    batch: int = DEFAULT_API_BATCH,
    dimensions: int | None = None,
) -> Embedder | None:
    """`wordllama`, `none` (None: no embedding stage), `openai:MODEL` (with `options`,
    `batch` and `dimensions`) or `package.module:factory`, whose factory is called
    without arguments; refused (`invalid_embedder`) before any work."""
    if spec == NO_EMBEDDER:
        return None
    if spec == DEFAULT_EMBEDDER:
        return wordllama()
    if spec.startswith(PREFIX):
        return api_embedder(spec, options or EndpointOptions(), batch, dimensions)
    embedder = load_plugin(
        spec, ErrorCode.INVALID_EMBEDDER, "--embedder", f"'{DEFAULT_EMBEDDER}', '{NO_EMBEDDER}'"
    )
    return checked(embedder, spec)


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


def to_blob(vector: Vectors) -> bytes:
    import numpy as np

    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def from_blobs(blobs: list[bytes], dimensions: int) -> Vectors:
    import numpy as np

    if not blobs:
        return np.zeros((0, dimensions), dtype=np.float32)
    rows: Vectors = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dimensions)
    return rows


def blob_bytes(dimensions: int) -> int:
    return dimensions * 4
