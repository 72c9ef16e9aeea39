"""ALMA_p: approximate large-margin classification w.r.t. the p-norm (Gentile 2001)."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from . import _linear as L
from ._base import OnlineLinearClassifier

SQRT2 = float(np.sqrt(2.0))


class ALMAClassifier(OnlineLinearClassifier):
    """ALMA_p(alpha; B, C), Gentile's approximate maximal p-norm margin classifier.

    Figure 1 of C. Gentile, "A New Approximate Maximal Margin Classification
    Algorithm", JMLR 2 (2001) 213-242. Instances are normalised,
    ``x_hat = x / ||x||_p``. With ``w_1 = 0`` and ``k = 1``, on each trial the
    algorithm makes a *correction* when

        y_t w_k . x_hat_t <= (1 - alpha) gamma_k,    gamma_k = B sqrt(p - 1) / sqrt(k),

    namely ``w'_k = f^-1(f(w_k) + eta_k y_t x_hat_t)`` with
    ``eta_k = C / (sqrt(p - 1) sqrt(k))``, then ``w_(k+1) = w'_k / max(1, ||w'_k||_q)``
    and ``k = k + 1`` (``f`` is the gradient of ``||w||_q^2 / 2``, ``1/p + 1/q = 1``).
    With ``B = sqrt(8) / alpha`` and ``C = sqrt(2)``, Theorem 3 (part 1) bounds the
    number of corrections on data with normalised p-norm margin ``gamma*`` by
    ``2 (p - 1) / gamma*^2 (2 / alpha - 1)^2 + 8 / alpha - 4``, and the hypothesis
    then separates the data with p-norm margin at least ``(1 - alpha) gamma*``.

    More than two classes are learnt one-vs-rest, predicting the argmax of the
    outputs as in section 5 of the paper.

    Parameters
    ----------
    alpha : float in (0, 1], default=1.0
        Degree of approximation to the maximal margin; ``alpha = 1`` corrects only
        on mistakes (a normalised Perceptron with decreasing rate).
    p : float >= 2 or "log", default=2.0
        The norm of the instances. ``"log"`` means ``2 ln d`` (Remark 6), d the
        dimension the algorithm sees (``n_features``, plus one with
        ``fit_intercept``), and never less than 2: a multiplicative, Winnow-like
        regime suited to sparse targets.
    B : float > 0 or None, default=None
        Scale of the margin threshold gamma_k; None means ``1 / alpha``, the value
        section 4 of the paper states for its experiments. Theorem 3 part 1 uses
        ``sqrt(8) / alpha``, and the correction counts published in Table 6 come out
        with that value, not with ``1 / alpha`` (see ``docs/reproductions.md``).
        B has no effect when ``alpha = 1`` (the threshold is then 0).
    C : float > 0, default=sqrt(2)
        Scale of the learning rate eta_k.
    output : {"last", "avg", "voted"}, default="last"
        Which hypothesis predicts: the final ``w``; the average ``sum_k c_k w_k``
        (``c_k`` the number of trials ``w_k`` survived, the trial that created it
        included); or the vote ``sum_k c_k sign(w_k . x)`` (Freund and Schapire 1999).
        All three come from the same run: change it with ``set_params`` after
        fitting, no retraining needed.
    n_epochs : int >= 1, default=1
        Passes over the training set in :meth:`fit` (the counter k carries on).
    shuffle : bool, default=False
        Present the examples of each epoch of :meth:`fit` in a random order.
        :meth:`partial_fit` always keeps the order given.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling.
    fit_intercept : bool, default=False
        Learn a bias through the augmentation ``x -> (x, -R)``, R the largest p-norm
        of an instance in the first data seen (section 1 of Ishibashi, Hatano and
        Takeda, COLT 2008). The paper's ALMA has no bias.
    verbose : int, default=0
        Show a progress bar over epochs and binary problems.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_problems, n_features)
        Weights of the ``output`` hypothesis (not for ``"voted"``); ``n_problems`` is 1
        for two classes, else ``n_classes``. Predictions use them on *normalised*
        instances: see :meth:`decision_function`.
    intercept_ : ndarray of shape (n_problems,)
    n_corrections_ : int
        Corrections over all binary problems (the paper's "Corr." column).
    n_corrections_per_class_ : ndarray of shape (n_problems,)
    n_trials_ : int
        Trials seen by each binary problem.
    p_ : float
        The p in use (``"log"`` resolved).
    B_ : float
        The B in use.
    R_ : float
        The bias coordinate's magnitude (0 without ``fit_intercept``).
    n_features_in_ : int

    Examples
    --------
    >>> from marginkit import ALMAClassifier
    >>> from marginkit.datasets import make_sparse_target
    >>> X, y, X_test, y_test = make_sparse_target(n_train=2000, n_test=1000,
    ...                                           n_relevant=3, random_state=0)
    >>> clf = ALMAClassifier(p=6, alpha=0.5, output="avg").fit(X, y)
    >>> clf.score(X_test, y_test) > 0.9
    True
    """

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, 1, closed="right")],
        "p": [Interval(Real, 2, None, closed="left"), StrOptions({"log"})],
        "B": [Interval(Real, 0, None, closed="neither"), None],
        "C": [Interval(Real, 0, None, closed="neither")],
        "output": [StrOptions({"last", "avg", "voted"})],
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "fit_intercept": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        alpha=1.0,
        p=2.0,
        B=None,
        C=SQRT2,
        output="last",
        n_epochs=1,
        shuffle=False,
        random_state=None,
        fit_intercept=False,
        verbose=0,
    ):
        self.alpha = alpha
        self.p = p
        self.B = B
        self.C = C
        self.output = output
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Train from scratch for ``n_epochs`` passes.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        return self._fit(X, y)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
        """One pass over ``X`` in the order given, carrying on from the current state.

        Any split of a stream into calls gives the model of one :meth:`fit` with
        ``n_epochs=1, shuffle=False`` on the whole stream.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            All the labels the stream can hold; required on the first call.

        Returns
        -------
        self
        """
        return self._partial_fit(X, y, classes)

    def _initialise(self, X):
        super()._initialise(X)
        self.B_ = 1.0 / self.alpha if self.B is None else float(self.B)
        # Fold the scale into v before S = sum |v|^p nears overflow (s^p < 1e-200).
        self._fold_below = float(np.exp(-460.0 / self.p_))

    def _run(self, state, batch, y_pm, order, start):
        return L.alma_pass(
            batch.X,
            batch.indptr,
            batch.indices,
            batch.data,
            batch.is_sparse,
            batch.aug,
            batch.xscale,
            y_pm,
            order,
            start,
            self.p_,
            float(self.alpha),
            self.B_,
            float(self.C),
            self._fold_below,
            state.v,
            state.g,
            state.acc,
            state.last,
            state.fs,
            state.ist,
            *state.log_arrays(),
        )
