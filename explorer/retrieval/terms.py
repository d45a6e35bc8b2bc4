"""The words a search counts, one tokenizer for the Retrieval tab's BM25 and the
persistent index's search: text lower-cased, split into runs of two or more word
characters, English stop words (bm25s's list) dropped. BM25 then stems each word (the
Snowball English stemmer); the index's full-text table holds the words unstemmed, so its
queries use them as they are."""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Sequence
from functools import cache

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
_WORD = re.compile(TOKEN_PATTERN)


@cache
def stop_words() -> frozenset[str]:
    """bm25s's English stop words (imported on first use: the package is large)."""
    return frozenset(importlib.import_module("bm25s.stopwords").STOPWORDS_EN)


def words(text: str) -> list[str]:
    """The words of `text` a search counts, in order, unstemmed."""
    dropped = stop_words()
    return [word for word in _WORD.findall(text.lower()) if word not in dropped]


def bm25_terms(texts: Sequence[str]) -> list[list[str]]:
    """Each text's words as BM25 counts them: `words`, each stemmed, in order."""
    bm25s = importlib.import_module("bm25s")
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    stemmer = importlib.import_module("Stemmer").Stemmer("english")
    terms: list[list[str]] = bm25s.tokenize(
        list(texts),
        token_pattern=TOKEN_PATTERN,
        stopwords=sorted(stop_words()),
        stemmer=stemmer,
        return_ids=False,
        show_progress=False,
    )
    return terms
