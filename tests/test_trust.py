"""marginkit.load on files made by hand: a corpus generated here, from saved models.

Each case of issue 12 (an out-of-bounds index in a voted log, a masked fingerprint, a
checkpoint of other data, a member named many times, types skops trusts but marginkit
does not write, deep nesting, unknown loaders), and one case per check of the loader
and of every state class's ``_check_loaded``: the file is refused with
``UntrustedFileError`` (a ``ValueError``) naming what is wrong, before any compiled code
sees it.
"""

import json
import os
import warnings
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from archives import (
    array_at,
    declare_size,
    edit,
    json_node,
    node_at,
    npy,
    npy_header,
    read_archive,
    set_array,
    set_flags,
    write_archive,
)
from conftest import checkpoint_file as checkpoint
from conftest import make_blobs_pm

import marginkit
from marginkit import (
    ALMAClassifier,
    KernelALMAClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
    MarginPerceptronClassifier,
    PUMMAClassifier,
)
from marginkit.persistence import UntrustedFileError

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

MODELS = {
    "alma": (
        lambda: ALMAClassifier(
            shuffle=False, p=6.0, output="voted", alpha=1.0, max_iter=1, fit_intercept=False
        ),
        False,
    ),
    "alma-fi": (
        lambda: ALMAClassifier(
            shuffle=False, fit_intercept=True, alpha=1.0, output="last", max_iter=1
        ),
        False,
    ),
    "pumma": (
        lambda: PUMMAClassifier(shuffle=False, p=3.0, lam=0.5, max_iter=5, output="voted"),
        False,
    ),
    "mp": (
        lambda: MarginPerceptronClassifier(
            shuffle=False, max_iter=5, output="last", fit_intercept=False
        ),
        False,
    ),
    "kalma": (
        lambda: KernelALMAClassifier(
            shuffle=False,
            kernel="poly",
            degree=2,
            block_size=8,
            alpha=1.0,
            output="last",
            max_iter=1,
        ),
        True,
    ),
    "kromma": (
        lambda: KernelROMMAClassifier(shuffle=False, aggressive=True, max_iter=2, output="last"),
        False,
    ),
    "kpumma": (
        lambda: KernelPUMMAClassifier(
            shuffle=False, lam=0.5, max_iter=3, block_size=8, output="last"
        ),
        False,
    ),
}
CHECKPOINTS = {
    "alma": lambda: ALMAClassifier(
        max_iter=3, shuffle=True, random_state=0, alpha=1.0, output="last", fit_intercept=False
    ),
    "pumma": lambda: PUMMAClassifier(
        shuffle=False, p=3.0, lam=0.5, max_iter=4, random_state=1, output="last"
    ),
    "mp": lambda: MarginPerceptronClassifier(
        max_iter=6, shuffle=True, random_state=2, output="last", fit_intercept=False
    ),
    "kromma": lambda: KernelROMMAClassifier(
        shuffle=False, aggressive=True, max_iter=3, block_size=8, output="last"
    ),
    "kpumma": lambda: KernelPUMMAClassifier(
        shuffle=False, lam=0.5, max_iter=4, block_size=8, output="last"
    ),
}


def data(sparse=False, n=40, d=5, seed=3):
    X, y = make_blobs_pm(n=n, d=d, n_classes=3, seed=seed)
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (make, sparse) in MODELS.items():
            marginkit.save(make().fit(*data(sparse)), folder / f"{name}.skops")
            out[name] = folder / f"{name}.skops"
        for name, make in CHECKPOINTS.items():
            stop = 1 if name == "mp" else 2  # mid-epoch
            out[f"ckpt-{name}"] = checkpoint(make, *data(), folder / f"ckpt-{name}.skops", stop)
    return out


def refused(path, match, error=UntrustedFileError):
    with pytest.raises(error, match=match):
        marginkit.load(path)


# -- the cases of issue 12 ---------------------------------------------------------------


@pytest.mark.parametrize("index", [2147483647, 301, 310, 5, -1])
def test_out_of_bounds_logged_coordinates_are_refused(files, tmp_path, index):
    """The file chose where the voted output writes: now it chooses nothing."""

    def change(schema, members):
        path = ("estimator", "_states", 1, "b_indices", 0)
        a = array_at(schema, members, *path)
        a[3] = index
        set_array(schema, members, path, a)

    bad = edit(files["alma"], tmp_path / "bad.skops", change)
    refused(bad, rf"_states\[1\]\.b_indices\[0\] holds {index}, outside \[0, 5\)")


def test_a_valid_voted_model_still_loads_and_votes(files):
    X, y = data()
    again = marginkit.load(files["alma"])
    assert again.output == "voted" and again.score(X, y) > 0.5


def test_masked_fingerprint_is_refused(files, tmp_path):
    """A 0-d fully masked array compared as ``masked``, whose truth is False."""

    def change(schema, members):
        node = node_at(schema, "estimator", "_resume")
        node["content"]["fingerprint"] = {
            "__class__": "MaskedArray",
            "__module__": "numpy.ma.core",
            "__loader__": "MaskedArrayNode",
            "content": {"data": json_node(0), "mask": json_node(True)},
        }

    bad = edit(files["ckpt-alma"], tmp_path / "bad.skops", change)
    refused(bad, "does not trust: numpy.ma.core.MaskedArray")
    X, y = data()
    with pytest.raises(UntrustedFileError, match="MaskedArray"):
        CHECKPOINTS["alma"]().fit(X, y, checkpoint=bad)


def test_fingerprint_of_another_kind_is_refused(files, tmp_path):
    def change(schema, members):
        node_at(schema, "estimator", "_resume")["content"]["fingerprint"] = json_node(0)

    refused(edit(files["ckpt-alma"], tmp_path / "b.skops", change), "a SHA-256 digest")


@pytest.mark.parametrize("what", ["pos", "n"])
def test_checkpoint_orders_out_of_range_are_refused(files, tmp_path, what):
    """The epochs' orders come from a generator whose position numpy does not check."""

    def change(schema, members):
        orders = node_at(schema, "estimator", "_resume", "orders")
        if what == "pos":
            orders["content"]["content"]["start"]["content"][1] = json_node(10**9)
        else:
            orders["content"]["content"]["n"] = json_node(2**40)

    bad = edit(files["ckpt-alma"], tmp_path / "bad.skops", change)
    X, y = data()
    if what == "pos":
        refused(bad, r"_resume\['orders'\]\.start position must be <= 624")
    else:
        marginkit.load(bad)  # any number of rows, until it meets data
        with pytest.raises(
            UntrustedFileError, match=r"orders'\]\.n must be 40, got 1099511627776"
        ):
            CHECKPOINTS["alma"]().fit(X, y, checkpoint=bad)


def test_checkpoint_of_other_data_with_a_forged_fingerprint_is_refused(tmp_path):
    """A 5-feature state planted for 8-feature data, with the victim's fingerprint."""
    from marginkit._checkpoints import fingerprint as _fingerprint

    X5, y5 = make_blobs_pm(n=30, d=5, n_classes=2, seed=1)
    X8, y8 = make_blobs_pm(n=200, d=8, n_classes=2, seed=2)

    def make():
        return ALMAClassifier(
            max_iter=3, shuffle=True, random_state=0, alpha=1.0, output="last", fit_intercept=False
        )

    path = checkpoint(make, X5, y5, tmp_path / "c.skops")
    victim = make()
    X8v, y8v = victim._validate_Xy(X8, y8, reset=True)

    def forge(schema, members):
        node = node_at(schema, "estimator", "_resume", "fingerprint")
        node["content"] = json.dumps(_fingerprint(X8v, y8v))

    edit(path, path, forge)
    with pytest.raises(ValueError, match="checkpoint of training on 5 features, not on"):
        make().fit(X8, y8, checkpoint=path)
    X5b, _ = make_blobs_pm(n=200, d=5, n_classes=2, seed=2)
    X5bv, y5bv = victim._validate_Xy(X5b, y8, reset=True)
    edit(
        path,
        path,
        lambda s, m: node_at(s, "estimator", "_resume", "fingerprint").update(
            content=json.dumps(_fingerprint(X5bv, y5bv))
        ),
    )
    # the width fits; the rows do not: its orders are those of 30 rows
    with pytest.raises(
        UntrustedFileError, match=r"a checkpoint of other data: .*orders'\]\.n must be 200, got 30"
    ):
        make().fit(X5b, y8, checkpoint=path)


def test_checkpoint_of_other_classes_or_kind_of_data_is_refused(files, tmp_path):
    from marginkit._checkpoints import fingerprint as _fingerprint

    X, y = data()
    est = CHECKPOINTS["kromma"]()
    for name, X2, y2, match in [
        ("ckpt-alma", X, np.where(y == 2, 5, y), "on the classes"),
        ("ckpt-kromma", sp.csr_matrix(X), y, "training on dense data, not on these sparse"),
    ]:
        Xv, yv = est._validate_Xy(X2, y2, reset=True)

        def forge(schema, members, Xv=Xv, yv=yv):
            node = node_at(schema, "estimator", "_resume", "fingerprint")
            node["content"] = json.dumps(_fingerprint(Xv, yv))

        bad = edit(files[name], tmp_path / f"{name}.skops", forge)
        with pytest.raises(ValueError, match=match):
            CHECKPOINTS[name[5:]]().fit(X2, y2, checkpoint=bad)


@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_checkpoint_of_fewer_rows_with_a_forged_fingerprint_is_refused(tmp_path, name):
    """The progress of a fit on 30 rows (orders, slacks, caches, the rows of x+ and x-)
    does not resume on 40, whatever fingerprint the file holds."""
    from marginkit._checkpoints import fingerprint as _fingerprint

    X, y = data(n=40)
    path = checkpoint(CHECKPOINTS[name], X[:30], y[:30], tmp_path / "c.skops")
    Xv, yv = CHECKPOINTS[name]()._validate_Xy(X, y, reset=True)
    edit(
        path,
        path,
        lambda s, m: node_at(s, "estimator", "_resume", "fingerprint").update(
            content=json.dumps(_fingerprint(Xv, yv))
        ),
    )
    with pytest.raises(UntrustedFileError, match="a checkpoint of other data: .*40"):
        CHECKPOINTS[name]().fit(X, y, checkpoint=path)


@pytest.mark.parametrize(
    ("name", "path", "match"),
    [
        ("ckpt-kpumma", ("_resume", "cache_seen"), r"cache_seen'\] holds 100000"),
        ("ckpt-kpumma", ("_kstate", "pos_row"), r"_kstate.pos_row holds 40, outside \[-1, 40\)"),
        ("ckpt-pumma", ("_resume", "order"), r"must be an order of the 40 rows"),
        ("ckpt-pumma", ("_states", 0, "pi"), r"pi \(row of x\+\) must be <= 39, got 40"),
        ("ckpt-alma", ("_resume", "fewest"), r"fewest'\] must hold counts of corrections"),
        ("ckpt-kromma", ("_resume", "at_start"), r"at_start'\] holds -1, outside"),
    ],
)
def test_checkpoint_progress_is_checked_against_itself(files, tmp_path, name, path, match):
    def change(schema, members):
        full = ("estimator", *path)
        a = array_at(schema, members, *full)
        if path[-1] == "pi":
            a[2] = 40
        elif path[-1] == "pos_row":
            a[0] = 40
        elif path[-1] == "cache_seen":
            a[0] = 100000
        elif path[-1] in ("fewest", "at_start"):
            a[0] = -1
        else:
            a[0] = a[1]
        set_array(schema, members, full, a)

    refused(edit(files[name], tmp_path / "bad.skops", change), match)


def test_checkpoint_of_a_valid_file_resumes(files, tmp_path):
    X, y = data()
    for name, make in CHECKPOINTS.items():
        path = tmp_path / f"{name}.skops"
        path.write_bytes(files[f"ckpt-{name}"].read_bytes())
        resumed = make().fit(X, y, checkpoint=path)
        np.testing.assert_array_equal(resumed.predict(X), make().fit(X, y).predict(X))


# -- what skops trusts and marginkit does not write ----------------------------------------


def test_scikit_learn_estimators_are_refused(tmp_path):
    import skops.io as sio
    from sklearn.preprocessing import FunctionTransformer

    path = tmp_path / "f.skops"
    payload = {"format": "marginkit-model", "format_version": 1, "marginkit_version": "0.1.0"}
    sio.dump({**payload, "estimator": FunctionTransformer(func=np.add)}, path)
    refused(path, r"does not trust: sklearn\.preprocessing\._function_transformer")


def test_masked_and_void_arrays_are_refused(files, tmp_path):
    import skops.io as sio

    est = marginkit.load(files["alma"])
    est.classes_ = np.ma.masked_array(est.classes_, mask=[True, False, False])
    path = tmp_path / "masked.skops"
    payload = {"format": "marginkit-model", "format_version": 1, "marginkit_version": "0.1.0"}
    sio.dump({**payload, "estimator": est}, path)
    refused(path, r"does not trust: numpy\.ma\.MaskedArray \(as MaskedArrayNode\)")

    def void(schema, members):
        members[node_at(schema, "estimator", "classes_")["file"]] = npy_header("|V8", (2**62,))

    refused(edit(files["alma"], tmp_path / "void.skops", void), r"classes_'\] is an array of \|V8")


def test_a_function_as_kernel_is_refused(files, tmp_path):
    """save refuses callable kernels; a file naming one is refused too."""
    add = {"__class__": "add", "__module__": "numpy", "__loader__": "FunctionNode"}
    for path in [("kernel",), ("_kstate", "kernel", "kernel")]:
        bad = edit(files["kalma"], tmp_path / "k.skops", lambda s, m, p=path: replace(s, p, add))
        refused(bad, r"does not trust: numpy\.add \(as FunctionNode\)")


def test_deep_nesting_is_refused(files, tmp_path):
    schema, members = read_archive(files["alma"])
    deep = "[" * 100_000 + "]" * 100_000
    path = write_archive(tmp_path / "deep.skops", schema, members, raw_schema=deep)
    refused(path, "nested too deeply")
    node = json_node(1)
    for _ in range(100):
        node = {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode",
                "content": [node]}  # fmt: skip
    replace(schema, ("verbose",), node)
    refused(write_archive(tmp_path / "deeper.skops", schema, members), "nested more than 64 deep")


def test_unknown_loaders_are_refused(files, tmp_path):
    def change(schema, members):
        node_at(schema, "estimator")["__loader__"] = "EvilNode"

    refused(edit(files["alma"], tmp_path / "e.skops", change), r"ALMAClassifier \(as EvilNode\)")


# -- editing helpers --------------------------------------------------------------------------


def _parent(schema, path):
    parent = node_at(schema, "estimator", *path[:-1])
    if parent["__loader__"] in ("ObjectNode", "RandomStateNode"):
        parent = parent["content"]
    return parent


def replace(schema, path, node):
    parent = _parent(schema, path)
    if parent["__loader__"] == "DictNode" and path[-1] not in parent["content"]:
        add(schema, path, node)
    parent["content"][path[-1]] = node


def drop(schema, path):
    parent = _parent(schema, path)
    del parent["content"][path[-1]]
    if parent["__loader__"] == "DictNode":
        parent["key_types"]["content"].pop()


def add(schema, path, node):
    parent = _parent(schema, path)
    parent["content"][path[-1]] = node
    parent["key_types"]["content"].append(dict(parent["key_types"]["content"][0]))


def array_node(members, a):
    name = f"new{len(members)}.npy"
    members[name] = npy(a)
    return {"__class__": "ndarray", "__module__": "numpy", "__loader__": "NdArrayNode",
            "type": "numpy", "file": name}  # fmt: skip


def item(path, index, value):
    """Set one entry of the array at ``path``."""

    def change(schema, members):
        a = array_at(schema, members, "estimator", *path)
        a[index] = value
        set_array(schema, members, ("estimator", *path), a)

    return change


def to(path, make):
    """Store ``make(old array)`` at ``path``."""

    def change(schema, members):
        old = array_at(schema, members, "estimator", *path)
        set_array(schema, members, ("estimator", *path), make(old))

    return change


def value(path, v):
    """Put the JSON scalar ``v`` (or the array ``v``, in a new member) at ``path``."""

    def change(schema, members):
        node = array_node(members, v) if isinstance(v, np.ndarray) else json_node(v)
        replace(schema, path, node)

    return change


def without(path):
    return lambda schema, members: drop(schema, path)


def plus(path, v=1):
    return lambda schema, members: add(schema, path, json_node(v))


S0 = ("_states", 0)
RS = ("_resume", "rng", "state")
START = ("_resume", "orders", "start")
NEVER = object()


def _longer(a):
    return np.concatenate([a, a[-1:]])


# (file, change, message): one case per check of the loaded states and estimators
CASES = [
    # PNormState
    ("alma", plus((*S0, "w")), r"_states\[0\] has attributes that marginkit does not write: w"),
    ("alma", without((*S0, "u")), r"_states\[0\] lacks u"),
    ("alma", value((*S0, "d"), 6), r"_states\[0\]\.d must be 5, got 6"),
    ("alma", value((*S0, "d"), "5"), r"_states\[0\]\.d must be an integer, got str"),
    ("alma", value((*S0, "d"), True), r"_states\[0\]\.d must be an integer, got bool"),
    ("alma", value((*S0, "p"), 3.0), r"_states\[0\]\.p must be 6\.0, got 3\.0"),
    ("alma", value((*S0, "p"), "6"), r"_states\[0\]\.p must be a real number, got str"),
    ("alma", to((*S0, "v"), _longer), r"_states\[0\]\.v must have shape \(5\), got \(6,\)"),
    ("alma", to((*S0, "v"), lambda a: a.astype(np.float32)), r"v must be an array of float64"),
    ("alma", value((*S0, "v"), 0), r"_states\[0\]\.v must be a numpy array of float64, got int"),
    ("alma", item((*S0, "v"), 0, np.nan), r"_states\[0\]\.v holds values that are not finite"),
    ("alma-fi", to((*S0, "g"), lambda a: np.zeros(6)), r"\.g must have shape \(0\), got \(6,\)"),
    ("alma", item((*S0, "fs"), 0, -1.0), r"\.fs holds a scale, norm or count that is not pos"),
    ("alma", item((*S0, "ist"), 0, 1000), r"ist \(k: corrections \+ 1\) must be \d+, got 1000"),
    ("alma", item((*S0, "ist"), 1, -1), r"ist \(corrections\) must be >= 0, got -1"),
    ("alma", item((*S0, "ist"), 4, 0), r"ist \(trials\) must be >= \d+, got 0"),
    ("alma", item((*S0, "ist"), 3, 2), r"ist \(budget flag\) must be <= 1, got 2"),
    ("alma", item((*S0, "ist"), 5, 2), r"ist \(log flag\) must be <= 1, got 2"),
    ("alma", item((*S0, "ist"), 2, 10**6), r"ist \(log fill\) must be <= \d+, got 1000000"),
    ("alma", to((*S0, "h_coef"), lambda a: a[:-1]), r"h_coef must hold the \d+ corrections"),
    ("alma", to((*S0, "h_start"), lambda a: a.astype(np.int32)), r"h_start must be an array"),
    ("alma", item((*S0, "h_count"), 0, -1), r"h_count holds -1, outside \[0, "),
    ("alma", item((*S0, "h_count"), 0, 10**6), r"h_count must add up to the \d+ trials, not"),
    ("alma", item((*S0, "h_stop"), 0, 10**6), r"h_start and h_stop must span their block"),
    ("alma", value((*S0, "b_first"), 0), r"b_indices b_data and b_first must be lists of one"),
    ("alma", without((*S0, "b_first", 0)), r"b_data and b_first must be lists of one length"),
    ("alma", item((*S0, "b_data", 0), 0, np.inf), r"b_data\[0\] holds values that are not fin"),
    ("alma", to((*S0, "b_data", 0), _longer), r"b_data\[0\] must have shape \(\d+\), got"),
    ("alma", value((*S0, "b_first", 0), 1), r"_states\[0\]\.b_first must rise from 0, got \[1\]"),
    (
        "alma-fi",
        to((*S0, "b_indices", 0), lambda a: np.zeros(3, np.int32)),
        r"must have shape \(0",
    ),
    ("alma-fi", value((*S0, "b_first"), np.zeros(1)), r"b_data and b_first must be lists"),
    # PUMMAState
    ("pumma", to((*S0, "pf"), _longer), r"_states\[0\]\.pf must have shape \(9\)"),
    ("pumma", item((*S0, "pf"), 7, 0.0), r"pf must hold the weights of x\+ and x-, > 0"),
    ("pumma", item((*S0, "pi"), 0, 6), r"pi \(nonzeros of x\+\) must be <= 5, got 6"),
    ("pumma", item((*S0, "pi"), 1, -1), r"pi \(nonzeros of x-\) must be >= 0, got -1"),
    ("pumma", item((*S0, "pi"), 2, -2), r"pi \(row of x\+\) must be >= -1, got -2"),
    ("pumma", item((*S0, "pi"), 3, -5), r"pi \(row of x-\) must be >= -1, got -5"),
    ("pumma", item((*S0, "pi"), 4, 4), r"pi \(classes seen\) must be <= 3, got 4"),
    ("pumma", item((*S0, "pi"), 5, -1), r"pi \(conflicts\) must be >= 0, got -1"),
    ("pumma", item((*S0, "pos_idx"), 0, 5), r"_states\[0\]\.pos_idx holds 5, outside \[0, 5\)"),
    ("pumma", item((*S0, "neg_val"), 0, np.nan), r"neg_val holds values that are not finite"),
    ("pumma", to((*S0, "newton_count"), _longer), r"newton_count must have shape \(1\)"),
    ("pumma", to((*S0, "h_sigma"), _longer), r"h_sigma must have shape"),
    # RowStore
    ("kalma", item(("_kstate", "store", "indptr"), 1, 10**6), r"store\.indptr must rise from"),
    ("kalma", item(("_kstate", "store", "indices"), 0, 5), r"store\.indices holds 5, outside"),
    ("kalma", item(("_kstate", "store", "indices"), 1, 0), r"indices must be sorted within"),
    ("kalma", item(("_kstate", "store", "data"), 0, np.nan), r"store\.data holds values th"),
    ("kalma", value(("_kstate", "store", "n"), 10**6), r"store\.indptr must have shape"),
    ("kalma", value(("_kstate", "store", "n_features"), 6), r"store\.n_features must be 5, g"),
    ("kalma", value(("_kstate", "store", "sparse"), 1), r"store\.sparse must be a bool, got"),
    ("kalma", value(("_kstate", "store", "sparse"), False), r"_kstate\.store lacks rows"),
    ("kromma", to(("_kstate", "store", "rows"), lambda a: a[:, :-1]), r"store\.rows must have sh"),
    # a store whose examples came back: entries mapped onto rows
    ("kromma", item(("_kstate", "store", "vec"), 0, 10**6), r"store\.vec holds 1000000, outs"),
    ("kromma", to(("_kstate", "store", "vec"), lambda a: a[:-1]), r"store\.vec must have shape"),
    ("kromma", to(("_kstate", "store", "vec"), np.zeros_like), r"vec must map the entries onto"),
    ("kromma", value(("_kstate", "store", "held"), 10**6), r"store\.held must be <= \d+, got"),
    ("kromma", item(("_kstate", "store", "keys"), 0, -2), r"store\.keys holds -2, outside"),
    ("kromma", to(("_kstate", "store", "keys"), _longer), r"store\.keys must have shape"),
    # KernelState
    (
        "kalma",
        value(("_kstate", "kernel"), "poly"),
        r"_kstate\.kernel must be of type Kernel, got str",
    ),
    ("kalma", value(("_kstate", "n_problems"), 4), r"_kstate\.n_problems must be 3, got 4"),
    ("kalma", to(("_kstate", "store", "inv"), _longer), r"_kstate\.store\.inv must have shape"),
    (
        "kpumma",
        item(("_kstate", "NEG", "sq"), 0, np.nan),
        r"_kstate\.NEG\.sq holds values that are not finite",
    ),
    ("kalma", item(("_kstate", "index"), 0, -1), r"_kstate\.index holds -1, outside"),
    ("kalma", item(("_kstate", "A"), 0, np.inf), r"_kstate\.A holds values that are not finite"),
    ("kalma", to(("_kstate", "mask"), lambda a: a.astype(np.int8)), r"_kstate\.mask must be an"),
    ("kalma", value(("_kstate", "V"), np.zeros((3, 3))), r"_kstate\.V must be None, got"),
    ("kromma", to(("_kstate", "V"), lambda a: a[:-1]), r"_kstate\.V must have shape"),
    (
        "kalma",
        item(("_kstate", "s"), 0, 0.0),
        r"_kstate\.s must be positive, and norm2 not negative",
    ),
    ("kalma", item(("_kstate", "k"), 0, 10**6), r"_kstate\.k must count the vectors of each"),
    ("kalma", value(("_kstate", "n_trials"), -1), r"_kstate\.n_trials must be >= 0, got -1"),
    ("kalma", value(("_kstate", "n_seen"), -1), r"_kstate\.n_seen must be >= 0, got -1"),
    ("kalma", value(("_kstate", "n_kernel_evals"), 1.5), r"n_kernel_evals must be an integer"),
    ("kalma", item(("_kstate", "hcount"), (0, 0), 10**6), r"hcount must add up to the \d+ tr"),
    ("kalma", to(("_kstate", "hcount"), lambda a: a[:-1]), r"_kstate\.hcount must have shape"),
    ("kalma", plus(("_kstate", "extra")), r"_kstate has attributes that marginkit does not"),
    # Kernel
    ("kalma", value(("_kstate", "kernel", "kernel"), "sigmoid"), r"kernel must be one of line"),
    ("kalma", value(("_kstate", "kernel", "gamma"), 0.0), r"kernel\.gamma must be > 0, got 0"),
    ("kalma", value(("_kstate", "kernel", "degree"), 0), r"kernel\.degree must be >= 1, got 0"),
    ("kalma", value(("_kstate", "kernel", "coef0"), "1"), r"coef0 must be a real number, got"),
    ("kalma", value(("_kstate", "kernel", "coef0"), float("inf")), r"coef0 must be finite"),
    ("kalma", plus(("_kstate", "kernel", "f")), r"kernel has attributes that marginkit does"),
    ("kalma", value(("_kstate", "kernel", "gamma"), 2.0), r"_kstate\.kernel\.gamma must be"),
    # PairState
    ("kpumma", value(("_kstate", "pos_ref"), 0), r"_kstate\.pos_ref must be a list of 3 ref"),
    ("kpumma", value(("_kstate", "pos_ref", 0), 1), r"pos_ref\[0\] must be the \(store, atom\)"),
    ("kpumma", value(("_kstate", "pos_ref", 0, 0), 2), r"pos_ref\[0\] store must be <= 1"),
    ("kpumma", value(("_kstate", "neg_ref", 1, 1), 10**6), r"neg_ref\[1\] atom must be <= \d"),
    ("kpumma", item(("_kstate", "seen"), 0, 4), r"_kstate\.seen holds 4, outside \[0, 4\)"),
    ("kpumma", item(("_kstate", "pos_row"), 0, -2), r"_kstate\.pos_row holds -2, outside"),
    ("kpumma", item(("_kstate", "conflicts"), 0, -2), r"_kstate\.conflicts holds -2, outside"),
    ("kpumma", item(("_kstate", "neg_weight"), 1, 0.0), r"pos_weight and neg_weight must be > 0"),
    ("kpumma", value(("_kstate", "NEG", "n"), 0), r"_kstate\.NEG\.rows must have shape|NEG\.n"),
    ("kpumma", value(("_kstate", "normalize"), 0), r"_kstate\.normalize must be a bool, got"),
    ("kpumma", value(("_kstate",), 0), r"_kstate must be of type PairState, got int"),
    ("kpumma", item(("_kstate", "Gp"), 0, np.nan), r"_kstate\.Gp holds values that are not"),
    ("kpumma", value(("_kstate", "kernel", "gamma"), 2.0), r"_kstate\.kernel\.gamma must be"),
    # the estimator
    ("alma", without(("alpha",)), r"the model lacks the parameters alpha"),
    ("alma", value(("alpha",), 2.0), r"parameters: The 'alpha' parameter of ALMAClassifier"),
    ("alma", without(("n_trials_",)), r"the model is fitted but lacks n_trials_"),
    ("alma", plus(("predict",)), r"has attributes that marginkit does not write: \['predict'\]"),
    ("alma", value(("classes_",), 3), r"classes_ must be an array of numbers or strings"),
    ("alma", to(("classes_",), lambda a: a.reshape(1, -1)), r"classes_ must have shape \(any\)"),
    ("alma", to(("classes_",), lambda a: np.array([0.0, 1.0, np.nan])), r"classes_ holds val"),
    ("alma", to(("classes_",), lambda a: a[:1]), r"classes_ must hold two classes or more"),
    ("alma", to(("classes_",), lambda a: a[::-1].copy()), r"classes_ must be sorted and uni"),
    ("alma", value(("n_features_in_",), 0), r"n_features_in_ must be >= 1, got 0"),
    ("alma", value(("feature_names_in_",), np.array(["a"] * 5)), r"feature_names_in_ must b"),
    ("alma", value(("n_corrections_",), 10**6), r"n_corrections_ must be \d+, what the states"),
    ("alma", to(("n_corrections_per_class_",), lambda a: a + 1), r"n_corrections_per_class_"),
    ("alma", value(("n_trials_",), "40"), r"n_trials_ must be 40, what the states count, got"),
    ("alma", plus(("_resume",)), r"_resume must be a dict, got int"),
    ("alma", value(("p_",), 1.0), r"p_ must be >= 2, got 1\.0"),
    ("alma", value(("p_",), 3.0), r"_fold_below must be [\d.e-]+, got [\d.e-]+"),
    ("mp", value(("p_",), 3.0), r"p_ must be 2\.0, got 3\.0"),
    # R_ > 0 says the model has a bias coordinate: the states' width must agree
    ("alma-fi", value(("R_",), 0.0), r"_states\[0\]\.d must be 5, got 6"),
    ("alma", value(("R_",), 1.0), r"_states\[0\]\.d must be 6, got 5"),
    ("alma", value(("_fold_below",), 0.5), r"_fold_below must be [\d.e-]+, got 0\.5"),
    ("alma", without(("_states", 2)), r"_states must be a list of 3 states"),
    ("alma", value(("B_",), -1.0), r"B_ must be > 0, got -1\.0"),
    ("kalma", value(("B_",), 0.0), r"B_ must be > 0, got 0\.0"),
    ("kalma", value(("_kstate", "normalize"), False), r"_kstate\.normalize must be True"),
    ("kalma", value(("gamma_",), -1.0), r"gamma_ must be > 0, got -1\.0"),
    ("alma", value(("_exponent",), 3), r"_exponent must be 0, got 3"),
    ("mp", value(("_exponent",), 5000), r"_exponent must be <= 1100, got 5000"),
    ("kalma", value(("_exponent",), 1.5), r"_exponent must be an integer, got float"),
    ("kalma", value(("_fold_below",), 1e-10), r"_fold_below must be 1e-100, got 1e-10"),
    ("kalma", value(("n_kernel_evaluations_",), 0), r"n_kernel_evaluations_ must be \d+, what"),
    ("pumma", value(("n_epochs_",), -1), r"n_epochs_ must be >= 0, got -1"),
    ("pumma", value(("converged_",), 1), r"converged_ must be a bool, got int"),
    ("pumma", to(("margin_",), _longer), r"margin_ must have shape \(3\)"),
    ("pumma", value(("n_newton_steps_",), 10**6), r"n_newton_steps_ must be \d+, what the st"),
    ("kpumma", value(("n_conflicts_",), 1), r"n_conflicts_ must be 0, what the states count"),
    ("mp", value(("radius_",), 0.0), r"radius_ must be > 0, got 0\.0"),
    ("mp", value(("_max_updates",), 2**64), r"_max_updates must be <= \d+, got"),
    ("kalma", value(("_kstate", "n_problems"), True), r"_kstate\.n_problems must be 3, got True"),
    ("kalma", value(("_kstate", "n_seen"), 2**64), r"_kstate\.n_seen must be <= \d+"),
    ("mp", item(("gamma_guess_",), 0, -1.0), r"gamma_guess_ must be > 0"),
    ("mp", item(("n_restarts_",), 0, -1), r"n_restarts_ holds -1, outside"),
    ("mp", value(("_gamma",), 0.0), r"_gamma must be > 0, got 0\.0"),
    ("mp", value(("_max_updates",), -2), r"_max_updates must be >= -1, got -2"),
    ("mp", item(("_updates_before",), 0, 5), r"n_corrections_per_class_ must be"),
    # checkpoints' progress
    ("ckpt-alma", value(("_resume", "epoch"), 4), r"_resume\['epoch'\] must be <= 3, got 4"),
    ("ckpt-alma", value(("_resume", "pos"), 40), r"_resume\['pos'\] must be <= 39, got 40"),
    ("ckpt-alma", plus(("_resume", "x")), r"_resume has attributes that marginkit does not write"),
    (
        "ckpt-alma",
        value(("_resume", "orders"), 0),
        r"_resume\['orders'\] must be of type EpochOrders",
    ),
    ("ckpt-alma", value((*START,), 0), r"orders'\]\.start must be the state of a Mersenne"),
    ("ckpt-alma", to((*START, 0), lambda a: a[:-1]), r"start key must have shape \(624\)"),
    ("ckpt-alma", value((*START, 2), 2), r"start has_gauss must be <= 1, got 2"),
    ("ckpt-alma", value((*START, 3), float("nan")), r"start cached gaussian must be finite"),
    ("ckpt-alma", value(("_resume", "orders", "shuffle"), False), r"shuffle must be True"),
    ("ckpt-alma", value(("_resume", "orders", "n_epochs"), 2), r"n_epochs must be 3, got 2"),
    ("ckpt-kromma", value(("_resume", "orders", "start"), 0), r"orders'\]\.start must be None"),
    ("ckpt-kromma", to(("_resume", "cache_P"), lambda a: a[:, :2]), r"cache_P'\] must have sh"),
    ("ckpt-pumma", value(("_resume", "slacks"), 0), r"_resume\['slacks'\] must be a list of 3"),
    ("ckpt-pumma", without(("_resume", "order")), r"_resume lacks the order of the epoch it is"),
    ("ckpt-pumma", without(("_resume", "changes")), r"_resume lacks the 'changes' of the epoch"),
    ("ckpt-pumma", value(("_resume", "changes"), -1), r"_resume\['changes'\] must be >= 0"),
    ("ckpt-pumma", value(("_resume", "done"), 0), r"_resume\['done'\] must be a bool, got int"),
    ("ckpt-pumma", value(("_resume", "rng"), 0), r"_resume\['rng'\] must be of type RandomState"),
    ("ckpt-pumma", value((*RS, "pos"), 625), r"\['rng'\] position must be <= 624, got 625"),
    ("ckpt-pumma", to((*RS, "key"), lambda a: a[:-1]), r"\['rng'\] key must have shape \(624"),
    ("ckpt-pumma", value(("_resume", "rng", "bit_generator"), "PCG64"), r"not the state of a M"),
    ("ckpt-mp", value(("_resume", "problem"), 4), r"_resume\['problem'\] must be <= 3, got 4"),
    ("ckpt-mp", value(("_resume", "converged"), 0), r"converged'\] must list the \d problems"),
    ("ckpt-mp", without(("_resume", "before")), r"_resume lacks the 'before' of the epoch"),
    ("ckpt-kpumma", value(("_resume", "slack"), 0), r"_resume\['slack'\] must be a numpy arr"),
]


@pytest.mark.parametrize(("name", "change", "match"), CASES)
def test_loaded_states_are_checked(files, tmp_path, name, change, match):
    refused(edit(files[name], tmp_path / "bad.skops", change), match)


# -- the reader: archives, nodes and members ---------------------------------------------------

ARRAY = {"__class__": "ndarray", "__module__": "numpy", "__loader__": "NdArrayNode"}


def node(path, make):
    """Replace the node at ``path`` by ``make(old node)``."""

    def change(schema, members):
        replace(schema, path, make(node_at(schema, "estimator", *path)))

    return change


def member(path, data):
    """Put the bytes ``data`` in the member of the array at ``path``."""

    def change(schema, members):
        members[node_at(schema, "estimator", *path)["file"]] = data

    return change


def header_then(descr, shape, data=b"", fortran=False):
    return npy_header(descr, shape, fortran) + data


TYPE_STR = {"__class__": "str", "__module__": "builtins", "__loader__": "TypeNode"}


def _keys(n):
    """The number of keys of the dict node ``n`` (its attributes, for a state)."""
    return len(n["content"]["key_types"]["content"])


NODE_CASES = [
    (node(("verbose",), lambda n: []), r"malformed node at .*\['verbose'\]: a list, not a node"),
    (node(("verbose",), lambda n: {"content": "0"}), r"no __loader__, __module__ or __class__"),
    (
        node(("_states", 0), lambda n: {**n, "content": {**n["content"], "content": []}}),
        r"\['_states'\]\[0\]: a dict without content",
    ),
    (
        node(("_states", 0), lambda n: {**n, "content": {**n["content"], "key_types": None}}),
        r"a dict without the types of its keys",
    ),
    (
        node(
            ("_states", 0),
            lambda n: {
                **n,
                "content": {
                    **n["content"],
                    "key_types": {
                        **n["content"]["key_types"],
                        "content": [json_node(1)] * _keys(n),
                    },
                },
            },
        ),
        r"a dict key type that is not a type",
    ),
    (
        node(
            ("_states", 0),
            lambda n: {
                **n,
                "content": {
                    **n["content"],
                    "key_types": {
                        **n["content"]["key_types"],
                        "content": [{**TYPE_STR, "__class__": "int"}] * _keys(n),
                    },
                },
            },
        ),
        r"does not trust: builtins\.int \(as a dict key\)",
    ),
    (node(("_states",), lambda n: {**n, "content": {}}), r"a builtins\.list without content"),
    (
        node(("_states",), lambda n: {**n, "__class__": "deque", "__module__": "collections"}),
        r"does not trust: collections\.deque",
    ),
    (node(("verbose",), lambda n: {**n, "is_json": False}), r"a JSON node without JSON content"),
    (node(("verbose",), lambda n: {**n, "content": "{"}), r"a JSON node whose content is not J"),
    (node(("verbose",), lambda n: {**n, "content": "[1]"}), r"a JSON list, not a scalar"),
    (node(("verbose",), lambda n: {**n, "__class__": "bytes"}), r"does not trust: builtins\.by"),
    (
        node(("_states", 0), lambda n: {**n, "content": json_node(1)}),
        r"a marginkit\._core\.state\.PNormState without a dict of attributes",
    ),
    (
        node(("classes_",), lambda n: {k: v for k, v in n.items() if k != "file"}),
        r"an array without its member",
    ),
    (node(("classes_",), lambda n: {**n, "file": "nope.npy"}), r"names a member the file lacks"),
    (
        node(("p_",), lambda n: {**ARRAY, "type": "numpy", "file": "0.npy"}),
        r"member 0\.npy is named twice \(the file\['estimator'\]\['classes_'\] and",
    ),
    (node(("classes_",), lambda n: {**n, "type": "pickle"}), r"an array stored as 'pickle'"),
    (
        node(("classes_",), lambda n: {**n, "__module__": "pandas", "__class__": "DataFrame"}),
        r"does not trust: pandas\.DataFrame",
    ),
    (node(("classes_",), lambda n: {**n, "__class__": "float64"}), r"is not a numpy float64"),
    (
        node(("classes_",), lambda n: {**ARRAY, "type": "json", "content": {}}),
        r"an object array that is not a list",
    ),
    (
        node(("classes_",), lambda n: {**ARRAY, "type": "json", "content": [json_node(1)]}),
        r"does not trust: numpy\.ndarray of objects other than strings",
    ),
    (
        node(
            ("classes_",),
            lambda n: {
                **ARRAY,
                "type": "json",
                "content": [json_node("a")],
                "shape": json_node(2),
            },
        ),
        r"an array of strings that is not one list",
    ),
    (member(("classes_",), b"not an npy file"), r"classes_'\] is not a numpy array member"),
    (member(("classes_",), b"\x93NUMPY\x03\x00" + bytes(20)), r"npy format \(3, 0\) is not"),
    (member(("classes_",), header_then("<f8", (1, 1), bytes(8), True)), r"is in Fortran order"),
    (member(("classes_",), header_then("|O", (1,), bytes(8))), r"is an array of object"),
    (member(("classes_",), header_then([("a", "<f8")], (1,), bytes(8))), r"is an array of \[\("),
    (member(("classes_",), header_then(">f8", (1,), bytes(8))), r"is an array of >f8"),
    (member(("classes_",), header_then("<c16", (1,), bytes(16))), r"is an array of complex128"),
    (member(("classes_",), header_then("<f8", (1, 1, 1), bytes(8))), r"has shape \(1, 1, 1\)"),
    (member(("classes_",), header_then("<f8", (10,), bytes(8))), r"its header declares 208 by"),
    (member(("classes_",), header_then("|b1", (3,), bytes([0, 2, 1]))), r"holds booleans other"),
]


@pytest.mark.parametrize(("change", "match"), NODE_CASES)
def test_nodes_and_members_are_checked_before_anything_is_built(files, tmp_path, change, match):
    refused(edit(files["alma"], tmp_path / "bad.skops", change), match)


def test_what_a_random_state_holds_is_checked(tmp_path):
    path = tmp_path / "rs.skops"
    marginkit.save(
        ALMAClassifier(
            shuffle=False,
            random_state=np.random.RandomState(0),
            alpha=1.0,
            output="last",
            max_iter=1,
            fit_intercept=False,
        ),
        path,
    )
    assert isinstance(marginkit.load(path).random_state, np.random.RandomState)
    bad = node(("random_state",), lambda n: {**n, "content": json_node(1)})
    refused(edit(path, tmp_path / "b.skops", bad), r"a RandomState without its state")


def _zip(path, entries, **info):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries:
            zinfo = zipfile.ZipInfo(name)
            for key, value in info.items():
                setattr(zinfo, key, value)
            zf.writestr(zinfo, data)
    return path


def test_archives_are_checked(files, tmp_path, monkeypatch):
    from marginkit import persistence

    schema, members = read_archive(files["alma"])
    text = json.dumps(schema)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate
        twice = _zip(tmp_path / "2.skops", [("schema.json", text), ("schema.json", text)])
    refused(twice, "holds two members of one name")
    encrypted = set_flags(_zip(tmp_path / "e.skops", [("schema.json", text)]), "schema.json", 1)
    refused(encrypted, "member schema.json is encrypted")
    bz = _zip(tmp_path / "b.skops", [("schema.json", text)], compress_type=zipfile.ZIP_BZIP2)
    refused(bz, "compressed by a method marginkit does not use")
    refused(_zip(tmp_path / "n.skops", [("other", b"")]), "no schema.json", ValueError)
    extra = edit(files["alma"], tmp_path / "x.skops", lambda s, m: m.update(x=b""), prune=False)
    refused(extra, "holds members no node names: x")
    refused(
        _zip(tmp_path / "j.skops", [("schema.json", "{")]), "schema.json is not JSON", ValueError
    )
    size = zipfile.ZipFile(files["alma"]).getinfo("schema.json").file_size
    with pytest.raises(UntrustedFileError, match=rf"declares more than max_bytes={size + 99}"):
        marginkit.load(files["alma"], max_bytes=size + 99)
    with pytest.raises(UntrustedFileError, match=rf"schema\.json declares {size} bytes, more th"):
        marginkit.load(files["alma"], max_bytes=size - 1)
    monkeypatch.setattr(persistence, "MAX_SCHEMA_ITEMS", 100)
    refused(files["alma"], r"schema\.json holds about \d+ values, more than the 100")


def test_members_are_read_as_their_headers_declare(files, tmp_path, monkeypatch):
    from marginkit.persistence import _Reader

    # a member whose data are shorter than the zip (and its header) declare
    schema, members = read_archive(files["alma"])
    name = node_at(schema, "estimator", "classes_")["file"]
    members[name] = npy_header("<f8", (4,)) + bytes(8)
    short = declare_size(write_archive(tmp_path / "s.skops", schema, members), name, 160)
    refused(short, r"classes_'\] is shorter than its header declares")
    # a member that changed between the audit of its header and its reading
    real, calls = _Reader.header, []

    def header(self, f, info, where):
        calls.append(1)
        shape, dtype, offset, nbytes = real(self, f, info, where)
        return (shape, dtype, offset + (len(calls) > 40), nbytes)

    monkeypatch.setattr(_Reader, "header", header)
    refused(files["alma"], r"changed while it was read")


def test_damaged_data_are_not_a_model(files, tmp_path):
    schema, members = read_archive(files["alma"])
    path = tmp_path / "d.skops"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("schema.json", json.dumps(schema))
        for name, data in members.items():
            zf.writestr(name, data)
    with zipfile.ZipFile(path) as zf:
        info = max(zf.infolist(), key=lambda i: i.file_size)  # an array, stored as is
    content = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    content[start + info.file_size - 1] ^= 0xFF
    path.write_bytes(bytes(content))
    refused(path, "is a damaged archive: Bad CRC-32", ValueError)


def test_states_saved_before_the_log_was_optional_load(files, tmp_path):
    """Their ist was 4 long; the trials are the counts of the log's hypotheses."""

    def old(schema, members):
        for j in range(3):
            ist = array_at(schema, members, "estimator", "_states", j, "ist")
            set_array(schema, members, ("estimator", "_states", j, "ist"), ist[:4].copy())

    again = marginkit.load(edit(files["alma"], tmp_path / "old.skops", old))
    X, y = data()
    np.testing.assert_array_equal(again.predict(X), marginkit.load(files["alma"]).predict(X))

    def broken(schema, members):
        old(schema, members)
        replace(schema, ("_states", 0, "h_count"), json_node("x"))

    refused(
        edit(files["alma"], tmp_path / "b.skops", broken), r"a PNormState that cannot be rebuilt"
    )


def test_every_failure_of_load_is_a_documented_error(files, monkeypatch):
    from marginkit import persistence
    from marginkit.alma import ALMAClassifier as Alma

    def raising(error):
        def f(*args, **kwargs):
            raise error

        return f

    for error, kind, match in [
        (PermissionError("denied"), ValueError, "cannot read .*: denied"),
        (MemoryError(), ValueError, "not enough memory to load this model"),
        (RecursionError(), UntrustedFileError, "its nodes are nested too deeply"),
        (RuntimeError("odd"), UntrustedFileError, "cannot be loaded: RuntimeError: odd"),
    ]:
        with monkeypatch.context() as m:
            m.setattr(persistence._Reader, "read", raising(error))
            with pytest.raises(kind, match=match):
                marginkit.load(files["alma"])
    monkeypatch.setattr(Alma, "_check_loaded", raising(TypeError("unforeseen")))
    refused(files["alma"], r"TypeError: unforeseen")


def test_feature_names_of_a_data_frame_load(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = data()
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    path = tmp_path / "df.skops"
    marginkit.save(
        ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).fit(frame, y),
        path,
    )
    again = marginkit.load(path)
    assert list(again.feature_names_in_) == list(frame.columns)
    again.predict(frame)
    again.feature_names_in_ = np.array([1, 2, 3, 4, 5], dtype=object)
    with pytest.raises(UntrustedFileError, match="feature_names_in_ must hold strings"):
        again._check_loaded()
    again.feature_names_in_ = np.array(["a"] * 5, dtype=object)
    again.input_format_ = {"format": ["svmlight"]}
    with pytest.raises(UntrustedFileError, match="input_format_ must be a dict of format, n_"):
        again._check_loaded()
    again.input_format_ = {"format": "svmlight", "n_features": 5}
    with pytest.raises(UntrustedFileError, match="input_format_ of svmlight must say zero_b"):
        again._check_loaded()
    again.input_format_ = {"format": "xml", "n_features": 5}
    with pytest.raises(UntrustedFileError, match="input_format_ must say the format"):
        again._check_loaded()
    again.input_format_ = {"format": "csv", "n_features": 5, "label_column": 1.5}
    with pytest.raises(UntrustedFileError, match="input_format_ must be a dict of format, n_"):
        again._check_loaded()


def test_arrays_the_loader_never_makes_are_refused_too():
    """What a file cannot hold, but a check is given (views of other arrays)."""
    from marginkit import _checks as check

    with pytest.raises(UntrustedFileError, match="x must be a C-contiguous, writeable, aligned"):
        check.array(np.zeros((3, 3))[:, 0], "x", np.float64, (3,))
    with pytest.raises(UntrustedFileError, match="x must be of type int, got bool"):
        check.instance(True, "x", int)


def test_a_checkpoint_holding_no_progress_is_not_resumed(files, tmp_path):
    """A finished model is no checkpoint of a fit in progress."""
    X, y = data()
    path = tmp_path / "m.skops"
    marginkit.save(CHECKPOINTS["alma"]().fit(X, y), path)
    with pytest.raises(ValueError, match="holds a model, not a checkpoint"):
        CHECKPOINTS["alma"]().fit(X, y, checkpoint=path)


# -- memory: a small file that declares gigabytes ----------------------------------------------

BOMB_SCRIPT = """
import re, resource, sys
import marginkit
from marginkit.persistence import UntrustedFileError


def status(key):  # kB; VmHWM is this process's own peak (ru_maxrss counts the parent's)
    with open("/proc/self/status") as f:
        return int(re.search(key + r":\\s+(\\d+)", f.read()).group(1))


with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak starts again from here
before = status("VmRSS")
# a hard bound too: 256 MiB of address space more than the process has
room = status("VmSize") * 1024 + 2**28
resource.setrlimit(resource.RLIMIT_AS, (room, room))
for path, match in zip(sys.argv[1::2], sys.argv[2::2]):
    try:
        marginkit.load(path)
    except UntrustedFileError as exc:
        assert match in str(exc), str(exc)
    else:
        raise AssertionError(path + " loaded")
print((status("VmHWM") - before) * 1024)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="Linux's /proc")
def test_zip_bombs_are_refused_in_bounded_memory(files, tmp_path):
    """Issue 12's file: one 256 MiB deflated member (a 261 KB file) that six arrays name,
    so that reading it once per name took 2 GiB; with it, a member declaring 2**62
    voids, three members of 2 GiB (more than ``load``'s default bound of 4 GiB together),
    and a schema.json declaring 1 GiB. Each is refused
    in a fresh process whose address space may grow by 256 MiB at most, and whose peak
    memory grows by less than 64 MiB."""
    import subprocess
    import sys

    schema, members = read_archive(files["alma"])
    bomb = tmp_path / "bomb.skops"
    paths = [("estimator", "classes_")] + [("estimator", "_states", j, "v") for j in range(3)]
    paths += [("estimator", "_states", 0, "acc"), ("estimator", "_states", 0, "u")]
    for path in paths:
        del members[node_at(schema, *path)["file"]]
        node_at(schema, *path)["file"] = "bomb.npy"
    write_archive(bomb, schema, members)
    with zipfile.ZipFile(bomb, "a", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        with zf.open("bomb.npy", "w") as f:
            f.write(npy_header("<f8", (2**25,)))
            for _ in range(256):
                f.write(bytes(2**20))
    assert bomb.stat().st_size < 400_000
    schema, members = read_archive(files["alma"])
    members[node_at(schema, "estimator", "classes_")["file"]] = npy_header("|V8", (2**62,))
    void = write_archive(tmp_path / "void.skops", schema, members)
    big = ["classes_", ("_states", 0, "v"), ("_states", 1, "v")]
    for path in big:
        path = path if isinstance(path, tuple) else (path,)
        members[node_at(schema, "estimator", *path)["file"]] = npy_header("<f8", (2**28,))
    huge = write_archive(tmp_path / "huge.skops", schema, members)
    for path in big:  # three members of 2 GiB, by their headers and the zip's sizes
        path = path if isinstance(path, tuple) else (path,)
        declare_size(huge, node_at(schema, "estimator", *path)["file"], 2**31 + 128)
    declared = declare_size(
        write_archive(tmp_path / "schema.skops", schema, members), "schema.json", 2**30
    )
    result = subprocess.run(
        [sys.executable, "-c", BOMB_SCRIPT]
        + [str(bomb), "member bomb.npy is named twice", str(void), "is an array of |V8"]
        + [str(huge), "declares more than max_bytes"]
        + [str(declared), "schema.json declares 1073741824 bytes"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert int(result.stdout.split()[-1]) < 64 * 2**20


def test_a_margin_perceptron_with_a_tiny_guess_resumes(files, tmp_path):
    """Its budget of 12 (R / gamma)^2 updates overflows a float: it is then unbounded."""
    bad = edit(files["ckpt-mp"], tmp_path / "t.skops", item(("gamma_guess_",), 0, 1e-300))
    X, y = data()
    CHECKPOINTS["mp"]().fit(X, y, checkpoint=bad)


def test_a_state_of_no_registered_check_is_refused():
    """A loaded state is checked by the check registered for its class; an object of
    another class (no check) is refused, naming where it was found."""
    from marginkit._state_checks import check_state

    with pytest.raises(UntrustedFileError, match="_states\\[0\\] is of type dict, which no check"):
        check_state({}, "_states[0]", 3, 2.0)
