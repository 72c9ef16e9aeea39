"""Tables 1, 3 and 5 of Gentile (JMLR 2001): kernel ALMA_2 on USPS, MNIST and Letter.

Section 4 of C. Gentile, "A New Approximate Maximal Margin Classification Algorithm",
JMLR 2 (2001) 213-242, trains kernel ALMA_2(alpha) (Remark 5), one-vs-rest with the
argmax of the ten (or 26) margins, on three real data sets:

- USPS, Table 1: Gaussian kernel ``exp(-||x - y||^2 / (2 sigma^2))``, sigma = 3.5, one
  epoch;
- MNIST, Table 3: ``(1 + x . y / 255)^d`` on the raw pixel values 0..255, 1 to 3 epochs;
- Letter, Table 5: the "poly-Gaussian" kernel ``(1 + exp(-||x - y||^2 / (2 sigma^2)))^5``,
  sigma = 3.0, the first 16000 rows to train and the last 4000 to test, 1 and 3 epochs.

Each published cell is an average over random permutations of the training set. Here a
cell of the experiment is one (data set, permutation, degree, alpha, B setting): the
training set is permuted once with the permutation's seed and fitted with
``shuffle=False`` for all epochs, so that every epoch presents the same order, and a
callback records after each epoch the cumulative corrections and the test errors of the
last, averaged and voted hypotheses of that one run (``set_params(output=...)`` on the
fitted model). The published tables label one averaged output "avg"; all three outputs
are reported and the report says, from the numbers, which of "avg" and "voted" is closer.

For alpha < 1 every cell is run with both ``B = 1/alpha`` (the paper's text) and
``B = sqrt(8)/alpha`` (Theorem 3, part 1); at alpha = 1 the threshold
``(1 - alpha) gamma_k`` is 0 whatever B, so it is run once.

The three experiments share this module: :data:`MNIST`, :data:`USPS` and :data:`LETTER`
are :class:`KernelExperiment` objects with the interface of an experiment module
(``NAME``, ``build_spec``, ``run_cell``, ``render``). Only the published values listed in
``data/gentile_kernel.json`` are stored; every other published value is shown as "n/s".
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import datasets
from .._files import atomic_write
from ..alma import KernelALMAClassifier
from ._format import format_table
from .runner import Cell, LastValueCache, Spec, published_values

NOT_STORED = "n/s"
NOT_RUN = "-"
OUTPUTS = ("last", "avg", "voted")
C = math.sqrt(2.0)
#: B = factor / alpha. The label is part of every cell key.
B_SETTINGS = {"1/alpha": 1.0, "sqrt8/alpha": math.sqrt(8.0)}
B_DESCRIPTIONS = {
    "1/alpha": "B = 1/alpha (the paper's text, section 4)",
    "sqrt8/alpha": "B = sqrt(8)/alpha (Theorem 3, part 1)",
}
#: The project's tolerance for "reproduced": 0.15 points of test error, 3% of corrections.
TOLERANCE = {"test_error_pct": 0.15, "corrections": 0.03}
#: The quick version: a prefix of each permuted training set and of the test set.
QUICK = {"n_train": 3000, "n_test": 2000, "permutations": 2, "max_epochs": 2}
#: The options of :meth:`KernelExperiment.build_spec` beyond ``quick`` and ``seed``.
ALL_OPTIONS = ("permutations", "epochs", "degrees", "alphas")


class MissingDataError(FileNotFoundError):
    """A data file of the experiment is missing (the message names it)."""


@dataclass(frozen=True)
class KernelExperiment:
    """One kernel table of the paper: data set, kernel and default grid.

    Parameters
    ----------
    NAME : str
        Name of the experiment, e.g. ``"gentile-mnist"``.
    dataset : str
        ``"mnist"``, ``"usps"`` or ``"letter"``: the loader is ``datasets.load_<dataset>``.
    table : str
        The published table, e.g. ``"Table 3"``.
    kernel : str
        ``kernel`` of :class:`~marginkit.KernelALMAClassifier`.
    gamma, coef0 : float
        Kernel parameters (scikit-learn meanings).
    kernel_text : str
        The kernel as the paper writes it.
    degrees : tuple of int or None
        Default degrees; None when the kernel has none (Gaussian).
    alphas : tuple of float
        Default values of alpha.
    n_epochs : int
        Default number of epochs (all recorded).
    permutations : int
        Default number of random permutations of the training set.
    """

    #: The cells read real data files: ``reproduce`` calls :meth:`cell_runner`.
    USES_DATA = True

    NAME: str
    dataset: str
    table: str
    kernel: str
    gamma: float
    coef0: float
    kernel_text: str
    degrees: tuple[int, ...] | None
    alphas: tuple[float, ...]
    n_epochs: int
    permutations: int

    def write_figures(self, document: Mapping, prefix) -> list:
        """Test error of every output and corrections against epochs: ``prefix-curves.png``.

        One panel per (alpha, B, degree) run, the means over the permutations run; the
        published values are drawn as open markers. Needs matplotlib (the ``plot`` extra).
        """
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        stats = summarise(document)
        runs = sorted({key[:3] for key in stats}, key=lambda k: (k[0], k[1], k[2] or 0))
        if not runs:
            return []
        lookup = published_lookup()
        cols = min(3, len(runs))
        rows = -(-len(runs) // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False)
        config = document["spec"]["config"]
        legend = {}  # one legend for the figure, below the panels, over no line
        for ax, (alpha, b_label, degree) in zip(axes.ravel(), runs, strict=False):
            epochs = sorted(e for (a, b, d, e) in stats if (a, b, d) == (alpha, b_label, degree))
            for output, style in zip(OUTPUTS, ("o-", "s-", "^-"), strict=True):
                means = [stats[(alpha, b_label, degree, e)]["err"][output][0] for e in epochs]
                line = ax.plot(epochs, means, style, label=f"{output} (ours)", markersize=4)[0]
                keys = [
                    _pub_key(config["dataset"], alpha, degree, e, output, "test_error_pct")
                    for e in epochs
                ]
                pts = [
                    (e, lookup[k]["value"])
                    for e, k in zip(epochs, keys, strict=True)
                    if k in lookup
                ]
                if pts:
                    ax.plot(
                        *zip(*pts, strict=True),
                        "o",
                        mfc="none",
                        color=line.get_color(),
                        markersize=9,
                        label=f"{output} (paper)",
                    )
            ax.set_xlabel("epoch")
            ax.set_ylabel("test error (%)")
            ax.set_xticks(epochs)
            ax.grid(alpha=0.3)
            name = _algorithm(alpha) + ("" if degree is None else f" d={degree}")
            ax.set_title(f"{name}, {_b_text(alpha, b_label)}", fontsize=10)
            twin = ax.twinx()
            corr = [stats[(alpha, b_label, degree, e)]["corr"][0] for e in epochs]
            # a marker, so that a run of one epoch shows its count too
            twin.plot(epochs, corr, "x--", color="0.4", label="corrections (ours, right axis)")
            twin.set_ylabel("corrections")
            for a in (ax, twin):
                for handle, label in zip(*a.get_legend_handles_labels(), strict=True):
                    legend.setdefault(label, handle)
        for ax in axes.ravel()[len(runs) :]:
            ax.set_visible(False)
        fig.suptitle(f"{self.TITLE}: means over the permutations run", fontsize=11)
        ncol = min(4, len(legend))
        fig.legend(list(legend.values()), list(legend), loc="lower center", ncol=ncol, fontsize=8)
        legend_rows = -(-len(legend) // ncol)
        fig.tight_layout(rect=(0, (0.035 + 0.03 * legend_rows) / rows**0.5, 1, 1))
        path = Path(str(prefix) + "-curves.png")
        atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=100))
        plt.close(fig)
        return [path]

    @property
    def TITLE(self) -> str:
        """Title of the report (the attribute name of an experiment module)."""
        return f"Gentile (JMLR 2001), {self.table}: kernel ALMA_2 on {_DATA_NAMES[self.dataset]}"

    @property
    def OPTIONS(self) -> tuple[str, ...]:
        """Options of :meth:`build_spec` (and of the command line) that apply."""
        return ALL_OPTIONS if self.degrees is not None else ("permutations", "epochs", "alphas")

    # -- spec ------------------------------------------------------------------------
    def build_spec(
        self,
        *,
        quick: bool = False,
        seed: int = 0,
        permutations: int | None = None,
        epochs: int | None = None,
        degrees: Sequence[int] | None = None,
        alphas: Sequence[float] | None = None,
    ) -> Spec:
        """The experiment as independent cells, one per (permutation, degree, alpha, B).

        Parameters
        ----------
        quick : bool, default=False
            The small version: a prefix of ``QUICK["n_train"]`` examples of each permuted
            training set, the first ``QUICK["n_test"]`` test examples,
            ``QUICK["permutations"]`` permutations and at most ``QUICK["max_epochs"]``
            epochs. The options below override it.
        seed : int >= 0, default=0
            Base seed; permutation ``i`` has the seed :func:`permutation_seed`
            ``(seed, i)``.
        permutations : int >= 1, optional
            Number of random permutations (default: the table's, 10).
        epochs : int >= 1, optional
            Epochs of every fit; the results are recorded after each one.
        degrees : sequence of int >= 1, optional
            Kernel degrees (not for the Gaussian kernel of USPS).
        alphas : sequence of float in (0, 1], optional

        Returns
        -------
        spec : Spec
            Cells ordered by permutation, so that consecutive cells share the permuted
            training set.
        """
        if seed < 0:
            raise ValueError(f"the seed must be >= 0, got {seed}")
        if degrees is not None and self.degrees is None:
            raise ValueError(f"{self.NAME} has a Gaussian kernel: degrees do not apply")
        n_perm = _positive_int(
            permutations, "permutations", QUICK["permutations"] if quick else self.permutations
        )
        n_epochs = _positive_int(
            epochs, "epochs", min(self.n_epochs, QUICK["max_epochs"]) if quick else self.n_epochs
        )
        degree_list = None
        if self.degrees is not None:
            degree_list = _unique(self.degrees if degrees is None else degrees)
            if not degree_list or any(
                not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 1
                for d in degree_list
            ):
                raise ValueError(f"degrees must be whole numbers >= 1, got {degree_list}")
            degree_list = [int(d) for d in degree_list]
        alpha_list = [float(a) for a in _unique(self.alphas if alphas is None else alphas)]
        if not alpha_list or any(not 0.0 < a <= 1.0 for a in alpha_list):
            raise ValueError(f"alphas must lie in (0, 1], got {alpha_list}")
        n_train = QUICK["n_train"] if quick else None
        n_test = QUICK["n_test"] if quick else None
        seeds = [permutation_seed(seed, i) for i in range(n_perm)]
        config = {
            "paper": f"Gentile, JMLR 2 (2001) 213-242, section 4, {self.table}",
            "dataset": self.dataset,
            "quick": bool(quick),
            "kernel": {
                "kernel": self.kernel,
                "gamma": self.gamma,
                "coef0": self.coef0,
                "text": self.kernel_text,
            },
            "degrees": degree_list,
            "alphas": alpha_list,
            "B": dict(B_SETTINGS),
            "C": C,
            "n_epochs": n_epochs,
            "permutations": n_perm,
            "n_train": n_train,
            "n_test": n_test,
            "outputs": list(OUTPUTS),
            "seed": int(seed),
            "permutation_seeds": seeds,
        }
        cells = []
        for i, perm_seed in enumerate(seeds):
            for degree in degree_list or [None]:
                for alpha in alpha_list:
                    for b_label in b_labels(alpha):
                        params = {
                            "dataset": self.dataset,
                            "permutation": i,
                            "permutation_seed": perm_seed,
                            "kernel": self.kernel,
                            "gamma": self.gamma,
                            "coef0": self.coef0,
                            "degree": degree,
                            "alpha": alpha,
                            "B_setting": b_label,
                            "B": B_SETTINGS[b_label] / alpha,
                            "C": C,
                            "n_epochs": n_epochs,
                            "n_train": n_train,
                            "n_test": n_test,
                        }
                        key = cell_key(self.dataset, i, degree, alpha, b_label)
                        cells.append(Cell(key, params))
        return Spec(experiment=self.NAME, config=config, cells=tuple(cells))

    # -- computation -----------------------------------------------------------------
    def load_data(self, data_dir=None):
        """The data set as ``(X_train, y_train, X_test, y_test)``.

        Raises
        ------
        MissingDataError
            When a file is missing; the message (from the loader) names it.
        """
        loader = getattr(datasets, f"load_{self.dataset}")
        try:
            return loader(data_dir)
        except FileNotFoundError as exc:
            raise MissingDataError(str(exc)) from None

    def cell_runner(self, data_dir=None) -> Callable[[Cell, LastValueCache], dict]:
        """Load the data set now (failing early if a file is missing); return ``run_cell``.

        Returns
        -------
        run_cell : callable
            ``run_cell(cell, cache)`` for :func:`marginkit.experiments.runner.run`, with
            the loaded data set bound.
        """
        data = self.load_data(data_dir)
        fingerprint = data_fingerprint(*data)

        def run_cell(cell, cache):
            return self.run_cell(cell, cache, data=data, fingerprint=fingerprint)

        return run_cell

    def run_cell(
        self,
        cell: Cell,
        cache: LastValueCache,
        *,
        data=None,
        fingerprint: str | None = None,
        data_dir=None,
    ) -> dict:
        """Fit kernel ALMA_2 once for all epochs, recording every epoch through the callback.

        Parameters
        ----------
        cell : Cell
            A cell of :meth:`build_spec`.
        cache : LastValueCache
            Holds the current permuted training set, built once for consecutive cells.
        data : tuple, optional
            ``(X_train, y_train, X_test, y_test)``; loaded from ``data_dir`` when None.
        fingerprint : str, optional
            :func:`data_fingerprint` of ``data`` (computed when None).
        data_dir : path-like, optional
            Where to load the data from when ``data`` is None.

        Returns
        -------
        result : dict
            ``epochs``: one record per epoch with ``epoch`` (from 1), ``corrections``
            (cumulative), ``corrections_per_class``, ``trials``, ``n_support``,
            ``train_seconds`` (that epoch's training; the first includes validation),
            and per output (last, avg, voted) ``err_pct``, ``mistakes`` and
            ``predict_seconds``; then ``n_train``, ``n_test``, ``B``, ``gamma``,
            ``data_sha256`` and ``data_seconds`` (permuting the training set, 0 when
            cached).
        """
        q = cell.params
        if data is None:
            data = self.load_data(data_dir)
        if fingerprint is None:
            fingerprint = data_fingerprint(*data)
        X_all, y_all, X_test_all, y_test_all = data
        start = time.perf_counter()
        X, y = cache.get(
            (fingerprint, q["permutation_seed"], q["n_train"]),
            lambda: permuted(X_all, y_all, q["permutation_seed"], q["n_train"]),
        )
        data_seconds = time.perf_counter() - start
        n_test = y_test_all.shape[0] if q["n_test"] is None else min(q["n_test"], len(y_test_all))
        X_test, y_test = X_test_all[:n_test], y_test_all[:n_test]

        clf = KernelALMAClassifier(
            alpha=q["alpha"],
            B=q["B"],
            C=q["C"],
            output="last",
            max_iter=q["n_epochs"],
            tol=None,  # the paper's epochs, every one
            shuffle=False,
            kernel=q["kernel"],
            gamma=q["gamma"],
            degree=1 if q["degree"] is None else q["degree"],
            coef0=q["coef0"],
        )
        epochs = []
        clock = [time.perf_counter()]

        def record(est, epoch):
            train_seconds = time.perf_counter() - clock[0]
            row = {
                "epoch": epoch + 1,
                "corrections": int(est.n_corrections_),
                "corrections_per_class": [int(c) for c in est.n_corrections_per_class_],
                "trials": int(est.n_trials_),
                "n_support": int(est.support_.shape[0]),
                "train_seconds": round(train_seconds, 4),
                "err_pct": {},
                "mistakes": {},
                "predict_seconds": {},
            }
            for output in OUTPUTS:
                est.set_params(output=output)
                t0 = time.perf_counter()
                mistakes = int(np.count_nonzero(est.predict(X_test) != y_test))
                row["predict_seconds"][output] = round(time.perf_counter() - t0, 4)
                row["mistakes"][output] = mistakes
                row["err_pct"][output] = 100.0 * mistakes / n_test
            est.set_params(output="last")
            epochs.append(row)
            clock[0] = time.perf_counter()

        clf.fit(X, y, callback=record)
        return {
            "epochs": epochs,
            "n_train": int(y.shape[0]),
            "n_test": int(n_test),
            "B": float(clf.B_),
            "gamma": float(clf.gamma_),
            "data_sha256": fingerprint,
            "data_seconds": round(data_seconds, 4),
        }

    # -- report ----------------------------------------------------------------------
    def render(self, document: Mapping, published: Mapping | None = None) -> str:
        """The markdown report of a (possibly partial) run of :meth:`build_spec`.

        Parameters
        ----------
        document : dict
            The runner's output document.
        published : dict, optional
            Published values (default: :func:`load_published`).

        Returns
        -------
        markdown : str
            The table of means and standard deviations over permutations beside the
            published values, the timings, the comparison with the published values
            (which B setting, which of avg and voted), the seeds and the versions.
        """
        published = load_published() if published is None else published
        pub = published_lookup(published)
        config = document["spec"]["config"]
        stats = summarise(document)
        n_perm = config["permutations"]
        kernel = config["kernel"]
        quick = config["quick"]

        lines = [f"# {self.TITLE}", ""]
        sizes = (
            f"the first {config['n_train']} examples of each permuted training set and the "
            f"first {config['n_test']} test examples (quick version: smaller than the paper's)"
            if quick
            else "the whole training and test sets"
        )
        lines += [
            f"Kernel {kernel['text']} (`kernel={kernel['kernel']!r}, "
            f"gamma={kernel['gamma']:.6g}, coef0={kernel['coef0']:g}`), one-vs-rest with the "
            f"argmax of the margins; {sizes}. {n_perm} random permutations of the training "
            f"set (base seed {config['seed']}); each fit presents the same permuted order in "
            f"each of its {config['n_epochs']} epoch(s) and is scored after every epoch. "
            "C = sqrt(2).",
            "",
            "Rows: ALMA2(alpha) under one B setting ("
            + "; ".join(B_DESCRIPTIONS.values())
            + "; at alpha = 1 B has no effect and the row says 'any'), kernel degree 'deg', "
            "epochs, and "
            "the output scored: 'last', 'avg' (sum_k c_k w_k) or 'voted' "
            "(sum_k c_k sign(w_k . x)), all three from the same fit. 'err' is the test error "
            "(%), 'corr' the corrections up to that epoch, summed over the one-vs-rest problems "
            "(the same for every output), both as mean and standard deviation over the "
            "permutations run ('runs'); 'SVs' the mean number of support vectors (an example "
            "counts once for each epoch in which it was corrected, in however many problems). "
            f"'paper': the published value, '{NOT_STORED}' where it is not stored here; the "
            "published tables' averaged row is labelled 'avg' and is shown beside our 'avg'.",
            "",
        ]
        n_done = sum(1 for c in document["spec"]["cells"] if c["key"] in document["results"])
        n_cells = len(document["spec"]["cells"])
        if n_done < n_cells:
            lines += [f"**Partial run: {n_done} of {n_cells} cells.**", ""]

        headers = [
            "algorithm", "B", "deg", "epoch", "output", "err %", "err sd", "paper err %",
            "corr", "corr sd", "paper corr", "SVs", "runs",
        ]  # fmt: skip
        rows = []
        for alpha, b_label, degree in _runs(config):
            for epoch in range(1, config["n_epochs"] + 1):
                s = stats.get((alpha, b_label, degree, epoch))
                for output in OUTPUTS:
                    row = [
                        _algorithm(alpha),
                        _b_text(alpha, b_label),
                        "-" if degree is None else str(degree),
                        str(epoch),
                        output,
                    ]
                    if s is None:
                        row += [NOT_RUN, NOT_RUN]
                    else:
                        row += [f"{s['err'][output][0]:.2f}", _sd(s["err"][output][1], 2)]
                    c = pub.get(_pub_key(config["dataset"], alpha, degree, epoch, output, _ERR))
                    row.append(NOT_STORED if c is None else f"{c['value']:.2f}")
                    if s is None:
                        row += [NOT_RUN, NOT_RUN]
                    else:
                        row += [f"{s['corr'][0]:.1f}", _sd(s["corr"][1], 1)]
                    c = pub.get(_pub_key(config["dataset"], alpha, degree, epoch, None, _CORR))
                    row.append(NOT_STORED if c is None else f"{c['value']:g}")
                    row.append(NOT_RUN if s is None else f"{s['n_support']:.1f}")
                    row.append("0" if s is None else str(s["n"]))
                    rows.append(row)
        lines += ["## Test error and corrections", ""]
        lines += [format_table(headers, rows, align="llrrl" + "r" * 8), ""]

        lines += ["## Time", ""]
        lines += [
            "Mean seconds per permutation: training in that epoch (the first includes input "
            "validation and the instance norms) and predicting the "
            + (f"first {config['n_test']} test examples" if config["n_test"] else "test set")
            + " with each output after it.",
            "",
        ]
        t_headers = ["algorithm", "B", "deg", "epoch", "train s", "last s", "avg s", "voted s"]
        t_rows = []
        for alpha, b_label, degree in _runs(config):
            for epoch in range(1, config["n_epochs"] + 1):
                s = stats.get((alpha, b_label, degree, epoch))
                row = [
                    _algorithm(alpha),
                    _b_text(alpha, b_label),
                    "-" if degree is None else str(degree),
                    str(epoch),
                ]
                if s is None:
                    row += [NOT_RUN] * 4
                else:
                    row.append(f"{s['train_seconds']:.1f}")
                    row += [f"{s['predict_seconds'][o]:.1f}" for o in OUTPUTS]
                t_rows.append(row)
        lines += [format_table(t_headers, t_rows, align="llrr" + "r" * 4), ""]

        lines += ["## Comparison with the published values", ""]
        lines += compare(document, published)
        lines += ["", "## Permutation seeds", ""]
        lines += [
            "Permutation i of the training set is "
            "`numpy.random.default_rng(seed_i).permutation(n)` with "
            "`seed_i = numpy.random.SeedSequence([base_seed, i]).generate_state(1)[0]`: "
            + ", ".join(f"{i}: {s}" for i, s in enumerate(config["permutation_seeds"]))
            + ".",
            "",
        ]
        versions = ", ".join(f"{k} {v}" for k, v in document["versions"].items())
        fingerprints = sorted(
            {r["data_sha256"] for r in document["results"].values() if "data_sha256" in r}
        )
        lines += [
            "## Run",
            "",
            f"Regenerate: `{self.command(config)}`.",
            f"Versions: {versions}.",
            "Data (sha256 of the loaded arrays): "
            + (", ".join(f"`{f[:16]}`" for f in fingerprints) or "-")
            + (" (**cells computed from different data**)" if len(fingerprints) > 1 else "")
            + ".",
            f"Compute time (sum over cells): {document.get('compute_seconds', 0.0):.1f} s; "
            f"created {document['created']}, updated {document['updated']}.",
            "",
        ]
        return "\n".join(lines)

    def command(self, config: Mapping) -> str:
        """The ``marginkit reproduce`` command line that builds the spec of ``config``."""
        quick = config["quick"]
        parts = [f"marginkit reproduce {self.NAME}"]
        if quick:
            parts.append("--quick")
        default_perm = QUICK["permutations"] if quick else self.permutations
        default_epochs = min(self.n_epochs, QUICK["max_epochs"]) if quick else self.n_epochs
        if config["permutations"] != default_perm:
            parts.append(f"--permutations {config['permutations']}")
        if config["n_epochs"] != default_epochs:
            parts.append(f"--epochs {config['n_epochs']}")
        if config["degrees"] is not None and config["degrees"] != list(self.degrees):
            parts.append("--degrees " + ",".join(str(d) for d in config["degrees"]))
        if config["alphas"] != list(self.alphas):
            parts.append("--alphas " + ",".join(f"{a:g}" for a in config["alphas"]))
        parts.append(f"--seed {config['seed']}")
        return " ".join(parts)


_DATA_NAMES = {"mnist": "MNIST", "usps": "USPS", "letter": "UCI Letter"}
_ERR = "test_error_pct"
_CORR = "corrections"
_WITHIN = ", within tolerance"

MNIST = KernelExperiment(
    NAME="gentile-mnist",
    dataset="mnist",
    table="Table 3",
    kernel="poly",
    gamma=1.0 / 255.0,
    coef0=1.0,
    kernel_text="K(x, y) = (1 + x . y / 255)^d on the raw pixel values 0..255",
    degrees=(4,),
    alphas=(1.0, 0.9),
    n_epochs=3,
    permutations=10,
)
USPS = KernelExperiment(
    NAME="gentile-usps",
    dataset="usps",
    table="Table 1",
    kernel="rbf",
    gamma=1.0 / (2.0 * 3.5**2),
    coef0=1.0,
    kernel_text="K(x, y) = exp(-||x - y||^2 / (2 sigma^2)), sigma = 3.5",
    degrees=None,
    alphas=(0.9,),
    n_epochs=1,
    permutations=10,
)
LETTER = KernelExperiment(
    NAME="gentile-letter",
    dataset="letter",
    table="Table 5",
    kernel="poly_rbf",
    gamma=1.0 / (2.0 * 3.0**2),
    coef0=1.0,
    kernel_text="K(x, y) = (1 + exp(-||x - y||^2 / (2 sigma^2)))^d, sigma = 3.0",
    degrees=(5,),
    alphas=(0.8,),
    n_epochs=3,
    permutations=10,
)
EXPERIMENTS = (USPS, MNIST, LETTER)


# -- helpers ----------------------------------------------------------------------------


def permutation_seed(base_seed: int, index: int) -> int:
    """Seed of permutation ``index``: ``SeedSequence([base_seed, index]).generate_state(1)[0]``.

    The same on every platform and NumPy version.
    """
    if base_seed < 0 or index < 0:
        raise ValueError(f"seeds and indices must be >= 0, got {base_seed}, {index}")
    entropy = [int(base_seed), int(index)]
    return int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint32)[0])


def permuted(X, y, seed: int, n: int | None = None):
    """``X`` and ``y`` in the order ``default_rng(seed).permutation(len(y))``, first ``n``."""
    order = np.random.default_rng(seed).permutation(y.shape[0])
    if n is not None:
        order = order[:n]
    return X[order], y[order]


def data_fingerprint(*arrays) -> str:
    """sha256 of the shapes, dtypes and bytes of the arrays (the loaded data set)."""
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(memoryview(a).cast("B"))
    return h.hexdigest()


def b_labels(alpha: float) -> list[str]:
    """The B settings run at ``alpha``: both below 1, one at 1 (where B has no effect)."""
    return ["1/alpha"] if alpha == 1.0 else list(B_SETTINGS)


def cell_key(dataset: str, permutation: int, degree: int | None, alpha: float, b_label: str):
    """Stable key of one cell: data set, permutation, degree, ALMA_2(alpha), B setting."""
    kernel = "rbf" if degree is None else f"d={degree}"
    return f"{dataset}/perm={permutation}/{kernel}/alpha={alpha:.2f}/B={b_label}"


def _runs(config):
    """(alpha, B label, degree) of the rows, in report order."""
    return [
        (alpha, b_label, degree)
        for alpha in config["alphas"]
        for b_label in b_labels(alpha)
        for degree in config["degrees"] or [None]
    ]


def summarise(document: Mapping) -> dict:
    """Means and standard deviations over the permutations run.

    Returns
    -------
    stats : dict
        Keyed by ``(alpha, B label, degree, epoch)``: ``n`` (permutations),
        ``err[output] = (mean, sd)``, ``corr = (mean, sd)``, mean ``n_support``
        (distinct support vectors), ``per_permutation`` (the
        errors and corrections of each), and mean ``train_seconds`` and
        ``predict_seconds[output]``. The standard deviation is the sample one (ddof 1),
        NaN for a single permutation.
    """
    config = document["spec"]["config"]
    results = document["results"]
    stats = {}
    for alpha, b_label, degree in _runs(config):
        runs = []
        for i in range(config["permutations"]):
            r = results.get(cell_key(config["dataset"], i, degree, alpha, b_label))
            if r is not None:
                runs.append((i, r))
        if not runs:
            continue
        for epoch in range(1, config["n_epochs"] + 1):
            recs = [(i, r["epochs"][epoch - 1]) for i, r in runs]
            corr = np.array([e["corrections"] for _, e in recs], dtype=float)
            stats[(alpha, b_label, degree, epoch)] = {
                "n": len(recs),
                "err": {
                    o: _mean_sd(np.array([e["err_pct"][o] for _, e in recs])) for o in OUTPUTS
                },
                "corr": _mean_sd(corr),
                "n_support": float(np.mean([e["n_support"] for _, e in recs])),
                "per_permutation": {
                    i: {"err_pct": dict(e["err_pct"]), "corrections": e["corrections"]}
                    for i, e in recs
                },
                "train_seconds": float(np.mean([e["train_seconds"] for _, e in recs])),
                "predict_seconds": {
                    o: float(np.mean([e["predict_seconds"][o] for _, e in recs])) for o in OUTPUTS
                },
            }
    return stats


def compare(document: Mapping, published: Mapping | None = None) -> list[str]:
    """Compare the stored published values in this run's grid with the means measured.

    One bullet per published value (the mean under each B setting that was run, its
    difference and whether it is within the tolerance: 0.15 points of test error, 3% of
    corrections), then sentences computed from them: how many are matched, by which B
    setting, and which of our 'avg' and 'voted' outputs is closer to the published rows
    labelled 'avg'.

    Returns
    -------
    lines : list of str
        Markdown lines.
    """
    published = load_published() if published is None else published
    config = document["spec"]["config"]
    stats = summarise(document)
    dataset = config["dataset"]
    degrees = config["degrees"] or [None]
    in_grid = [
        c
        for c in published["cells"]
        if c["dataset"] == dataset
        and c["degree"] in degrees
        and any(math.isclose(c["alpha"], a) for a in config["alphas"])
        and c["epoch"] <= config["n_epochs"]
    ]
    lines = []
    if config["quick"]:
        lines += [
            "Quick run: the training and test sets are prefixes of the paper's, so these "
            "comparisons only show that the report works; they say nothing about the "
            "reproduction.",
            "",
        ]
    if not in_grid:
        return lines + ["No stored published value falls in this run's grid."]
    lines += [
        f"Tolerance: {TOLERANCE[_ERR]:.2f} points of test error, "
        f"{100 * TOLERANCE[_CORR]:.0f}% of corrections (means over the permutations).",
        "",
    ]
    matched = {label: [0, 0] for label in B_SETTINGS}  # [within tolerance, compared]
    neutral = [0, 0]  # alpha = 1: B has no effect
    closer = {label: 0 for label in B_SETTINGS}
    ties = 0
    missing = 0
    avg_vs_voted = []  # (|avg - published|, |voted - published|)
    for c in in_grid:
        alpha = _match_alpha(c["alpha"], config["alphas"])
        name = f"{_algorithm(alpha)}" + ("" if c["degree"] is None else f" d={c['degree']}")
        name += f", epoch {c['epoch']}"
        if c["metric"] == _ERR:
            head = f"- {name}, '{c['output']}' test error: published {c['value']:.2f}%"
        else:
            head = f"- {name}, corrections: published {c['value']:g}"
        parts, gaps = [], {}
        for b_label in b_labels(alpha):
            s = stats.get((alpha, b_label, c["degree"], c["epoch"]))
            if s is None:
                continue
            if c["metric"] == _ERR:
                mean = s["err"][c["output"]][0]
                gap = mean - c["value"]
                ok = abs(gap) <= TOLERANCE[_ERR] + 1e-9
                part = f"{mean:.2f}% ({gap:+.2f} points{_WITHIN if ok else ''})"
                if c["output"] == "avg":
                    voted = s["err"]["voted"][0]
                    avg_vs_voted.append((abs(gap), abs(voted - c["value"])))
                    part += f"; its 'voted' {voted:.2f}% ({voted - c['value']:+.2f} points)"
            else:
                mean = s["corr"][0]
                gap = (mean - c["value"]) / c["value"]
                ok = abs(gap) <= TOLERANCE[_CORR] + 1e-12
                part = f"{mean:.1f} ({100 * gap:+.1f}%{_WITHIN if ok else ''})"
            who = "any B" if alpha == 1.0 else f"B = {b_label}"
            parts.append(f"{who}: {part}")
            # compared as shown (2 decimals of a point, 1 of a percent): no hidden winner
            gaps[b_label] = round(abs(gap), 2) if c["metric"] == _ERR else round(100 * abs(gap), 1)
            if alpha == 1.0:
                neutral[0] += ok
                neutral[1] += 1
            else:
                matched[b_label][0] += ok
                matched[b_label][1] += 1
        if not parts:
            missing += 1
            lines.append(f"{head}; not run yet.")
            continue
        if len(gaps) == 2 and len(set(gaps.values())) == 2:
            best = min(gaps, key=gaps.get)
            closer[best] += 1
            parts.append(f"closer: B = {best}")
        elif len(gaps) == 2:
            ties += 1
            parts.append("B settings equally close")
        lines.append(f"{head}; " + "; ".join(parts) + ".")
    lines.append("")
    lines += _summary_sentences(
        neutral, matched, closer, ties, avg_vs_voted, missing, len(in_grid)
    )
    return lines


def _summary_sentences(neutral, matched, closer, ties, avg_vs_voted, missing, n_values):
    out = []
    done = n_values - missing
    pieces = []
    if neutral[1]:
        pieces.append(
            f"at alpha = 1 (B has no effect) {neutral[0]} of {neutral[1]} are within tolerance"
        )
    for label, (ok, n) in matched.items():
        if n:
            pieces.append(f"with B = {label}, {ok} of {n}")
    if done:
        text = f"**Of {done} stored published values compared, " + "; ".join(pieces) + ".**"
        if missing:
            text += f" ({missing} not run yet.)"
        out.append(text)
    else:
        out.append("No published value in this grid has been run yet.")
    decided = sum(closer.values())
    tie_text = f" ({ties} equally close)" if ties else ""
    if decided:
        counts = ", ".join(f"B = {lb} for {n}" for lb, n in closer.items())
        winner = [lb for lb, n in closer.items() if n == decided]
        if winner:
            out.append(
                f"Where both B settings were run, B = {winner[0]} is closer to the "
                f"published value for all {decided} that differ{tie_text}."
            )
        else:
            out.append(f"Where both B settings were run, the closer one is: {counts}{tie_text}.")
    elif ties:
        out.append(f"Where both B settings were run, they are equally close{tie_text}.")
    if avg_vs_voted:
        gaps = np.array(avg_vs_voted)
        n_avg = int(np.sum(gaps[:, 0] < gaps[:, 1]))
        n_voted = int(np.sum(gaps[:, 1] < gaps[:, 0]))
        mean_avg, mean_voted = gaps.mean(axis=0)
        if mean_avg < mean_voted:
            verdict = "our 'avg' output matches the published 'avg' rows better"
        elif mean_voted < mean_avg:
            verdict = "our 'voted' output matches the published 'avg' rows better"
        else:
            verdict = "our 'avg' and 'voted' outputs are equally close to the published rows"
        out.append(
            f"Against the published rows labelled 'avg' ({len(gaps)} comparisons, each B "
            f"setting counted): {verdict} (mean |difference| {mean_avg:.2f} points for "
            f"'avg', {mean_voted:.2f} for 'voted'; 'avg' closer in {n_avg}, 'voted' in "
            f"{n_voted})."
        )
    return [line for s in out for line in (s, "")][:-1]


def _match_alpha(value, alphas):
    return next(a for a in alphas if math.isclose(a, value))


def _mean_sd(values):
    values = np.asarray(values, dtype=float)
    sd = float(np.std(values, ddof=1)) if values.size > 1 else float("nan")
    return float(np.mean(values)), sd


def _sd(value, digits):
    return NOT_RUN if math.isnan(value) else f"{value:.{digits}f}"


def _algorithm(alpha) -> str:
    return f"ALMA2({alpha:.1f})" if round(alpha, 1) == alpha else f"ALMA2({alpha:g})"


def _b_text(alpha, b_label) -> str:
    return "any" if alpha == 1.0 else b_label


def _positive_int(value, name, default):
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)


def _unique(values):
    out = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


# -- published values -------------------------------------------------------------------


def load_published() -> dict:
    """The stored published values of Tables 1, 3 and 5.

    Returns
    -------
    published : dict
        The parsed ``data/gentile_kernel.json``: ``source``, ``coverage``, ``metrics`` and
        ``cells``, a list of ``{dataset, table, alpha, degree, epoch, output, metric,
        value, note}``. Values absent from the list are not stored.
    """
    return published_values("gentile_kernel.json")


def published_lookup(published: Mapping | None = None) -> dict:
    """Stored published values keyed by ``(dataset, alpha, degree, epoch, output, metric)``.

    ``alpha`` is rounded to 4 decimals; ``degree`` is None for the Gaussian kernel;
    ``output`` is None for corrections.
    """
    published = load_published() if published is None else published
    out = {}
    for c in published["cells"]:
        key = _pub_key(c["dataset"], c["alpha"], c["degree"], c["epoch"], c["output"], c["metric"])
        if key in out:
            raise ValueError(f"published value {key} is stored twice")
        out[key] = c
    return out


def _pub_key(dataset, alpha, degree, epoch, output, metric):
    return (
        dataset,
        round(float(alpha), 4),
        None if degree is None else int(degree),
        int(epoch),
        output,
        metric,
    )
