"""Vectors as the store and the vector cache keep them, and embedders behind an
OpenAI-compatible API (`--embedder openai:MODEL`, `endpoint`); the embedder protocol,
WordLlama and plug-ins are `explorer.embedders` (re-exported here for the stages above)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from ..embedders import (
    DEFAULT_EMBEDDER,
    EMBEDDER_FAILURES,
    MAX_BATCH,
    MAX_DIMENSIONS,
    NO_EMBEDDER,
    Embedder,
    WordLlamaEmbedder,
    batch_size,
    checked,
    embed_texts,
    register,
    wordllama,
)
from ..embedders import load_embedder as load_plain
from ..errors import ErrorCode, ExplorerError
from ..models import strict_shape
from .endpoint import PREFIX, BadAnswer, Endpoint, EndpointOptions, model_of

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Vectors = NDArray[np.float32]

DEFAULT_API_BATCH = 256  # inputs a request to an API (`--embed-batch`)

__all__ = [
    "DEFAULT_API_BATCH",
    "DEFAULT_EMBEDDER",
    "EMBEDDER_FAILURES",
    "MAX_BATCH",
    "MAX_DIMENSIONS",
    "NO_EMBEDDER",
    "ApiEmbedder",
    "Embedder",
    "EmbedderUsage",
    "Vectors",
    "WordLlamaEmbedder",
    "api_embedder",
    "batch_size",
    "blob_bytes",
    "checked",
    "embed_texts",
    "from_blobs",
    "load_embedder",
    "to_blob",
    "wordllama",
]


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
    """`openai:MODEL` (with `options`, `batch` and `dimensions`), else what
    `explorer.embedders.load_embedder` takes (`wordllama`, `none`, `package.module:factory`);
    refused (`invalid_embedder`) before any work. An API's embedder is the one a semantic
    column names from then on, as a plug-in is (`register`)."""
    if spec.startswith(PREFIX):
        return register(api_embedder(spec, options or EndpointOptions(), batch, dimensions))
    return load_plain(spec)


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
