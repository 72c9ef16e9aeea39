"""marginkit: online approximate maximum-margin classifiers."""

from .alma import ALMAClassifier, KernelALMAClassifier
from .margin_perceptron import MarginPerceptronClassifier
from .perceptron import PerceptronClassifier
from .romma import ROMMAClassifier

__version__ = "0.1.0"

__all__ = [
    "ALMAClassifier",
    "KernelALMAClassifier",
    "MarginPerceptronClassifier",
    "PerceptronClassifier",
    "ROMMAClassifier",
    "__version__",
]
