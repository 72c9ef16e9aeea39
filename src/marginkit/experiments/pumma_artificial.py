"""Figures 3 and 4 of Ishibashi, Hatano and Takeda (COLT 2008): PUMMA on r-of-k data.

Section 4.1 of K. Ishibashi, K. Hatano and M. Takeda, "Online Learning of Approximate
Maximum p-Norm Margin Classifiers with Bias", COLT 2008, compares PUMMA_p(delta), which
learns its bias directly, with ALMA_p(alpha) and ROMMA given a bias through the
augmentation ``x -> (x, -R)``, on r-of-k threshold data (:func:`~marginkit.datasets.
make_r_of_k`): ``n = 100`` features in {-1, +1}, ``k = 16`` relevant ones, label +1 when at
least ``r`` of them are +1, balanced classes. The target hyperplane has bias
``k + 1 - 2r``: 15 for r = 1, 9 for r = 4 and 1 for r = 8, so r = 1 is the regime where
the augmentation is expected to hurt. The paper's claim: there PUMMA needs far fewer
updates than the augmented algorithms.

Here every algorithm runs epoch by epoch (:meth:`partial_fit` over the same data in the
same order) until an epoch makes no update, or up to a cap, and after every epoch the
run records the cumulative number of updates, the p-norm margin with bias of the current
hyperplane on the training data (:func:`marginkit.margins.margin`) and the cumulative
training time. The exact maximum p-norm margin with bias
(:func:`marginkit.margins.max_margin`) is the reference. p is 2 or ``2 ln n`` (passed as
a number to every algorithm, so that all use the same p: ``p="log"`` would give ALMA, which
sees one more coordinate, ``2 ln(n + 1)``); ROMMA is a 2-norm algorithm and runs at p = 2
only, in its two forms: updating on mistakes, and aggressive (whenever
``y w . x < 1 - delta``, the approximate version the paper runs). ``delta = alpha = 0.1``.

The paper's number of examples is not known here; the default is 1000 examples per data
set and 5 data sets per r (see ``FULL``), and every number reported is a mean over them.
The figures are drawn by :func:`write_figures` (:func:`marginkit.experiments.reproduce`
calls it).
"""

from __future__ import annotations

import importlib.util
import math
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .._files import atomic_write
from ..alma import ALMAClassifier
from ..datasets import make_r_of_k
from ..margins import margin, max_margin
from ..pumma import PUMMAClassifier
from ..romma import ROMMAClassifier
from ._format import format_table
from .runner import Cell, LastValueCache, Spec

NAME = "pumma-artificial"
TITLE = "Ishibashi, Hatano and Takeda (COLT 2008), Figures 3 and 4: PUMMA on r-of-k data"
#: Options of :func:`build_spec` beyond ``quick`` and ``seed``.
OPTIONS = ("max_epochs", "repeats")

#: delta of PUMMA and alpha of ALMA.
DELTA = 0.1
NOT_RUN = "-"

FULL = {
    "n_samples": 1000,
    "n_features": 100,
    "k": 16,
    "r": [1, 4, 8],
    "repeats": 5,
    "max_epochs": 3000,
}
QUICK = {
    "n_samples": 300,
    "n_features": 100,
    "k": 16,
    "r": [1, 4, 8],
    "repeats": 1,
    "max_epochs": 200,
}

#: Algorithm keys (as in the cell keys) and their names in the report.
ALGORITHMS = {
    "pumma": "PUMMA",
    "alma": "ALMA",
    "romma": "ROMMA",
    "aromma": "aggressive ROMMA",
}
ALGORITHM_TEXT = {
    "pumma": "PUMMA_p(delta), its own bias",
    "alma": "ALMA_p(alpha) on (x, -R), B = 1/alpha, C = sqrt(2)",
    "romma": "ROMMA on (x, -R), updates on mistakes (p = 2 only)",
    "aromma": "aggressive ROMMA(delta) on (x, -R), updates whenever y w . x < 1 - delta "
    "(p = 2 only)",
}
#: p settings: label -> how p follows from n.
P_LABELS = ("2", "2ln(n)")
#: Solver tolerances of a second attempt when Clarabel stops at 'optimal_inaccurate'.
LOOSE_TOLERANCES = {"tol_gap_abs": 1e-7, "tol_gap_rel": 1e-7, "tol_feas": 1e-7}


def p_value(label: str, n_features: int) -> float:
    """The p of a label: ``"2"`` is 2, ``"2ln(n)"`` is ``2 ln n_features``."""
    if label == "2":
        return 2.0
    if label == "2ln(n)":
        return 2.0 * math.log(n_features)
    raise ValueError(f"unknown p setting {label!r} (known: {', '.join(P_LABELS)})")


def algorithms_for(p_label: str) -> list[str]:
    """The algorithms run at a p setting: ROMMA only at p = 2."""
    return list(ALGORITHMS) if p_label == "2" else ["pumma", "alma"]


def data_seed(base_seed: int, r: int, repeat: int) -> int:
    """Seed of data set ``repeat`` of threshold ``r``, derived from ``base_seed``.

    Returns
    -------
    seed : int
        ``numpy.random.SeedSequence([base_seed, r, repeat]).generate_state(1)[0]``, the
        same on every platform and NumPy version.
    """
    if base_seed < 0 or repeat < 0:
        raise ValueError(f"seeds and repeats must be >= 0, got {base_seed}, {repeat}")
    entropy = [int(base_seed), int(r), int(repeat)]
    return int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint32)[0])


def dataset_key(r: int, repeat: int) -> str:
    """Name of data set ``repeat`` of threshold ``r`` (cell keys, seed table)."""
    return f"r={r}/data={repeat}"


def cell_key(r: int, repeat: int, p_label: str, algorithm: str) -> str:
    """Stable key of one cell: data set, p setting, algorithm (or ``"exact"``)."""
    return f"{dataset_key(r, repeat)}/p={p_label}/{algorithm}"


def build_spec(
    *,
    quick: bool = False,
    seed: int = 0,
    max_epochs: int | None = None,
    repeats: int | None = None,
) -> Spec:
    """The experiment as independent cells, one per (data set, p, algorithm).

    Parameters
    ----------
    quick : bool, default=False
        The small version (``QUICK``: 300 examples, one data set per r, at most 200
        epochs). The options below override it.
    seed : int >= 0, default=0
        Base seed; data set ``i`` of threshold r has the seed :func:`data_seed`
        ``(seed, r, i)``.
    max_epochs : int >= 1, optional
        Cap on the epochs of every algorithm (default 3000; 200 with ``quick``).
    repeats : int >= 1, optional
        Data sets per r (default 5; 1 with ``quick``).

    Returns
    -------
    spec : Spec
        For every data set, for p = 2 and p = 2 ln n: a cell ``exact`` (the maximum
        margin) and one cell per algorithm, the cells of a data set consecutive.
    """
    if seed < 0:
        raise ValueError(f"the seed must be >= 0, got {seed}")
    grid = dict(QUICK if quick else FULL)
    grid["max_epochs"] = _positive_int(max_epochs, "max_epochs", grid["max_epochs"])
    grid["repeats"] = _positive_int(repeats, "repeats", grid["repeats"])
    p_values = {label: p_value(label, grid["n_features"]) for label in P_LABELS}
    seeds = {
        dataset_key(r, i): data_seed(seed, r, i) for r in grid["r"] for i in range(grid["repeats"])
    }
    config = {
        "paper": "Ishibashi, Hatano and Takeda, COLT 2008, section 4.1, Figures 3 and 4",
        "quick": bool(quick),
        **grid,
        "balanced": True,
        "bias": {str(r): grid["k"] + 1 - 2 * r for r in grid["r"]},
        "p": p_values,
        "delta": DELTA,
        "alpha": DELTA,
        "algorithms": {a: ALGORITHM_TEXT[a] for a in ALGORITHMS},
        "seed": int(seed),
        "data_seeds": seeds,
    }
    cells = []
    for r in grid["r"]:
        for i in range(grid["repeats"]):
            for p_label in P_LABELS:
                for algorithm in ["exact", *algorithms_for(p_label)]:
                    params = {
                        "r": r,
                        "repeat": i,
                        "data_seed": seeds[dataset_key(r, i)],
                        "n_samples": grid["n_samples"],
                        "n_features": grid["n_features"],
                        "k": grid["k"],
                        "p_label": p_label,
                        "p": p_values[p_label],
                        "algorithm": algorithm,
                        "delta": DELTA,
                        "max_epochs": grid["max_epochs"],
                    }
                    cells.append(Cell(cell_key(r, i, p_label, algorithm), params))
    return Spec(experiment=NAME, config=config, cells=tuple(cells))


# -- computation -------------------------------------------------------------------------


def baseline(algorithm: str, delta: float, p: float = 2.0):
    """ALMA_p(delta), ROMMA or aggressive ROMMA(delta) (``"alma"``, ``"romma"``,
    ``"aromma"``), each with the papers' bias: ``fit_intercept=True`` with the largest
    norm of an instance as the coordinate (``intercept_scaling="max"``), in the order
    given, with the last hypothesis; ROMMA with its hard margin (``lam=0``)."""
    paper = dict(fit_intercept=True, intercept_scaling="max", output="last", shuffle=False)
    if algorithm == "alma":
        return ALMAClassifier(p=p, alpha=delta, **paper)
    if algorithm not in ("romma", "aromma"):
        raise ValueError(f"unknown algorithm {algorithm!r}")
    if p != 2.0:
        raise ValueError(f"ROMMA is a 2-norm algorithm; p = {p} does not apply")
    if algorithm == "romma":
        return ROMMAClassifier(aggressive=False, lam=0.0, **paper)
    return ROMMAClassifier(aggressive=True, delta=delta, lam=0.0, **paper)


def make_estimator(algorithm: str, p: float, delta: float = DELTA):
    """A fresh estimator of one algorithm, its bias as the paper gives it.

    PUMMA learns its own bias; ALMA and both ROMMAs get one through ``fit_intercept=True``
    (the augmentation ``x -> (x, -R)``, :func:`baseline`); ``coef_`` and ``intercept_``
    are on the original features for all of them.
    """
    if algorithm == "pumma":
        return PUMMAClassifier(p=p, delta=delta, lam=0.0, tol=None, output="last", shuffle=False)
    return baseline(algorithm, delta, p)


def learning_curve(estimator, X, y, p: float, max_epochs: int) -> dict:
    """Run ``estimator`` epoch by epoch until an epoch makes no update, or ``max_epochs``.

    Each epoch is one :meth:`partial_fit` over ``X`` in the given order; the compiled pass
    is warmed up on a few rows of a clone first, so that the times exclude compilation.

    Parameters
    ----------
    estimator : fitted-from-scratch online linear classifier
        With ``n_corrections_`` (PUMMA's updates count under that name too).
    X, y : arrays
        Training data, labels -1 and +1.
    p : float
        The norm the margin is measured in.
    max_epochs : int >= 1

    Returns
    -------
    curve : dict
        ``epochs``, ``converged`` (an epoch made no update), final ``updates``,
        ``margin`` and ``train_seconds``, and ``curve``: per epoch, ``updates``
        (cumulative), ``margin`` (of the hyperplane after that epoch, None while
        ``w = 0``) and ``train_seconds`` (cumulative, margins not included).
    """
    from sklearn.base import clone

    classes = np.array([-1, 1])
    clone(estimator).partial_fit(X[:8], y[:8], classes=classes)  # compile or load the pass
    updates, margins, seconds = [], [], []
    elapsed = 0.0
    converged = False
    previous = 0
    for _ in range(max_epochs):
        start = time.perf_counter()
        estimator.partial_fit(X, y, classes=classes)
        elapsed += time.perf_counter() - start
        count = int(estimator.n_corrections_)
        updates.append(count)
        seconds.append(round(elapsed, 5))
        margins.append(_margin_or_none(estimator.coef_[0], X, y, p, estimator.intercept_[0]))
        if count == previous:
            converged = True
            break
        previous = count
    return {
        "epochs": len(updates),
        "converged": converged,
        "updates": updates[-1],
        "margin": margins[-1],
        "train_seconds": seconds[-1],
        "curve": {"updates": updates, "margin": margins, "train_seconds": seconds},
    }


def exact_margin(X, y, p: float, **max_margin_options) -> dict:
    """The maximum p-norm margin with bias, or why it is not available.

    Clarabel sometimes stops at 'optimal_inaccurate' at its default tolerances (on r = 1
    with p = 2 ln n, for one); it is then run once more with :data:`LOOSE_TOLERANCES` and
    the report says so.

    Returns
    -------
    result : dict
        ``available``; when True ``max_margin``, ``check_margin`` (the
        :func:`~marginkit.margins.margin` of the optimal hyperplane, which must agree),
        ``solver_seconds`` and ``solver_note`` (None, or what was retried); when False
        ``reason``.
    """
    note = None
    try:
        warm_up_solver()
        start = time.perf_counter()
        try:
            gamma, w, b = max_margin(X, y, p=p, return_coef=True, **max_margin_options)
        except RuntimeError as exc:
            note = f"{exc} Solved again with {LOOSE_TOLERANCES}."
            gamma, w, b = max_margin(
                X, y, p=p, return_coef=True, solver_options=LOOSE_TOLERANCES, **max_margin_options
            )
    except ImportError as exc:
        return {"available": False, "reason": str(exc)}
    seconds = time.perf_counter() - start
    check = margin(w, X, y, p=p, intercept=b)
    return {
        "available": True,
        "max_margin": float(gamma),
        "check_margin": float(check),
        "solver_seconds": round(seconds, 4),
        "solver_note": note,
    }


def warm_up_solver() -> None:
    """Solve a two-point problem, so that a timed solve excludes importing cvxpy.

    Raises
    ------
    ImportError
        When cvxpy or clarabel is not installed.
    """
    max_margin(np.array([[1.0], [-1.0]]), np.array([1, -1]))


def run_cell(cell: Cell, cache: LastValueCache) -> dict:
    """Compute one cell: the exact maximum margin, or one algorithm's learning curve.

    Parameters
    ----------
    cell : Cell
        A cell of :func:`build_spec`.
    cache : LastValueCache
        Holds the current data set, generated once for its consecutive cells.

    Returns
    -------
    result : dict
        :func:`exact_margin` or :func:`learning_curve`, plus ``data_seconds``
        (generating the data set, 0 when cached).
    """
    q = cell.params
    start = time.perf_counter()
    X, y = cache.get(
        (q["n_samples"], q["n_features"], q["k"], q["r"], q["data_seed"]),
        lambda: make_r_of_k(
            q["n_samples"],
            n_features=q["n_features"],
            k=q["k"],
            r=q["r"],
            balanced=True,
            random_state=q["data_seed"],
        ),
    )
    data_seconds = round(time.perf_counter() - start, 4)
    if q["algorithm"] == "exact":
        result = exact_margin(X, y, q["p"])
    else:
        estimator = make_estimator(q["algorithm"], q["p"], q["delta"])
        result = learning_curve(estimator, X, y, q["p"], q["max_epochs"])
    result["data_seconds"] = data_seconds
    return result


def _margin_or_none(w, X, y, p, b):
    """The margin rounded to 7 significant digits, or None while ``w = 0``."""
    try:
        value = margin(w, X, y, p=p, intercept=b)
    except ValueError:
        return None
    return float(f"{value:.7g}")


def _positive_int(value, name, default):
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)


# -- summaries ---------------------------------------------------------------------------


def summarise(document: Mapping) -> dict:
    """Means over the data sets of every (r, p, algorithm) run so far.

    Returns
    -------
    summary : dict
        Keyed by ``(r, p_label, algorithm)``: ``runs``, ``converged`` (how many),
        ``epochs``, ``updates``, ``train_seconds`` (means), ``fraction`` (mean final
        margin over the maximum margin, None without the maximum), ``reach_runs`` (runs
        whose margin reached ``(1 - delta)`` times the maximum), ``reach_updates`` and
        ``reach_epochs`` (means over those runs). Keyed by ``(r, p_label, "exact")``:
        ``runs``, ``max_margin`` and ``solver_seconds`` (means), ``notes`` and
        ``unavailable`` (a reason, or None).
    """
    config = document["spec"]["config"]
    results = document["results"]
    delta = config["delta"]
    out = {}
    for r in config["r"]:
        for p_label in P_LABELS:
            exact = {}
            notes, reason = [], None
            for i in range(config["repeats"]):
                e = results.get(cell_key(r, i, p_label, "exact"))
                if e is None:
                    continue
                if e["available"]:
                    exact[i] = e
                    if e.get("solver_note"):
                        notes.append(f"data set {i}: {e['solver_note']}")
                else:
                    reason = e["reason"]
            out[(r, p_label, "exact")] = {
                "runs": len(exact),
                "max_margin": _mean([e["max_margin"] for e in exact.values()]),
                "solver_seconds": _mean([e["solver_seconds"] for e in exact.values()]),
                "notes": notes,
                "unavailable": reason,
            }
            for algorithm in algorithms_for(p_label):
                runs = {}
                for i in range(config["repeats"]):
                    res = results.get(cell_key(r, i, p_label, algorithm))
                    if res is not None:
                        runs[i] = res
                fractions, reach_updates, reach_epochs = [], [], []
                for i, res in runs.items():
                    if i not in exact:
                        continue
                    gamma = exact[i]["max_margin"]
                    if res["margin"] is not None:
                        fractions.append(res["margin"] / gamma)
                    level = (1.0 - delta) * gamma
                    curve = res["curve"]
                    hit = next(
                        (j for j, m in enumerate(curve["margin"]) if m is not None and m >= level),
                        None,
                    )
                    if hit is not None:
                        reach_updates.append(curve["updates"][hit])
                        reach_epochs.append(hit + 1)
                with_exact = [i for i in runs if i in exact]
                out[(r, p_label, algorithm)] = {
                    "runs": len(runs),
                    "converged": sum(bool(res["converged"]) for res in runs.values()),
                    "epochs": _mean([res["epochs"] for res in runs.values()]),
                    "updates": _mean([res["updates"] for res in runs.values()]),
                    "train_seconds": _mean([res["train_seconds"] for res in runs.values()]),
                    "fraction": _mean(fractions) if len(fractions) == len(with_exact) else None,
                    "with_exact": len(with_exact),
                    "reach_runs": len(reach_updates),
                    "reach_updates": _mean(reach_updates),
                    "reach_epochs": _mean(reach_epochs),
                }
    return out


def claim_sentences(document: Mapping, summary: Mapping | None = None) -> list[str]:
    """Whether PUMMA needs fewer updates than each other algorithm, per (r, p), as bullets.

    The comparison is of the mean number of updates until an epoch makes none. A run that
    hit the epoch cap has made at least that many updates, so its count is a lower bound:
    the comparison still holds when PUMMA converged with fewer. The margins reached are
    given beside the counts, since fewer updates to a smaller margin say little.

    Returns
    -------
    lines : list of str
        Markdown bullets.
    """
    config = document["spec"]["config"]
    summary = summarise(document) if summary is None else summary
    lines = []
    for r in config["r"]:
        for p_label in P_LABELS:
            pumma = summary[(r, p_label, "pumma")]
            head = f"- r = {r} (bias {config['bias'][str(r)]}), p = {p_label}: "
            if not pumma["runs"]:
                lines.append(head + "PUMMA not run yet.")
                continue
            parts = [f"PUMMA {_count(pumma)} updates{_frac_text(pumma)}"]
            verdicts = []
            for algorithm in algorithms_for(p_label)[1:]:
                other = summary[(r, p_label, algorithm)]
                if not other["runs"]:
                    parts.append(f"{ALGORITHMS[algorithm]} not run yet")
                    continue
                ratio = other["updates"] / pumma["updates"] if pumma["updates"] else math.inf
                parts.append(
                    f"{ALGORITHMS[algorithm]} {_count(other)} ({_ratio(ratio)} times PUMMA's)"
                    f"{_frac_text(other)}"
                )
                fewer = pumma["updates"] < other["updates"]
                if pumma["converged"] < pumma["runs"]:
                    verdict = "undetermined (PUMMA hit the cap)"
                elif fewer:
                    verdict = "fewer"
                else:
                    verdict = "not fewer"
                verdicts.append(f"{verdict} than {ALGORITHMS[algorithm]}")
            text = head + "; ".join(parts) + "."
            if verdicts:
                text += " PUMMA: " + ", ".join(verdicts) + "."
            lines.append(text)
    return lines


def _count(s):
    """Mean updates, marked as a lower bound when some run hit the epoch cap."""
    text = f"{s['updates']:.0f}"
    if s["converged"] < s["runs"]:
        text = f">= {text} (cap hit in {s['runs'] - s['converged']} of {s['runs']} runs)"
    return text


def _ratio(value):
    return f"{value:.1f}" if value >= 1 else f"{value:.2g}"


def _frac_text(s):
    return "" if s["fraction"] is None else f", margin {s['fraction']:.3f} of the maximum"


def _mean(values):
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


# -- report ------------------------------------------------------------------------------


def render(document: Mapping) -> str:
    """The markdown report of a (possibly partial) run of :func:`build_spec`.

    Parameters
    ----------
    document : dict
        The runner's output document.

    Returns
    -------
    markdown : str
        The table of updates to convergence, final margins and times per (r, p,
        algorithm), the maximum margins, the check of the paper's claim for every r, the
        figures' file names, the data seeds and the versions.
    """
    config = document["spec"]["config"]
    summary = summarise(document)
    quick = config["quick"]
    delta = config["delta"]
    lines = [f"# {TITLE}", ""]
    lines += [
        f"r-of-k data: n = {config['n_features']} features in {{-1, +1}}, k = {config['k']} "
        f"relevant, label +1 iff at least r of them are +1, balanced classes; "
        f"{config['n_samples']} examples per data set, {config['repeats']} data set(s) per r "
        f"(base seed {config['seed']})"
        + (" (quick version: smaller than the default)" if quick else "")
        + f". delta = alpha = {delta:g}; p = 2 and p = 2 ln n = {config['p']['2ln(n)']:.4f}. "
        f"Every algorithm runs epoch by epoch until an epoch makes no update, at most "
        f"{config['max_epochs']} epochs.",
        "",
        "Algorithms: "
        + "; ".join(f"{ALGORITHMS[a]}: {t}" for a, t in config["algorithms"].items())
        + ".",
        "",
        "Columns (means over the data sets): 'conv' how many runs converged (an epoch "
        "without update); 'epochs' and 'updates' until then (at the cap for the others, so "
        "a lower bound when conv is short); 'margin/max' the final p-norm margin with bias "
        "on the training data over the exact maximum; 'train s' the training time (margins "
        f"not included); 'to {1 - delta:g} max': updates and epochs until the margin first "
        f"reached {1 - delta:g} times the maximum (PUMMA's guarantee at convergence), over "
        f"the runs that reached it ('{NOT_RUN}': none did).",
        "",
    ]
    n_done = sum(1 for c in document["spec"]["cells"] if c["key"] in document["results"])
    n_cells = len(document["spec"]["cells"])
    if n_done < n_cells:
        lines += [f"**Partial run: {n_done} of {n_cells} cells.**", ""]

    headers = [
        "r/k",
        "bias",
        "p",
        "algorithm",
        "conv",
        "epochs",
        "updates",
        "margin/max",
        "train s",
        f"updates to {1 - delta:g} max",
        f"epochs to {1 - delta:g} max",
    ]
    rows = []
    for r in config["r"]:
        for p_label in P_LABELS:
            for algorithm in algorithms_for(p_label):
                s = summary[(r, p_label, algorithm)]
                row = [
                    f"{r}/{config['k']}",
                    str(config["bias"][str(r)]),
                    p_label,
                    ALGORITHMS[algorithm],
                ]
                if not s["runs"]:
                    rows.append(row + [NOT_RUN] * 7)
                    continue
                reach = (
                    [NOT_RUN, NOT_RUN]
                    if not s["reach_runs"]
                    else [
                        _with_runs(f"{s['reach_updates']:.0f}", s["reach_runs"], s["with_exact"]),
                        f"{s['reach_epochs']:.1f}",
                    ]
                )
                rows.append(
                    row
                    + [
                        f"{s['converged']}/{s['runs']}",
                        f"{s['epochs']:.1f}",
                        f"{s['updates']:.0f}",
                        NOT_RUN if s["fraction"] is None else f"{s['fraction']:.3f}",
                        f"{s['train_seconds']:.3f}",
                        *reach,
                    ]
                )
    lines += [format_table(headers, rows, align="rrll" + "r" * 7), ""]

    lines += ["## Maximum margins", ""]
    rows, notes, unavailable = [], [], None
    for r in config["r"]:
        for p_label in P_LABELS:
            s = summary[(r, p_label, "exact")]
            unavailable = unavailable or s["unavailable"]
            notes += [f"r = {r}, p = {p_label}, {n}" for n in s["notes"]]
            rows.append(
                [
                    f"{r}/{config['k']}",
                    p_label,
                    str(s["runs"]),
                    NOT_RUN if s["max_margin"] is None else f"{s['max_margin']:.5f}",
                    NOT_RUN if s["solver_seconds"] is None else f"{s['solver_seconds']:.2f}",
                ]
            )
    lines += [
        "The exact maximum p-norm margin with bias (`marginkit.margins.max_margin`, cvxpy "
        "and Clarabel), mean over the data sets, and the solver's time.",
        "",
        format_table(["r/k", "p", "runs", "max margin", "solver s"], rows, align="rlrrr"),
        "",
    ]
    if unavailable:
        lines += [
            f"**The maximum margin is not available ({unavailable}); the margin columns "
            "above are empty.**",
            "",
        ]
    if notes:
        lines += ["Solver notes:", ""] + [f"- {n}" for n in notes] + [""]

    lines += ["## The paper's claim: fewer updates for PUMMA when the bias is large", ""]
    lines += [
        "Mean updates until an epoch makes none, with the final margins:",
        "",
    ]
    lines += claim_sentences(document, summary)
    lines += [""]

    lines += ["## Figures", ""]
    have_mpl = importlib.util.find_spec("matplotlib") is not None
    lines += [
        "`marginkit reproduce` (and `marginkit.experiments.reproduce`) draws two figures "
        "beside this report, named after its path "
        "without `.md`: `-updates.png` (cumulative updates against epochs) and "
        "`-margin.png` (the margin over the maximum margin against epochs), one panel per "
        "(p, r), each curve the mean over the data sets (a run that stopped keeps its last "
        "value)."
        + (
            ""
            if have_mpl
            else " **matplotlib is not installed: no figure can be drawn (pip install "
            '"marginkit[plot]").**'
        ),
        "",
    ]

    lines += ["## Data seeds", ""]
    seed_rows = [[k, str(v)] for k, v in config["data_seeds"].items()]
    lines += [format_table(["data set", "seed"], seed_rows, align="lr"), ""]
    versions = ", ".join(f"{k} {v}" for k, v in document["versions"].items())
    options = ""
    default = QUICK if quick else FULL
    if config["max_epochs"] != default["max_epochs"]:
        options += f" --max-epochs {config['max_epochs']}"
    if config["repeats"] != default["repeats"]:
        options += f" --repeats {config['repeats']}"
    lines += [
        "## Run",
        "",
        f"Regenerate: `marginkit reproduce {NAME}{' --quick' if quick else ''}{options} "
        f"--seed {config['seed']}`.",
        f"Versions: {versions}.",
        f"Compute time (sum over cells): {document.get('compute_seconds', 0.0):.1f} s; "
        f"created {document['created']}, updated {document['updated']}.",
        "",
    ]
    return "\n".join(lines)


def _with_runs(text, hit, total):
    return text if hit == total else f"{text} ({hit}/{total})"


# -- figures -----------------------------------------------------------------------------

_STYLE = {
    "pumma": {"color": "#1f77b4", "linestyle": "-"},
    "alma": {"color": "#d62728", "linestyle": "--"},
    "romma": {"color": "#2ca02c", "linestyle": ":"},
    "aromma": {"color": "#9467bd", "linestyle": "-."},
}


def mean_curve(document: Mapping, r: int, p_label: str, algorithm: str, field: str):
    """The mean over the data sets of one per-epoch series.

    Parameters
    ----------
    document : dict
    r : int
    p_label : {"2", "2ln(n)"}
    algorithm : str
        A key of :data:`ALGORITHMS`.
    field : {"updates", "margin", "fraction", "train_seconds"}
        ``"fraction"`` is the margin over the data set's maximum margin.

    Returns
    -------
    epochs : ndarray of int
        1 to the longest run's number of epochs (empty when nothing was run).
    mean : ndarray
        Mean over the runs, a shorter run padded with its last value (its hypothesis
        no longer changes); NaN where no run has a value (``w = 0``).
    stops : list of (int, bool)
        Each run's number of epochs and whether it converged.
    """
    config = document["spec"]["config"]
    results = document["results"]
    series, stops = [], []
    for i in range(config["repeats"]):
        res = results.get(cell_key(r, i, p_label, algorithm))
        if res is None:
            continue
        if field == "fraction":
            exact = results.get(cell_key(r, i, p_label, "exact"))
            if exact is None or not exact["available"]:
                continue
            values = [
                np.nan if m is None else m / exact["max_margin"] for m in res["curve"]["margin"]
            ]
        else:
            values = [np.nan if v is None else v for v in res["curve"][field]]
        series.append(np.asarray(values, dtype=float))
        stops.append((res["epochs"], bool(res["converged"])))
    if not series:
        return np.arange(1, 1), np.zeros(0), stops
    length = max(s.shape[0] for s in series)
    padded = np.vstack([np.pad(s, (0, length - s.shape[0]), mode="edge") for s in series])
    with np.errstate(invalid="ignore"):
        counts = np.sum(~np.isnan(padded), axis=0)
        mean = np.where(counts > 0, np.nansum(padded, axis=0) / np.maximum(counts, 1), np.nan)
    return np.arange(1, length + 1), mean, stops


def plot_updates(document: Mapping, r: int, p_label: str, ax=None):
    """Cumulative updates against epochs, one line per algorithm.

    Parameters
    ----------
    document : dict
        A run of :func:`build_spec`.
    r : int
    p_label : {"2", "2ln(n)"}
    ax : matplotlib Axes, optional
        Drawn on a new figure's Axes when None.

    Returns
    -------
    ax : matplotlib Axes
    """
    ax = _axes(ax)
    for algorithm in algorithms_for(p_label):
        epochs, mean, stops = mean_curve(document, r, p_label, algorithm, "updates")
        if epochs.size:
            _draw(ax, epochs, mean, stops, algorithm)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("updates (cumulative)")
    _title(ax, document, r, p_label)
    ax.grid(True, which="major", alpha=0.3)
    return ax


def plot_margin(document: Mapping, r: int, p_label: str, ax=None):
    """Margin over the maximum margin against epochs, one line per algorithm.

    The dotted lines mark the maximum margin (1) and PUMMA's guarantee ``1 - delta``.
    Values below -0.5 (hyperplanes that still misclassify badly) are cut off.

    Parameters
    ----------
    document : dict
    r : int
    p_label : {"2", "2ln(n)"}
    ax : matplotlib Axes, optional

    Returns
    -------
    ax : matplotlib Axes
    """
    ax = _axes(ax)
    delta = document["spec"]["config"]["delta"]
    for algorithm in algorithms_for(p_label):
        epochs, mean, stops = mean_curve(document, r, p_label, algorithm, "fraction")
        if epochs.size:
            _draw(ax, epochs, mean, stops, algorithm)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":", label="max margin")
    ax.axhline(
        1.0 - delta, color="grey", linewidth=0.8, linestyle=":", label="(1 - delta) max margin"
    )
    ax.set_xscale("log")
    ax.set_ylim(-0.5, 1.08)
    ax.set_xlabel("epoch")
    ax.set_ylabel("margin / max margin")
    _title(ax, document, r, p_label)
    ax.grid(True, which="major", alpha=0.3)
    return ax


def write_figures(document: Mapping, prefix) -> list[Path]:
    """Draw the updates and margin figures as PNG files beside the report.

    Parameters
    ----------
    document : dict
        A run of :func:`build_spec`.
    prefix : path-like
        Output path without extension (as for :func:`~marginkit.experiments.reproduce`):
        the files are ``prefix-updates.png`` and ``prefix-margin.png``.

    Returns
    -------
    paths : list of Path

    Raises
    ------
    ImportError
        When matplotlib is not installed.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError('the figures need matplotlib: pip install "marginkit[plot]"') from exc
    prefix = Path(prefix)
    if prefix.suffix in (".json", ".md"):
        prefix = prefix.with_suffix("")
    prefix.parent.mkdir(parents=True, exist_ok=True)
    config = document["spec"]["config"]
    paths = []
    for name, plot, what in (
        ("updates", plot_updates, "Cumulative updates"),
        ("margin", plot_margin, "p-norm margin with bias / maximum margin"),
    ):
        n_rows, n_cols = len(P_LABELS), len(config["r"])
        fig = Figure(figsize=(4.2 * n_cols, 3.4 * n_rows + 0.9), layout="constrained")
        axes = fig.subplots(n_rows, n_cols, squeeze=False)
        for row, p_label in enumerate(P_LABELS):
            for col, r in enumerate(config["r"]):
                plot(document, r, p_label, ax=axes[row, col])
        handles = {}
        for ax in axes.ravel():
            for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
                handles.setdefault(label, h)
        fig.legend(
            list(handles.values()),
            list(handles),
            loc="outside lower center",
            ncols=len(handles),
            frameon=False,
        )
        cut = "; curves below -0.5 (hyperplanes that misclassify) leave the panels"
        fig.suptitle(
            f"{what} on r-of-k data: n = {config['n_features']}, k = {config['k']}, "
            f"{config['n_samples']} examples, mean of {config['repeats']} data set(s)\n"
            f"delta = alpha = {config['delta']:g}; o: all runs converged, x: epoch cap hit"
            + (cut if name == "margin" else "")
        )
        path = prefix.with_name(f"{prefix.name}-{name}.png")
        atomic_write(path, lambda f, fig=fig: fig.savefig(f, format="png", dpi=90))
        paths.append(path)
    return paths


def _axes(ax):
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=(5, 4), layout="constrained").subplots()


def _draw(ax, epochs, mean, stops, algorithm):
    style = _STYLE[algorithm]
    ax.plot(epochs, mean, label=ALGORITHMS[algorithm], linewidth=1.6, **style)
    all_converged = all(converged for _, converged in stops)
    end = epochs[-1]
    ax.plot(
        [end],
        [mean[-1]],
        marker="o" if all_converged else "x",
        color=style["color"],
        markersize=6,
        linestyle="none",
    )


def _title(ax, document, r, p_label):
    config = document["spec"]["config"]
    bias = config["bias"][str(r)]
    p_text = "p = 2" if p_label == "2" else f"p = 2 ln n = {config['p'][p_label]:.2f}"
    ax.set_title(f"r = {r} (bias {bias}), {p_text}")
