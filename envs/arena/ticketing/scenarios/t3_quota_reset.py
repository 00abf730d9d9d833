"""Stub."""


def build(author, level):
    raise NotImplementedError(level)
