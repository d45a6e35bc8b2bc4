"""One tokenizer for the persistent index's search and the Retrieval tab's BM25."""

from __future__ import annotations

import importlib

from explorer.retrieval.retrievers import BM25
from explorer.retrieval.stopwords import ENGLISH_STOP_WORDS
from explorer.retrieval.terms import bm25_terms, words
from explorer.store.queries import search_terms

TEXT = "How do the Rotating keys of a service account stop working? It is the rotation."


def test_the_search_drops_the_words_bm25_drops() -> None:
    assert search_terms("How are the rotating keys") == '"rotating" OR "keys"'
    assert search_terms("the a of") == ""


def test_bm25_counts_the_search_words_stemmed() -> None:
    stem = importlib.import_module("Stemmer").Stemmer("english").stemWord
    assert [stem(word) for word in words(TEXT)] == bm25_terms([TEXT])[0]
    assert "the" not in words(TEXT) and "how" not in words(TEXT)  # scikit-learn's list


# Passages of a speech: four that say what, about and say often, and one on inflation.
SPEECH = [
    "What do we say to the families who ask what comes next? We say what we always say.",
    "About the bridges, what did I say? I said we would build them, and we did.",
    "Let me say a word about the veterans, about what they gave and what we owe them.",
    "What about the schools? Say what you will about the teachers: they showed up.",
    "The president said inflation has come down: prices rose 3.2% this year, from 9.1%.",
    "We passed the law on chips, and factories are going up across the country.",
]


def test_bm25_ranks_the_passage_a_question_asks_about_first() -> None:
    """Issue 37, item 13: question words (what, did, about…) no longer outrank the word
    asked about, in the Retrieval tab's BM25 and `evaluate` alike."""
    ranking = BM25().ranking(SPEECH, ["What did the president say about inflation?"])
    (best,) = ranking.best(0, 1, 3)
    assert best[0][0] == 4
    assert not {"what", "about", "how", "which", "who", "why"} & set(
        words("What, how, which, who, why about")
    )


def test_the_stop_words_are_scikit_learns_list() -> None:
    assert len(ENGLISH_STOP_WORDS) == 318
    assert {"what", "about", "which", "how", "the", "amoungst", "noone"} <= ENGLISH_STOP_WORDS
    assert not {"did", "say", "inflation"} & ENGLISH_STOP_WORDS
    bm25s_list = importlib.import_module("bm25s.stopwords").STOPWORDS_EN
    assert set(bm25s_list) <= ENGLISH_STOP_WORDS  # the 33 words dropped before, and more
    assert words("What did the president say about inflation?") == [
        "did",
        "president",
        "say",
        "inflation",
    ]
