"""The kernel estimators' pass rule: per-pass curves on noisy and on nearly separable
data, and the stopping rules they imply, simulated without refitting.

For each data set and estimator, ONE fit of ``max_iter=P`` passes (``--passes``,
default 15) with ``tol=None`` and a ``callback`` that records after every pass: the
corrections of that pass per one-vs-rest problem (differences of
``n_corrections_per_class_``), the test error of the averaged and of the last
hypothesis, ``n_support_.sum()`` (the distinct support examples of each problem,
summed over the problems: with several classes an example in the support of k
problems counts k times), the distinct training examples stored
(``np.unique(support_).size``), the stored corrections (the entries of the model's
store, ``_kstate.m``: an example corrected in k passes has k entries on its one row;
with several classes one entry serves every problem corrected on that trial; before
the store kept each example once, each entry was a row) and the seconds of fitting so
far (the evaluations in the callback not counted; a warm-up fit compiles the code
first).

The test error after a pass is computed from the model's own coefficients:
``dual_coef_`` of each output (read with ``set_params(output=...)``, then restored),
summed over the stored rows of each distinct training example (``support_``), times
scikit-learn's ``pairwise_kernels`` of the test rows and those examples (normalised
where the estimator normalises): the kernel is evaluated once per distinct example
rather than per stored row (a9a after 12 passes: 12281 against 73805), and once for
both outputs. After passes ``--check-passes`` (default 1, 2 and the last) these
errors are checked against the estimator's own ``predict`` of each output; a
disagreement is printed (and the estimator's figure is the one recorded).

From the curves, every rule of :data:`RULES` is applied pass by pass as
``marginkit._passes`` applies ``tol`` (a rule is asked after each pass whether the
passes go on; the model is the one after the pass where it says no, or after P passes,
marked ``P+``):

``max_iter=k``
    k passes.
``tol=t``
    marginkit's rule (``still_improving``): go on while some problem made fewer
    corrections than the fewest of any earlier pass by more than ``t * n_samples``, and
    some correction was made.
``rtol=r``
    relative: go on while some problem made fewer than ``(1 - r)`` times the fewest of
    any earlier pass, and some correction was made (on noisy data the corrections of a
    pass fall by a few percent, on separable data by half or more).
``tol=t&rtol=r``
    both: some problem fell below its fewest by more than ``max(t * n, r * fewest)``.
``tol=t|noise=q``
    ``tol=t``, and stop as well after a pass in which some problem corrected more than
    ``q * n_samples`` examples (a sign that the data are not separable).
``...|noise2=q``
    the same, from the second pass on: the first pass's corrections count the
    examples seen for the first time (and ALMA's margin updates while its margin
    requirement is high), the second's those the model still gets wrong after
    learning from them, which on noisy data is about the noise rate.
``tol=t|first=f``
    ``tol=t``, and stop as well after a pass (from the second) in which no problem made
    fewer than ``f`` times the corrections of its first pass: on a9a the second pass
    corrects 91% to 97% as many examples as the first, on data that more passes fit
    better 75% or fewer.

The fit seconds of a rule are those of the P-pass fit up to its last pass (a fit of
``max_iter=1`` keeps no cache of margin sums across passes; otherwise the same work).

Data (``--data-dir``, else $MARGINKIT_DATA, else ../shared/data; a missing set is
skipped with a message):

noisy
    a9a (train a9a, test a9a.t) with rbf ``gamma=0.05`` (all three estimators) and
    ``gamma="scale"`` (kernel ALMA); ``make_classification(30000, 20 features, 10
    informative, flip_y=0.05, class_sep=1.0, random_state=0)``, the first 20000 rows
    train, the last 10000 test, rbf ``gamma=0.05``.
nearly separable
    USPS (the ESL split; rbf ``gamma=1/(2 * 3.5^2)``, Gentile 2001's sigma = 3.5);
    the first ``--mnist-rows`` (10000) MNIST training digits against the 10000 test
    digits, ``kernel="poly", degree=4, gamma=1/255, coef0=1`` (kernel ALMA); Letter
    (16000 / 4000), and Letter as one problem (A to M against N to Z: on one problem,
    corrections that fall slowly while more passes still fit better), at the default
    kernel settings.
small
    ionosphere and house-votes (a random 2/3 / 1/3 split, ``random_state=0``) at the
    default kernel settings (117 and 145 test rows: one is 0.85 or 0.69 points).

Estimators: ``KernelALMAClassifier(alpha=0.9)``, ``KernelPerceptronClassifier()`` and
``KernelROMMAClassifier()``, every other parameter at its default. ``--verify`` refits,
on the sets of at most 8000 training rows, each estimator at marginkit's default rule
(``max_iter=1000, tol=1e-3``) and prints its ``n_iter_`` beside the simulated one.

Usage::

    python benchmarks/bench_defaults.py [--passes 15] [--only a9a,usps]
        [--estimators alma,perceptron,romma] [--mnist-rows 10000] [--quick]
        [--check-passes 1 2 15] [--verify] [--json out.json] [--data-dir DIR]
        [--blas-threads N]
    python benchmarks/bench_defaults.py --from-json out.json   # the rules again, no fit

A benchmark reports; it does not fail (exit code 0).
"""

import argparse
import datetime
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

from _machine import machine_line  # benchmarks/_machine.py, beside this file

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ESTIMATORS = {
    "alma": ("KernelALMAClassifier", {"alpha": 0.9}),
    "perceptron": ("KernelPerceptronClassifier", {}),
    "romma": ("KernelROMMAClassifier", {}),
}
USPS_GAMMA = 1.0 / (2.0 * 3.5**2)
MNIST_KERNEL = {"kernel": "poly", "degree": 4, "gamma": 1.0 / 255.0, "coef0": 1.0}
ALL = ("alma", "perceptron", "romma")
#: (name, data set, kind, kernel parameters, estimators)
RUNS = (
    ("a9a rbf 0.05", "a9a", "noisy", {"kernel": "rbf", "gamma": 0.05}, ALL),
    ("a9a rbf scale", "a9a", "noisy", {"kernel": "rbf", "gamma": "scale"}, ("alma",)),
    ("synthetic rbf 0.05", "synthetic", "noisy", {"kernel": "rbf", "gamma": 0.05}, ALL),
    ("USPS rbf s=3.5", "usps", "separable", {"kernel": "rbf", "gamma": USPS_GAMMA}, ALL),
    ("MNIST poly 4", "mnist", "separable", MNIST_KERNEL, ("alma",)),
    ("Letter rbf scale", "letter", "separable", {}, ALL),
    ("Letter A-M/N-Z rbf scale", "letter-binary", "separable", {}, ALL),
    ("ionosphere rbf scale", "ionosphere", "small", {}, ALL),
    ("house-votes rbf scale", "house-votes", "small", {}, ALL),
)
NOISE = (0.03, 0.05, 0.1)
FIRST = (0.8, 0.85, 0.9)
#: the rules simulated: (label, kind, parameters)
RULES = (
    *[(f"max_iter={k}", "fixed", {"k": k}) for k in (1, 2, 3, 5, 10)],
    *[(f"tol={t:g}", "tol", {"tol": t}) for t in (1e-3, 3e-3, 1e-2, 3e-2)],
    *[(f"rtol={r:g}", "rtol", {"rtol": r}) for r in (0.1, 0.2, 0.3)],
    *[(f"tol=1e-3&rtol={r:g}", "both", {"tol": 1e-3, "rtol": r}) for r in (0.1, 0.2)],
    ("tol=1e-3|noise=0.1", "noise", {"tol": 1e-3, "q": 0.1, "from": 1}),
    *[(f"tol=1e-3|noise2={q:g}", "noise", {"tol": 1e-3, "q": q, "from": 2}) for q in NOISE],
    ("tol=1e-3&rtol=0.05", "both", {"tol": 1e-3, "rtol": 0.05}),
    *[(f"tol=1e-3|first={f:g}", "first", {"tol": 1e-3, "first": f}) for f in FIRST],
)


# -- data --------------------------------------------------------------------------------
def load(name, args):
    """(X, y, X_test, y_test) of a data set."""
    from sklearn.model_selection import train_test_split

    from marginkit import datasets

    d = args.data_dir
    if name == "a9a":
        return datasets.load_adult(d)
    if name == "synthetic":
        from sklearn.datasets import make_classification

        X, y = make_classification(
            n_samples=30000,
            n_features=20,
            n_informative=10,
            flip_y=0.05,
            class_sep=1.0,
            random_state=0,
        )
        return X[:20000], y[:20000], X[20000:], y[20000:]
    if name == "usps":
        return datasets.load_usps(d)
    if name == "mnist":
        X, y, X_test, y_test = datasets.load_mnist(d)
        return X[: args.mnist_rows], y[: args.mnist_rows], X_test, y_test
    if name == "letter":
        return datasets.load_letter(d)
    if name == "letter-binary":  # letters A to M against N to Z: one problem
        X, y, X_test, y_test = datasets.load_letter(d)
        return X, (y < "N").astype(int), X_test, (y_test < "N").astype(int)
    loader = {"ionosphere": datasets.load_ionosphere, "house-votes": datasets.load_house_votes}
    X, y = loader[name](d)
    X, X_test, y, y_test = train_test_split(X, y, test_size=1 / 3, random_state=0)
    return X, y, X_test, y_test


def make(est, kernel_params, **params):
    import marginkit

    cls, base = ESTIMATORS[est]
    return getattr(marginkit, cls)(**base, **kernel_params, **params)


# -- the test error after a pass -------------------------------------------------------
class Evaluator:
    """Test errors of the averaged and last hypotheses of a fitted kernel estimator,
    from its ``dual_coef_`` summed per distinct training example (``support_``)."""

    def __init__(self, X, X_test, y_test, max_elems=1 << 24):
        import numpy as np
        import scipy.sparse as sp

        if sp.issparse(X) and X.shape[1] <= 4096:  # dense blocks: faster kernel products
            X, X_test = X.toarray(), X_test.toarray()
        self.X, self.X_test, self.y_test = X, X_test, np.asarray(y_test)
        self.max_elems = max_elems

    def _kernel(self, est, A, B):
        from sklearn.metrics.pairwise import pairwise_kernels

        kw = {"gamma": est.gamma_}
        if est.kernel == "poly":
            kw.update(degree=est.degree, coef0=est.coef0)
        elif est.kernel == "sigmoid":
            kw.update(coef0=est.coef0)
        return pairwise_kernels(A, B, metric=est.kernel, **kw)

    def _diag(self, est, A):
        import numpy as np

        if est.kernel == "rbf":
            return np.ones(A.shape[0])
        out = np.empty(A.shape[0])
        for lo in range(0, A.shape[0], 2048):
            block = A[lo : lo + 2048]
            out[lo : lo + block.shape[0]] = np.diag(self._kernel(est, block, block))
        return out

    def errors(self, est):
        """{output: test error %} of "avg" and "last"."""
        import numpy as np

        output = est.output
        coefs = {}
        try:
            for out in ("avg", "last"):
                est.set_params(output=out)
                coefs[out] = np.asarray(est.dual_coef_)  # (C, m)
        finally:
            est.set_params(output=output)
        index = np.asarray(est.support_)
        if index.size == 0:  # no support vector: every score 0
            C = coefs["avg"].shape[0]
            scores = np.zeros((self.X_test.shape[0], C))
            return {out: self._error(est, scores) for out in coefs}
        distinct, inverse = np.unique(index, return_inverse=True)
        summed = {}
        for out, c in coefs.items():
            s = np.zeros((c.shape[0], distinct.size))
            np.add.at(s.T, inverse, c.T)
            summed[out] = s.T  # (k, C)
        stacked = np.hstack([summed["avg"], summed["last"]])
        C = coefs["avg"].shape[0]
        SV = self.X[distinct]
        normalise = est.get_params().get("normalize", True)  # ALMA always normalises
        inv_sv = None
        if normalise:
            d = self._diag(est, SV)
            inv_sv = np.where(d > 0, 1.0 / np.sqrt(np.where(d > 0, d, 1.0)), 0.0)
        n = self.X_test.shape[0]
        step = max(1, self.max_elems // distinct.size)
        scores = np.empty((n, 2 * C))
        for lo in range(0, n, step):
            Xb = self.X_test[lo : lo + step]
            K = self._kernel(est, Xb, SV)
            if normalise:
                d = self._diag(est, Xb)
                inv = np.where(d > 0, 1.0 / np.sqrt(np.where(d > 0, d, 1.0)), 0.0)
                K *= inv[:, None]
                K *= inv_sv[None, :]
            scores[lo : lo + Xb.shape[0]] = K @ stacked
        return {"avg": self._error(est, scores[:, :C]), "last": self._error(est, scores[:, C:])}

    def _error(self, est, scores):
        import numpy as np

        classes = est.classes_
        if scores.shape[1] == 1:
            pred = np.where(scores[:, 0] > 0, classes[1], classes[0])
        else:
            pred = classes[np.argmax(scores, axis=1)]
        return 100.0 * float(np.mean(pred != self.y_test))

    def own_errors(self, est):
        """{output: test error %} by the estimator's own predict."""
        import numpy as np

        output, out = est.output, {}
        try:
            for o in ("avg", "last"):
                est.set_params(output=o)
                out[o] = 100.0 * float(np.mean(est.predict(self.X_test) != self.y_test))
        finally:
            est.set_params(output=output)
        return out


# -- one run: the curves ------------------------------------------------------------------
def run_one(label, est_name, kernel_params, data, args):
    import numpy as np

    X, y, X_test, y_test = data
    n = X.shape[0]
    ev = Evaluator(X, X_test, y_test)
    P = args.passes
    checks = {p for p in args.check_passes if p <= P} | ({P} if args.check_last else set())
    # compile the passes and the predictions before the timed fit
    warm = make(est_name, kernel_params, max_iter=2, tol=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm.fit(X[:300], y[:300]).predict(X_test[:10])

    curve, mismatches = [], []
    state = {"eval_s": 0.0, "before": None}

    def record(est, epoch):
        t_in = time.perf_counter()
        counts = np.asarray(est.n_corrections_per_class_, dtype=np.int64).reshape(-1)
        made = counts - (state["before"] if state["before"] is not None else 0)
        state["before"] = counts
        errs = ev.errors(est)
        row = {
            "pass": epoch + 1,
            "made": made.tolist(),
            "avg_error": errs["avg"],
            "last_error": errs["last"],
            "distinct_sv": int(np.asarray(est.n_support_).sum()),
            "distinct_rows": int(np.unique(np.asarray(est.support_)).size),
            "stored_rows": int(est._kstate.m),
            "fit_s": t_in - state["start"] - state["eval_s"],
        }
        if epoch + 1 in checks:
            own = ev.own_errors(est)
            row["own_avg_error"], row["own_last_error"] = own["avg"], own["last"]
            if own != errs:
                mismatches.append((epoch + 1, errs, own))
                row["avg_error"], row["last_error"] = own["avg"], own["last"]
        curve.append(row)
        state["eval_s"] += time.perf_counter() - t_in
        if args.progress:
            print(f"    [{label} {est_name}] pass {epoch + 1}: {_pass_text(row)}", flush=True)

    est = make(est_name, kernel_params, max_iter=P, tol=None)
    state["start"] = time.perf_counter()
    est.fit(X, y, callback=record)
    total = time.perf_counter() - state["start"]
    return {
        "run": label,
        "estimator": ESTIMATORS[est_name][0],
        "params": {k: v for k, v in est.get_params().items() if k in _SHOWN},
        "gamma_": float(est.gamma_),
        "n_train": int(n),
        "n_test": int(X_test.shape[0]),
        "n_problems": len(curve[0]["made"]),
        "passes": P,
        "curve": curve,
        "eval_s": state["eval_s"],
        "total_s": total,
        "mismatches": [{"pass": p, "ours": a, "own": b} for p, a, b in mismatches],
    }


_SHOWN = ("alpha", "kernel", "gamma", "degree", "coef0", "max_iter", "tol")


def _pass_text(r):
    return (
        f"made {sum(r['made'])}, avg {r['avg_error']:.2f}%, last {r['last_error']:.2f}%, "
        f"rows {r['stored_rows']}, n_support_ {r['distinct_sv']}, distinct "
        f"{r.get('distinct_rows')}, fit {r['fit_s']:.2f} s"
    )


# -- the rules ---------------------------------------------------------------------------
def still_improving(made, fewest, tol, n):
    """marginkit._passes.still_improving, restated (tol None: any fall)."""
    import numpy as np

    margin = 0.0 if tol is None else tol * n
    return bool(np.any(made < fewest - margin)) and bool(np.any(made))


def goes_on(kind, p, made, fewest, n, k, first):
    """Whether the passes go on after pass ``k`` (from 1), which made ``made`` (per
    problem), given the ``fewest`` of any earlier pass (inf before the first) and the
    corrections of the ``first`` pass."""
    import numpy as np

    if "q" in p and k >= p["from"] and np.max(made) > p["q"] * n:
        return False  # noisy: this pass still corrected more than q * n in a problem
    if kind == "fixed":
        return True
    if kind == "tol":
        return still_improving(made, fewest, p["tol"], n)
    if kind == "rtol":
        return bool(np.any(made < (1.0 - p["rtol"]) * fewest)) and bool(np.any(made))
    if kind == "both":
        margin = np.maximum(p["tol"] * n, p["rtol"] * np.where(np.isfinite(fewest), fewest, 0))
        return bool(np.any(made < fewest - margin)) and bool(np.any(made))
    if kind == "noise":
        return still_improving(made, fewest, p["tol"], n)
    if kind == "first":
        if k >= 2 and not np.any(made < p["first"] * first):
            return False  # noisy: no problem fell below the fraction of its first pass
        return still_improving(made, fewest, p["tol"], n)
    raise ValueError(kind)


def simulate(run, kind, p):
    """(passes made, whether the rule still went on after the last recorded pass)."""
    import numpy as np

    curve, n = run["curve"], run["n_train"]
    limit = min(p["k"], len(curve)) if kind == "fixed" else len(curve)
    fewest, first = np.full(len(curve[0]["made"]), np.inf), None
    for i in range(limit):
        made = np.asarray(curve[i]["made"], dtype=np.float64)
        first = made if i == 0 else first
        on = goes_on(kind, p, made, fewest, n, i + 1, first)
        fewest = np.minimum(fewest, made)
        if not on:
            return i + 1, False
    censored = kind != "fixed" or p["k"] > len(curve)
    return limit, censored


def rule_rows(run):
    rows = []
    for label, kind, p in RULES:
        k, censored = simulate(run, kind, p)
        r = run["curve"][k - 1]
        rows.append(
            {
                "rule": label,
                "passes": k,
                "censored": censored,
                "avg_error": r["avg_error"],
                "last_error": r["last_error"],
                "stored_rows": r["stored_rows"],
                "distinct_sv": r["distinct_sv"],
                "distinct_rows": r.get("distinct_rows"),
                "fit_s": r["fit_s"],
            }
        )
    return rows


# -- printing ----------------------------------------------------------------------------
COLUMNS = "avg err % | last err % | stored rows | n_support_ sum | distinct examples | fit s |"


def _cells(r):
    return (
        f"{r['avg_error']:.2f} | {r['last_error']:.2f} | {r['stored_rows']} | "
        f"{r['distinct_sv']} | {r.get('distinct_rows')} | {r['fit_s']:.2f} |"
    )


def print_run(run, kind):
    P = len(run["curve"])
    print(
        f"\n### {run['run']} ({kind}), {run['estimator']}: n_train {run['n_train']}, n_test "
        f"{run['n_test']}, {run['n_problems']} problem(s), gamma_ {run['gamma_']:.4g}; one fit "
        f"of {P} passes, {run['total_s']:.1f} s of which evaluation {run['eval_s']:.1f} s\n"
    )
    many = run["n_problems"] > 1
    made = "corrections (sum" + (", max problem" if many else "") + ")"
    print(f"| pass | {made} | {COLUMNS}")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in run["curve"]:
        made = f"{sum(r['made'])}" + (f" ({max(r['made'])})" if many else "")
        print(f"| {r['pass']} | {made} | {_cells(r)}")
    for m in run["mismatches"]:
        print(f"  CHECK: pass {m['pass']}: computed {m['ours']}, estimator's predict {m['own']}")
    checked = [r["pass"] for r in run["curve"] if "own_avg_error" in r]
    if checked and not run["mismatches"]:
        print(f"  (checked against the estimator's own predict after passes {checked}: equal)")
    print(f"\n| rule | passes | {COLUMNS}")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in run["rules"]:
        print(f"| {r['rule']} | {r['passes']}{'+' if r['censored'] else ''} | {_cells(r)}")


def _short(run):
    est = run["estimator"].replace("Kernel", "").replace("Classifier", "")
    return f"{run['run']} {est}"


def summary(runs):
    """Rules against runs: passes and averaged error; then each rule's worst loss
    against the P-pass fit, and its share of the gain of P passes over one."""
    P = max(len(r["curve"]) for r in runs)
    print(
        "\n## Summary: passes and averaged test error % of each rule ('+': still going at "
        "the last pass recorded)\n"
    )
    print("| rule | " + " | ".join(_short(r) for r in runs) + " |")
    print("| --- |" + " ---: |" * len(runs))
    for i, (label, _, _) in enumerate(RULES):
        cells = []
        for r in runs:
            x = r["rules"][i]
            cells.append(f"{x['passes']}{'+' if x['censored'] else ''}: {x['avg_error']:.2f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    cells = [f"{len(r['curve'])}: {r['curve'][-1]['avg_error']:.2f}" for r in runs]
    print(f"| (all {P} passes) | " + " | ".join(cells) + " |")
    best = [min(r["curve"], key=lambda c: c["avg_error"]) for r in runs]
    print(
        "| (best pass, hindsight) | "
        + " | ".join(f"{b['pass']}: {b['avg_error']:.2f}" for b in best)
        + " |"
    )
    noisy = [r for r in runs if r["kind"] == "noisy"]
    sep = [r for r in runs if r["kind"] == "separable"]
    small = [r for r in runs if r["kind"] == "small"]
    gaining = [r for r in sep if r["curve"][0]["avg_error"] - r["curve"][-1]["avg_error"] >= 0.2]
    print(
        f"\n## Each rule on the {len(noisy)} noisy, {len(sep)} nearly separable and {len(small)} "
        "small runs "
        f"(averaged test error, points; err 1 / err P: after 1 / {P} passes; rows: stored rows "
        "against those of one pass; gain kept: (err 1 - err rule) / (err 1 - err P) over the "
        f"{len(gaining)} separable runs where P passes gain >= 0.2 points: "
        f"{', '.join(_short(r) for r in gaining) or 'none'})\n"
    )
    print(
        "| rule | noisy: passes (max) | noisy: runs > 3 passes | noisy: worst err - err P | "
        "noisy: worst err - err 1 | noisy: rows / 1-pass rows (max) | separable: passes "
        "(max) | separable: worst err - err P | separable: gain kept (min, mean) | small: "
        "passes (max) | small: worst err - err P |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")

    def worst(rs, i, ref):
        return max(
            (r["rules"][i]["avg_error"] - r["curve"][ref]["avg_error"] for r in rs),
            default=float("nan"),
        )

    for i, (label, _, _) in enumerate(RULES):
        kept = [
            (r["curve"][0]["avg_error"] - r["rules"][i]["avg_error"])
            / (r["curve"][0]["avg_error"] - r["curve"][-1]["avg_error"])
            for r in gaining
        ]
        grow = max(
            (r["rules"][i]["stored_rows"] / max(r["curve"][0]["stored_rows"], 1) for r in noisy),
            default=float("nan"),
        )
        long_ = sum(r["rules"][i]["passes"] > 3 for r in noisy)
        kept_text = f"{min(kept):.2f}, {sum(kept) / len(kept):.2f}" if kept else "-"
        print(
            f"| {label} | {max((r['rules'][i]['passes'] for r in noisy), default=0)} | {long_} | "
            f"{worst(noisy, i, -1):+.2f} | {worst(noisy, i, 0):+.2f} | {grow:.1f} | "
            f"{max((r['rules'][i]['passes'] for r in sep), default=0)} | "
            f"{worst(sep, i, -1):+.2f} | {kept_text} | "
            f"{max((r['rules'][i]['passes'] for r in small), default=0)} | "
            f"{worst(small, i, -1):+.2f} |"
        )


# -- main --------------------------------------------------------------------------------
def verify(run, est_name, kernel_params, data):
    """Refit at marginkit's default rule; its n_iter_ beside the simulated one."""
    X, y, _, _ = data
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make(est_name, kernel_params).fit(X, y)  # max_iter=1000, tol=1e-3
    sim = next(r for r in run["rules"] if r["rule"] == "tol=0.001")
    same = "equal" if (est.n_iter_ == sim["passes"]) else "DIFFERENT"
    if sim["censored"]:
        same = "the simulation went on to P" if est.n_iter_ > sim["passes"] else "DIFFERENT"
    print(
        f"  verify: {run['estimator']} at its defaults made n_iter_={est.n_iter_} "
        f"({time.perf_counter() - t:.1f} s); simulated tol=1e-3: {sim['passes']} -> {same}"
    )
    run["verify_n_iter"] = int(est.n_iter_)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=15, help="P: passes of each fit")
    parser.add_argument(
        "--only", help="comma-separated data sets: " + ", ".join(sorted({r[1] for r in RUNS}))
    )
    parser.add_argument("--estimators", default="alma,perceptron,romma")
    parser.add_argument("--mnist-rows", type=int, default=10000)
    parser.add_argument("--check-passes", type=int, nargs="*", default=[1, 2])
    parser.add_argument(
        "--no-check-last",
        dest="check_last",
        action="store_false",
        help="do not check the last pass",
    )
    parser.add_argument(
        "--verify", action="store_true", help="refit the small sets at the defaults"
    )
    parser.add_argument(
        "--quick", action="store_true", help="P=5, small sets only, under a minute"
    )
    parser.add_argument("--progress", action="store_true", help="a line after every pass")
    parser.add_argument("--data-dir", default=os.environ.get("MARGINKIT_DATA", str(DEFAULT_DATA)))
    parser.add_argument("--json", help="write the curves and the rules here")
    parser.add_argument("--from-json", help="apply the rules to the curves of an earlier run")
    parser.add_argument(
        "--blas-threads", type=int, help="OPENBLAS_NUM_THREADS (default: OpenBLAS' own)"
    )
    args = parser.parse_args(argv)
    if args.blas_threads:  # before numpy loads
        os.environ["OPENBLAS_NUM_THREADS"] = str(args.blas_threads)
    if args.passes < 1:
        parser.error("--passes: at least 1")
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text())
        print(saved.get("machine", ""))
        runs = saved["runs"]
        for run in runs:
            run["rules"] = rule_rows(run)
            print_run(run, run["kind"])
        summary(runs)
        return 0
    if args.quick:
        args.passes = min(args.passes, 5)
        args.only = args.only or "usps,ionosphere,house-votes"

    import numpy as np
    import sklearn

    import marginkit

    print(machine_line(), flush=True)
    print(
        f"bench_defaults: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"marginkit {marginkit.__version__}, numpy {np.__version__}, scikit-learn "
        f"{sklearn.__version__}, Python {platform.python_version()}, load average "
        f"{os.getloadavg()[0]:.2f}; P = {args.passes} passes, tol=None"
    )
    threads = os.environ.get("OPENBLAS_NUM_THREADS")
    if threads:
        print(f"OPENBLAS_NUM_THREADS={threads}")
    wanted_sets = set(args.only.split(",")) if args.only else None
    wanted_est = set(args.estimators.split(","))
    unknown = wanted_est - set(ESTIMATORS)
    if unknown:
        parser.error(f"--estimators: unknown {sorted(unknown)}; choose from {sorted(ESTIMATORS)}")
    results = {
        "machine": machine_line(),
        "argv": sys.argv[1:] if argv is None else list(argv),
        "openblas_threads": threads,
        "passes": args.passes,
        "runs": [],
    }
    start = time.perf_counter()
    cache = {}
    for label, name, kind, kernel_params, ests in RUNS:
        if wanted_sets is not None and name not in wanted_sets:
            continue
        if name not in cache:
            try:
                cache = {name: load(name, args)}  # one set in memory at a time
            except (OSError, ValueError) as exc:
                print(f"\n### {label}: skipped, the data cannot be loaded ({exc})")
                cache = {}
                continue
        data = cache[name]
        for est_name in ests:
            if est_name not in wanted_est:
                continue
            run = run_one(label, est_name, kernel_params, data, args)
            run["kind"] = kind
            run["rules"] = rule_rows(run)
            print_run(run, kind)
            if args.verify and data[0].shape[0] <= 8000:
                verify(run, est_name, kernel_params, data)
            results["runs"].append(run)
            sys.stdout.flush()
    if results["runs"]:
        summary(results["runs"])
    print(f"\nwall time {time.perf_counter() - start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
