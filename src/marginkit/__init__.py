"""marginkit: online approximate maximum-margin classifiers."""

from ._order import StreamOrderWarning
from ._version import __version__
from .alma import ALMAClassifier, KernelALMAClassifier
from .margin_perceptron import MarginPerceptronClassifier
from .perceptron import KernelPerceptronClassifier, PerceptronClassifier
from .persistence import load, save
from .pumma import KernelPUMMAClassifier, PUMMAClassifier
from .romma import KernelROMMAClassifier, ROMMAClassifier

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
    "StreamOrderWarning",
    "__version__",
    "load",
    "save",
]
