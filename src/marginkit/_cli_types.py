"""The argument types of the ``marginkit`` command (argparse ``type=`` callables): each
turns one option's text into its value, or raises ``argparse.ArgumentTypeError`` with
what it takes.
"""

import argparse


def int_at_least(minimum):
    """An argparse type: an integer no smaller than ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


seed = int_at_least(0)
count = int_at_least(1)


def momentum_value(text: str):
    """An argparse type: "auto", or a number (its range is MixingClassifier's check)."""
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number or auto: {text!r}") from None


def number_list(convert, kind, valid, requirement):
    """An argparse type: a comma-separated list of numbers, each checked by ``valid``."""

    def parse(text: str) -> list:
        try:
            values = [convert(t.strip()) for t in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not a comma-separated list of {kind}: {text!r}"
            ) from None
        if not all(valid(v) for v in values):
            raise argparse.ArgumentTypeError(f"{requirement}, got {text!r}")
        return values

    return parse


degree_list = number_list(int, "integers", lambda v: v >= 1, "degrees must be >= 1")
alpha_list = number_list(float, "numbers", lambda v: 0.0 < v <= 1.0, "alphas must lie in (0, 1]")


def label_list(text: str) -> list:
    """An argparse type: comma-separated labels, numbers where they read as numbers."""
    from .tasks import parse_param

    labels = [parse_param(f"label={t.strip()}")[1] for t in text.split(",") if t.strip()]
    if len(labels) < 2:
        raise argparse.ArgumentTypeError(f"at least two labels are needed, got {text!r}")
    return labels


def choices_of(allowed, kind):
    """An argparse type: a comma-separated list of some of ``allowed``."""

    def parse(text: str) -> list:
        names = [t.strip() for t in text.split(",")]
        unknown = [n for n in names if n not in allowed]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"unknown {kind} {', '.join(unknown)} (known: {', '.join(allowed)})"
            )
        return names

    return parse


def dataset_list(text: str) -> list:
    """An argparse type: a comma-separated list of the data sets of pumma-real."""
    from .experiments.pumma_real import DATASETS

    return choices_of(DATASETS, "data set(s)")(text)
