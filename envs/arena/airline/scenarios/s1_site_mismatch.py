"""stub"""


def build(author, level):
    raise NotImplementedError
