"""marginkit: online approximate maximum-margin classifiers."""

from .alma import ALMAClassifier, KernelALMAClassifier
from .margin_perceptron import MarginPerceptronClassifier
from .perceptron import PerceptronClassifier
from .pumma import PUMMAClassifier
from .romma import ROMMAClassifier

__version__ = "0.1.0"

__all__ = [
    "ALMAClassifier",
    "KernelALMAClassifier",
    "MarginPerceptronClassifier",
    "PerceptronClassifier",
    "PUMMAClassifier",
    "ROMMAClassifier",
    "__version__",
]
