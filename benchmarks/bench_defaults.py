"""Defaults under test, in three parts (``--part``): the kernel estimators' pass rule
(``passes``, the default), every estimator at its defaults on public data (``public``)
and class weights on imbalanced problems (``imbalanced``).

Part ``passes``: the kernel estimators' pass rule: per-pass curves on noisy and on
nearly separable data, and the stopping rules they imply, simulated without refitting.

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

Part ``public``: every marginkit estimator (``ALMAClassifier``,
``PerceptronClassifier``, ``ROMMAClassifier``, ``MarginPerceptronClassifier``,
``PUMMAClassifier`` and the kernel ALMA, Perceptron, ROMMA and PUMMA) constructed with
no argument but ``random_state=0``, beside scikit-learn's ``SVC()``, ``LinearSVC()``,
``Perceptron()``, ``SGDClassifier(average=True)`` and ``LogisticRegression()`` at their
defaults (``random_state=0`` where they take one), on every classification set shipped
inside a package, nothing downloaded: scikit-learn's iris, wine, breast cancer and
digits; river's ``FileDataset`` classes that are not ``RemoteDataset`` (downloads) and
have one binary or multi-class target (river 0.26: Bananas, ImageSegments, Phishing,
Shuttle; Yeast is multi-label); and the shared data: ionosphere, house-votes (the
votes as the file's strings y / n / ?), a9a (a9a and a9a.t), USPS, Letter and MNIST
(train and test joined). A set of more than ``--max-rows`` rows (default 1000) is
subsampled, stratified and seeded (``--seed``), in the file's order, so that the part
takes about 25 minutes on two cores; the output says which.

Each set is learnt in two row orders: shuffled (a seeded permutation) and sorted
(stably by label, as many files come). ``--folds`` (5) ``StratifiedKFold(shuffle=True,
random_state=0)`` of the shuffled order gives the folds; the sorted order trains on the
same rows of each fold sorted stably by label, so that the orders differ only in the
order the training rows are seen. Every model is a pipeline: ``StandardScaler`` of the
numeric columns (``with_mean=False`` on sparse input) and
``OneHotEncoder(handle_unknown="ignore")`` of the string ones (a
``ColumnTransformer``), then the model. A fit that raises is a cell (the error's type
and the first line of its message); the fit's warnings are caught
(``warnings.catch_warnings``): the ConvergenceWarnings counted per model and set, the
others counted in the JSON only.

Printed: per set, the test error (1 - accuracy, mean over the folds) of every model in
both orders, their difference, the gap of each marginkit estimator (its error minus
its reference's, points, same order: LinearSVC for the linear estimators, SVC for the
kernel ones), the mean fit seconds, the ConvergenceWarnings and errors; then, per
marginkit estimator and order, the sets within 1 point of the reference (gap <= 1),
the sets compared (neither raised), the mean and the worst gap, the sets where it
raised and its ConvergenceWarnings; and per model the largest difference between its
sorted and its shuffled error.

Part ``imbalanced``: the binary problems of ``_public_data.IMBALANCED``: digits 0
against the rest; Letter A against the rest; breast cancer with its malignant rows
subsampled to 10% of the benign ones; a9a as it is (24% positive); river's Phishing
with the phishing sites subsampled to 10% of the others; river's Shuttle (7%
anomalies); each then subsampled (stratified) to ``--max-rows``, by default 3000 here
(Letter's A keeps 118 rows). Balanced accuracy, the folds as above, the shuffled order
only. Each marginkit estimator without and with ``class_weight="balanced"`` (n/a where
``get_params()`` has no ``class_weight``), LinearSVC and SVC without and with. The gap
is marginkit's balanced accuracy with class weights minus its reference's with class
weights, in points (negative: marginkit worse); where the estimator takes no class
weights, its gap without them is printed in brackets. About 5 minutes.

Usage::

    python benchmarks/bench_defaults.py [--passes 15] [--only a9a,usps]
        [--estimators alma,perceptron,romma] [--mnist-rows 10000] [--quick]
        [--check-passes 1 2 15] [--verify] [--json out.json] [--data-dir DIR]
        [--blas-threads N]
    python benchmarks/bench_defaults.py --part public [--max-rows 1000] [--only iris,a9a]
        [--estimators alma,kernel-alma] [--folds 5] [--seed 0] [--quick] [--progress]
        [--json out.json] [--data-dir DIR]
    python benchmarks/bench_defaults.py --part imbalanced [the same options]
    python benchmarks/bench_defaults.py --from-json out.json   # any part's tables, no fit

A benchmark reports; it does not fail (exit code 0).
"""

import argparse
import datetime
import functools
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


# -- the public part: every estimator at its defaults on public data ---------------------
#: the models of the public and imbalanced parts: name -> (package, class, kind); a
#: "linear" marginkit estimator is compared with LinearSVC, a "kernel" one with SVC
MODELS = {
    "alma": ("marginkit", "ALMAClassifier", "linear"),
    "perceptron": ("marginkit", "PerceptronClassifier", "linear"),
    "romma": ("marginkit", "ROMMAClassifier", "linear"),
    "margin-perceptron": ("marginkit", "MarginPerceptronClassifier", "linear"),
    "pumma": ("marginkit", "PUMMAClassifier", "linear"),
    "kernel-alma": ("marginkit", "KernelALMAClassifier", "kernel"),
    "kernel-perceptron": ("marginkit", "KernelPerceptronClassifier", "kernel"),
    "kernel-romma": ("marginkit", "KernelROMMAClassifier", "kernel"),
    "kernel-pumma": ("marginkit", "KernelPUMMAClassifier", "kernel"),
    "svc": ("sklearn.svm", "SVC", "reference"),
    "linear-svc": ("sklearn.svm", "LinearSVC", "reference"),
    "sk-perceptron": ("sklearn.linear_model", "Perceptron", "reference"),
    "sgd-avg": ("sklearn.linear_model", "SGDClassifier", "reference"),
    "logreg": ("sklearn.linear_model", "LogisticRegression", "reference"),
}
#: the reference of each kind of marginkit estimator
REFERENCE = {"linear": "linear-svc", "kernel": "svc"}
#: parameters other than the defaults (and random_state=0)
MODEL_PARAMS = {"sgd-avg": {"average": True}}
#: the imbalanced part's models: the marginkit estimators and their two references
IMBALANCED_MODELS = tuple(n for n, m in MODELS.items() if m[0] == "marginkit") + (
    "linear-svc",
    "svc",
)
ORDERS = ("shuffled", "sorted")
WITHIN = 1.0  # points: a gap at most this is "within"
#: --max-rows by default: the public part in about 25 minutes on two cores; the
#: imbalanced part keeps more rows, for its minority classes (Letter's A: 4%)
MAX_ROWS = {"public": 1000, "imbalanced": 3000}
QUICK_PUBLIC = "iris,wine,breast-cancer,ionosphere,house-votes,phishing"


def make_model(name, **params):
    """The model ``name`` at its defaults (with random_state=0 where it takes one);
    ``params`` only where the model takes them: (model, whether all were taken)."""
    import importlib

    package, cls, _ = MODELS[name]
    est = getattr(importlib.import_module(package), cls)(**MODEL_PARAMS.get(name, {}))
    accepted = est.get_params()
    if "random_state" in accepted:
        est.set_params(random_state=0)
    taken = {k: v for k, v in params.items() if k in accepted}
    est.set_params(**taken)
    return est, len(taken) == len(params)


def make_pipeline(ds, model):
    """StandardScaler for the numeric columns (with_mean=False on sparse input),
    OneHotEncoder(handle_unknown="ignore") for the string columns, then ``model``."""
    import scipy.sparse as sp
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    sparse = sp.issparse(ds.X)
    numeric = [j for j in range(ds.X.shape[1]) if j not in set(ds.categorical)]
    parts = []
    if numeric:
        parts.append(("scale", StandardScaler(with_mean=not sparse), numeric))
    if ds.categorical:
        parts.append(("onehot", OneHotEncoder(handle_unknown="ignore"), ds.categorical))
    return Pipeline([("prep", ColumnTransformer(parts)), ("model", model)])


def build(ds, name, params):
    """The pipeline of model ``name`` (with ``params``) for the set ``ds``."""
    return make_pipeline(ds, make_model(name, **params)[0])


def cv_folds(y, n_splits, seed):
    """[(train rows in the shuffled order, train rows in the sorted order, test rows)]:
    row numbers of the set (file order). The shuffled order is a seeded permutation;
    StratifiedKFold(shuffle=True, random_state=0) splits it. The sorted order takes
    the same rows of each fold, sorted stably by label (within a class, the file's
    order), so both orders train on the same rows and test on the same rows."""
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    perm = np.random.default_rng(seed).permutation(y.size)
    folds = []
    split = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=0)
    for train, test in split.split(np.zeros(y.size), y[perm]):
        shuffled = perm[train]
        by_row = np.sort(shuffled)
        ordered = by_row[np.argsort(y[by_row], kind="stable")]
        folds.append((shuffled, ordered, np.sort(perm[test])))
    return folds


def fit_score(factory, ds, train, test, metric):
    """One fit: {score, fit_s, convergence (ConvergenceWarnings), warnings (others),
    raised ('Type: first line' or None)}; the warnings are counted, not printed."""
    from sklearn.exceptions import ConvergenceWarning

    X, y = ds.X, ds.y
    out = {"score": None, "fit_s": None, "convergence": 0, "warnings": 0, "raised": None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = factory()
            t = time.perf_counter()
            model.fit(X[train], y[train])
            out["fit_s"] = time.perf_counter() - t
            out["score"] = float(metric(y[test], model.predict(X[test])))
        except Exception as exc:  # noqa: BLE001 - a fit that raises is a cell
            first = (str(exc).strip().splitlines() or [""])[0]
            out["raised"] = f"{type(exc).__name__}: {first[:160]}"
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            out["convergence"] += 1
        else:
            out["warnings"] += 1
    return out


def _summarise(fits):
    """The folds of one model on one set and order: mean score over the folds that ran,
    the fits' seconds, warnings and the first error raised."""
    ran = [f for f in fits if f["raised"] is None]
    raised = [f["raised"] for f in fits if f["raised"] is not None]
    return {
        "scores": [f["score"] for f in fits],
        "mean": sum(f["score"] for f in ran) / len(ran) if ran else None,
        "fit_s": [f["fit_s"] for f in fits],
        "convergence": sum(f["convergence"] for f in fits),
        "warnings": sum(f["warnings"] for f in fits),
        "n_raised": len(raised),
        "raised": raised[0] if raised else None,
    }


def warm_up(names):
    """Fit each marginkit model once on tiny dense (binary, 3 classes) and sparse rows,
    so that numba compiles before the timed fits; the seconds it took."""
    import numpy as np
    import scipy.sparse as sp

    t = time.perf_counter()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    y3 = np.arange(60) % 3
    for name in names:
        if MODELS[name][0] != "marginkit":
            continue
        for A, b in ((X, y3 % 2), (X, y3), (sp.csr_matrix(np.where(X > 0.5, 1.0, 0.0)), y3 % 2)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    make_model(name)[0].fit(A, b).predict(A[:5])
                except Exception:  # noqa: BLE001 - the timed fit records it
                    pass
    return time.perf_counter() - t


def _load_sets(names, args, loader):
    """(name, DataSet) of each set that loads; a one-line message for the others."""
    for name in names:
        try:
            yield name, loader(name)
        except (OSError, ValueError) as exc:
            print(f"\n### {name}: skipped, the data cannot be loaded ({str(exc)[:200]})")


def _model_list(args, allowed):
    """The models asked for (--estimators), with the references their gaps need."""
    if not args.estimators:
        return list(allowed)
    wanted = [n.strip() for n in args.estimators.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in allowed]
    if unknown:
        raise SystemExit(f"--estimators: unknown {unknown}; choose from {list(allowed)}")
    for n in list(wanted):
        ref = REFERENCE.get(MODELS[n][2])
        if ref and ref in allowed and ref not in wanted:
            wanted.append(ref)
    return [n for n in allowed if n in wanted]


def _mean_s(cell):
    """Mean seconds of the fits that ran."""
    ran = [t for t in cell["fit_s"] if t is not None]
    return sum(ran) / len(ran) if ran else float("nan")


def _pts(x, signed=False):
    if x is None:
        return "n/a"
    x = 0.0 if abs(x) < 0.005 else x  # no "-0.00"
    return f"{x:+.2f}" if signed else f"{x:.2f}"


def _err(cell):
    """Test error % of a summarised cell (None where every fold raised)."""
    return None if cell["mean"] is None else 100.0 * (1.0 - cell["mean"])


def public_gap(record, name, order):
    """marginkit's error minus its reference's, in points, on one set and order; None
    where either raised on some fold or is absent."""
    kind = MODELS[name][2]
    res = record["results"]
    ref = REFERENCE.get(kind)
    if ref is None or ref not in res or name not in res:
        return None
    a, b = res[name][order], res[ref][order]
    if a["n_raised"] or b["n_raised"]:
        return None
    return _err(a) - _err(b)


def print_public_set(record):
    print(f"\n### {record['name']}: {record['describe']}\n")
    print(
        "| model | shuffled err % | sorted err % | sorted - shuffled | gap shuffled | gap "
        "sorted | fit s (shuffled, sorted) | ConvergenceWarnings | raised |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, cells in record["results"].items():
        sh, so = cells["shuffled"], cells["sorted"]
        e_sh, e_so = _err(sh), _err(so)
        diff = None if e_sh is None or e_so is None else e_so - e_sh
        times = [_mean_s(c) for c in (sh, so)]
        raised = ", ".join(
            f"{o} {c['n_raised']}/{len(c['scores'])}: {c['raised']}"
            for o, c in (("shuffled", sh), ("sorted", so))
            if c["n_raised"]
        )
        ref = REFERENCE.get(MODELS[name][2], "")
        print(
            f"| {name} | {_pts(e_sh)} | {_pts(e_so)} | {_pts(diff, True)} | "
            f"{_pts(public_gap(record, name, 'shuffled'), True)} | "
            f"{_pts(public_gap(record, name, 'sorted'), True)}{' (' + ref + ')' if ref else ''} | "
            f"{times[0]:.2f}, {times[1]:.2f} | {sh['convergence']}, {so['convergence']} | "
            f"{raised or '-'} |"
        )


def public_summary(records):
    """Per marginkit estimator and order: sets within WITHIN points of its reference,
    mean and worst gap, sets where it raised, ConvergenceWarnings; then the largest
    difference between the sorted and the shuffled error of every model."""
    names = []
    for r in records:
        names += [n for n in r["results"] if n not in names]
    ours = [n for n in names if MODELS[n][0] == "marginkit"]
    print(
        f"\n## Summary: gap = marginkit's test error - its reference's (LinearSVC for the "
        f"linear estimators, SVC for the kernel ones), points, same sets and folds; within: "
        f"gap <= {WITHIN:g}; sets: those where neither raised; raised: sets where some fold "
        "raised\n"
    )
    print(
        "| estimator | reference | order | within 1 pt | sets | mean gap | worst gap (set) | "
        "raised | ConvergenceWarnings |"
    )
    print("| --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: |")
    for name in ours:
        for order in ORDERS:
            gaps = [
                (public_gap(r, name, order), r["name"]) for r in records if name in r["results"]
            ]
            gaps = [(g, s) for g, s in gaps if g is not None]
            raised = sum(
                r["results"][name][order]["n_raised"] > 0 for r in records if name in r["results"]
            )
            conv = sum(
                r["results"][name][order]["convergence"] for r in records if name in r["results"]
            )
            within = sum(g <= WITHIN for g, _ in gaps)
            mean = sum(g for g, _ in gaps) / len(gaps) if gaps else None
            worst = max(gaps) if gaps else None
            worst_text = f"{worst[0]:+.2f} ({worst[1]})" if worst else "n/a"
            print(
                f"| {name} | {REFERENCE[MODELS[name][2]]} | {order} | {within} | {len(gaps)} | "
                f"{_pts(mean, True)} | {worst_text} | {raised} | {conv} |"
            )
    print(
        "\n## Row order: sorted - shuffled test error, points, over the sets where both ran "
        "(largest in absolute value, and the mean)\n"
    )
    print("| model | largest sorted - shuffled (set) | mean sorted - shuffled | sets |")
    print("| --- | --- | ---: | ---: |")
    for name in names:
        diffs = []
        for r in records:
            cells = r["results"].get(name)
            if cells is None:
                continue
            a, b = _err(cells["sorted"]), _err(cells["shuffled"])
            if a is not None and b is not None:
                diffs.append((a - b, r["name"]))
        if not diffs:
            print(f"| {name} | n/a | n/a | 0 |")
            continue
        big = max(diffs, key=lambda d: abs(d[0]))
        mean = sum(d for d, _ in diffs) / len(diffs)
        print(f"| {name} | {big[0]:+.2f} ({big[1]}) | {mean:+.2f} | {len(diffs)} |")


def _header(args, part):
    import numpy as np
    import sklearn

    import marginkit

    try:
        import river

        river_version = f", river {river.__version__}"
    except ImportError:
        river_version = ", river not installed"
    print(machine_line(), flush=True)
    print(
        f"bench_defaults --part {part}: "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, marginkit "
        f"{marginkit.__version__}, numpy {np.__version__}, scikit-learn {sklearn.__version__}"
        f"{river_version}, Python {platform.python_version()}, load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    threads = os.environ.get("OPENBLAS_NUM_THREADS")
    if threads:
        print(f"OPENBLAS_NUM_THREADS={threads}")
    return threads


def run_public(args):
    import _public_data as data
    import numpy as np
    from sklearn.metrics import accuracy_score

    threads = _header(args, "public")
    models = _model_list(args, MODELS)
    names = data.names()
    if args.only:
        wanted = [n.strip() for n in args.only.split(",")]
        unknown = [n for n in wanted if n not in names]
        if unknown:
            print(f"--only: unknown {unknown} (the sets: {', '.join(names)})")
        names = [n for n in names if n in wanted]
    print(
        f"{args.folds}-fold StratifiedKFold (shuffle=True, random_state=0) of the shuffled "
        f"order (seed {args.seed}); a set of more than {args.max_rows} rows is subsampled "
        f"to {args.max_rows} (stratified, seed {args.seed}): --max-rows. Models: "
        f"{', '.join(models)}. Data: {args.data_dir}"
    )
    results, warm_s, start = _begin(args, "public", threads, models, "sets")

    def metric(y, p):
        return accuracy_score(y, p)

    for name, ds in _load_sets(
        names, args, lambda n: data.load(n, args.data_dir, args.max_rows, args.seed)
    ):
        t_set = time.perf_counter()
        folds = cv_folds(np.asarray(ds.y), args.folds, args.seed)
        record = {
            "name": name,
            "describe": ds.describe(),
            "rows": int(ds.X.shape[0]),
            "features": int(ds.X.shape[1]),
            "classes": ds.n_classes,
            "n_file": int(ds.n_file),
            "source": ds.source,
            "results": {},
        }
        variants = [(order, {}, k) for k, order in enumerate(ORDERS)]
        for model in models:
            record["results"][model] = model_cells(ds, model, folds, variants, metric)
            if args.progress:
                print(f"  {name} {model}: {time.perf_counter() - t_set:.1f} s", flush=True)
        record["seconds"] = time.perf_counter() - t_set
        print_public_set(record)
        print(f"({name}: {record['seconds']:.1f} s)", flush=True)
        results["sets"].append(record)
    return _finish(results, results["sets"], public_summary, start, warm_s, args)


def _begin(args, part, threads, models, key):
    """The start of a part: its record (``key`` the list of its sets' records), the
    models' warm-up (numba compiling, not counted), the start of the clock."""
    results = {
        "part": part,
        "machine": machine_line(),
        "argv": args.argv,
        "openblas_threads": threads,
        "max_rows": args.max_rows,
        "folds": args.folds,
        "seed": args.seed,
        "models": models,
        key: [],
    }
    warm_s = warm_up(models)
    print(f"(warm-up fits, numba compiling: {warm_s:.1f} s, not counted)", flush=True)
    return results, warm_s, time.perf_counter()


def model_cells(ds, model, folds, variants, metric):
    """``{variant: the summary of its folds' scores}`` of ``model`` on the set ``ds``, for
    each of ``variants``, ``(name, parameters, k)``: the model with those parameters,
    trained on the rows ``fold[k]`` of each fold (the shuffled or the sorted order) and
    scored by ``metric`` on ``fold[2]``; None where the model takes not all of them."""
    cells = {}
    for key, params, k in variants:
        if params and not make_model(model, **params)[1]:
            cells[key] = None  # n/a: the estimator takes no such parameter
            continue
        fits = [
            fit_score(functools.partial(build, ds, model, params), ds, fold[k], fold[2], metric)
            for fold in folds
        ]
        cells[key] = _summarise(fits)
    return cells


def _finish(results, records, summary, start, warm_s, args):
    """The end of a part: its summary (of ``records``), the wall time, the JSON."""
    if records:
        summary(records)
    results["wall_s"] = time.perf_counter() - start
    print(f"\nwall time {results['wall_s']:.0f} s (warm-up {warm_s:.0f} s besides)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


# -- the imbalanced part -------------------------------------------------------------------
def _bal(cell):
    return None if cell is None or cell.get("mean") is None else 100.0 * cell["mean"]


def imbalanced_gap(record, name, weights="balanced"):
    """marginkit's balanced accuracy (``weights``: its class_weight, "balanced" or
    "none") minus its reference's with class_weight="balanced", in points (negative:
    marginkit is worse); None where not available."""
    res = record["results"]
    ref = REFERENCE.get(MODELS[name][2])
    if ref not in res or name not in res:
        return None
    a, b = res[name].get(weights), res[ref].get("balanced")
    if a is None or b is None or a["n_raised"] or b["n_raised"]:
        return None
    return _bal(a) - _bal(b)


def print_imbalanced_problem(record):
    print(f"\n### {record['name']}: {record['describe']}\n")
    print(
        '| model | bal. acc. % | bal. acc. % class_weight="balanced" | gap (balanced) | '
        "gap (no weights) | fit s | ConvergenceWarnings | raised |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, cells in record["results"].items():
        none, bal = cells["none"], cells.get("balanced")
        ref = REFERENCE.get(MODELS[name][2])
        gap_b = _pts(imbalanced_gap(record, name), True) if ref else ""
        gap_n = _pts(imbalanced_gap(record, name, "none"), True) if ref else ""
        times = ", ".join(f"{_mean_s(c):.2f}" for c in (none, bal) if c is not None)
        raised = ", ".join(
            f"{w} {c['n_raised']}/{len(c['scores'])}: {c['raised']}"
            for w, c in (("none", none), ("balanced", bal))
            if c is not None and c["n_raised"]
        )
        conv = ", ".join(str(c["convergence"]) for c in (none, bal) if c is not None)
        print(
            f"| {name} | {_pts(_bal(none))} | "
            f"{_pts(_bal(bal)) if bal else 'n/a (no class_weight)'} | {gap_b} | {gap_n} | "
            f"{times} | {conv} | {raised or '-'} |"
        )


def imbalanced_summary(records):
    names = []
    for r in records:
        names += [n for n in r["results"] if n not in names and MODELS[n][0] == "marginkit"]
    print(
        '\n## Summary: balanced accuracy of marginkit with class_weight="balanced" - its '
        'reference\'s with class_weight="balanced" (LinearSVC / SVC), points (negative: '
        "marginkit worse); where the estimator takes no class_weight, n/a and, in "
        "brackets, its gap without weights\n"
    )
    print("| estimator | " + " | ".join(r["name"] for r in records) + " | mean | worst |")
    print("| --- |" + " ---: |" * (len(records) + 2))
    for name in names:
        cells, gaps, unweighted = [], [], []
        for r in records:
            g = imbalanced_gap(r, name)
            if g is not None:
                gaps.append(g)
                cells.append(f"{g:+.2f}")
            else:
                u = imbalanced_gap(r, name, "none")
                unweighted += [] if u is None else [u]
                cells.append(f"n/a ({_pts(u, True)})")
        mean = f"{sum(gaps) / len(gaps):+.2f}" if gaps else "n/a"
        worst = f"{min(gaps):+.2f}" if gaps else "n/a"
        if unweighted:  # the problems without class weights, in brackets
            mean += f" ({sum(unweighted) / len(unweighted):+.2f})"
            worst += f" ({min(unweighted):+.2f})"
        print(f"| {name} | " + " | ".join(cells) + f" | {mean} | {worst} |")


def run_imbalanced(args):
    import _public_data as data
    import numpy as np
    from sklearn.metrics import balanced_accuracy_score

    threads = _header(args, "imbalanced")
    models = _model_list(args, IMBALANCED_MODELS)
    problems = [p for p in data.IMBALANCED]
    if args.only:
        wanted = {n.strip() for n in args.only.split(",")}
        problems = [p for p in problems if p[1] in wanted or p[0] in wanted]
    print(
        f"balanced accuracy, {args.folds}-fold StratifiedKFold (shuffle=True, random_state=0) "
        f"of the shuffled order (seed {args.seed}); a problem of more than {args.max_rows} "
        f"rows is subsampled to {args.max_rows} (stratified): --max-rows. Models: "
        f'{", ".join(models)}, each without and with class_weight="balanced" (n/a where '
        f"it takes none). Data: {args.data_dir}"
    )
    results, warm_s, start = _begin(args, "imbalanced", threads, models, "problems")

    def loader(problem):
        return data.load_imbalanced(problem, args.data_dir, args.max_rows, args.seed)

    for name, ds in _load_sets([p[0] for p in problems], args, loader):
        t_set = time.perf_counter()
        folds = cv_folds(np.asarray(ds.y), args.folds, args.seed)
        record = {
            "name": name,
            "describe": ds.describe(),
            "rows": int(ds.X.shape[0]),
            "features": int(ds.X.shape[1]),
            "positive": float(np.mean(ds.y)),
            "n_file": int(ds.n_file),
            "source": ds.source,
            "results": {},
        }
        # the shuffled order (fold[0]), without and with class weights
        variants = [("none", {}, 0), ("balanced", {"class_weight": "balanced"}, 0)]
        for model in models:
            record["results"][model] = model_cells(
                ds, model, folds, variants, balanced_accuracy_score
            )
        record["seconds"] = time.perf_counter() - t_set
        print_imbalanced_problem(record)
        print(f"({name}: {record['seconds']:.1f} s)", flush=True)
        results["problems"].append(record)
    return _finish(results, results["problems"], imbalanced_summary, start, warm_s, args)


def reprint(saved):
    """The tables of an earlier run (--from-json) of the public or imbalanced part."""
    print(saved.get("machine", ""))
    print(f"(from {saved.get('argv')}; --max-rows {saved.get('max_rows')})")
    if saved["part"] == "public":
        for record in saved["sets"]:
            print_public_set(record)
        if saved["sets"]:
            public_summary(saved["sets"])
    else:
        for record in saved["problems"]:
            print_imbalanced_problem(record)
        if saved["problems"]:
            imbalanced_summary(saved["problems"])
    if "wall_s" in saved:
        print(f"\nwall time {saved['wall_s']:.0f} s")
    return 0


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
    parser.add_argument(
        "--part",
        choices=("passes", "public", "imbalanced"),
        default="passes",
        help="passes: the kernel pass rule; public: every estimator at its defaults on "
        "public data; imbalanced: class_weight on imbalanced problems",
    )
    parser.add_argument("--passes", type=int, default=15, help="P: passes of each fit")
    parser.add_argument(
        "--only",
        help="comma-separated data sets; passes: "
        + ", ".join(sorted({r[1] for r in RUNS}))
        + "; public: the names printed by the part (iris, ..., mnist); imbalanced: the "
        "source sets (digits, letter, breast-cancer, a9a, phishing, shuttle)",
    )
    parser.add_argument(
        "--estimators",
        help="comma-separated; passes: alma,perceptron,romma (the default); public and "
        "imbalanced: " + ",".join(MODELS) + " (default: all; the references of the "
        "marginkit ones are added)",
    )
    parser.add_argument(
        "--max-rows",
        type=int,
        help="public, imbalanced: subsample a larger set to this many rows (stratified); "
        f"default {MAX_ROWS['public']} (public), {MAX_ROWS['imbalanced']} (imbalanced)",
    )
    parser.add_argument("--folds", type=int, default=5, help="public, imbalanced: CV folds")
    parser.add_argument(
        "--seed", type=int, default=0, help="public, imbalanced: subsample and row order"
    )
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
        "--quick",
        action="store_true",
        help="passes: P=5, small sets only, under a minute; public: the small sets only",
    )
    parser.add_argument(
        "--progress", action="store_true", help="a line after every pass (public: every model)"
    )
    parser.add_argument("--data-dir", default=os.environ.get("MARGINKIT_DATA", str(DEFAULT_DATA)))
    parser.add_argument("--json", help="write the curves and the rules here")
    parser.add_argument("--from-json", help="apply the rules to the curves of an earlier run")
    parser.add_argument(
        "--blas-threads", type=int, help="OPENBLAS_NUM_THREADS (default: OpenBLAS' own)"
    )
    args = parser.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else list(argv)
    if args.blas_threads:  # before numpy loads
        os.environ["OPENBLAS_NUM_THREADS"] = str(args.blas_threads)
    if args.passes < 1:
        parser.error("--passes: at least 1")
    args.max_rows = args.max_rows or MAX_ROWS.get(args.part)
    if args.folds < 2 or (args.max_rows or 2 * args.folds) < 2 * args.folds:
        parser.error("--folds: at least 2; --max-rows: at least twice --folds")
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text())
        if saved.get("part", "passes") != "passes":
            return reprint(saved)
        print(saved.get("machine", ""))
        runs = saved["runs"]
        for run in runs:
            run["rules"] = rule_rows(run)
            print_run(run, run["kind"])
        summary(runs)
        return 0
    if args.part == "public":
        if args.quick:
            args.only = args.only or QUICK_PUBLIC
        return run_public(args)
    if args.part == "imbalanced":
        return run_imbalanced(args)
    args.estimators = args.estimators or "alma,perceptron,romma"
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
        "argv": args.argv,
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
