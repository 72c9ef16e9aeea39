"""marginkit's classifiers in river: :class:`RiverClassifier`, a river classifier made of
any of them, for river's pipelines, evaluators and drift detectors.

river (https://riverml.xyz) learns from a stream one row at a time, a row being a dict
of features and its label a bool, a string or a number. :class:`RiverClassifier` maps
the features to the columns of its estimator and the labels to its classes once, at
its first fit, and then hands each row to the estimator's compiled pass without
validating it again: the model is that of :meth:`~marginkit.ALMAClassifier.partial_fit`
on the same rows, one call each, bit for bit, at a fraction of the cost of such a call.
See docs/reference/river.md for what it costs against river's own learners.

Needs river: ``pip install "marginkit[river]"``.
"""

import math
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.utils.multiclass import unique_labels

try:
    from river import base
except ImportError as exc:
    raise ImportError(
        'marginkit.river needs river, which is not installed: pip install "marginkit[river]"'
    ) from exc

from ._base import OnlineClassifier
from ._guards import check_two_classes

__all__ = ["RiverClassifier"]


class RiverClassifier(base.MiniBatchClassifier):
    """A marginkit classifier as a river classifier: ``learn_one``, ``predict_one`` and
    ``predict_proba_one`` on dicts, ``learn_many``, ``predict_many`` and
    ``predict_proba_many`` on pandas frames.

    Features. The columns of the estimator are fixed by its first fit: ``features`` in
    the order given, or else the names of the features of the rows that fit takes,
    sorted (so that the order of a dict's keys never matters). A feature left out of a
    row counts as 0 there, as in river's linear models; a feature outside the columns
    is ignored, with one warning the first time a row to learn brings one. Values are
    numbers (bools count as 0 and 1); a string, a None, a NaN or an infinity raises.
    Encode categories beforehand (``river.preprocessing.OneHotEncoder``).

    Labels. With ``classes``, the first row is learnt as it comes. Without, the rows
    are kept until a second label has come, and the first fit takes all of them, the
    labels being those two: a stream of more labels needs ``classes``. The first fit
    takes from its rows what :meth:`~marginkit.ALMAClassifier.partial_fit` takes from
    its first call (the radius of the instances under ``fit_intercept``, a kernel's
    ``gamma="scale"``); every later row is a trial of its own, so that ``learn_one``
    and ``learn_many`` give the same model from the same stream, however it is cut
    into batches (``learn_many`` splits a batch at the end of the first fit's rows).

    Predictions. Before the first fit, the prediction is that of the algorithms'
    starting hypothesis, 0, whose decision is the first of the sorted ``classes``;
    without ``classes``, the one label of the stream so far (None before any row).
    marginkit's classifiers have no probability model: their margins are not
    probabilities, and a sigmoid of them would be a calibration no one fitted.
    ``predict_proba_one`` therefore gives the decision itself, 1.0 for the label
    predicted and 0.0 for the others, which is what river's wrappers that predict
    through probabilities (``river.drift.DriftRetrainingClassifier``) need; a metric of
    probabilities (log loss, ROC AUC) scores the decisions only. The margins are those
    of ``estimator_.decision_function``.

    Parameters
    ----------
    estimator : marginkit classifier
        The classifier to learn with (any of marginkit's, linear or kernel); the
        bridge fits a clone of it (``estimator_``) and leaves it as given.
    classes : sequence, default=None
        Every label the stream can hold (at least two); None: the first two labels
        of the stream.
    features : sequence, default=None
        The names of the features, in the order of the estimator's columns; None:
        the sorted names of those of the rows of the first fit.

    Attributes
    ----------
    estimator_ : marginkit classifier or None
        The fitted clone of ``estimator``; None before the first fit. Its counts are
        those of the rows learnt when it is read from the bridge.
    classes_ : list or None
        The labels, sorted as in ``estimator_.classes_``; None while they are not known.
    features_ : list or None
        The name of the feature of each column of ``estimator_``; None before the first
        fit (or the ``features`` given).

    Examples
    --------
    >>> from river import datasets, evaluate, metrics, preprocessing
    >>> from marginkit import ALMAClassifier
    >>> from marginkit.river import RiverClassifier
    >>> model = preprocessing.StandardScaler() | RiverClassifier(
    ...     ALMAClassifier(), classes=[False, True]
    ... )
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    Accuracy: 88.72%
    """

    def __init__(self, estimator, classes=None, features=None):
        self.estimator = estimator
        self.classes = classes
        self.features = features
        if not isinstance(estimator, OnlineClassifier):
            raise TypeError(
                "estimator must be one of marginkit's classifiers (such as "
                f"ALMAClassifier()), got {type(estimator).__name__}. For other "
                "scikit-learn classifiers, use river.compat.convert_sklearn_to_river."
            )
        self.classes_ = None
        if classes is not None:
            self._set_classes(unique_labels(classes))
        self.features_ = None
        if features is not None:
            self._set_features(_feature_names(features))
        self._estimator = None
        self._learner = None  # the estimator's RowLearner, made again after a load
        self._waiting = ([], [])  # rows and labels before the first fit
        self._warned = False

    # -- what river asks of a classifier -------------------------------------------
    @property
    def _multiclass(self):
        return self.classes_ is not None and len(self.classes_) > 2

    @classmethod
    def _unit_test_params(cls):
        from .alma import ALMAClassifier

        yield {"estimator": ALMAClassifier(), "classes": (False, True)}

    @property
    def estimator_(self):
        """The fitted clone of ``estimator`` (None before the first fit). Its counts
        (``n_corrections_``, ``n_trials_``) are brought up to date when it is read here:
        a row may leave them behind, for speed."""
        if self._learner is not None:
            self._learner.sync()
        return self._estimator

    def __getstate__(self):
        # the row learner holds the estimator's methods: it is made again after a load
        if self._learner is not None:
            self._learner.sync()
        return {**self.__dict__, "_learner": None}

    # -- learning ------------------------------------------------------------------
    def learn_one(self, x, y):
        """Learn the row ``x`` (a dict of features) of label ``y``.

        Parameters
        ----------
        x : dict
        y : bool, str or int
        """
        learner = self._learner or self._new_learner()
        if learner is None:
            self._wait([dict(x)], [y])
            return
        code = self._codes.get(y)
        if code is None:
            raise self._unknown([y])
        learner.learn(self._row(x, learning=True), code)

    def learn_many(self, X, y):
        """Learn the rows of the frame ``X`` (columns named as the features) of labels
        ``y``, in their order: the model is that of :meth:`learn_one` on each row.

        Parameters
        ----------
        X : pandas.DataFrame
        y : pandas.Series
        """
        labels = list(y)
        if len(labels) != len(X):
            raise ValueError(
                f"Found input variables with inconsistent numbers of samples: "
                f"[{len(X)}, {len(labels)}]"
            )
        if self._estimator is None:
            first = self._first_fit_end(labels)
            self._wait(X.iloc[:first].to_dict(orient="records"), labels[:first])
            X, labels = X.iloc[first:], labels[first:]
        if not labels:
            return
        unknown = [label for label in labels if label not in self._codes]
        if unknown:
            raise self._unknown(unknown)
        self._learner = None  # (partial_fit may change what a row learner holds)
        self._estimator.partial_fit(self._frame(X, learning=True), np.asarray(labels))

    def _first_fit_end(self, labels):
        """How many of ``labels`` the first fit takes: one with ``classes``; else up to
        the first that makes two labels with those waiting (all when none does)."""
        if self.classes is not None:
            return 1
        seen = set(self._waiting[1])
        for i, label in enumerate(labels):
            seen.add(label)
            if len(seen) > 1:
                return i + 1
        return len(labels)

    def _wait(self, rows, labels):
        """Rows before the first fit: kept until it can be made (at once with
        ``classes``, else at the second label), then fitted, all of them. Rows that
        raise are not kept."""
        for row in rows:
            self._check_values(row)
        if self.classes is not None:
            unknown = [label for label in labels if label not in self._codes]
            if unknown:
                raise self._unknown(unknown)
        before, kept = dict(self.__dict__), len(self._waiting[0])
        self._waiting[0].extend(rows)
        self._waiting[1].extend(labels)
        try:
            self._first_fit()
        except BaseException:
            del self._waiting[0][kept:], self._waiting[1][kept:]
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def _first_fit(self):
        """The first fit, of the rows waiting, where their labels allow it."""
        rows, labels = self._waiting
        if self.classes is None:
            if len(set(labels)) < 2:
                return
            self._set_classes(unique_labels(labels))
        if self.features_ is None:
            self._set_features(_sorted_names({name for row in rows for name in row}))
        X = np.vstack([self._row(row, learning=True) for row in rows])
        y = np.array([self.classes_[self._codes[label]] for label in labels])
        estimator = clone(self.estimator)
        estimator.partial_fit(X, y, classes=np.asarray(self.classes_))
        self._estimator = estimator
        self._waiting = ([], [])

    def _new_learner(self):
        """The estimator's row learner (None before the first fit)."""
        if self._estimator is None:
            return None
        self._learner = self._estimator._row_learner()
        return self._learner

    def _set_classes(self, classes):
        check_two_classes(classes)
        self.classes_ = classes.tolist()
        self._codes = {label: code for code, label in enumerate(self.classes_)}

    def _set_features(self, names):
        self.features_ = names
        self._columns = {name: j for j, name in enumerate(names)}
        self._zeros = [0.0] * len(names)  # (each feature's value where a row has none)

    def _unknown(self, labels):
        unseen = sorted(set(labels), key=repr)
        message = f"y contains labels {unseen} that are not in classes {self.classes_}"
        if self.classes is None:
            message += (
                f": without classes, {type(self).__name__} takes the first two labels of the "
                "stream. Pass classes with every label the stream can hold."
            )
        return ValueError(message)

    # -- rows and frames in the estimator's columns ---------------------------------
    def _row(self, x, learning=False):
        """The dict ``x`` as a row of the estimator: a (1, n_features) float64 array."""
        if learning and not self._warned and not x.keys() <= self._columns.keys():
            self._warn_outside([name for name in x if name not in self._columns])
        values = list(map(x.get, self.features_, self._zeros))
        try:
            total = sum(values)  # (a string or a None among them raises)
        except TypeError:
            raise self._not_numeric(x) from None
        if total - total != 0.0:  # a NaN or an infinity, or a sum beyond float64
            self._check_values(x)
        X = np.array(values, dtype=np.float64, ndmin=2)
        X.flags.writeable = False  # (the form the compiled passes take)
        return X

    def _frame(self, X, learning=False):
        """The frame ``X`` in the estimator's columns (float64)."""
        outside = [name for name in X.columns if name not in self._columns]
        if outside and learning and not self._warned:
            self._warn_outside(outside)
        X = X.reindex(columns=self.features_, fill_value=0.0)
        try:
            values = X.to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            for row in X.to_dict(orient="records"):
                self._row(row)  # the first value that is not a number raises
            raise
        if not np.isfinite(values).all():
            j = int(np.flatnonzero(~np.isfinite(values).all(axis=0))[0])
            column = values[:, j]
            raise _not_finite(self.features_[j], column[~np.isfinite(column)][0])
        return values

    def _check_values(self, x):
        """A ValueError where a feature of ``x`` (one of the columns, when they are
        known) is not a finite number."""
        columns = self.features_
        for name, value in x.items():
            if columns is not None and name not in self._columns:
                continue
            if not _is_number(value):
                raise self._not_numeric(x)
            if not math.isfinite(float(value)):
                raise _not_finite(name, float(value))

    def _not_numeric(self, x):
        for name, value in x.items():
            if (self.features_ is None or name in self._columns) and not _is_number(value):
                return ValueError(
                    f"{type(self).__name__} takes numbers as features; feature {name!r} is "
                    f"{value!r}. Encode it first (river.preprocessing.OneHotEncoder)."
                )
        return ValueError(f"{type(self).__name__} takes numbers as features, got {x!r}")

    def _warn_outside(self, names):
        self._warned = True
        warnings.warn(
            f"{type(self).__name__} ignores the features {_sorted_names(names)}: its "
            f"columns are those of its first fit ({len(self.features_)} features). "
            "Pass features= to choose them. (This warning is given once.)",
            UserWarning,
            stacklevel=3,
        )

    # -- prediction ----------------------------------------------------------------
    def predict_one(self, x):
        """The label predicted for the row ``x``: the estimator's ``predict``.

        Parameters
        ----------
        x : dict

        Returns
        -------
        label : bool, str, int or None
            Before the first fit, the first of the sorted ``classes``; without
            ``classes``, the one label seen so far (None before any row).
        """
        learner = self._learner or self._new_learner()
        if learner is None:
            return self._first_label()
        return self.classes_[learner.predict(self._row(x))]

    def _first_label(self):
        """The prediction before the first fit: the decision of the starting hypothesis
        (the first class), or the one label of the stream so far (None before any)."""
        if self.classes_ is not None:
            return self.classes_[0]
        labels = self._waiting[1]
        return labels[0] if labels else None

    def predict_proba_one(self, x):
        """The decision as a distribution: 1.0 for the label :meth:`predict_one` gives,
        0.0 for the others (marginkit's classifiers have no probability model).

        Parameters
        ----------
        x : dict

        Returns
        -------
        dict
            ``{label: 0.0 or 1.0}`` for every label; empty while no label is known.
        """
        predicted = self.predict_one(x)
        if predicted is None:
            return {}
        if self.classes_ is None:
            return {predicted: 1.0}
        return {label: float(label == predicted) for label in self.classes_}

    def predict_many(self, X):
        """The labels predicted for the rows of the frame ``X``, as :meth:`predict_one`
        gives them.

        Parameters
        ----------
        X : pandas.DataFrame

        Returns
        -------
        pandas.Series
        """
        import pandas as pd

        if self._estimator is None:
            return pd.Series([self._first_label()] * len(X), index=X.index, dtype=object)
        labels = self._estimator.predict(self._frame(X)).tolist()
        return pd.Series(labels, index=X.index)

    def predict_proba_many(self, X):
        """The decisions of :meth:`predict_many` as distributions, one column per label,
        as :meth:`predict_proba_one` gives them.

        Parameters
        ----------
        X : pandas.DataFrame

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        predicted = self.predict_many(X).to_numpy()
        labels = self.classes_
        if labels is None:
            labels = [] if self._first_label() is None else [self._first_label()]
        return pd.DataFrame(
            {label: (predicted == label).astype(np.float64) for label in labels},
            index=X.index,
        )


def _feature_names(features):
    if isinstance(features, str):
        raise TypeError(f"features must be a sequence of feature names, got {features!r}")
    names = list(features)
    repeated = sorted({name for name in names if names.count(name) > 1}, key=repr)
    if repeated:
        raise ValueError(f"features must be unique; {repeated} are given more than once")
    return names


def _sorted_names(names):
    """Feature names sorted (by type and representation where they do not compare)."""
    try:
        return sorted(names)
    except TypeError:
        return sorted(names, key=lambda name: (type(name).__name__, repr(name)))


def _is_number(value):
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return not isinstance(value, str | bytes)


def _not_finite(name, value):
    what = "NaN" if math.isnan(value) else "infinity"
    return ValueError(
        f"Input x contains {what} (feature {name!r}). A missing feature is one left out of "
        "x, which counts as 0 (in a frame: fill it, X.fillna(0))."
    )
