"""marginkit: online approximate maximum-margin classifiers."""

from .alma import ALMAClassifier, KernelALMAClassifier
from .margin_perceptron import MarginPerceptronClassifier
from .perceptron import KernelPerceptronClassifier, PerceptronClassifier
from .persistence import load, save
from .pumma import KernelPUMMAClassifier, PUMMAClassifier
from .romma import KernelROMMAClassifier, ROMMAClassifier

__version__ = "0.1.0"

__all__ = [
    "ALMAClassifier",
    "KernelALMAClassifier",
    "KernelPerceptronClassifier",
    "KernelPUMMAClassifier",
    "KernelROMMAClassifier",
    "MarginPerceptronClassifier",
    "PerceptronClassifier",
    "PUMMAClassifier",
    "ROMMAClassifier",
    "__version__",
    "load",
    "save",
]
