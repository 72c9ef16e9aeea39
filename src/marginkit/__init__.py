"""marginkit: online approximate maximum-margin classifiers."""

from .alma import ALMAClassifier, KernelALMAClassifier

__version__ = "0.1.0"

__all__ = ["ALMAClassifier", "KernelALMAClassifier", "__version__"]
