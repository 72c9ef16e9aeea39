"""marginkit.save / marginkit.load: round trips, refusals, format versions; and pickle."""

import pickle
import warnings
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm, outputs_of
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

import marginkit
from marginkit import (
    ALMAClassifier,
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
    MarginPerceptronClassifier,
    PerceptronClassifier,
    PUMMAClassifier,
    ROMMAClassifier,
)
from marginkit.persistence import UntrustedFileError

ESTIMATORS = [
    ALMAClassifier(shuffle=False, p=3.0, alpha=0.8, fit_intercept=True, output="last", max_iter=1),
    ALMAClassifier(
        shuffle=False,
        p=3.0,
        alpha=0.8,
        keep_corrections=True,
        output="last",
        max_iter=1,
        fit_intercept=False,
    ),
    KernelALMAClassifier(
        shuffle=False, kernel="poly", degree=2, max_iter=2, alpha=1.0, output="last"
    ),
    PerceptronClassifier(shuffle=False, max_iter=2, output="voted", fit_intercept=False),
    KernelPerceptronClassifier(shuffle=False, kernel="rbf", gamma=0.5, output="last", max_iter=1),
    ROMMAClassifier(
        shuffle=False,
        aggressive=True,
        keep_corrections=True,
        output="last",
        max_iter=1,
        fit_intercept=False,
    ),
    KernelROMMAClassifier(shuffle=False, aggressive=True, max_iter=2, output="last"),
    MarginPerceptronClassifier(shuffle=False, fit_intercept=True, max_iter=20, output="last"),
    PUMMAClassifier(
        shuffle=False, p=3.0, lam=0.5, max_iter=10, keep_corrections=True, output="last"
    ),
    PUMMAClassifier(shuffle=False, p=3.0, lam=0.5, max_iter=10, output="last"),
    KernelPUMMAClassifier(shuffle=False, lam=1.0, max_iter=10, output="last"),
]


def fitted(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("sparse", [False, True])
def test_round_trip_predicts_the_same_with_every_output(est, sparse, tmp_path):
    X, y = make_blobs_pm(n=80, d=5, n_classes=3, seed=1)
    X = sp.csr_matrix(X) if sparse else X
    clf = fitted(est, X, y)
    path = tmp_path / "model.skops"
    marginkit.save(clf, path)
    again = marginkit.load(path)
    assert type(again) is type(clf) and again.get_params() == clf.get_params()
    for output in outputs_of(clf):
        clf.set_params(output=output)
        again.set_params(output=output)
        np.testing.assert_array_equal(again.decision_function(X), clf.decision_function(X))
    # the loaded model trains on
    again.partial_fit(X[:10], y[:10])


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_string_labels_of_object_dtype_round_trip(est, tmp_path):
    """Labels of object dtype (pandas' default for strings), kept as objects as
    scikit-learn keeps them: the model saves and loads, a checkpointed fit resumes."""
    X, y = make_blobs_pm(n=60, d=4, n_classes=3, seed=3)
    labels = np.array([["ham", "spam", "eggs"][i] for i in y], dtype=object)
    clf = fitted(clone(est), X, labels)
    assert clf.classes_.dtype == object
    marginkit.save(clf, tmp_path / "m.skops")
    again = marginkit.load(tmp_path / "m.skops")
    np.testing.assert_array_equal(again.classes_, clf.classes_)
    assert again.classes_.dtype == clf.classes_.dtype
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))
    assert list(again.predict(X[:5])) == list(clf.predict(X[:5]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clone(est).fit(X, labels, checkpoint=tmp_path / "ck.skops")
        resumed = clone(est).fit(X, labels, checkpoint=tmp_path / "ck.skops")
    np.testing.assert_array_equal(resumed.predict(X), clf.predict(X))


def test_classes_of_other_objects_are_refused_on_load(tmp_path):
    X, y = make_blobs_pm(n=40, d=3, n_classes=2, seed=3)
    clf = PerceptronClassifier(shuffle=False, max_iter=1).fit(X, y)
    clf.classes_ = np.array([0, "a"], dtype=object)
    with pytest.raises(ValueError, match="classes_ must be an array of numbers or strings"):
        clf._check_fitted()


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_estimators_pickle(est):
    X, y = make_blobs_pm(n=60, d=4, n_classes=2, seed=2)
    clf = fitted(est, X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.decision_function(X), clf.decision_function(X))


def test_unfitted_model_and_numpy_random_state(tmp_path):
    path = tmp_path / "m.skops"
    marginkit.save(
        ALMAClassifier(
            random_state=np.random.RandomState(3),
            shuffle=True,
            alpha=1.0,
            output="last",
            max_iter=1,
            fit_intercept=False,
        ),
        path,
    )
    again = marginkit.load(path)
    X, y = make_blobs_pm(n=40, d=3, seed=0)
    again.fit(X, y)


def test_save_is_atomic_and_overwrites(tmp_path):
    X, y = make_blobs_pm(n=40, d=3, seed=0)
    path = tmp_path / "m.skops"
    marginkit.save(
        PerceptronClassifier(shuffle=False, output="last", max_iter=1, fit_intercept=False).fit(
            X, y
        ),
        path,
    )
    marginkit.save(
        ROMMAClassifier(shuffle=False, output="last", max_iter=1, fit_intercept=False).fit(X, y),
        path,
    )
    assert isinstance(marginkit.load(path), ROMMAClassifier)
    assert [p.name for p in tmp_path.iterdir()] == ["m.skops"]  # no temporary left


class Intruder:
    """A type a model file must never bring to life."""

    def __reduce__(self):
        return (print, ("code ran",))


def test_file_naming_untrusted_types_is_refused(tmp_path):
    import skops.io as sio

    path = tmp_path / "evil.skops"
    payload = {
        "format": "marginkit-model",
        "format_version": 1,
        "marginkit_version": "0.1.0",
        "estimator": ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ),
        "extra": Intruder(),
    }
    sio.dump(payload, path)
    with pytest.raises(UntrustedFileError, match="does not trust: .*Intruder"):
        marginkit.load(path)
    assert issubclass(UntrustedFileError, ValueError)


def test_tampered_archive_is_refused(tmp_path):
    X, y = make_blobs_pm(n=40, d=3, seed=0)
    good = tmp_path / "good.skops"
    marginkit.save(
        ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).fit(X, y),
        good,
    )
    # replace the schema's estimator type by a builtin that runs code
    bad = tmp_path / "bad.skops"
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(bad, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "schema.json":
                data = data.replace(b'"marginkit.alma"', b'"builtins"').replace(
                    b'"ALMAClassifier"', b'"eval"'
                )
            zout.writestr(item, data)
    with pytest.raises(UntrustedFileError, match="builtins.eval"):
        marginkit.load(bad)


@pytest.mark.parametrize("content", [b"", b"not a zip file", b"PK\x03\x04broken"])
def test_damaged_file_is_not_a_model(tmp_path, content):
    path = tmp_path / "m.skops"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="is not a marginkit model file"):
        marginkit.load(path)


def test_other_skops_archive_is_not_a_model(tmp_path):
    import skops.io as sio

    path = tmp_path / "other.skops"
    sio.dump({"weights": np.ones(3)}, path)
    with pytest.raises(ValueError, match="not a marginkit model file"):
        marginkit.load(path)


@pytest.mark.parametrize(
    ("version", "message"),
    [
        (2, "written by marginkit 9.9 in model format 2; this marginkit reads formats up to 1"),
        (0, "unknown marginkit model format version 0"),
    ],
)
def test_format_versions(tmp_path, version, message):
    import skops.io as sio

    path = tmp_path / "m.skops"
    sio.dump(
        {
            "format": "marginkit-model",
            "format_version": version,
            "marginkit_version": "9.9",
            "estimator": ALMAClassifier(
                shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
            ),
        },
        path,
    )
    with pytest.raises(ValueError, match=message):
        marginkit.load(path)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no model file at"):
        marginkit.load(tmp_path / "nothing.skops")


def test_save_refuses_what_it_cannot_store(tmp_path):
    with pytest.raises(TypeError, match="stores marginkit estimators, not dict"):
        marginkit.save({"a": 1}, tmp_path / "m.skops")
    X, y = make_blobs_pm(n=30, d=3, seed=0)
    clf = KernelALMAClassifier(
        shuffle=False, kernel=lambda A, B: A @ B.T, alpha=1.0, output="last", max_iter=1
    ).fit(X, y)
    with pytest.raises(TypeError, match="callable kernel cannot be saved safely"):
        marginkit.save(clf, tmp_path / "m.skops")
    assert not list(tmp_path.iterdir())


def test_a_file_holds_the_model_and_no_more(tmp_path):
    import skops.io as sio

    from marginkit.datasets import make_sparse_target

    X, y, _, _ = make_sparse_target(n_train=200, n_test=10, random_state=0)
    payload = {
        "format": "marginkit-model",
        "format_version": 1,
        "marginkit_version": "0.1.0",
        "estimator": ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).fit(X, y),
    }
    path = tmp_path / "m.skops"
    sio.dump({**payload, "note": __import__("collections").OrderedDict(a=1)}, path)
    with pytest.raises(UntrustedFileError, match="does not trust: collections.OrderedDict"):
        marginkit.load(path)
    sio.dump({**payload, "note": 1}, path)
    with pytest.raises(UntrustedFileError, match="holds estimator, note where a model file"):
        marginkit.load(path)
    sio.dump({**payload, "estimator": {"weights": np.ones(3)}}, path)
    with pytest.raises(UntrustedFileError, match="holds a builtins.dict where a model file"):
        marginkit.load(path)
    sio.dump({k: v for k, v in payload.items() if k != "estimator"}, path)
    with pytest.raises(ValueError, match="a marginkit model file without a model"):
        marginkit.load(path)


def test_files_naming_the_engines_former_modules_load(tmp_path):
    """A linear model written when its state lived in ``marginkit._state`` loads."""
    import json

    X, y = make_blobs_pm(n=80, d=5, seed=2)
    clf = marginkit.ALMAClassifier(
        shuffle=False, p=3, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    path = tmp_path / "m.skops"
    marginkit.save(clf, path)
    old = tmp_path / "old.skops"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(old, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "schema.json":
                text = data.decode().replace('"marginkit._core.state"', '"marginkit._state"')
                assert "marginkit._state" in json.dumps(json.loads(text))
                data = text.encode()
            dst.writestr(info, data)
    loaded = marginkit.load(old)
    np.testing.assert_array_equal(loaded.decision_function(X), clf.decision_function(X))


def without_delta(schema):
    """The schema of a model file with the estimator's parameter delta taken out."""
    params = schema["content"]["estimator"]["content"]
    del params["content"]["delta"]
    params["key_types"]["content"].pop()  # every key is a str


@pytest.mark.parametrize("cls", [marginkit.ROMMAClassifier, marginkit.KernelROMMAClassifier])
def test_romma_files_saved_before_delta_load_as_they_were(cls, tmp_path):
    """A (kernel) ROMMA model saved before ``delta`` loads with delta = 0, the update
    it was trained with, and predicts and trains on as before; a PUMMA file without its
    delta (which PUMMA always had) is refused."""
    from archives import read_archive, write_archive

    X, y = make_blobs_pm(n=80, d=5, seed=3)
    clf = cls(shuffle=False, aggressive=True, max_iter=2, tol=None).fit(X, y)
    path = tmp_path / "m.skops"
    marginkit.save(clf, path)
    schema, members = read_archive(path)
    without_delta(schema)
    old = write_archive(tmp_path / "old.skops", schema, members)
    loaded = marginkit.load(old)
    assert loaded.delta == 0.0
    np.testing.assert_array_equal(loaded.decision_function(X), clf.decision_function(X))
    loaded.partial_fit(X, y)
    np.testing.assert_array_equal(
        loaded.decision_function(X), clf.partial_fit(X, y).decision_function(X)
    )

    pumma = marginkit.PUMMAClassifier(shuffle=False, max_iter=2).fit(X, y)
    marginkit.save(pumma, path)
    schema, members = read_archive(path)
    without_delta(schema)
    with pytest.raises(UntrustedFileError, match="lacks the parameters delta"):
        marginkit.load(write_archive(tmp_path / "pumma.skops", schema, members))
