"""marginkit: online approximate maximum-margin classifiers."""

from .alma import ALMAClassifier

__version__ = "0.1.0"

__all__ = ["ALMAClassifier", "__version__"]
