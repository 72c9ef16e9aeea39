"""Table 1 of Ishibashi, Hatano and Takeda (COLT 2008): 2-norm soft margins on real data.

K. Ishibashi, K. Hatano and M. Takeda, "Online Learning of Approximate Maximum p-Norm
Margin Classifiers with Bias", COLT 2008, run PUMMA_2(delta) with the 2-norm soft margin
(``x_i . x_j`` replaced by ``x_i . x_j + lambda [i = j]``, lambda = 1, delta = 0.01) on
UCI data sets and report its margin beside SVMlight's. Here, on ionosphere,
house-votes and the first N training rows of adult (a9a) for N = 1000 to all 32561:

- PUMMA with ``lam=1`` (its native soft margin), run to convergence (an epoch without
  update); its ``margin_`` is the margin with bias in the soft-margin space;
- ROMMA, aggressive ROMMA(delta = 0.01) (the paper's ROMMA column) and
  ALMA_2(alpha = 0.01), which have no soft margin of their
  own: each instance gets its own coordinate, ``X_aug = [X, sqrt(lambda) I]`` (sparse),
  and a bias through ``fit_intercept=True``; they run epoch by epoch until an epoch makes
  no update, or up to a cap, and their margin is measured in that augmented space with
  the bias (:func:`marginkit.margins.margin`);
- the exact optimum, :func:`marginkit.margins.max_margin` with ``lam=1`` (cvxpy and
  Clarabel), and its solver time;
- scikit-learn's :class:`~sklearn.svm.LinearSVC` with the squared hinge loss and
  ``C = 1 / (2 lambda)``, the same problem, as the practical peer. liblinear penalises the
  intercept as one more weight with value ``intercept_scaling``; with
  ``intercept_scaling = 10`` the penalty on the bias is 1/100 of the paper's (none), which
  reproduces the exact optimum to 5 digits on the data here. Its margin in the soft-margin
  space is ``1 / sqrt(||w||^2 + sum_i xi_i^2 / lambda)``,
  ``xi_i = max(0, 1 - y_i (w . x_i + b))``.

Besides the margins of the algorithms' own hyperplanes, every hyperplane ``(w, b)`` is
also scored with the best slack coordinates for it (:func:`soft_margin`), which
checks PUMMA's ``margin_`` independently and puts all methods on one footing.

A section on house-votes recomputes the exact optimum and PUMMA under other codings of
the votes, because the published house-votes margins are not those of the loader's
y / n / ? -> +1 / -1 / 0.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from ..datasets import load_adult, load_house_votes, load_ionosphere
from ..margins import margin, max_margin
from ..pumma import PUMMAClassifier
from . import published as pub
from ._format import format_table
from .gentile_kernel import MissingDataError, data_fingerprint
from .pumma_artificial import _positive_int, baseline, warm_up_solver
from .runner import Cell, LastValueCache, Spec

NAME = "pumma-real"
TITLE = "Ishibashi, Hatano and Takeda (COLT 2008), Table 1: 2-norm soft margins on real data"
#: The cells read real data files: ``reproduce`` calls :func:`cell_runner`.
USES_DATA = True
#: Options of :func:`build_spec` beyond ``quick`` and ``seed``.
OPTIONS = ("max_epochs", "datasets")

LAM = 1.0
#: delta of PUMMA and alpha of ALMA_2.
DELTA = 0.01
NOT_STORED = "n/p"
NOT_RUN = "-"
#: PUMMA's margin must be within this fraction of the optimum (delta = 0.01).
MARGIN_TOLERANCE = 0.01
#: adult-full PUMMA must train in less than this many seconds.
TIME_LIMIT = 60.0

#: Data sets: the number of leading adult (a9a) training rows, None for all.
DATASETS = {
    "ionosphere": None,
    "house-votes": None,
    "adult-1k": 1000,
    "adult-2k": 2000,
    "adult-4k": 4000,
    "adult-8k": 8000,
    "adult-16k": 16000,
    "adult-full": None,
}
FULL = {
    "datasets": list(DATASETS),
    "max_epochs": 1000,
    "pumma_max_epochs": 100000,
}
QUICK = {
    "datasets": ["ionosphere", "house-votes", "adult-1k"],
    "max_epochs": 100,
    "pumma_max_epochs": 20000,
}
#: The methods run to an epoch without update (their guarantee then holds), under the
#: larger cap.
CONVERGING = ("pumma", "aromma")
#: Method keys (as in the cell keys) and their names in the report, in report order.
METHODS = {
    "exact": "exact optimum",
    "pumma": "PUMMA",
    "linearsvc": "LinearSVC",
    "romma": "ROMMA",
    "aromma": "aggressive ROMMA",
    "alma": "ALMA_2",
}
METHOD_TEXT = {
    "exact": "max_margin(X, y, lam=1): cvxpy + Clarabel",
    "pumma": "PUMMAClassifier(p=2, delta=0.01, lam=1), to convergence",
    "linearsvc": "LinearSVC(loss='squared_hinge', C=1/(2 lam), dual=True, tol=1e-6, "
    "intercept_scaling=10, max_iter=100000)",
    "romma": "ROMMAClassifier(fit_intercept=True) on [X, sqrt(lam) I], updates on mistakes",
    "aromma": "ROMMAClassifier(aggressive=True, delta=0.01, fit_intercept=True) on "
    "[X, sqrt(lam) I]",
    "alma": "ALMAClassifier(p=2, alpha=0.01, fit_intercept=True) on [X, sqrt(lam) I] "
    "(B = 1/alpha, C = sqrt(2))",
}
SVC_PARAMS = {
    "loss": "squared_hinge",
    "C": 1.0 / (2.0 * LAM),
    "dual": True,
    "tol": 1e-6,
    "intercept_scaling": 10.0,
    "max_iter": 100000,
}


# -- codings of the house-votes data --------------------------------------------------------


def _pm(X, y):
    return X, y


def _half(X, y):
    return (X + 1.0) / 2.0, y


def _yes(X, y):
    return (X == 1.0).astype(np.float64), y


def _missing_as(value):
    def recode(X, y):
        return np.where(X == 0.0, value, X), y

    return recode


def _times4(X, y):
    return 4.0 * X, y


def _one_hot(X, y):
    return np.hstack([X == 1.0, X == -1.0, X == 0.0]).astype(np.float64), y


def _complete(X, y):
    keep = np.all(X != 0.0, axis=1)
    return X[keep], y[keep]


#: Codings of the votes (from the loader's y / n / ? = +1 / -1 / 0): key -> (text, recode).
CODINGS: dict[str, tuple[str, Callable]] = {
    "pm1": ("y / n / ? = 1 / -1 / 0 (the loader's)", _pm),
    "pm4": ("y / n / ? = 4 / -4 / 0", _times4),
    "half": ("y / n / ? = 1 / 0 / 0.5", _half),
    "yes": ("y / n / ? = 1 / 0 / 0", _yes),
    "missing-y": ("? counted as y: 1 / -1", _missing_as(1.0)),
    "missing-n": ("? counted as n: 1 / -1", _missing_as(-1.0)),
    "one-hot": ("one indicator per answer (48 features)", _one_hot),
    "complete": ("rows without ? only, 1 / -1", _complete),
}


# -- spec ------------------------------------------------------------------------------------


def cell_key(dataset: str, method: str) -> str:
    """Stable key of one cell: data set and method."""
    return f"{dataset}/{method}"


def coding_key(coding: str) -> str:
    """Stable key of the cell of one coding of the house-votes data."""
    return f"house-votes-coding/{coding}"


def build_spec(
    *,
    quick: bool = False,
    seed: int = 0,
    max_epochs: int | None = None,
    datasets: Sequence[str] | None = None,
) -> Spec:
    """The experiment as independent cells, one per (data set, method).

    Parameters
    ----------
    quick : bool, default=False
        The small version: ionosphere, house-votes and adult-1k, baselines capped at
        100 epochs, PUMMA at 20000. The options below override it.
    seed : int >= 0, default=0
        Not used: every algorithm sees the data in file order, and nothing is random.
        Accepted for the common interface of the experiments (and recorded).
    max_epochs : int >= 1, optional
        Epoch cap of ROMMA and ALMA_2 (default 1000; 100 with ``quick``). PUMMA and
        aggressive ROMMA(delta), whose guarantee holds once an epoch makes no update,
        run until they converge, capped at 100000 epochs (20000 with ``quick``).
    datasets : sequence of str, optional
        A subset of :data:`DATASETS`, run in the order of :data:`DATASETS`.

    Returns
    -------
    spec : Spec
        For every data set the cells of :data:`METHODS`, then (when house-votes is run)
        one cell per coding of :data:`CODINGS`.
    """
    if seed < 0:
        raise ValueError(f"the seed must be >= 0, got {seed}")
    grid = dict(QUICK if quick else FULL)
    grid["max_epochs"] = _positive_int(max_epochs, "max_epochs", grid["max_epochs"])
    if datasets is not None:
        unknown = [d for d in datasets if d not in DATASETS]
        if unknown or not datasets:
            raise ValueError(
                f"unknown data set(s) {unknown}; known: {', '.join(DATASETS)}"
                if unknown
                else "datasets must name at least one data set"
            )
        grid["datasets"] = [d for d in DATASETS if d in datasets]
    config = {
        "paper": "Ishibashi, Hatano and Takeda, COLT 2008, Table 1",
        "quick": bool(quick),
        **grid,
        "adult_rows": {d: DATASETS[d] for d in grid["datasets"] if d.startswith("adult")},
        "lam": LAM,
        "delta": DELTA,
        "alpha": DELTA,
        "p": 2.0,
        "methods": {m: METHOD_TEXT[m] for m in METHODS},
        "linearsvc": dict(SVC_PARAMS),
        "codings": {k: text for k, (text, _) in CODINGS.items()},
        "seed": int(seed),
    }
    cells = []
    for dataset in grid["datasets"]:
        for method in METHODS:
            cap = grid["pumma_max_epochs"] if method in CONVERGING else grid["max_epochs"]
            params = {
                "dataset": dataset,
                "method": method,
                "lam": LAM,
                "delta": DELTA,
                "max_epochs": cap,
            }
            cells.append(Cell(cell_key(dataset, method), params))
    if "house-votes" in grid["datasets"]:
        for coding in CODINGS:
            params = {
                "dataset": "house-votes",
                "coding": coding,
                "lam": LAM,
                "delta": DELTA,
                "max_epochs": grid["pumma_max_epochs"],
            }
            cells.append(Cell(coding_key(coding), params))
    return Spec(experiment=NAME, config=config, cells=tuple(cells))


# -- data ------------------------------------------------------------------------------------


def load_data(data_dir=None) -> dict:
    """The three data files, loaded once.

    Returns
    -------
    data : dict
        ``"ionosphere"``, ``"house-votes"`` and ``"adult"`` (the a9a training set) as
        ``(X, y)``.

    Raises
    ------
    MissingDataError
        When a file is missing; the message (from the loader) names it.
    """
    try:
        ionosphere = load_ionosphere(data_dir)
        votes = load_house_votes(data_dir)
        X, y, _, _ = load_adult(data_dir)
    except FileNotFoundError as exc:
        raise MissingDataError(str(exc)) from None
    return {"ionosphere": ionosphere, "house-votes": votes, "adult": (X, y)}


def dataset_arrays(data: Mapping, name: str):
    """``(X, y)`` of a data set of :data:`DATASETS` (CSR with 32-bit indices for adult)."""
    if name in ("ionosphere", "house-votes"):
        return data[name]
    X, y = data["adult"]
    n = DATASETS[name]
    if n is not None:
        X, y = X[:n], y[:n]
    # scikit-learn's liblinear takes only 32-bit sparse indices
    X = sp.csr_matrix(
        (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape
    )
    return X, y


def augment(X, lam: float = LAM):
    """``[X, sqrt(lam) I]`` as CSR: every example gets its own coordinate (soft margin)."""
    n = X.shape[0]
    return sp.hstack(
        [sp.csr_matrix(X), math.sqrt(lam) * sp.identity(n, format="csr")], format="csr"
    )


def cell_runner(data_dir=None) -> Callable[[Cell, LastValueCache], dict]:
    """Load the data now (failing early if a file is missing); return ``run_cell``."""
    data = load_data(data_dir)

    def run(cell, cache):
        return run_cell(cell, cache, data=data)

    return run


# -- computation -----------------------------------------------------------------------------


def soft_margin(w, b, X, y, lam: float = LAM) -> float | None:
    """The margin of ``(w, b)`` in the soft-margin space, with the best slack coordinates.

    In the space where example i has its own coordinate ``sqrt(lam)``, the hyperplane
    ``(s w, v, s b)`` with ``v_i = y_i max(0, 1 - s m_i) / sqrt(lam)``,
    ``m_i = y_i (w . x_i + b)``, has margin ``1 / sqrt(phi(s))``,
    ``phi(s) = s^2 ||w||^2 + sum_i max(0, 1 - s m_i)^2 / lam``; this is the largest margin
    of any augmented hyperplane whose first part is along ``(w, b)``. ``phi`` is convex and
    piecewise quadratic, and its minimum is found exactly between consecutive
    breakpoints ``1 / m_i``. For the optimum of :func:`~marginkit.margins.max_margin`
    (``lam > 0``) it returns the maximum margin.

    Returns
    -------
    margin : float or None
        None when ``w = 0``.
    """
    w = np.asarray(w, dtype=np.float64).ravel()
    ww = float(w @ w)
    if ww == 0.0:
        return None
    m = y * (np.asarray(X @ w).ravel() + b)
    # at s -> 0 every example is short of 1; s crosses 1 / m_i for the largest m_i first
    top = np.sort(m[m > 0])[::-1]
    s1 = float(m.sum()) - np.concatenate([[0.0], np.cumsum(top)])
    s2 = float(m @ m) - np.concatenate([[0.0], np.cumsum(top**2)])
    lower = np.concatenate([[0.0], 1.0 / top])
    upper = np.concatenate([1.0 / top, [np.inf]])
    candidates = (s1 / lam) / (ww + s2 / lam)
    inside = (candidates >= lower) & (candidates <= upper)
    # no root: phi increases from s = 0 (no example on the right side)
    s = float(candidates[np.flatnonzero(inside)[0]]) if inside.any() else 0.0
    phi = s * s * ww + float(np.sum(np.maximum(0.0, 1.0 - s * m) ** 2)) / lam
    return 1.0 / math.sqrt(phi)


def run_exact(X, y, lam: float = LAM) -> dict:
    """The exact optimum: ``margin`` (maximum margin), ``solver_seconds``, ``check_margin``.

    ``check_margin`` is :func:`soft_margin` of the optimal ``(w, b)``, equal to
    ``margin`` up to the solver's accuracy. Without cvxpy: ``available`` False and
    ``reason``.
    """
    try:
        warm_up_solver()
        start = time.perf_counter()
        gamma, w, b = max_margin(X, y, p=2, lam=lam, return_coef=True)
    except ImportError as exc:
        return {"available": False, "reason": str(exc)}
    seconds = time.perf_counter() - start
    return {
        "available": True,
        "margin": float(gamma),
        "solver_seconds": round(seconds, 4),
        "check_margin": soft_margin(w, b, X, y, lam),
    }


def run_pumma(X, y, max_epochs: int, lam: float = LAM, delta: float = DELTA) -> dict:
    """PUMMA_2(delta) with the soft margin ``lam``, :meth:`fit` until an epoch without update.

    Returns
    -------
    result : dict
        ``margin`` (``margin_``), ``wb_margin`` (:func:`soft_margin` of its ``(w, b)``),
        ``train_seconds`` (the fit, compilation excluded), ``updates``, ``epochs``,
        ``converged``, ``conflicts``.
    """
    classes = np.array([-1, 1])
    PUMMAClassifier(delta=delta, lam=lam, output="last", shuffle=False).partial_fit(
        X[:8], y[:8], classes=classes
    )
    clf = PUMMAClassifier(
        p=2.0,
        delta=delta,
        lam=lam,
        max_iter=max_epochs,
        tol=None,
        output="last",
        shuffle=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # reported as converged=False
        start = time.perf_counter()
        clf.fit(X, y)
        seconds = time.perf_counter() - start
    return {
        "margin": float(clf.margin_[0]),
        "wb_margin": soft_margin(clf.coef_[0], clf.intercept_[0], X, y, lam),
        "train_seconds": round(seconds, 4),
        "updates": int(clf.n_updates_),
        "epochs": int(np.max(clf.n_epochs_)),
        "converged": bool(clf.converged_),
        "conflicts": int(clf.n_conflicts_),
    }


def run_linearsvc(X, y, lam: float = LAM) -> dict:
    """LinearSVC on the same problem: ``margin``, ``wb_margin``, ``train_seconds``, ...

    ``margin`` is ``1 / sqrt(||w||^2 + sum_i xi_i^2 / lam)`` with
    ``xi_i = max(0, 1 - y_i (w . x_i + b))``; ``converged`` is False when liblinear warned
    that it stopped at ``max_iter``.
    """
    from sklearn.svm import LinearSVC

    svc = LinearSVC(**SVC_PARAMS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        svc.fit(X, y)
        seconds = time.perf_counter() - start
    w, b = svc.coef_[0], float(svc.intercept_[0])
    xi = np.maximum(0.0, 1.0 - y * (np.asarray(X @ w).ravel() + b))
    return {
        "margin": 1.0 / math.sqrt(float(w @ w) + float(xi @ xi) / lam),
        "wb_margin": soft_margin(w, b, X, y, lam),
        "train_seconds": round(seconds, 4),
        "iterations": int(np.max(svc.n_iter_)),
        "converged": not any(issubclass(c.category, ConvergenceWarning) for c in caught),
    }


def make_baseline(method: str, delta: float = DELTA):
    """ROMMA, aggressive ROMMA(delta) or ALMA_2(delta), each with the papers' bias
    (:func:`marginkit.experiments.pumma_artificial.baseline`)."""
    if method not in ("romma", "aromma", "alma"):
        raise ValueError(f"unknown baseline {method!r}")
    return baseline(method, delta)


def run_baseline(method: str, X, X_aug, y, max_epochs: int, lam: float = LAM) -> dict:
    """A baseline on ``X_aug``, epoch by epoch until an epoch without update, or the cap.

    Returns
    -------
    result : dict
        ``margin`` (with bias, in the augmented space; None while ``w = 0``),
        ``wb_margin`` (:func:`soft_margin` of its ``(w, b)`` on the original features),
        ``train_seconds`` (the :meth:`partial_fit` calls), ``updates``, ``epochs``,
        ``converged``.
    """
    classes = np.array([-1, 1])
    estimator = make_baseline(method)
    clone(estimator).partial_fit(X_aug[:8], y[:8], classes=classes)  # compile or load
    elapsed = 0.0
    previous, converged, epochs = 0, False, 0
    while epochs < max_epochs:
        epochs += 1
        start = time.perf_counter()
        estimator.partial_fit(X_aug, y, classes=classes)
        elapsed += time.perf_counter() - start
        count = int(estimator.n_corrections_)
        if count == previous:
            converged = True
            break
        previous = count
    coef, b = estimator.coef_[0], float(estimator.intercept_[0])
    try:
        aug_margin = margin(coef, X_aug, y, p=2, intercept=b)
    except ValueError:
        aug_margin = None
    return {
        "margin": aug_margin,
        "wb_margin": soft_margin(coef[: X.shape[1]], b, X, y, lam),
        "train_seconds": round(elapsed, 4),
        "updates": int(estimator.n_corrections_),
        "epochs": epochs,
        "converged": converged,
    }


def run_cell(cell: Cell, cache: LastValueCache, *, data=None, data_dir=None) -> dict:
    """Compute one cell of :func:`build_spec`.

    Parameters
    ----------
    cell : Cell
    cache : LastValueCache
        Holds the augmented matrix of the current data set (built once for the three
        baselines).
    data : dict, optional
        :func:`load_data`'s result; loaded from ``data_dir`` when None.
    data_dir : path-like, optional

    Returns
    -------
    result : dict
        The method's result (see :func:`run_exact`, :func:`run_pumma`,
        :func:`run_linearsvc`, :func:`run_baseline`) with ``n_samples``,
        ``n_features`` and ``data_sha256``; for a coding cell, ``exact`` and ``pumma``.
    """
    q = cell.params
    if data is None:
        data = load_data(data_dir)
    X, y = dataset_arrays(data, q["dataset"])
    if "coding" in q:
        X, y = CODINGS[q["coding"]][1](X, y)
        return {
            "n_samples": int(X.shape[0]),
            "n_features": int(X.shape[1]),
            "exact": run_exact(X, y, q["lam"]),
            "pumma": run_pumma(X, y, q["max_epochs"], q["lam"], q["delta"]),
        }
    method = q["method"]
    if method == "exact":
        out = run_exact(X, y, q["lam"])
    elif method == "pumma":
        out = run_pumma(X, y, q["max_epochs"], q["lam"], q["delta"])
    elif method == "linearsvc":
        out = run_linearsvc(X, y, q["lam"])
    else:
        X_aug = cache.get((q["dataset"], X.shape, q["lam"]), lambda: augment(X, q["lam"]))
        out = run_baseline(method, X, X_aug, y, q["max_epochs"], q["lam"])
    out["n_samples"] = int(X.shape[0])
    out["n_features"] = int(X.shape[1])
    if method == "exact":
        arrays = (X.data, X.indices, X.indptr) if sp.issparse(X) else (X,)
        out["data_sha256"] = data_fingerprint(*arrays, y)
    return out


# -- published values ------------------------------------------------------------------------


def load_published() -> dict:
    """The published values of Table 1, from :mod:`marginkit.experiments.published`.

    Returns
    -------
    published : dict
        ``cells``, a list of ``{dataset, method, metric, value, printed, note, cell}``:
        ``method`` one of SVMlight, PUMMA, ROMMA and MICRA, ``metric`` "margin_x100" or
        "seconds", ``cell`` the published cell.
    """
    cells = [
        {
            "dataset": c["dataset"],
            "method": c["algorithm"],
            "metric": c["metric"],
            "value": c["value"],
            "printed": c["printed"],
            "note": f"Table 1 ({c['file']}, line {c['line']})",
            "cell": c,
        }
        for c in pub.cells(paper="ishibashi2008_colt", table="Table 1")
    ]
    return {"cells": cells}


#: Our method compared with each published one's margin.
SCORED_METHOD = {"PUMMA": "pumma", "SVMlight": "exact", "ROMMA": "aromma"}
_SCORE_NOTES = {
    "exact": "the exact optimum (cvxpy + Clarabel) in place of SVMlight",
    "aromma": "our aggressive ROMMA(delta) on [X, sqrt(lambda) I], bias by (x, -R)",
}


def score(document: Mapping | None) -> list:
    """Every published cell of Table 1 beside this run (or why not).

    Margins: PUMMA against ours, SVMlight against the exact optimum, ROMMA against our
    aggressive ROMMA with the paper's delta (the variant that approaches the maximum
    margin, to within 1 - delta once an epoch makes no update). MICRA is not
    implemented here, and published times were measured on another machine.
    """
    results = {} if document is None else document["results"]
    out = []
    for item in load_published()["cells"]:
        c = item["cell"]
        if c["metric"] == "seconds":
            out.append(pub.not_compared(c, "times measured on the paper's machine"))
            continue
        method = SCORED_METHOD.get(c["algorithm"])
        if method is None:
            out.append(
                pub.not_compared(
                    c, "MICRA is not implemented here (its parameters are not published)"
                )
            )
            continue
        r = results.get(cell_key(c["dataset"], method))
        if r is None:
            out.append(pub.not_run(c, "data set or method not in this run's grid"))
        elif r.get("available") is False or r.get("margin") is None:
            out.append(pub.not_compared(c, "no margin: " + r.get("reason", "w = 0")))
        else:
            note = _SCORE_NOTES.get(method, "")
            if r.get("converged") is False:
                note += f"; stopped at the cap of {r['epochs']} epochs, not converged"
            out.append(pub.measured(c, 100 * r["margin"], None, 1, note))
    return out


def published_lookup(published: Mapping | None = None) -> dict:
    """Stored published values keyed by ``(dataset, method, metric)``."""
    published = load_published() if published is None else published
    out = {}
    for c in published["cells"]:
        key = (c["dataset"], c["method"], c["metric"])
        if key in out:
            raise ValueError(f"published value {key} is stored twice")
        out[key] = c
    return out


# -- report ----------------------------------------------------------------------------------


def checks(document: Mapping) -> dict:
    """The two checks of the report, computed from the results.

    Returns
    -------
    checks : dict
        ``within``: per data set with both PUMMA and the exact optimum run,
        ``(ratio, converged)``, ratio = PUMMA's margin / the optimum; ``within_ok``:
        True when every ratio is at least ``1 - MARGIN_TOLERANCE``, None when nothing
        can be checked; ``time``: adult-full PUMMA's training seconds or None;
        ``time_ok``: whether it is under ``TIME_LIMIT`` (None when not run).
    """
    results = document["results"]
    within = {}
    for dataset in document["spec"]["config"]["datasets"]:
        pumma = results.get(cell_key(dataset, "pumma"))
        exact = results.get(cell_key(dataset, "exact"))
        if pumma is None or exact is None or not exact["available"]:
            continue
        within[dataset] = (pumma["margin"] / exact["margin"], pumma["converged"])
    within_ok = (
        None if not within else all(r >= 1.0 - MARGIN_TOLERANCE for r, _ in within.values())
    )
    full = results.get(cell_key("adult-full", "pumma"))
    seconds = None if full is None else full["train_seconds"]
    return {
        "within": within,
        "within_ok": within_ok,
        "time": seconds,
        "time_ok": None if seconds is None else seconds < TIME_LIMIT,
    }


def render(document: Mapping, published: Mapping | None = None) -> str:
    """The markdown report of a (possibly partial) run of :func:`build_spec`.

    Parameters
    ----------
    document : dict
        The runner's output document.
    published : dict, optional
        Published values (default: :func:`load_published`).

    Returns
    -------
    markdown : str
        The published values beside ours; the full table of every method on every data
        set (margin, time, updates, epochs); the two checks; the house-votes codings;
        the data fingerprints and the versions.
    """
    published = load_published() if published is None else published
    lookup = published_lookup(published)
    config = document["spec"]["config"]
    results = document["results"]
    quick = config["quick"]
    lines = [f"# {TITLE}", ""]
    lines += [
        f"2-norm soft margin with lambda = {config['lam']:g} (each example gets its own "
        f"coordinate sqrt(lambda)), p = 2, delta = alpha = {config['delta']:g}. Data sets: "
        + ", ".join(config["datasets"])
        + " (adult-N: the first N rows of the a9a training file)"
        + (" (quick version: fewer data sets and epochs)" if quick else "")
        + f". PUMMA and aggressive ROMMA(delta) run until an epoch makes no update (at most "
        f"{config['pumma_max_epochs']} epochs); ROMMA and ALMA_2 at most "
        f"{config['max_epochs']} epochs.",
        "",
        "Methods: "
        + "; ".join(f"{METHODS[m]}: `{t}`" for m, t in config["methods"].items())
        + ".",
        "",
    ]
    n_done = sum(1 for c in document["spec"]["cells"] if c["key"] in results)
    n_cells = len(document["spec"]["cells"])
    if n_done < n_cells:
        lines += [f"**Partial run: {n_done} of {n_cells} cells.**", ""]

    lines += ["## Margins (x 100) beside the published values", ""]
    lines += [
        f"'paper': the published PUMMA and SVMlight margins, '{NOT_STORED}' where the paper "
        "prints none. 'PUMMA / exact': our PUMMA's margin over the exact optimum.",
        "",
    ]
    headers = [
        "data set",
        "n",
        "exact",
        "PUMMA",
        "PUMMA / exact",
        "LinearSVC",
        "ROMMA",
        "aggr. ROMMA",
        "ALMA_2",
        "paper PUMMA",
        "paper SVMlight",
    ]
    rows = []
    for dataset in config["datasets"]:
        exact = results.get(cell_key(dataset, "exact"))
        pumma = results.get(cell_key(dataset, "pumma"))
        n = next(
            (
                str(r["n_samples"])
                for m in METHODS
                if (r := results.get(cell_key(dataset, m))) is not None
            ),
            NOT_RUN,
        )
        ratio = NOT_RUN
        if exact is not None and exact["available"] and pumma is not None:
            ratio = f"{pumma['margin'] / exact['margin']:.4f}"
        row = [dataset, n, _x100(exact), _x100(pumma), ratio]
        row += [_x100(results.get(cell_key(dataset, m))) for m in ("linearsvc", "romma")]
        row += [_x100(results.get(cell_key(dataset, m))) for m in ("aromma", "alma")]
        for method in ("PUMMA", "SVMlight"):
            c = lookup.get((dataset, method, "margin_x100"))
            row.append(NOT_STORED if c is None else f"{c['value']:.2f}")
        rows.append(row)
    lines += [format_table(headers, rows, align="lr" + "r" * 9), ""]

    lines += ["## Every method on every data set", ""]
    lines += [
        "'100 x margin': of the method's own hyperplane in the soft-margin space (ROMMA and "
        "ALMA_2: in [X, sqrt(lambda) I] with their own slack weights; LinearSVC: "
        "1 / sqrt(||w||^2 + sum xi^2 / lambda)); 'best slack': of its (w, b) with the best "
        "slack coordinates (`soft_margin`); '/ exact': the first over the optimum. 'time "
        "s': training (PUMMA: one fit; the baselines: their epochs of partial_fit; the "
        "exact optimum: the solver), compilation excluded. 'conv': an epoch without update "
        "(LinearSVC: no convergence warning). A negative margin: the hyperplane still "
        "misclassifies some example in the augmented space.",
        "",
    ]
    headers = [
        "data set",
        "method",
        "100 x margin",
        "best slack",
        "/ exact",
        "time s",
        "updates",
        "epochs",
        "conv",
    ]
    rows = []
    for dataset in config["datasets"]:
        exact = results.get(cell_key(dataset, "exact"))
        gamma = exact["margin"] if exact is not None and exact["available"] else None
        for method in METHODS:
            r = results.get(cell_key(dataset, method))
            row = [dataset, METHODS[method]]
            if r is None:
                rows.append(row + [NOT_RUN] * 7)
                continue
            if method == "exact":
                if not r["available"]:
                    rows.append(row + ["n/a"] * 7)
                    continue
                rows.append(
                    row
                    + [
                        _fmt(100 * r["margin"], 4),
                        _fmt(_times100(r["check_margin"]), 4),
                        "1",
                        f"{r['solver_seconds']:.3f}",
                        NOT_RUN,
                        NOT_RUN,
                        NOT_RUN,
                    ]
                )
                continue
            ratio = (
                NOT_RUN if gamma is None or r["margin"] is None else f"{r['margin'] / gamma:.4f}"
            )
            rows.append(
                row
                + [
                    _x100(r),
                    _fmt(_times100(r["wb_margin"]), 4),
                    ratio,
                    f"{r['train_seconds']:.3f}",
                    str(r.get("updates", r.get("iterations", NOT_RUN)))
                    + (" it." if method == "linearsvc" else ""),
                    str(r.get("epochs", NOT_RUN)),
                    "yes" if r["converged"] else "no",
                ]
            )
    lines += [format_table(headers, rows, align="ll" + "r" * 7), ""]
    if any(
        (r := results.get(cell_key(d, "exact"))) is not None and not r["available"]
        for d in config["datasets"]
    ):
        reason = next(
            r["reason"]
            for d in config["datasets"]
            if (r := results.get(cell_key(d, "exact"))) is not None and not r["available"]
        )
        lines += [f"**The exact optimum is not available: {reason}.**", ""]

    lines += ["## Checks", ""]
    lines += _check_lines(checks(document))
    lines += ["", "## Comparison with the published values", ""]
    lines += _published_lines(document, lookup)
    lines += ["", "## Every published cell", ""]
    lines += [
        "Each published cell beside our run (the tolerance: 1% of a margin).",
        "",
    ]
    lines += pub.scoreboard(score(document), level=3)

    if any(coding_key(c) in results for c in CODINGS) or "house-votes" in config["datasets"]:
        lines += ["", "## house-votes: the coding of the votes", ""]
        stored = [lookup.get(("house-votes", m, "margin_x100")) for m in ("PUMMA", "SVMlight")]
        lines += [
            "The exact optimum and PUMMA (same settings) under other codings of the votes"
            + (
                f"; the published margins are {stored[0]['value']:.2f} (PUMMA) and "
                f"{stored[1]['value']:.2f} (SVMlight)."
                if all(stored)
                else "."
            ),
            "",
        ]
        rows = []
        for coding, text in config["codings"].items():
            r = results.get(coding_key(coding))
            if r is None:
                rows.append([text] + [NOT_RUN] * 6)
                continue
            e, p = r["exact"], r["pumma"]
            rows.append(
                [
                    text,
                    str(r["n_samples"]),
                    str(r["n_features"]),
                    _fmt(100 * e["margin"], 3) if e["available"] else "n/a",
                    _fmt(100 * p["margin"], 3),
                    f"{p['margin'] / e['margin']:.4f}" if e["available"] else "n/a",
                    f"{p['epochs']}" + ("" if p["converged"] else " (cap)"),
                ]
            )
        headers = ["coding", "n", "d", "100 x exact", "100 x PUMMA", "PUMMA / exact"]
        lines += [
            format_table([*headers, "PUMMA epochs"], rows, align="lrrrrrr"),
            "",
        ]

    lines += ["## Data", ""]
    rows = []
    for dataset in config["datasets"]:
        r = results.get(cell_key(dataset, "exact"))
        if r is not None and "data_sha256" in r:
            rows.append(
                [dataset, str(r["n_samples"]), str(r["n_features"]), f"`{r['data_sha256'][:16]}`"]
            )
    if rows:
        lines += [
            format_table(["data set", "n", "d", "sha256 (first 16)"], rows, align="lrrl"),
            "",
        ]
    versions = ", ".join(f"{k} {v}" for k, v in document["versions"].items())
    options = ""
    default = QUICK if quick else FULL
    if config["max_epochs"] != default["max_epochs"]:
        options += f" --max-epochs {config['max_epochs']}"
    if config["datasets"] != default["datasets"]:
        options += f" --datasets {','.join(config['datasets'])}"
    lines += [
        "## Run",
        "",
        f"Regenerate: `marginkit reproduce {NAME}{' --quick' if quick else ''}{options} "
        "--data-dir DIR`.",
        f"Versions: {versions}.",
        f"Compute time (sum over cells): {document.get('compute_seconds', 0.0):.1f} s; "
        f"created {document['created']}, updated {document['updated']}.",
        "",
    ]
    return "\n".join(lines)


def _check_lines(c):
    lines = []
    if c["within_ok"] is None:
        lines.append(
            "- PUMMA within 1% of the exact optimum: not checked (no data set with both "
            "PUMMA and the exact optimum)."
        )
    else:
        parts = [
            f"{d} {ratio:.4f}" + ("" if conv else " (not converged)")
            for d, (ratio, conv) in c["within"].items()
        ]
        worst = min(c["within"], key=lambda d: c["within"][d][0])
        verdict = "PASS" if c["within_ok"] else "FAIL"
        lines.append(
            f"- **{verdict}**: PUMMA's margin at least {1 - MARGIN_TOLERANCE:g} times the "
            f"exact optimum on every data set (lowest: {worst}, "
            f"{c['within'][worst][0]:.4f}). Ratios: " + "; ".join(parts) + "."
        )
    if c["time_ok"] is None:
        lines.append(f"- adult-full PUMMA under {TIME_LIMIT:g} s: not run.")
    else:
        verdict = "PASS" if c["time_ok"] else "FAIL"
        lines.append(
            f"- **{verdict}**: adult-full PUMMA trained in {c['time']:.1f} s "
            f"(limit {TIME_LIMIT:g} s)."
        )
    return lines


def _published_lines(document, lookup):
    results = document["results"]
    lines = []
    for dataset in document["spec"]["config"]["datasets"]:
        stored = {m: lookup.get((dataset, m, "margin_x100")) for m in ("PUMMA", "SVMlight")}
        if not all(stored.values()):
            continue
        pumma = results.get(cell_key(dataset, "pumma"))
        exact = results.get(cell_key(dataset, "exact"))
        svc = results.get(cell_key(dataset, "linearsvc"))
        if pumma is None and exact is None:
            lines.append(f"- {dataset}: not run.")
            continue
        parts = []
        if pumma is not None:
            ours = 100 * pumma["margin"]
            parts.append(
                f"PUMMA {ours:.2f} against {stored['PUMMA']['value']:.2f} published "
                f"({ours - stored['PUMMA']['value']:+.2f})"
            )
        if exact is not None and exact["available"]:
            ours, theirs = 100 * exact["margin"], stored["SVMlight"]["value"]
            parts.append(
                f"the exact optimum {ours:.2f} against SVMlight's {theirs:.2f} "
                f"({ours - theirs:+.2f})"
            )
        if svc is not None:
            parts.append(f"LinearSVC {100 * svc['margin']:.2f}")
        ratio = stored["PUMMA"]["value"] / stored["SVMlight"]["value"]
        text = f"- {dataset}: " + "; ".join(parts) + "."
        if ratio < 1.0 - DELTA:
            text += (
                f" The published pair itself has PUMMA / SVMlight = {ratio:.3f}, below the "
                f"{1 - DELTA:g} that PUMMA guarantees when an epoch passes without update."
            )
        lines.append(text)
    if not lines:
        lines.append("No data set with stored published values was run.")
    return lines


def _x100(r):
    if r is None:
        return NOT_RUN
    if "available" in r and not r["available"]:
        return "n/a"
    return "n/a" if r["margin"] is None else _fmt(100 * r["margin"], 4)


def _times100(value):
    return None if value is None else 100 * value


def _fmt(value, digits):
    return NOT_RUN if value is None else f"{value:.{digits}f}"
