"""Question generators for tests, loaded the way a user's are: `--generator
tests.generators:NAME`. Deterministic, offline."""

from __future__ import annotations


class FirstWords:
    """The passage's first eight words as a question: enough for BM25 to find it."""

    name = "first-words/1"

    def generate(self, passage: str) -> str:
        return "What about " + " ".join(passage.split()[:8]) + "?"


class Raising:
    name = "raising/1"

    def generate(self, passage: str) -> str:
        raise RuntimeError("the model is down")


class Silent:
    name = "silent/1"

    def generate(self, passage: str) -> str:
        return "  \n "


def first_words() -> FirstWords:
    return FirstWords()


def raising() -> Raising:
    return Raising()


def silent() -> Silent:
    return Silent()


def nameless() -> object:
    return object()
