"""The scikit-learn front end shared by the kernel algorithms (blocked exact engine)."""

import contextlib
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils._array_api import check_same_namespace
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _checks as check
from ._base import (
    ONLINE_CONSTRAINTS,
    OnlineClassifier,
    WeightsOverflowError,
    not_for_voted,
)
from ._checkpoints import EpochOrders
from ._core.arrays import Host, backend_of, namespace, on_host, to_numpy
from ._core.budget import NO_VOTE, RULES, Budget, default_step
from ._core.kernel.blocks import FOLD_BELOW, train_blocks
from ._core.kernel.rows import Instances
from ._core.kernel.state import KernelState
from ._core.kernels import KERNELS, Kernel, inverse_sqrt
from ._core.linear import horizon_of
from ._core.shards import shards_in_use
from ._early_stopping import NO_EARLY_STOPPING, Validation, validation_split
from ._order import rows_by_content
from ._passes import ADDED_PARAMS, ended_early
from ._rows import peak_of, times_power_of_two
from ._scaling import MAX_SQUARED_NORM, other_scale, signs_kept
from ._state_checks import check_state
from ._traits import Traits

#: The parameters of the kernel online classifiers (kernel ALMA's; the others add
#: ``normalize``).
KERNEL_CONSTRAINTS = {
    **ONLINE_CONSTRAINTS,
    "horizon": [Interval(Real, 1, None, closed="neither"), None],
    "kernel": [StrOptions(set(KERNELS)), callable],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "gamma": [Interval(Real, 0, None, closed="neither"), StrOptions({"scale", "auto"})],
    "coef0": [Interval(Real, None, None, closed="neither")],
    "block_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    "cache_size": [Interval(Real, 0, None, closed="left")],
}

#: The parameters of a kernel model's bias (kernel ALMA, the kernel Perceptron and kernel
#: ROMMA): a constant coordinate appended to every ``phi(x)``, as the linear estimators'
#: ``(x, -R_)`` (:meth:`KernelOnlineClassifier._kernel_offset`).
INTERCEPT_CONSTRAINTS = {
    "fit_intercept": ["boolean"],
    "intercept_scaling": [StrOptions({"rms", "max"}), Interval(Real, 0, None, closed="neither")],
}

#: Why the merge rule of a budget refuses a model with a bias.
NO_MERGE_WITH_BIAS = (
    "budget_rule='merge' needs fit_intercept=False: a merged vector's kernel values "
    "follow from the Gaussian's, which the bias coordinate's offset changes. Use "
    "budget_rule='project_new' or 'project', or fit_intercept=False."
)

#: The parameters of a support-vector budget (:mod:`marginkit._core.budget`): kernel
#: ALMA, the kernel Perceptron and kernel ROMMA.
BUDGET_CONSTRAINTS = {
    "budget": [Interval(Integral, 2, None, closed="left"), None],
    "budget_rule": [StrOptions(set(RULES))],
}
#: The examples per block of ``block_size="auto"``: on the host, where BLAS makes the
#: products, and on an accelerator, where each block costs a few dozen array calls and a
#: transfer of b x (b + 2C) numbers (docs/gpu.md: one MNIST epoch on one H100 took
#: 0.15-0.27 s at 768, 0.16-0.32 s at 512, 0.26-0.38 s at 256, 0.30-0.41 s at 1024).
AUTO_BLOCK_SIZE = {"host": 256, "accelerator": 768}


#: The traits of the kernel forms (:class:`~marginkit._traits.Traits`): their store,
#: the caches a checkpoint may hold, and the noise rule of ``tol``, whose 0.85 was
#: chosen on a9a, a synthetic set, USPS, MNIST, Letter, ionosphere and house-votes
#: (``benchmarks/bench_defaults.py``, docs/defaults.md): a9a's second passes made 0.91
#: to 0.97 of the first's corrections, every other set's at most 0.74.
KERNEL_TRAITS = Traits(state="_kstate", noise_ratio=0.85, cache_keys=("cache_P", "cache_seen"))


#: The parameters added after kernel models were first saved (:data:`ADDED_PARAMS`): a
#: model saved before the kernel estimators had a bias
KERNEL_ADDED_PARAMS = {**ADDED_PARAMS, "fit_intercept": False, "intercept_scaling": "rms"}


def block_size_for(block_size, backend):
    """The examples per block for ``block_size`` with data on ``backend``."""
    if block_size != "auto":
        return int(block_size)
    return AUTO_BLOCK_SIZE["accelerator" if backend.accelerated else "host"]


class KernelOnlineClassifier(OnlineClassifier):
    """The front end of the kernel algorithms on the blocked engine
    (:mod:`marginkit._core.kernel`).

    Subclasses define ``_rule_args()``: the update rule of
    :func:`marginkit._core.kernel.walk.kernel_walk` and its parameters (a
    :class:`marginkit._core.linear.Rule`). ALMA normalises the instances
    (``K(x, y) / sqrt(K(x, x) K(y, y))``); the others do when their ``normalize`` is
    set.
    """

    _traits = KERNEL_TRAITS

    _added_params = KERNEL_ADDED_PARAMS

    @property
    def _normalises(self):
        """Whether the model divides the kernel by the rows' norms: as at its fit (a
        ``normalize`` set since takes effect at the next fit)."""
        state = self.__dict__.get("_kstate")
        # a state pickled by 0.1 does not say: its estimator's parameters did
        if state is None or "normalize" not in vars(state):
            return self._normalise_param
        return state.normalize

    @property
    def _normalise_param(self):
        return self._traits.normalises or bool(getattr(self, "normalize", False))

    def _changed_since_fit(self):
        changed = super()._changed_since_fit()
        horizon = self._kstate.horizon
        if horizon_of(self.horizon) != horizon:
            changed["horizon"] = horizon
        fitted = self._kstate.kernel
        if self.kernel is not fitted.kernel and self.kernel != fitted.kernel:
            changed["kernel"] = fitted.kernel
        else:
            # the parameters the model's kernel reads (a gamma of "scale" or "auto" is
            # resolved from the data of the next fit: not compared)
            uses = fitted.reads
            for name in ("degree", "coef0"):
                if name in uses and getattr(self, name) != getattr(fitted, name):
                    changed[name] = getattr(fitted, name)
            if "gamma" in uses and not isinstance(self.gamma, str) and self.gamma != self.gamma_:
                changed["gamma"] = self.gamma_
        if self._normalise_param != self._normalises:
            changed["normalize"] = self._normalises
        if bool(getattr(self, "fit_intercept", False)) != self._fitted_intercept:
            changed["fit_intercept"] = self._fitted_intercept
        if getattr(self, "budget", None) != self._kstate.budget:
            changed["budget"] = self._kstate.budget
        return changed

    @property
    def _fitted_intercept(self):
        """Whether the model has a bias: a kernel offset (``fit_intercept`` at the fit)."""
        return self._kstate.kernel.offset != 0.0

    def _budget(self):
        """The model's budget (:class:`marginkit._core.budget.Budget`), or None: its
        size as at the fit, the rule as set now (a ValueError for the merge rule on a
        model with a bias)."""
        size = self._kstate.budget
        if size is None:
            return None
        if self.budget_rule == "merge" and self._fitted_intercept:
            raise ValueError(NO_MERGE_WITH_BIAS)
        return Budget(size, self.budget_rule, default_step(size))

    def _check_budget(self):
        """A ValueError for a budget with what it cannot do: the vote, fewer vectors than
        classes, or a merge of vectors of another kernel than the Gaussian."""
        if getattr(self, "budget", None) is None:
            return
        if self.output == "voted":
            raise ValueError(NO_VOTE)
        n_classes = len(getattr(self, "classes_", ()))
        if self.budget < n_classes:
            raise ValueError(
                f"budget={self.budget} cannot hold a support vector of each of the "
                f"{n_classes} classes, and would predict at chance; pass budget >= "
                f"{n_classes} (a budget holds a few hundred vectors or more in practice, "
                "docs/budget.md)"
            )
        if self.budget_rule == "merge" and getattr(self, "fit_intercept", False):
            raise ValueError(NO_MERGE_WITH_BIAS)
        if self.budget_rule == "merge" and self.kernel != "rbf":
            raise ValueError(
                f"budget_rule='merge' needs kernel='rbf' (a merged vector's kernel values "
                f"follow from the Gaussian's), got kernel={self.kernel!r}. Use "
                "budget_rule='project_new' or 'project'."
            )

    # -- training ------------------------------------------------------------------
    def _initialise(self, data):
        self.__dict__.pop("_kstate", None)  # a new model, of the parameters as they are
        # the rows in the model's units (_model_units): a power of two that a named
        # kernel's gamma takes back, so that its values are those of the data
        e = self._exponent = 0 if callable(self.kernel) else self._exponent_of(data.max_norm(2.0))
        with np.errstate(over="ignore", under="ignore"):
            if self.gamma == "scale":
                var = data.variance(e)  # of the rows in the model's units
                gamma = 1.0 / (data.n_features * var) if var > 0 else float(np.ldexp(1.0, 2 * e))
                self.gamma_ = float(np.ldexp(gamma, -2 * e))
            else:
                self.gamma_ = 1.0 / data.n_features if self.gamma == "auto" else float(self.gamma)
                gamma = float(np.ldexp(self.gamma_, 2 * e))
        self._check_gamma(gamma)
        self._check_budget()
        self._fold_below = FOLD_BELOW
        kernel = Kernel(self.kernel, gamma, self.degree, self.coef0)
        kernel.offset = self._kernel_offset(data, kernel)
        self._kstate = self._new_state(data, kernel)
        self._kstate.set_horizon(self.horizon)
        if getattr(self, "budget_rule", None) == "remove_random":
            # the seed of the removals' draws, kept with the model (marginkit._core.budget)
            seed = check_random_state(self.random_state).randint(2**31)
            self._kstate.removal_seed = int(seed)
        self.n_corrections_ = 0
        self.n_trials_ = 0
        self.n_kernel_evaluations_ = 0

    def _kernel_offset(self, data, kernel):
        """The kernel's offset ``c^2`` (model units) for ``fit_intercept``'s bias
        coordinate c: every ``phi(x)`` becomes ``(phi(x), c)``, so that ``K`` becomes
        ``K + c^2`` (before the normalisation of a rule that normalises), and a
        hyperplane through the origin there is one with a bias in the kernel's space.

        c is ``intercept_scaling`` times the norm ``sqrt(K(x, x))`` of a row of the
        root mean square norm of the data (``"rms"``: once; ``"max"``: of the largest
        norm), so that the model does not depend on the scale of the features: the
        Gaussian kernel's is 1 for every row; a callable kernel's, the root mean square
        (or largest) ``sqrt(K(x, x))`` over the first rows trained on (None until
        then: :meth:`_instances`). 0 without ``fit_intercept``."""
        if not getattr(self, "fit_intercept", False):
            return 0.0
        if callable(kernel.kernel):
            return None  # from the K(x, x) of the first rows (_instances)
        norms = data.norms(2.0)
        r = norms.top if self.intercept_scaling == "max" else norms.rms
        with np.errstate(over="ignore", under="ignore"):
            r = float(np.ldexp(r, -self._exponent))
        return self._offset_of(kernel.at_norm(np.array([r * r])))

    def _offset_of(self, diag):
        """The offset of ``intercept_scaling`` from the values ``K(x, x)`` of rows (one
        value: the named kernels'; the first rows' for a callable): their mean (their
        largest for ``"max"``) times the square of a numeric ``intercept_scaling``; a
        ValueError where that is not a finite number > 0."""
        scaling = self.intercept_scaling
        value = float(np.max(diag) if scaling == "max" else np.mean(diag))
        if not np.isfinite(value):
            return value  # the kernel itself overflows: _inverse_norms says so
        value = value if value > 0 else 1.0  # every row 0: the coordinate 1
        factor = 1.0 if isinstance(scaling, str) else float(scaling)
        with np.errstate(over="ignore", under="ignore"):
            offset = value * factor * factor
        if not 0.0 < offset < np.inf:
            raise ValueError(
                f"The bias coordinate of intercept_scaling={scaling!r} leaves float64: "
                f"its square is {factor:.3g}^2 times K(x, x) = {value:.3g}. Lower "
                "intercept_scaling, degree or gamma, or scale the features."
            )
        return offset

    def _check_gamma(self, gamma):
        """A ValueError when ``gamma`` in the model's units leaves float64: the kernel
        would then be constant (0 between distinct rows, or 1) on these features."""
        if self.kernel in ("linear",) or callable(self.kernel) or 0.0 < gamma < np.inf:
            return
        which = "large" if gamma > 0 else "small"
        raise ValueError(
            f"gamma={self.gamma_:.3g} is too {which} for the scale of the features (the "
            "largest norm of an instance is about 2^"
            f"{self._exponent}): the kernel would be constant on them. Use gamma='scale', "
            "or a gamma that scales as 1 / the square of the features."
        )

    def _product_shift(self):
        # the named kernels but the linear one take the scale back in their gamma (the
        # model's kernel: one set since takes effect at the next fit)
        state = self.__dict__.get("_kstate")
        kernel = self.kernel if state is None else state.kernel.kernel
        return 2 * self._exponent if kernel == "linear" else 0

    def _model_units(self, X):
        """X divided by ``2^_exponent`` (where it is): see ``_initialise``."""
        return times_power_of_two(X, -self._exponent)

    def _data_rows(self, rows):
        """Rows of the model's units (its support vectors) in those of the data."""
        return times_power_of_two(rows, self._exponent)

    # -- checking a loaded model -------------------------------------------------------
    def _learned(self):
        required, optional = super()._learned()
        # the arrays are the states' own, published where the model is (_published)
        required = required - {"n_corrections_per_class_"}
        return required | {"gamma_", "n_kernel_evaluations_"}, optional

    def _check_fitted(self):
        super()._check_fitted()
        check.integer(self._exponent, "_exponent", -1100, 1100)
        check.equal(self._fold_below, "_fold_below", FOLD_BELOW)
        self._check_state()

    def _check_state(self):
        state = check.instance(self._kstate, "_kstate", KernelState)
        if "normalize" not in vars(state):  # a file of 0.1, whose state did not say
            state.normalize = self._normalise_param
        if self._traits.normalises and state.normalize is not True:
            check.fail("_kstate.normalize", "must be True: this algorithm normalises")
        check_state(state, "_kstate", self.n_features_in_, self._n_problems, self._traits.forgets)
        self._check_kernel_gamma(state)

    def _check_kernel_gamma(self, state):
        """The kernel's gamma (of the model's units) is ``gamma_`` (of the data's; 0 or
        inf where the scale takes it out of float64)."""
        g, e = self.gamma_, self._exponent
        if isinstance(g, (bool, np.bool_)) or not isinstance(g, Real):
            check.fail("gamma_", f"must be a real number, got {type(g).__name__}")
        if not (g > 0 or (g == 0 and e)):
            check.fail("gamma_", f"must be > 0, got {g}")
        with np.errstate(over="ignore", under="ignore"):
            gamma = float(np.ldexp(g, 2 * e))
            if 0 < gamma < np.inf:
                check.equal(state.kernel.gamma, "_kstate.kernel.gamma", gamma)
            else:
                check.equal(g, "gamma_", float(np.ldexp(state.kernel.gamma, -2 * e)))

    def _check_progress(self, resume, n):
        n = super()._check_progress(resume, n)
        self._check_cache(resume, n)
        if self._kstate.slack.shape[0] not in (0, n):
            check.fail("_kstate.slack", f"must hold a row for each of the {n} rows, or none")
        return n

    def _slack_states(self):
        # a row's soft-margin sums of every problem (kernel_walk)
        return [(self._kstate, (self._n_problems,))]

    def _squared_norms(self):
        """``||w~||^2`` of every problem as the walks keep it (a soft margin's
        coordinates included), which the passes of a soft margin end on
        (``_growth``); None once a budget's store has been full, whose maintenance
        steps shrink it (:func:`marginkit._core.budget.maintain`): the corrections
        decide there."""
        state = self._kstate
        if state.budgeted and state.filled:
            return None
        return np.array(state.norm2, dtype=np.float64)

    def _check_cache(self, resume, n):
        """The margin sums kept across epochs: none, or ``n`` rows over the stored vectors."""
        P, seen = resume.get("cache_P"), resume.get("cache_seen")
        if P is None and seen is None:
            return
        check.array(P, "_resume['cache_P']", np.float64, (n, self._n_problems), finite=True)
        m = self._kstate.m
        check.array(seen, "_resume['cache_seen']", np.int64, (n,), within=(0, m + 1))

    def _check_resume(self, path, X, y):
        super()._check_resume(path, X, y)
        sparse = sp.issparse(X)
        if any(store.sparse != sparse for store in self._stores()):
            raise ValueError(
                f"{path} is a checkpoint of training on {'dense' if sparse else 'sparse'} "
                f"data, not on these {'sparse' if sparse else 'dense'} ones"
            )

    def _stores(self):
        """The stores of rows the state keeps (:class:`marginkit._core.kernel.rows.RowStore`)."""
        stores = [getattr(self._kstate, name, None) for name in ("store", "POS", "NEG")]
        return [store for store in stores if store is not None]

    def _stored_format(self, X):
        """Training rows X in the format of the stored rows: sparse rows of a model whose
        stored rows are dense (a dense fit, then sparse batches) made dense; dense rows
        go into a sparse store as they are, from the host (a sparse store is there)."""
        if sp.issparse(X):
            if any(not store.sparse for store in self._stores()):
                return X.toarray()
        elif any(store.sparse for store in self._stores()):
            return on_host(X)
        return X

    def _check_magnitude(self, X):
        # the kernel's own values are checked where they are computed (_instances)
        return X

    def _new_state(self, data, kernel):
        return KernelState(
            data.n_features,
            self._n_problems,
            data.sparse,
            kernel,
            forgets=self._traits.forgets,
            normalize=self._normalise_param,
            budget=getattr(self, "budget", None),
        )

    # -- where the products are made -------------------------------------------------
    def _validate_X(self, X, reset):
        return super()._validate_X(X, reset, **self._dtype_of(X))

    def _validate_Xy(self, X, y, reset):
        return super()._validate_Xy(X, y, reset, **self._dtype_of(X))

    @staticmethod
    def _dtype_of(X):
        """Under array API dispatch, the arrays stay in their namespace and on their
        device, and float32 stays float32 (what the products then compute in); without
        it, everything is float64 numpy, as for the linear estimators."""
        if not get_config()["array_api_dispatch"] or sp.issparse(X):
            return {}
        xp, _ = namespace(X)
        if xp is None:
            return {"dtype": [np.float64, np.float32], "keep": True}
        return {"dtype": [xp.float64, xp.float32], "keep": True}

    def _instances(self, X, training=False):
        """The rows of X where their products are made (:class:`Instances`: the host,
        or the device of X under dispatch), in the model's units, with their norms; a
        clear error when the kernel overflows on them or, ``training`` on them, their
        squared norms underflow (a later batch far smaller than the first fit's)."""
        kernel = self._kstate.kernel
        X = self._stored_format(X) if training else X
        backend = backend_of(X)
        # the Gaussian kernels need ||x||^2 for distances, linear and poly for K(x, x)
        needs_sq = kernel.kernel in ("linear", "poly") or kernel.needs_norms
        # the norms of the rows in the model's units, a chunk of them at a time: the
        # products take each block in those units as they come (Instances.rows)
        n = X.shape[0]
        pending = kernel.offset is None  # a callable's offset, from these rows
        if pending:
            kernel.offset = 0.0
        step = n if self._exponent == 0 else max(1, (1 << 19) // max(X.shape[1], 1))
        parts, diag, peak = [], [], 0.0
        for lo in range(0, max(n, 1), step):
            Xc = self._model_units(X[lo : min(n, lo + step), :])
            sq_c = backend.squared_norms(Xc) if needs_sq else None
            parts.append(sq_c)
            diag.append(kernel.diagonal(Xc, None if sq_c is None else backend.host(sq_c), backend))
            if training and not callable(kernel.kernel):
                peak = max(peak, peak_of(Xc))
        sq_dev = None
        if needs_sq:
            sq_dev = parts[0] if len(parts) == 1 else backend.xp.concat(parts)
        sq = None if sq_dev is None else backend.host(sq_dev)
        if training and not callable(kernel.kernel):
            self._check_not_tiny(peak)
        diag = diag[0] if len(diag) == 1 else np.concatenate(diag)
        if pending:
            kernel.offset = self._offset_of(diag if diag.size else np.ones(1))
            diag = diag + kernel.offset
        inv = self._inverse_norms(X, diag, sq)
        return Instances(X, inv, sq_dev if kernel.needs_norms else None, backend, -self._exponent)

    def _check_not_tiny(self, peak):
        """A ValueError when the largest entry of the rows (``peak``, in the model's
        units) is nonzero but below 1 / sqrt(MAX_SQUARED_NORM): squared norms and
        distances of such rows underflow."""
        if 0.0 < peak < 1.0 / np.sqrt(MAX_SQUARED_NORM):
            raise other_scale(
                type(self).__name__, "small", f"their largest entry is about {peak:.3g} times"
            )

    def _inverse_norms(self, X, diag, sq):
        """1 / sqrt(K(x, x)) (or 1, 0 where K(x, x) = 0, for a rule that does not
        normalise), with a clear error on overflow."""
        bad = ~np.isfinite(diag)
        if sq is not None:
            bad |= ~np.isfinite(sq)
        if bad.any():
            raise ValueError(
                f"The kernel overflows: K(x, x) is not finite for {int(bad.sum())} of "
                f"{X.shape[0]} samples (first: row {int(np.flatnonzero(bad)[0])}). "
                "Lower degree or gamma, or scale the features."
            )
        if (diag < 0).any():
            raise ValueError(
                f"K(x, x) < 0 for {int((diag < 0).sum())} samples: the kernel is not "
                "positive semi-definite with these parameters."
            )
        if self._normalises:
            return inverse_sqrt(diag)
        if diag.size and diag.max() > MAX_SQUARED_NORM:
            raise ValueError(
                f"The kernel values are too large for {type(self).__name__}: K(x, x) reaches "
                f"{diag.max():.3g}, and sums of such values overflow float64. Lower degree or "
                "gamma, scale the features, or set normalize=True."
            )
        return (diag > 0).astype(np.float64)

    def _check_checkpoint_args(self, checkpoint, every):
        super()._check_checkpoint_args(checkpoint, every)
        if checkpoint is not None and getattr(self, "early_stopping", False):
            why = "a checkpoint does not hold"
            raise ValueError(NO_EARLY_STOPPING.format(what="checkpoints", why=why))

    @contextlib.contextmanager
    def _rows_to_train(self, X, y, weights):
        """With ``early_stopping``, the rows not held out, with their weights: the passes
        of :meth:`fit` over them are ended by :class:`Validation` (its score unweighted),
        and the model of the best pass is kept (``support_`` still indexes the rows of
        X)."""
        if not getattr(self, "early_stopping", False):
            yield X, y, weights
            return
        # with shuffle, held out from the rows sorted by content: whatever their order
        n = X.shape[0]
        rows = rows_by_content(X, y, weights) if self.shuffle else np.arange(n)
        train, held = validation_split(
            to_numpy(y)[rows], self.validation_fraction, self.random_state
        )
        train, held = np.sort(rows[train]), np.sort(rows[held])
        part = [_safe_indexing(a, rows) for a in (X, y) for rows in (train, held)]
        patience, undo = self.n_iter_no_change, self._kstate.undo_point
        self._validation = Validation(part[1], part[3], patience, self.tol, self.score, undo)
        try:
            yield part[0], part[2], None if weights is None else weights[train]
            if self._validation.keep_best():
                self._update_counts()
        finally:
            del self._validation
        # positions in X, not in the rows trained on
        self._kstate.renumber(train, X.shape[0])

    def _passes(self, X, y, orders, callback, resume=None, save=None, every=None, weights=None):
        state = self._kstate
        data = self._instances(X, training=True)
        Y = np.column_stack(self._targets(y))
        n = X.shape[0]
        cache = None
        if resume is not None and resume.get("cache_P") is not None:
            cache = (resume["cache_P"], resume["cache_seen"])
        elif len(orders) > 1 and n * (Y.shape[1] + 1) * 8 <= self.cache_size * 2**20:
            cache = (np.zeros((n, Y.shape[1])), np.zeros(n, dtype=np.int64))
        if resume is not None:
            resume["cache_P"], resume["cache_seen"] = cache if cache else (None, None)
        # checkpoints fall on block boundaries: the blocks, and so every sum, are those
        # of a run without checkpoints
        b = block_size_for(self.block_size, data.backend)
        step = n if every is None else -(-int(every) // b) * b
        plan = self._schedule()
        r = plan.progress(resume)
        params = {"rule": self._rule_args(), "block_size": b, "fold_below": self._fold_below}
        params["budget"] = self._budget()
        params["weight"] = weights
        slack = self._slack_rows(n, isinstance(orders, EpochOrders))
        with slack, self._progress(n * len(orders), "example") as bar, self._sharded(state):
            for epoch, lo in plan.epochs(r, len(orders)):
                order = orders[epoch]
                while lo < n:
                    hi = min(n, lo + step)
                    train_blocks(state, data, Y, order[lo:hi], params, cache, bar.update)
                    self._check_finite_scales(state)
                    lo = hi
                    self._update_counts()
                    plan.reached(r, epoch, hi, n)
                    if save is not None:
                        save()
                if callback is not None:
                    callback(self, epoch)
            ended_early(bar, (len(orders) - r["epoch"]) * n)
        state.n_seen += n
        return r

    def _check_finite_scales(self, state):
        """A :class:`~marginkit._base.WeightsOverflowError`, rather than a model of NaN,
        where a problem's scale or squared norm overflowed: kernel ROMMA's hypothesis
        grows without bound on data that are not separable, and weights above 1 make it
        grow faster (a fit or call that raises leaves the model as it was)."""
        if not (np.all(np.isfinite(state.s)) and np.all(np.isfinite(state.norm2))):
            raise WeightsOverflowError(
                f"{type(self).__name__}'s weights overflowed: on data that are not "
                "separable its hypothesis grows without bound, the faster for weights "
                "above 1. Use fewer passes (max_iter, or tol), smaller sample or class "
                "weights, or KernelALMAClassifier, whose hypothesis stays in the unit ball."
            )

    @contextlib.contextmanager
    def _sharded(self, state):
        """The stored vectors sharded over a cluster for the blocks within, where the fit
        runs in :func:`marginkit._core.shards.products_on` (as
        :class:`marginkit.distributed.ShardedKernelClassifier` runs it): the margin
        products are made there (``state.remote``)."""
        shards = shards_in_use()
        if shards is None:
            yield
            return
        shards.start(state)
        state.remote = shards
        try:
            yield
        finally:
            del state.remote

    def _stream_pass(self, stream):
        # support indices count the rows of the data, as in fit: each epoch starts at
        # the same row, and the data's rows are counted once, at the end
        state = self._kstate
        start = state.n_seen
        made = super()._stream_pass(stream)
        self._stream_rows = state.n_seen - start
        state.n_seen = start
        return made

    def _fit_stream(self, stream, classes, data, callback=None):
        if getattr(self, "early_stopping", False):
            why = "a stream, read once per pass, cannot"
            raise ValueError(NO_EARLY_STOPPING.format(what="a streamed fit", why=why))
        super()._fit_stream(stream, classes, data, callback)
        self._kstate.n_seen += self.__dict__.pop("_stream_rows", 0)
        return self

    def _left_out(self, kept, n, start=0):
        # support_ indexes the rows given, those of weight 0 among them
        if kept is not None:
            self._kstate.renumber(kept, start + n, start)

    def _stream_position(self):
        return self._kstate.n_seen

    def _undo_point(self):
        # a later partial_fit that fails part-way (a callable kernel that raises, an
        # interrupt) leaves the model as it was, as a fit does
        return self._kstate.undo_point()

    def _problem_corrections(self):
        return self._kstate.n_corrections.astype(np.int64)

    def _update_counts(self):
        state = self._kstate
        self.n_corrections_ = int(state.n_corrections.sum())
        self.n_trials_ = state.n_trials
        self.n_kernel_evaluations_ = state.n_kernel_evals

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True
        return tags

    # -- prediction ----------------------------------------------------------------
    def _published(self, a):
        """The host array ``a`` of the model, where the model is: on the host, or, after
        a fit under array API dispatch, in the namespace and on the device of its data
        (scikit-learn's convention for fitted array attributes)."""
        backend = self._kstate.backend
        if isinstance(backend, Host):
            return a
        return backend.xp.asarray(a, device=backend.device)

    @property
    def _where(self):
        # an empty array where the model is, for scikit-learn's check_same_namespace
        return self._published(np.zeros(0))

    def _same_namespace(self, X, method):
        """Under dispatch, ``X`` of the namespace and device of the fit (scikit-learn's
        rule: a ValueError naming the method otherwise); without dispatch, any input,
        and a model on a device comes back to the host."""
        check_same_namespace(X, self, attribute="_where", method=method)

    def predict(self, X):
        check_is_fitted(self, "_kstate")
        self._same_namespace(X, "predict")
        return self._labels(self._scores(X))

    predict.__doc__ = OnlineClassifier.predict.__doc__

    def decision_function(self, X):
        """``w . phi(x)`` (plus the bias, for PUMMA) of the ``output`` hypothesis.

        ``phi_hat(x) = phi(x) / ||phi(x)||`` in place of ``phi(x)`` when normalised.

        For ``"avg"`` the averaged vector is divided by the number of trials; for
        ``"voted"`` the value is ``sum_k c_k sign(w_k . x)`` over the trials.

        Under array API dispatch, ``X`` is of the namespace and on the device of the fit,
        and so are the scores. They are float64 (where the device has it) whatever the
        dtype of ``X``, as without dispatch: float32 input computes its products in
        float32, and the sums of the walk are float64 in any case.

        The values never contradict :meth:`predict` (the sign for two classes, the
        argmax for more), at any scale of the features: where the linear kernel's
        value leaves float64, it is the closest one of the right sign, as for the
        linear estimators (the smallest subnormal number for one that underflows, the
        largest finite number for one that overflows).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self, "_kstate")
        self._same_namespace(X, "decision_function")
        scores = self._scores(X)
        if self._normalises:
            return scores
        # never contradicting predict where the data's units leave float64
        return signs_kept(self._data_units(scores, self._traits.weight_degree + 1), scores)

    def _scores(self, X):
        """The values of :meth:`decision_function` in the model's units (the same, but
        for the linear kernel on features scaled by ``_exponent``), which neither
        overflow nor underflow where those would (the caller checked the namespace of
        X)."""
        self._validate_params()
        X = self._validate_X(X, reset=False)
        data = self._instances(X)
        scores = data.backend.widest(self._kstate.scores(data, self.output))
        return data.backend.xp.reshape(scores, (-1,)) if scores.shape[1] == 1 else scores

    @property
    def n_corrections_per_class_(self):
        """Corrections of each one-vs-rest problem (support vectors stored)."""
        check_is_fitted(self, "_kstate")
        return self._published(self._problem_corrections())

    @property
    def support_(self):
        check_is_fitted(self, "_kstate")
        state = self._kstate
        return self._published(state.index[state.row_entries()].copy())

    @property
    def n_support_(self):
        """Support vectors of each class, in the order of ``classes_``, as distinct
        training examples: an example corrected in several epochs counts once (kernel
        ALMA's family stores it once; kernel PUMMA's ``support_`` lists it in every
        pair it is part of).

        With more than two classes, entry c counts the examples in the support of class
        c's one-vs-rest problem (Gentile 2001's "SV" of each digit, Tables 2 and 4);
        with two, the examples of each class in the support of the one problem (as
        scikit-learn's ``SVC.n_support_``)."""
        check_is_fitted(self, "_kstate")
        return self._published(self._kstate.n_support(len(self.classes_)))

    @property
    def support_vectors_(self):
        """The support vectors, where the model is (the device of the last data it saw
        under dispatch)."""
        check_is_fitted(self, "_kstate")
        store = self._kstate.store
        return self._data_rows(store.rows_copy(0, store.n_rows))

    @property
    def dual_coef_(self):
        check_is_fitted(self, "_kstate")
        not_for_voted(self, "dual_coef_")
        state = self._kstate
        coef = state.per_row(state.coefficients(self.output))
        return self._published(self._dual_units(coef.T.copy()))

    def _dual_units(self, a):
        """Dual coefficients of the model's units in those of the data: those of
        ``w = sum_i a_i phi(x_i)`` scale as ``w / phi(x)`` does (not at all when
        normalised)."""
        return a if self._normalises else self._data_units(a, self._traits.weight_degree - 1)
