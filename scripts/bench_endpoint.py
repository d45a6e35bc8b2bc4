"""Wall time of `--embedder openai:MODEL`'s client (explorer/retrieval/endpoint.py, httpx):
N texts embedded in batches against a local stub server (not a timed test).

    PYTHONPATH=. .venv/bin/python scripts/bench_endpoint.py [N] [DIMENSIONS] [BATCH]

The stub (pytest-httpserver, in this process, threaded) answers each batch size with
bytes it serialized once, so the figure is the client's work: the request, reading the
answer in bounded pieces, orjson, the checks and the float32 array.
"""

from __future__ import annotations

import json
import logging
import sys
import time

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from explorer.retrieval.embedding import api_embedder, embed_texts
from explorer.retrieval.endpoint import EndpointOptions


def main(count: int = 10_000, dimensions: int = 1536, batch: int = 256) -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    row = [round(0.001 * (i % 997) - 0.5, 6) for i in range(dimensions)]
    bodies: dict[int, bytes] = {}

    def answer(request: Request) -> Response:
        size = len(request.get_json()["input"])
        if size not in bodies:
            data = [{"index": i, "embedding": row} for i in range(size)]
            bodies[size] = json.dumps({"data": data, "usage": {"prompt_tokens": size}}).encode()
        return Response(bodies[size], content_type="application/json")

    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.expect_request("/v1/embeddings").respond_with_handler(answer)
    server.start()
    try:
        embedder = api_embedder(
            "openai:bench", EndpointOptions(base_url=server.url_for("/v1")), batch
        )
        texts = [f"text {i} about chunk boundaries" for i in range(count)]
        began = time.perf_counter()
        for start in range(0, count, batch):
            embed_texts(embedder, texts[start : start + batch])
        seconds = time.perf_counter() - began
    finally:
        server.stop()
    print(
        f"{count:,} texts, {dimensions} dimensions, batch {batch}: {seconds:.2f} s "
        f"({embedder.requests} requests, {count / seconds:,.0f} texts/s)"
    )


if __name__ == "__main__":
    main(*(int(value) for value in sys.argv[1:4]))
