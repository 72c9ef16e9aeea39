"""The data sets of ``bench_defaults.py --part public`` and ``--part imbalanced``.

Every classification data set shipped inside scikit-learn's and river's packages (no
download) and the project's shared data (``--data-dir``), each as a :class:`DataSet`:
the rows in the file's order, the labels, and which columns hold strings (one-hot
encoded by the benchmark's pipeline). Sets with a train / test split (a9a, USPS,
Letter, MNIST) are joined (train rows first): the benchmark cross-validates. A set of
more than ``max_rows`` rows is subsampled (stratified, seeded), the rows kept in the
file's order.
"""

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

#: scikit-learn's bundled classification sets (``load_iris`` ...)
SKLEARN = ("iris", "wine", "breast-cancer", "digits")
#: the shared data's sets (river's bundled sets are found in its package: river_sets)
SHARED = ("ionosphere", "house-votes", "a9a", "usps", "letter", "mnist")


@dataclass
class DataSet:
    """One classification data set, rows in file order."""

    name: str
    X: object  # ndarray of float or object (strings), or CSR
    y: np.ndarray
    source: str
    categorical: list = field(default_factory=list)  # column indices of strings
    n_file: int = 0  # rows before subsampling
    note: str = ""

    @property
    def shape(self):
        return self.X.shape

    @property
    def n_classes(self):
        return int(np.unique(self.y).size)

    def describe(self):
        n, d = self.X.shape
        sub = f", subsampled from {self.n_file}" if self.n_file > n else ""
        kind = "sparse" if sp.issparse(self.X) else "dense"
        cat = f", {len(self.categorical)} string columns one-hot" if self.categorical else ""
        note = f"; {self.note}" if self.note else ""
        return (
            f"{n} rows{sub}, {d} features ({kind}{cat}), {self.n_classes} classes "
            f"[{self.source}]{note}"
        )


def subsample(ds, max_rows, seed=0):
    """At most ``max_rows`` rows, stratified and seeded, kept in the file's order."""
    n = ds.X.shape[0]
    ds.n_file = ds.n_file or n
    if max_rows is None or n <= max_rows:
        return ds
    from sklearn.model_selection import train_test_split

    keep, _ = train_test_split(np.arange(n), train_size=max_rows, stratify=ds.y, random_state=seed)
    keep = np.sort(keep)
    ds.X, ds.y = ds.X[keep], ds.y[keep]
    return ds


# -- scikit-learn ------------------------------------------------------------------------
def load_sklearn(name):
    from sklearn import datasets

    loader = {
        "iris": datasets.load_iris,
        "wine": datasets.load_wine,
        "breast-cancer": datasets.load_breast_cancer,
        "digits": datasets.load_digits,
    }[name]
    X, y = loader(return_X_y=True)
    return DataSet(name, np.asarray(X, dtype=np.float64), np.asarray(y), "scikit-learn")


# -- river -------------------------------------------------------------------------------
def river_sets():
    """{name: class} of river's classification sets stored in its package: subclasses of
    ``FileDataset`` that are not ``RemoteDataset`` (downloads), with a single-output
    binary or multi-class task. Empty when river is not installed."""
    try:
        from river import datasets
        from river.datasets import base
    except ImportError:
        return {}
    out = {}
    for attr in getattr(datasets, "__all__", dir(datasets)):
        cls = getattr(datasets, attr, None)
        if not (isinstance(cls, type) and issubclass(cls, base.FileDataset)):
            continue
        if issubclass(cls, base.RemoteDataset):
            continue
        try:
            task = cls().task
        except Exception:  # noqa: BLE001 - a set river cannot describe is skipped
            continue
        if task in (base.BINARY_CLF, base.MULTI_CLF):
            out[_river_name(attr)] = cls
    return out


def _river_name(attr):
    """ImageSegments -> image-segments."""
    out = ""
    for i, c in enumerate(attr):
        out += ("-" if i and c.isupper() else "") + c.lower()
    return out


def load_river(name, cls):
    dataset = cls()
    rows, labels, keys, seen = [], [], [], set()
    for x, label in dataset:
        rows.append(x)
        labels.append(label)
        for k in x:
            if k not in seen:
                seen.add(k)
                keys.append(k)
    strings = [j for j, k in enumerate(keys) if any(isinstance(r.get(k), str) for r in rows)]
    if strings:
        X = np.array([[r.get(k, "") for k in keys] for r in rows], dtype=object)
        for j in range(len(keys)):
            if j not in strings:
                X[:, j] = X[:, j].astype(np.float64)
    else:
        X = np.array([[float(r.get(k, 0.0)) for k in keys] for r in rows])
    y = np.asarray(labels)
    if y.dtype == bool:
        y = y.astype(np.int64)
    return DataSet(name, X, y, f"river {cls.__name__}", categorical=strings)


# -- the shared data ---------------------------------------------------------------------
def load_shared(name, data_dir):
    """One set of the shared data; OSError or ValueError when its files are absent."""
    from marginkit import datasets

    if name == "ionosphere":
        X, y = datasets.load_ionosphere(data_dir)
        return DataSet(name, X, y, "shared data, UCI")
    if name == "house-votes":
        X, y = datasets.load_house_votes(data_dir)
        # the loader codes the votes y / n / ? as +1 / -1 / 0: back to the file's strings,
        # for the pipeline's one-hot encoder
        votes = np.array(["n", "?", "y"], dtype=object)[(X + 1).astype(int)]
        return DataSet(name, votes, y, "shared data, UCI", categorical=list(range(X.shape[1])))
    if name == "a9a":
        X, y, X_test, y_test = datasets.load_adult(data_dir)
        return DataSet(
            name,
            sp.vstack([X, X_test]).tocsr(),
            np.concatenate([y, y_test]),
            "shared data, LIBSVM a9a + a9a.t",
        )
    loader = {"usps": datasets.load_usps, "letter": datasets.load_letter}.get(name)
    if name == "mnist":
        loader = datasets.load_mnist
    if loader is None:
        raise ValueError(f"unknown data set {name!r}")
    X, y, X_test, y_test = loader(data_dir)
    return DataSet(
        name,
        np.vstack([X, X_test]),
        np.concatenate([y, y_test]),
        "shared data, train + test",
    )


def names():
    """Every set's name, in the order the benchmark runs them."""
    return [*SKLEARN, *river_sets(), *SHARED]


def load(name, data_dir, max_rows, seed=0):
    """The set ``name``, subsampled to ``max_rows``; OSError / ValueError when absent."""
    if name in SKLEARN:
        ds = load_sklearn(name)
    elif name in SHARED:
        ds = load_shared(name, data_dir)
    else:
        sets = river_sets()
        if name not in sets:
            raise ValueError(f"unknown data set {name!r}")
        ds = load_river(name, sets[name])
    return subsample(ds, max_rows, seed)


# -- the imbalanced problems -------------------------------------------------------------
def _minority(ds, positive, fraction=None, seed=0):
    """Binary labels (1: ``positive``), the positives subsampled to ``fraction`` of the
    negatives when given."""
    y = np.isin(ds.y, positive).astype(np.int64)
    keep = np.arange(y.size)
    if fraction is not None:
        rng = np.random.default_rng(seed)
        pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
        k = min(pos.size, max(int(round(fraction * neg.size)), 10))
        keep = np.sort(np.concatenate([neg, rng.choice(pos, size=k, replace=False)]))
    ds.X, ds.y = ds.X[keep], y[keep]
    return ds


#: (problem, data set, description, how to make it binary)
IMBALANCED = (
    ("digits 0/rest", "digits", "digit 0 against the other nine", {"positive": [0]}),
    ("letter A/rest", "letter", "letter A against the other 25", {"positive": ["A"]}),
    (
        "breast-cancer 10%",
        "breast-cancer",
        "malignant (class 0) subsampled to 10% of the benign rows",
        {"positive": [0], "fraction": 0.1},
    ),
    ("a9a", "a9a", "income > $50K, as it is (24% positive)", {"positive": [1]}),
    (
        "phishing 10%",
        "phishing",
        "phishing sites subsampled to 10% of the others",
        {"positive": [1], "fraction": 0.1},
    ),
    ("shuttle", "shuttle", "river's Shuttle anomalies, as they are (7%)", {"positive": [1]}),
)


def load_imbalanced(problem, data_dir, max_rows, seed=0):
    """One imbalanced binary problem of :data:`IMBALANCED`: the source set loaded whole,
    made binary (and its minority subsampled where said), then subsampled to
    ``max_rows`` (stratified)."""
    _, name, note, spec = next(p for p in IMBALANCED if p[0] == problem)
    ds = load(name, data_dir, None, seed)
    ds = _minority(ds, spec["positive"], spec.get("fraction"), seed)
    ds.n_file = 0
    ds = subsample(ds, max_rows, seed)
    ds.name = problem
    ds.note = f"{note}; {100 * ds.y.mean():.1f}% positive"
    return ds
