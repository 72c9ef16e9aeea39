"""The version of marginkit (a leaf: persistence writes it into model files)."""

__version__ = "0.1.0"
