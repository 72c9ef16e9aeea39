"""Data set generators and loaders used by the paper reproductions."""

from ._generators import make_sparse_target
from ._loaders import data_home, load_letter, load_mnist, load_usps

__all__ = ["data_home", "load_letter", "load_mnist", "load_usps", "make_sparse_target"]
