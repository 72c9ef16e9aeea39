"""Data set generators and loaders used by the paper reproductions."""

from ._deformed import iter_deformed_mnist
from ._generators import make_r_of_k, make_sparse_target
from ._loaders import (
    data_home,
    load_adult,
    load_house_votes,
    load_ionosphere,
    load_letter,
    load_mnist,
    load_usps,
)

__all__ = [
    "data_home",
    "iter_deformed_mnist",
    "load_adult",
    "load_house_votes",
    "load_ionosphere",
    "load_letter",
    "load_mnist",
    "load_usps",
    "make_r_of_k",
    "make_sparse_target",
]
