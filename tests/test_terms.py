"""One tokenizer for the persistent index's search and the Retrieval tab's BM25."""

from __future__ import annotations

import importlib

from explorer.retrieval.terms import bm25_terms, words
from explorer.store.queries import search_terms

TEXT = "How do the Rotating keys of a service account stop working? It is the rotation."


def test_the_search_drops_the_words_bm25_drops() -> None:
    assert search_terms("How are the rotating keys") == '"how" OR "rotating" OR "keys"'
    assert search_terms("the a of") == ""


def test_bm25_counts_the_search_words_stemmed() -> None:
    stem = importlib.import_module("Stemmer").Stemmer("english").stemWord
    assert [stem(word) for word in words(TEXT)] == bm25_terms([TEXT])[0]
    assert "the" not in words(TEXT) and "is" not in words(TEXT)  # bm25s's English list
