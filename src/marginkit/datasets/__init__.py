"""Data set generators (and, later, loaders) used by the paper reproductions."""

from ._generators import make_sparse_target

__all__ = ["make_sparse_target"]
