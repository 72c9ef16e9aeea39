"""A short tour of ALMA_p on generated data, in the spirit of Table 6 of Gentile (2001).

Section 4.4 of C. Gentile, "A New Approximate Maximal Margin Classification Algorithm",
JMLR 2 (2001): on a target with few relevant components, ALMA_p with a large p (a
Winnow-like, multiplicative regime) needs far fewer corrections and errs far less than
ALMA_2; on a dense target it is the other way round. The tour shows this, together with
the effect of asking for a margin (alpha < 1) and of averaging the hypotheses, on data
small enough to run in a few seconds.
"""

from __future__ import annotations

import textwrap
import time
from dataclasses import dataclass

import numpy as np

from ..alma import ALMAClassifier
from ..datasets import make_sparse_target
from ._format import format_table

EXPLANATION = (
    "ALMA_p learns a linear classifier in one pass, updating ('correcting') whenever an "
    "example is misclassified or classified with too small a margin. Below, two targets on "
    "{n} features: a sparse one, where only {s_sparse} features matter, and a dense one, "
    "where all {s_dense} do. Look at three things. (1) The norm p: p = 2 is a "
    "Perceptron-like additive rule, while p = 6 and p = log (2 ln n) behave "
    "multiplicatively, like Winnow; they should win clearly on the sparse target and lose "
    "on the dense one. (2) The margin: alpha = 1 corrects only on mistakes, alpha = 0.5 "
    "also on examples classified with a small margin; it makes more corrections, and with "
    "a p that suits the target (and averaging) it gives the best classifiers here. "
    "(3) Averaging: 'avg' predicts with the average of all the hypotheses of the run "
    "('last' with the final one); it is often, though not always, better. Test errors are "
    "in percent on {n_test} fresh examples; each row is one run of {n_train} examples "
    "(B = 1/alpha, C = sqrt(2), as in section 4 of Gentile, JMLR 2001)."
)


@dataclass(frozen=True)
class DemoRow:
    """One run of the tour: target, algorithm and its test errors and corrections."""

    target: str
    p: object
    p_resolved: float
    alpha: float
    err_last_pct: float
    err_avg_pct: float
    corrections: int


def run_demo(
    *,
    n_train: int = 3000,
    n_test: int = 3000,
    n_features: int = 300,
    sparse: int = 3,
    seed: int = 0,
    p_values=(2, 6, "log"),
    alphas=(1.0, 0.5),
) -> tuple[list[DemoRow], float]:
    """Run ALMA_p(alpha) on a sparse and on a dense target.

    Parameters
    ----------
    n_train, n_test : int, default=3000
        Sizes of each generated data set (:func:`marginkit.datasets.make_sparse_target`).
    n_features : int, default=300
        n; the dense target has all ``n_features`` components relevant.
    sparse : int, default=3
        Relevant components of the sparse target.
    seed : int, default=0
        Seed of the sparse data set; the dense one uses ``seed + 1``.
    p_values : sequence, default=(2, 6, "log")
    alphas : sequence of float, default=(1.0, 0.5)

    Returns
    -------
    rows : list of DemoRow
    seconds : float
        Wall-clock time of the tour.
    """
    start = time.perf_counter()
    rows = []
    targets = (
        (f"sparse (s = {sparse})", sparse, seed),
        (f"dense (s = {n_features})", n_features, seed + 1),
    )
    for target, s, data_seed in targets:
        X, y, X_test, y_test = make_sparse_target(
            n_train=n_train,
            n_test=n_test,
            n_features=n_features,
            n_relevant=s,
            random_state=data_seed,
        )
        for p in p_values:
            for alpha in alphas:
                clf = ALMAClassifier(
                    p=p, alpha=alpha, output="last", max_iter=1, fit_intercept=False, shuffle=False
                ).fit(X, y)
                err_last = 100.0 * np.mean(clf.predict(X_test) != y_test)
                clf.set_params(output="avg")
                err_avg = 100.0 * np.mean(clf.predict(X_test) != y_test)
                rows.append(
                    DemoRow(
                        target=target,
                        p=p,
                        p_resolved=float(clf.p_),
                        alpha=float(alpha),
                        err_last_pct=float(err_last),
                        err_avg_pct=float(err_avg),
                        corrections=int(clf.n_corrections_),
                    )
                )
    return rows, time.perf_counter() - start


def format_demo(rows: list[DemoRow], seconds: float, **settings) -> str:
    """The explanation, the aligned table of ``rows`` and the best setting per target.

    Parameters
    ----------
    rows : list of DemoRow
    seconds : float
    **settings
        ``n_train``, ``n_test``, ``n_features`` and ``sparse`` as given to :func:`run_demo`.

    Returns
    -------
    text : str
    """
    text = EXPLANATION.format(
        n=settings.get("n_features", 300),
        s_sparse=settings.get("sparse", 3),
        s_dense=settings.get("n_features", 300),
        n_train=settings.get("n_train", 3000),
        n_test=settings.get("n_test", 3000),
    )
    headers = ["target", "algorithm", "p", "alpha", "last err %", "avg err %", "corrections"]
    table = []
    for r in rows:
        table.append(
            [
                r.target,
                _name(r),
                f"{r.p_resolved:.3g}",
                f"{r.alpha:.1f}",
                f"{r.err_last_pct:.2f}",
                f"{r.err_avg_pct:.2f}",
                str(r.corrections),
            ]
        )
    lines = [_wrap(text), "", format_table(headers, table, align="llrrrrr", markdown=False), ""]
    for target in dict.fromkeys(r.target for r in rows):
        mine = [r for r in rows if r.target == target]
        best, output = min(
            ((r, o) for r in mine for o in ("last", "avg")),
            key=lambda ro: getattr(ro[0], f"err_{ro[1]}_pct"),
        )
        err = getattr(best, f"err_{output}_pct")
        lines.append(
            f"Best on the {target} target: {_name(best)} {output}, {err:.2f}% test error."
        )
    lines.append(f"({len(rows)} runs in {seconds:.1f} s.)")
    return "\n".join(lines)


def _name(row: DemoRow) -> str:
    return f"ALMA_{row.p}({row.alpha:.1f})"


def _wrap(text: str, width: int = 88) -> str:
    return textwrap.fill(text, width=width)
