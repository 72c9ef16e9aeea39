"""Which marginkit classes a model file may hold: the trusted-type registry.

A leaf of the package: it imports nothing of marginkit, so that every module, the
compiled engines included, can declare its classes with :func:`trusted_type` without
importing the persistence layer that reads the files (:mod:`marginkit.persistence`,
which re-exports both names).
"""


class UntrustedFileError(ValueError):
    """A model file that :func:`load` does not trust; nothing was loaded.

    It names types that marginkit does not write, or holds values that marginkit's
    compiled code must not be given (an index out of range, a count that does not
    match its array, an array of the wrong dtype or shape...); the message says which.
    """


#: The classes a model file may hold, by qualified name, declared by their modules.
_TRUSTED = {}
#: The subset of those that :func:`save` stores as a model.
_MODELS = set()


def _name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


#: Where classes lived before they moved (the engines' before :mod:`marginkit._core`
#: held them, PUMMA's state before it joined its pass, the kernel engine's before
#: ``marginkit._core.kernel`` was split by job, the orders of a checkpoint's epochs and
#: the linear estimators' base before ``marginkit._base`` was): files written then name
#: them so, and load as files written now. (Pickles find them there too: each former
#: module that still exists imports them.)
_FORMER_MODULES = {
    "marginkit._core.state": ("marginkit._state",),
    "marginkit._core.kernels": ("marginkit._kernels",),
    "marginkit._core.kernel.rows": ("marginkit._core.kernel", "marginkit._engine"),
    "marginkit._core.kernel.state": ("marginkit._core.kernel", "marginkit._engine"),
    "marginkit._core.pairs": ("marginkit._pumma_engine",),
    "marginkit._core.pumma": ("marginkit.pumma",),
    "marginkit._checkpoints": ("marginkit._base",),
    "marginkit._linear_base": ("marginkit._base",),
}


def trusted_type(cls, *, model=False):
    """Declare ``cls`` (a marginkit class) as one that model files may hold.

    Usable as a class decorator. With ``model=True`` it is also a model that
    :func:`save` stores. Classes outside the ``marginkit`` package are not declared.
    """
    if cls.__module__.split(".")[0] == "marginkit":
        _TRUSTED[_name(cls)] = cls
        for former in _FORMER_MODULES.get(cls.__module__, ()):
            _TRUSTED[f"{former}.{cls.__qualname__}"] = cls
        if model:
            _MODELS.add(_name(cls))
    return cls


# raised and caught under its public name (tracebacks, pickles)
UntrustedFileError.__module__ = "marginkit.persistence"
