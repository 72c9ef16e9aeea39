"""Prequential evaluation: each chunk predicted by the model before it, then learnt."""

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file
from sklearn.linear_model import LogisticRegression

from marginkit import ALMAClassifier, KernelALMAClassifier, PerceptronClassifier
from marginkit.prequential import prequential_score


def drifting(n=1200, seed=0):
    """Rows whose concept flips half-way."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
    y[n // 2 :] *= -1
    return X, y


def by_hand(est, X, y, chunk_size, window):
    """The record written out: predict each chunk with the model before it, learn it."""
    hits, rows, windowed = [], [], []
    for i in range(0, X.shape[0], chunk_size):
        Xc, yc = X[i : i + chunk_size], y[i : i + chunk_size]
        if i:
            hits.extend(est.predict(Xc) == yc)
            est.partial_fit(Xc, yc)
        else:
            est.partial_fit(Xc, yc, classes=np.unique(y))
        rows.append(i + Xc.shape[0])
        windowed.append(np.mean(hits[-window:]) if hits else np.nan)
    return np.array(hits), np.array(rows), np.array(windowed), est


@pytest.mark.parametrize(
    "est",
    [
        ALMAClassifier(output="last"),
        PerceptronClassifier(),
        KernelALMAClassifier(kernel="rbf", budget=50),
    ],
    ids=lambda est: type(est).__name__,
)
def test_the_record_is_predict_then_learn(est):
    """Every row is scored by the model before its chunk, then learnt: the record is
    that of the loop written out, window after window."""
    X, y = drifting()
    score = prequential_score(est, X, y, chunk_size=70, window=150)
    hits, rows, windowed, learnt = by_hand(est.__class__(**est.get_params()), X, y, 70, 150)
    assert score.n_rows == 1200 and score.n_scored == hits.shape[0] == 1200 - 70
    assert score.accuracy == pytest.approx(hits.mean(), abs=0, rel=1e-15)
    np.testing.assert_array_equal(score.rows, rows)
    np.testing.assert_allclose(score.windowed, windowed, rtol=1e-15)
    assert np.isnan(score.windowed[0])  # the first chunk has no model to score it
    # the model is the one of the whole stream, learnt chunk by chunk
    np.testing.assert_array_equal(
        score.estimator.decision_function(X), learnt.decision_function(X)
    )
    assert score.seconds > 0 and score.seconds_per_row == score.seconds / 1200
    assert score.model_bytes > 0 and score.label == type(est).__name__


def test_the_estimator_given_is_left_as_it_was():
    X, y = drifting(300)
    est = ALMAClassifier()
    score = prequential_score(est, X, y)
    assert not hasattr(est, "classes_") and score.estimator is not est


def test_rows_chunks_and_a_file_give_the_same_record(tmp_path):
    """A stream of arrays, of (X, y) chunks, or in a file is scored the same."""
    X, y = drifting(500)
    path = tmp_path / "stream.svm"
    dump_svmlight_file(X, y, str(path))
    est = ALMAClassifier(output="last")
    rows = prequential_score(est, X, y, chunk_size=60, window=100)
    chunks = ((X[i : i + 60], y[i : i + 60]) for i in range(0, 500, 60))
    chunked = prequential_score(est, chunks, classes=[-1, 1], chunk_size=60, window=100)
    filed = prequential_score(est, path, chunk_size=60, window=100)
    for other in (chunked, filed):
        assert other.n_scored == rows.n_scored and other.accuracy == rows.accuracy
        np.testing.assert_array_equal(other.rows, rows.rows)
        np.testing.assert_array_equal(other.windowed, rows.windowed)


def test_a_window_of_one_row_is_the_last_row_scored():
    X, y = drifting(400)
    score = prequential_score(ALMAClassifier(output="last"), X, y, chunk_size=50, window=1)
    est = ALMAClassifier(output="last")
    hits = by_hand(est, X, y, 50, 1)[0]
    np.testing.assert_array_equal(score.windowed[1:], hits[49::50])


def test_the_window_follows_a_change_of_concept():
    """After the concept flips, the windowed accuracy of the last hypothesis comes back
    while the overall accuracy keeps the first half's errors."""
    X, y = drifting(4000)
    score = prequential_score(ALMAClassifier(output="last"), X, y, chunk_size=100, window=500)
    assert score.windowed[19] > 0.9  # the first concept learnt
    assert score.windowed[21] < 0.8  # the flip
    assert score.windowed[-1] > 0.9  # the second concept learnt
    assert score.accuracy < score.windowed[-1]


def test_any_estimator_with_partial_fit():
    """scikit-learn's estimators are scored too (here one without partial_fit is
    refused, below): the evaluator asks only partial_fit and predict."""
    from sklearn.linear_model import SGDClassifier

    X, y = drifting(300)
    score = prequential_score(SGDClassifier(random_state=0), X, y, chunk_size=50)
    assert score.n_scored == 250 and 0 <= score.accuracy <= 1


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"chunk_size": 0}, ValueError, "chunk_size must be an integer >= 1, got 0"),
        ({"chunk_size": True}, ValueError, "chunk_size must be an integer >= 1, got True"),
        ({"window": 0}, ValueError, "window must be an integer >= 1, got 0"),
        ({"window": 2.5}, ValueError, "window must be an integer >= 1, got 2.5"),
    ],
)
def test_bad_sizes_are_refused(kwargs, error, match):
    X, y = drifting(100)
    with pytest.raises(error, match=match):
        prequential_score(ALMAClassifier(), X, y, **kwargs)


def test_bad_streams_are_refused(tmp_path):
    X, y = drifting(100)
    chunks = [(X[:50], y[:50])]
    with pytest.raises(ValueError, match="classes must be given with a stream of"):
        prequential_score(ALMAClassifier(), chunks)
    with pytest.raises(ValueError, match="y must be given with an array of rows"):
        prequential_score(ALMAClassifier(), X)
    path = tmp_path / "s.svm"
    dump_svmlight_file(X, y, str(path))
    with pytest.raises(ValueError, match="y must be None when the stream is a file"):
        prequential_score(ALMAClassifier(), path, y)
    with pytest.raises(ValueError, match="the stream holds no rows"):
        prequential_score(ALMAClassifier(), [], classes=[-1, 1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        prequential_score(ALMAClassifier(), X, y[:-1])
    with pytest.raises(TypeError, match="needs an estimator with partial_fit and predict"):
        prequential_score(LogisticRegression(), X, y)


def test_river_scores_the_same_rows_the_same():
    """river's own evaluator (``progressive_val_score``) on a marginkit model wrapped by
    ``river.compat``, row by row, counts the same hits as ``prequential_score`` with
    chunks of one row; river also scores the first row, which a model that has learnt
    nothing gives its first class."""
    pytest.importorskip("river", reason="river is an optional extra")
    from river import compat, datasets, evaluate, metrics

    rows = list(datasets.Bananas().take(400))
    X = np.array([[x["1"], x["2"]] for x, _ in rows])
    y = np.array([label for _, label in rows])
    est = KernelALMAClassifier(kernel="rbf", budget=40)
    ours = prequential_score(est, X, y, chunk_size=1)
    wrapped = compat.convert_sklearn_to_river(est, classes=[False, True])
    accuracy = evaluate.progressive_val_score(rows, wrapped, metrics.Accuracy()).get()
    theirs = round(accuracy * 400) - int(y[0] == False)  # noqa: E712 (the first class)
    assert theirs == round(ours.accuracy * ours.n_scored)
