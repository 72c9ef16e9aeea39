"""The river bridge (marginkit.river.RiverClassifier): river's own checks, the model of
partial_fit on the same rows bit for bit, what it does with features and labels, its
errors, pipelines, evaluators, drift detectors, frames and pickles."""

import pickle
import sys
import warnings

import numpy as np
import pytest

river = pytest.importorskip("river", reason="the river bridge needs the 'river' extra")
pd = pytest.importorskip("pandas", reason="river's mini-batch methods take pandas frames")

from river import checks, datasets, drift, evaluate, metrics, preprocessing  # noqa: E402

import marginkit  # noqa: E402
from marginkit import (  # noqa: E402
    ALMAClassifier,
    KernelALMAClassifier,
    PerceptronClassifier,
    StreamOrderWarning,
)
from marginkit._base import OnlineClassifier  # noqa: E402
from marginkit.river import RiverClassifier  # noqa: E402

ESTIMATORS = [
    getattr(marginkit, name)
    for name in marginkit.__all__
    if isinstance(getattr(marginkit, name), type)
    and issubclass(getattr(marginkit, name), OnlineClassifier)
]


def stream(n=120, d=4, n_classes=2, seed=0):
    """Rows as river gives them (dicts of named features, labels of strings) and as
    partial_fit takes them (the columns in the sorted order of the names)."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.5, size=(n_classes, d))
    codes = rng.integers(0, n_classes, size=n)
    X = centers[codes] + rng.normal(size=(n, d))
    names = [f"f{j}" for j in range(d)]
    labels = np.array(["ant", "bee", "cat", "dog"][:n_classes])[codes]
    rows = [dict(zip(reversed(names), reversed(row.tolist()), strict=True)) for row in X]
    return rows, labels.tolist(), X, labels


def same_model(a, b, X):
    """Two estimators with the same model: decisions and counts, bit for bit."""
    assert np.array_equal(a.decision_function(X), b.decision_function(X))
    assert a.n_corrections_ == b.n_corrections_
    assert a.n_trials_ == b.n_trials_


# -- river's own checks ----------------------------------------------------------------
#: The checks river's check_estimator runs on the bridge with classes=(False, True) (its
#: _unit_test_params) all apply and pass. They cannot run on a bridge of three classes:
#: every classifier gets Phishing's bool labels, outside such classes (the tests below
#: take three classes through learn_one, learn_many and the predictions).
BINARY = RiverClassifier(ALMAClassifier(), classes=(False, True))

#: Without classes, the first rows wait for a second label: the checks whose streams
#: start there (prediction before and after rows of one label, then the first fit of
#: rows kept, by learn_one and by learn_many). The others would check again what the
#: bridge does once fitted, as with classes. check_predict_proba_one_binary does not
#: apply: it asks for {False, True} from predict_proba_one before any row, where the
#: labels are not known yet ({} there, {the one label: 1.0} after rows of one label).
WAITING = RiverClassifier(PerceptronClassifier())
FOR_WAITING = {
    "check_learn_one",
    "check_pickling",
    "check_emerging_features",
    "check_predict_one_before_any_learn",
    "check_no_state_aliasing_with_input",
    "check_learn_many_matches_learn_one",
    "check_predict_many_matches_predict_one",
    "check_predict_proba_many_matches_predict_proba_one",
    "check_predict_proba_one",
    "check_classifier_tracks_seen_labels",
}


def river_checks(model, only=None):
    return [
        pytest.param(model, check, id=f"{check.__name__}-{i}")
        for i, check in enumerate(checks.yield_checks(model))
        if only is None or check.__name__ in only
    ]


@pytest.mark.parametrize(
    "model, check", river_checks(BINARY) + river_checks(WAITING, only=FOR_WAITING)
)
def test_river_checks(model, check):
    with warnings.catch_warnings():
        # the checks drop and add features at random: the bridge warns that it ignores
        # those outside its columns
        warnings.simplefilter("ignore", UserWarning)
        check(model.clone())


# -- the model of partial_fit, bit for bit ---------------------------------------------
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_learn_one_is_partial_fit_row_by_row(cls, n_classes):
    """Every estimator, two and three classes: each prediction the bridge makes before
    learning a row is the estimator's, and the model after each row is that of
    partial_fit on the rows one call each."""
    rows, labels, X, y = stream(n=40, n_classes=n_classes)
    classes = sorted(set(labels))
    bridge = RiverClassifier(cls(), classes=classes)
    est = cls()
    for i, (x, label) in enumerate(zip(rows, labels, strict=True)):
        if i:
            assert bridge.predict_one(x) == est.predict(X[i : i + 1])[0]
        bridge.learn_one(x, label)
        est.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
    same_model(bridge.estimator_, est, X)
    assert np.array_equal(bridge.estimator_._label_runs, est._label_runs)


@pytest.mark.parametrize(
    "est",
    [
        ALMAClassifier(output="last", p=3.0),
        ALMAClassifier(output="voted"),
        ALMAClassifier(class_weight={"ant": 2.0, "bee": 0.0, "cat": 0.5}),
        PerceptronClassifier(fit_intercept=False),
        KernelALMAClassifier(kernel="rbf", gamma=0.5),
        ALMAClassifier(horizon=1.5),
        KernelALMAClassifier(kernel="rbf", gamma=0.5, horizon=1.5, budget=20),
    ],
    ids=["p3-last", "voted", "class_weight", "no-intercept", "kernel", "horizon", "budget"],
)
def test_learn_one_is_partial_fit_with_other_parameters(est):
    rows, labels, X, y = stream(n=100, n_classes=3, seed=1)
    classes = ["ant", "bee", "cat"]
    bridge = RiverClassifier(est, classes=classes)
    ref = est.__class__(**est.get_params())
    for i, (x, label) in enumerate(zip(rows, labels, strict=True)):
        bridge.learn_one(x, label)
        ref.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
    same_model(bridge.estimator_, ref, X)
    assert [bridge.predict_one(x) for x in rows] == ref.predict(X).tolist()
    # the bridge fits a clone: the estimator given is left as it was
    assert not hasattr(est, "classes_")


@pytest.mark.parametrize("cls", [ALMAClassifier, PerceptronClassifier])
def test_rows_far_from_the_scale_of_one_and_zero_rows_are_partial_fit_too(cls):
    rows, labels, X, y = stream(n=60, seed=8)
    scale = np.where(np.arange(60) % 3 == 0, 1e30, np.where(np.arange(60) % 3 == 1, 1e-30, 1.0))
    if cls is PerceptronClassifier:  # (its units are fixed by the first row: within 1e100)
        scale = np.where(scale == 1e30, 1e20, scale)
    X = X * scale[:, None]
    X[[5, 17]] = 0.0
    rows = [{f"f{j}": value for j, value in enumerate(row) if value} for row in X.tolist()]
    bridge, est = RiverClassifier(cls(), classes=["ant", "bee"]), cls()
    for i, (x, label) in enumerate(zip(rows, labels, strict=True)):
        if i:
            assert bridge.predict_one(x) == est.predict(X[i : i + 1])[0]
        bridge.learn_one(x, label)
        est.partial_fit(X[i : i + 1], y[i : i + 1], classes=["ant", "bee"])
    same_model(bridge.estimator_, est, X)


def test_a_row_partial_fit_refuses_is_refused_alike():
    bridge = RiverClassifier(PerceptronClassifier(), classes=[0, 1])
    est = PerceptronClassifier().partial_fit([[1.0, 2.0]], [1], classes=[0, 1])
    bridge.learn_one({"a": 1.0, "b": 2.0}, 1)
    with pytest.raises(ValueError) as expected:
        est.partial_fit([[1e200, 1.0]], [0])
    with pytest.raises(ValueError, match=str(expected.value)[:60]):
        bridge.learn_one({"a": 1e200, "b": 1.0}, 0)
    bridge.learn_one({"a": -1.0, "b": 0.5}, 0)
    est.partial_fit([[-1.0, 0.5]], [0])
    same_model(bridge.estimator_, est, np.array([[1.0, 2.0], [-3.0, 1.0]]))


def test_predictions_follow_the_output_chosen_after_learning():
    rows, labels, X, _ = stream(n=80, n_classes=3, seed=9)
    bridge = RiverClassifier(ALMAClassifier(keep_corrections=True), classes=["ant", "bee", "cat"])
    for x, label in zip(rows, labels, strict=True):
        bridge.learn_one(x, label)
    for output in ("avg", "last", "voted", "avg"):
        bridge.estimator_.output = output
        assert [bridge.predict_one(x) for x in rows] == bridge.estimator_.predict(X).tolist()


def test_learn_one_in_a_pipeline_is_partial_fit_of_the_scaled_rows():
    """In ``StandardScaler() | bridge``, the bridge learns each row as the scaler has
    transformed it then: the model of partial_fit on those rows."""
    rows, labels, _, _ = stream(n=100, seed=2)
    model = preprocessing.StandardScaler() | RiverClassifier(KernelALMAClassifier(kernel="rbf"))
    scaler, est, scaled = preprocessing.StandardScaler(), KernelALMAClassifier(kernel="rbf"), []
    for x, label in zip(rows, labels, strict=True):
        model.learn_one(x, label)
        scaler.learn_one(x)
        z = scaler.transform_one(x)
        scaled.append([z[name] for name in sorted(z)])
    # without classes, the first fit takes the rows up to the second label at once
    first = labels.index(next(label for label in labels if label != labels[0])) + 1
    X, y = np.array(scaled), np.array(labels)
    est.partial_fit(X[:first], y[:first], classes=["ant", "bee"])
    for i in range(first, len(rows)):
        est.partial_fit(X[i : i + 1], y[i : i + 1])
    same_model(model["RiverClassifier"].estimator_, est, X)


def test_progressive_val_score_counts_the_hits_of_the_rows_one_by_one():
    rows, labels, X, y = stream(n=200, seed=3)
    model = RiverClassifier(ALMAClassifier(), classes=["ant", "bee"])
    score = evaluate.progressive_val_score(
        list(zip(rows, labels, strict=True)), model, metrics.Accuracy()
    )
    est, hits = ALMAClassifier(), []
    for i in range(len(rows)):
        # the starting hypothesis (0) decides for the first class
        hits.append((est.predict(X[i : i + 1])[0] if i else "ant") == y[i])
        est.partial_fit(X[i : i + 1], y[i : i + 1], classes=["ant", "bee"])
    assert score.get() == pytest.approx(np.mean(hits), abs=0)
    same_model(model.estimator_, est, X)


def test_a_pipeline_under_a_drift_detector_learns_and_predicts():
    """river's drift detectors predict through predict_proba_one and clone the model."""
    bridge = RiverClassifier(ALMAClassifier(output="last"), classes=[False, True])
    model = drift.DriftRetrainingClassifier(
        model=preprocessing.StandardScaler() | bridge, drift_detector=drift.binary.DDM()
    )
    score = evaluate.progressive_val_score(
        datasets.Phishing().take(300), model, metrics.Accuracy()
    )
    assert score.get() > 0.8


# -- features ------------------------------------------------------------------------
def test_features_are_sorted_missing_ones_count_as_zero_and_others_warn_once():
    bridge = RiverClassifier(PerceptronClassifier(), classes=[0, 1])
    bridge.learn_one({"b": 1.0, "a": -2.0}, 1)
    assert bridge.features_ == ["a", "b"]
    with pytest.warns(UserWarning, match=r"ignores the features \['c'\]") as record:
        bridge.learn_one({"a": 3.0, "c": 5.0}, 0)
        bridge.learn_one({"b": 1.0, "d": 5.0}, 1)
    assert len(record) == 1
    ref = PerceptronClassifier().partial_fit([[-2.0, 1.0]], [1], classes=[0, 1])
    ref.partial_fit([[3.0, 0.0]], [0]).partial_fit([[0.0, 1.0]], [1])
    same_model(bridge.estimator_, ref, np.array([[1.0, 2.0], [-1.0, 0.5]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # predicting with other features does not warn
        assert bridge.predict_one({"z": 1.0}) == ref.predict([[0.0, 0.0]])[0]


def test_features_given_fix_the_columns_in_their_order():
    bridge = RiverClassifier(PerceptronClassifier(), classes=[0, 1], features=["b", "a"])
    assert bridge.features_ == ["b", "a"]
    bridge.learn_one({"a": -2.0, "b": 1.0}, 1)
    assert bridge.estimator_.coef_.tolist() == [[1.0, -2.0]]


def test_feature_names_of_types_that_do_not_compare():
    bridge = RiverClassifier(PerceptronClassifier(), classes=[0, 1])
    bridge.learn_one({2: 1.0, "a": 2.0, 1: 3.0}, 1)
    assert bridge.features_ == [1, 2, "a"]


# -- labels --------------------------------------------------------------------------
def test_without_classes_the_rows_wait_for_a_second_label():
    rows, labels, X, y = stream(n=40, seed=4)
    first = labels.index(next(label for label in labels if label != labels[0])) + 1
    assert first > 1
    bridge = RiverClassifier(ALMAClassifier())
    assert bridge.predict_one(rows[0]) is None and bridge.predict_proba_one(rows[0]) == {}
    for x, label in zip(rows[: first - 1], labels[: first - 1], strict=True):
        bridge.learn_one(x, label)
        assert bridge.predict_one(x) == labels[0]
        assert bridge.predict_proba_one(x) == {labels[0]: 1.0}
        assert bridge.estimator_ is None
    for x, label in zip(rows[first - 1 :], labels[first - 1 :], strict=True):
        bridge.learn_one(x, label)
    assert bridge.classes_ == ["ant", "bee"]
    est = ALMAClassifier().partial_fit(X[:first], y[:first], classes=["ant", "bee"])
    for i in range(first, len(rows)):
        est.partial_fit(X[i : i + 1], y[i : i + 1])
    same_model(bridge.estimator_, est, X)


@pytest.mark.parametrize("labels", [[True, False], [3, 1], ["yes", "no"]])
def test_labels_come_back_as_given_and_the_first_prediction_is_the_first_class(labels):
    bridge = RiverClassifier(PerceptronClassifier(), classes=labels)
    first = sorted(labels)[0]
    assert bridge.predict_one({"a": 1.0}) == first
    assert bridge.predict_proba_one({"a": 1.0}) == {first: 1.0, sorted(labels)[1]: 0.0}
    bridge.learn_one({"a": 1.0}, labels[0])
    predicted = bridge.predict_one({"a": 1.0})
    assert predicted == labels[0] and type(predicted) is type(labels[0])
    assert bridge.predict_proba_one({"a": 1.0}) == {labels[0]: 1.0, labels[1]: 0.0}


def test_a_sorted_stream_warns_as_partial_fit_does():
    rows, labels, X, y = stream(n=200, seed=5)
    order = np.argsort(y, kind="stable")
    bridge = RiverClassifier(ALMAClassifier(), classes=["ant", "bee"])
    est = ALMAClassifier()
    with pytest.warns(StreamOrderWarning) as record:
        for i in order:
            bridge.learn_one(rows[i], labels[i])
    assert len(record) == 1
    with pytest.warns(StreamOrderWarning):
        for i in order:
            est.partial_fit(X[i : i + 1], y[i : i + 1], classes=["ant", "bee"])
    assert np.array_equal(bridge.estimator_._label_runs, est._label_runs)


# -- errors --------------------------------------------------------------------------
def test_estimator_must_be_a_marginkit_classifier():
    from sklearn.linear_model import SGDClassifier

    with pytest.raises(TypeError, match="estimator must be one of marginkit's classifiers"):
        RiverClassifier(SGDClassifier())


@pytest.mark.parametrize(
    "params, error, message",
    [
        ({"classes": ["a"]}, ValueError, "The number of classes has to be greater than one"),
        ({"classes": ["a", 1]}, ValueError, "Mix of label input types"),
        ({"features": "ab"}, TypeError, "features must be a sequence of feature names"),
        ({"features": ["a", "b", "a"]}, ValueError, r"features must be unique; \['a'\]"),
    ],
)
def test_parameters_are_checked(params, error, message):
    with pytest.raises(error, match=message):
        RiverClassifier(ALMAClassifier(), **params)


def test_a_label_outside_classes_raises():
    bridge = RiverClassifier(ALMAClassifier(), classes=["a", "b"])
    with pytest.raises(ValueError, match=r"y contains labels \['c'\] that are not in classes"):
        bridge.learn_one({"x": 1.0}, "c")
    bridge.learn_one({"x": 1.0}, "a")
    with pytest.raises(ValueError, match=r"y contains labels \['c'\] that are not in classes"):
        bridge.learn_one({"x": 1.0}, "c")
    with pytest.raises(ValueError, match=r"y contains labels \['c'\]"):
        bridge.learn_many(pd.DataFrame({"x": [1.0, 2.0]}), pd.Series(["a", "c"]))


def test_a_third_label_without_classes_says_to_pass_them():
    bridge = RiverClassifier(ALMAClassifier())
    bridge.learn_one({"x": 1.0}, "a")
    bridge.learn_one({"x": -1.0}, "b")
    with pytest.raises(ValueError, match="takes the first two labels of the stream. Pass classes"):
        bridge.learn_one({"x": 2.0}, "c")


@pytest.mark.parametrize(
    "value, message",
    [
        ("red", r"takes numbers as features; feature 'x' is 'red'. Encode it first"),
        (None, r"takes numbers as features; feature 'x' is None"),
        (float("nan"), r"Input x contains NaN \(feature 'x'\)"),
        (float("inf"), r"Input x contains infinity \(feature 'x'\)"),
    ],
)
@pytest.mark.parametrize("fitted", [False, True])
def test_a_feature_that_is_not_a_finite_number_raises(value, message, fitted):
    bridge = RiverClassifier(ALMAClassifier(), classes=["a", "b"])
    if fitted:
        bridge.learn_one({"x": 1.0, "y": 2.0}, "a")
    with pytest.raises(ValueError, match=message):
        bridge.learn_one({"x": value, "y": 1.0}, "b")
    if fitted:
        with pytest.raises(ValueError, match=message):
            bridge.predict_one({"x": value, "y": 1.0})
        if value is None:  # (a frame holds it as NaN)
            message = r"Input x contains NaN \(feature 'x'\)"
        with pytest.raises(ValueError, match=message):
            bridge.learn_many(pd.DataFrame({"x": [1.0, value]}), pd.Series(["a", "b"]))


def test_a_first_fit_that_raises_keeps_nothing_of_its_rows():
    bridge = RiverClassifier(ALMAClassifier(), classes=["a", "b"])
    with pytest.raises(ValueError, match=r"0 feature\(s\)"):
        bridge.learn_one({}, "a")
    assert bridge.features_ is None and bridge.estimator_ is None
    bridge.learn_one({"x": 1.0}, "a")
    assert bridge.features_ == ["x"] and bridge.estimator_.n_trials_ == 1

    waiting = RiverClassifier(ALMAClassifier())
    waiting.learn_one({"x": 1.0}, "a")
    with pytest.raises(ValueError, match="Mix of label input types"):
        waiting.learn_one({"x": 2.0}, 1)
    assert waiting.classes_ is None
    waiting.learn_one({"x": -1.0}, "b")
    assert waiting.classes_ == ["a", "b"] and waiting.estimator_.n_trials_ == 2


def test_learn_many_needs_as_many_labels_as_rows():
    bridge = RiverClassifier(ALMAClassifier(), classes=["a", "b"])
    with pytest.raises(ValueError, match="inconsistent numbers of samples: \\[2, 1\\]"):
        bridge.learn_many(pd.DataFrame({"x": [1.0, 2.0]}), pd.Series(["a"]))


# -- frames --------------------------------------------------------------------------
@pytest.mark.parametrize("classes", [None, ["ant", "bee", "cat"]])
def test_learn_many_is_learn_one_however_the_stream_is_cut(classes):
    rows, labels, X, _ = stream(n=90, n_classes=3 if classes else 2, seed=6)
    for x in rows[7:50]:
        x["f3"] = 0.0  # left out of their frame below: a missing column counts as 0
    one = RiverClassifier(ALMAClassifier(), classes=classes)
    for x, label in zip(rows, labels, strict=True):
        one.learn_one(x, label)
    many = RiverClassifier(ALMAClassifier(), classes=classes)
    for lo, hi in [(0, 1), (1, 7), (7, 50), (50, 90)]:
        frame = pd.DataFrame(rows[lo:hi]).drop(columns="f3" if lo == 7 else [])
        many.learn_many(frame, pd.Series(labels[lo:hi]))
    same_model(one.estimator_, many.estimator_, X)
    frame = pd.DataFrame(rows, index=np.arange(100, 190))
    predicted = many.predict_many(frame)
    assert predicted.index.equals(frame.index)
    assert predicted.tolist() == [one.predict_one(x) for x in rows]
    probabilities = many.predict_proba_many(frame)
    assert probabilities.to_dict(orient="records") == [one.predict_proba_one(x) for x in rows]


def test_predict_many_before_the_first_fit():
    frame = pd.DataFrame({"x": [1.0, 2.0]})
    assert RiverClassifier(ALMAClassifier()).predict_many(frame).tolist() == [None, None]
    assert RiverClassifier(ALMAClassifier()).predict_proba_many(frame).shape == (2, 0)
    bridge = RiverClassifier(ALMAClassifier(), classes=["b", "a"])
    assert bridge.predict_many(frame).tolist() == ["a", "a"]
    assert bridge.predict_proba_many(frame).to_dict(orient="list") == {
        "a": [1.0, 1.0],
        "b": [0.0, 0.0],
    }


# -- pickles -------------------------------------------------------------------------
@pytest.mark.parametrize("est", [ALMAClassifier(), KernelALMAClassifier(kernel="rbf")])
def test_a_pickled_bridge_resumes_as_the_one_that_went_on(est):
    rows, labels, X, _ = stream(n=80, seed=7)
    bridge = RiverClassifier(est, classes=["ant", "bee"])
    for x, label in zip(rows[:40], labels[:40], strict=True):
        bridge.learn_one(x, label)
    loaded = pickle.loads(pickle.dumps(bridge))
    for model in (bridge, loaded):
        for x, label in zip(rows[40:], labels[40:], strict=True):
            model.learn_one(x, label)
    same_model(bridge.estimator_, loaded.estimator_, X)
    assert [loaded.predict_one(x) for x in rows] == [bridge.predict_one(x) for x in rows]


# -- an optional extra -----------------------------------------------------------------
def test_only_the_bridge_imports_river():
    """river stays an optional extra: no other module of marginkit imports it."""
    import re
    from pathlib import Path

    package = Path(marginkit.__file__).parent
    statement = re.compile(r"^\s*(import|from) river\b", re.MULTILINE)
    importers = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if statement.search(path.read_text())
    }
    assert importers == {"river.py"}


def test_without_river_the_bridge_says_how_to_install_it(monkeypatch):
    import importlib

    monkeypatch.setitem(sys.modules, "river", None)  # (import river then fails)
    monkeypatch.delitem(sys.modules, "marginkit.river")
    with pytest.raises(ImportError, match=r'pip install "marginkit\[river\]"'):
        importlib.import_module("marginkit.river")
