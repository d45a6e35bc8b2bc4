"""The words a search counts, one tokenizer for the Retrieval tab's BM25 (search and
`evaluate` alike) and the persistent index's search: text lower-cased, split into runs
of two or more word characters, English stop words (scikit-learn's list of 318,
`stopwords`) dropped. BM25 then stems each word (the Snowball English stemmer); the
index's full-text table holds the words unstemmed, so its queries use them as they
are."""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Sequence

from .stopwords import ENGLISH_STOP_WORDS

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
_WORD = re.compile(TOKEN_PATTERN)
_SORTED_STOP_WORDS = sorted(ENGLISH_STOP_WORDS)


def words(text: str) -> list[str]:
    """The words of `text` a search counts, in order, unstemmed."""
    return [word for word in _WORD.findall(text.lower()) if word not in ENGLISH_STOP_WORDS]


def bm25_terms(texts: Sequence[str]) -> list[list[str]]:
    """Each text's words as BM25 counts them: `words`, each stemmed, in order."""
    bm25s = importlib.import_module("bm25s")
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    stemmer = importlib.import_module("Stemmer").Stemmer("english")
    terms: list[list[str]] = bm25s.tokenize(
        list(texts),
        token_pattern=TOKEN_PATTERN,
        stopwords=_SORTED_STOP_WORDS,
        stemmer=stemmer,
        return_ids=False,
        show_progress=False,
    )
    return terms
