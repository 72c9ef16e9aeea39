"""Plots of margins, learning curves and prequential records (matplotlib, the ``plot``
extra).

Every function takes ``ax=None`` (a new figure) or an Axes to draw into, and returns
the Axes.
"""

from __future__ import annotations

import numpy as np


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError('the plots need matplotlib: pip install "marginkit[plot]"') from exc
    return plt


def output_margins(estimator, X, y):
    """The margin of every example under a fitted classifier's decision function.

    Two classes: ``y f(x)`` with y = +1 for ``classes_[1]``. More: Gentile's multiclass
    margin (JMLR 2001, section 5), ``f_y(x) - max_{j != y} f_j(x)``. For ALMA these are
    margins of normalised instances, in [-1, 1] (in [-2, 2] for several classes).
    Labels the model does not know are an error.
    """
    scores = np.asarray(estimator.decision_function(X))
    classes = estimator.classes_
    y = np.asarray(y)
    unknown = ~np.isin(y, classes)
    if unknown.any():
        raise ValueError(f"y holds labels the model does not know: {np.unique(y[unknown])}")
    index = np.searchsorted(classes, y)
    if scores.ndim == 1:
        return np.where(index == 1, scores, -scores)
    rows = np.arange(scores.shape[0])
    own = scores[rows, index]
    others = scores.copy()
    others[rows, index] = -np.inf
    return own - others.max(axis=1)


def plot_margin_distribution(estimator, X, y, ax=None, label=None, **line):
    """The cumulative distribution of the margins of ``(X, y)`` under ``estimator``.

    The curve of Gentile's Figures 3 and 4: for each margin value t, the fraction of
    examples whose margin is at most t (see :func:`output_margins`). The fraction at
    t = 0 is (about) the error rate; a curve further right means larger margins.
    Margins are on the scale of the estimator's ``decision_function``: ALMA's are those
    of normalised instances under a hypothesis of norm at most 1, the Perceptron's are
    not normalised, a vote lies in [-1, 1]. Curves compare directly between the outputs
    of one model, or models of one algorithm.

    Parameters
    ----------
    estimator : fitted marginkit classifier
    X, y : the examples and their labels
    ax : matplotlib Axes, optional
    label : str, optional
        Legend entry; default the estimator's class name and output.
    **line
        Passed to ``ax.step``.

    Returns
    -------
    ax : matplotlib Axes
    """
    plt = _pyplot()
    if ax is None:
        ax = plt.figure(figsize=(6, 4)).add_subplot()
    margins = np.sort(output_margins(estimator, X, y))
    fraction = np.arange(1, margins.size + 1) / margins.size
    if label is None:
        output = getattr(estimator, "output", None)
        label = type(estimator).__name__ + (f" ({output})" if output else "")
    ax.step(margins, fraction, where="post", label=label, **line)
    ax.axvline(0.0, color="0.6", linewidth=0.8)
    ax.set_xlabel("margin (y f(x); multiclass: f_y(x) - max of the others)")
    ax.set_ylabel("fraction of examples with margin <= x")
    ax.set_ylim(0.0, 1.0)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    ax.set_title(f"Cumulative margin distribution ({margins.size} examples)")
    return ax


def learning_curve(estimator, X, y, X_test, y_test, *, n_points=20, outputs=("last",)):
    """Corrections and test error against trials, from one pass of ``partial_fit``.

    The stream ``X, y`` is cut into ``n_points`` consecutive chunks; after each, the
    trials so far, the corrections so far and the test error of each output are
    recorded. ``estimator`` is trained in place (start from an unfitted one).

    Returns
    -------
    curve : dict
        ``trials``, ``corrections`` (arrays) and ``error`` (a dict output -> array).
    """
    classes = np.unique(y)
    bounds = np.unique(np.linspace(0, X.shape[0], n_points + 1).astype(int))
    trials, corrections = [], []
    errors = {output: [] for output in outputs}
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        estimator.partial_fit(X[lo:hi], y[lo:hi], classes=classes)
        trials.append(hi)
        corrections.append(estimator.n_corrections_)
        for output in outputs:
            estimator.set_params(output=output)
            errors[output].append(float(np.mean(estimator.predict(X_test) != y_test)))
    return {
        "trials": np.array(trials),
        "corrections": np.array(corrections),
        "error": {k: np.array(v) for k, v in errors.items()},
    }


def plot_learning_curve(curve, ax=None, title=None):
    """Plot :func:`learning_curve`'s record: test error (left) and corrections (right).

    Returns
    -------
    ax : matplotlib Axes
        The Axes of the test error; the corrections are on its twin.
    """
    plt = _pyplot()
    if ax is None:
        ax = plt.figure(figsize=(6.5, 4)).add_subplot()
    for output, err in curve["error"].items():
        ax.plot(
            curve["trials"], 100 * err, marker="o", markersize=3, label=f"test error ({output})"
        )
    ax.set_xlabel("trials")
    ax.set_ylabel("test error (%)")
    ax.grid(alpha=0.3)
    twin = ax.twinx()
    twin.plot(
        curve["trials"], curve["corrections"], color="0.35", linestyle="--", label="corrections"
    )
    twin.set_ylabel("corrections (cumulative)")
    lines = ax.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], loc="upper right")
    ax.set_title(title or "Learning curve")
    return ax


def plot_prequential(scores, ax=None, title=None):
    """Plot records of :func:`marginkit.prequential.prequential_score` on one figure: the
    accuracy over each one's sliding window against the rows of the stream.

    Parameters
    ----------
    scores : PrequentialScore or sequence of them
        Each drawn as one line, named by its ``label``, with its overall accuracy.
    ax : matplotlib Axes, default=None
    title : str, default=None

    Returns
    -------
    ax : matplotlib Axes
    """
    plt = _pyplot()
    if ax is None:
        ax = plt.figure(figsize=(6.5, 4)).add_subplot()
    if not isinstance(scores, list | tuple):
        scores = [scores]
    for score in scores:
        ax.plot(
            score.rows,
            100 * score.windowed,
            label=f"{score.label} ({100 * score.accuracy:.2f}% overall)",
        )
    windows = sorted({score.window for score in scores})
    ax.set_xlabel("rows of the stream")
    ax.set_ylabel(f"accuracy over the last {', '.join(map(str, windows))} rows (%)")
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    ax.set_title(title or "Prequential accuracy (each chunk predicted, then learnt)")
    return ax
