"""marginkit.plotting: margins of outputs, margin distributions, learning curves and
prequential records."""

import numpy as np
import pytest
from conftest import make_blobs_pm

import marginkit
from marginkit import ALMAClassifier, KernelPerceptronClassifier
from marginkit.cli import main
from marginkit.plotting import (
    learning_curve,
    output_margins,
    plot_learning_curve,
    plot_margin_distribution,
)

matplotlib = pytest.importorskip("matplotlib", reason="the plots need the 'plot' extra")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")


def test_output_margins_binary_and_multiclass():
    X, y = make_blobs_pm(n=80, d=4, n_classes=2, seed=0)
    clf = ALMAClassifier(
        shuffle=False, fit_intercept=True, max_iter=3, alpha=1.0, output="last"
    ).fit(X, y)
    f = clf.decision_function(X)
    np.testing.assert_allclose(output_margins(clf, X, y), np.where(y == clf.classes_[1], f, -f))
    X, y = make_blobs_pm(n=90, d=4, n_classes=3, seed=1)
    clf = ALMAClassifier(
        shuffle=False, fit_intercept=True, max_iter=3, alpha=1.0, output="last"
    ).fit(X, y)
    F = clf.decision_function(X)
    want = [F[i, y[i]] - np.max(np.delete(F[i], y[i])) for i in range(len(y))]
    np.testing.assert_allclose(output_margins(clf, X, y), want)
    # a positive margin is a correct prediction
    assert np.array_equal(output_margins(clf, X, y) > 0, clf.predict(X) == y)
    with pytest.raises(ValueError, match="labels the model does not know"):
        output_margins(clf, X, np.full(len(y), 9))


def test_margin_distribution_plot():
    X, y = make_blobs_pm(n=100, d=4, n_classes=3, seed=2)
    clf = KernelPerceptronClassifier(
        shuffle=False, kernel="rbf", gamma=0.5, max_iter=2, output="last"
    ).fit(X, y)
    fig, ax = plt.subplots()
    for output in ["last", "avg", "voted"]:
        assert plot_margin_distribution(clf.set_params(output=output), X, y, ax=ax) is ax
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) == len(y)]
    assert len(lines) == 3
    # the curve is the empirical distribution function of the margins
    ys = lines[0].get_ydata()
    assert ys[-1] == 1.0 and np.all(np.diff(ys) >= 0)
    assert ax.get_xlabel().startswith("margin") and ax.get_legend() is not None
    plt.close(fig)
    new_ax = plot_margin_distribution(clf, X, y)
    assert new_ax.figure is not fig
    plt.close(new_ax.figure)


def test_learning_curve_records_and_plots():
    X, y = make_blobs_pm(n=300, d=5, n_classes=3, seed=3)
    Xt, yt = make_blobs_pm(n=100, d=5, n_classes=3, seed=4)
    # a bias coordinate given: partial_fit's first call fixes "rms" from its rows only
    params = dict(shuffle=False, alpha=0.8, intercept_scaling=2.0, output="last", max_iter=1)
    curve = learning_curve(
        ALMAClassifier(**params),
        X,
        y,
        Xt,
        yt,
        n_points=6,
        outputs=("last", "avg"),
    )
    assert list(curve["trials"]) == [50, 100, 150, 200, 250, 300]
    assert np.all(np.diff(curve["corrections"]) >= 0)
    whole = ALMAClassifier(**params).fit(X, y)
    assert curve["corrections"][-1] == whole.n_corrections_
    assert np.isclose(curve["error"]["last"][-1], np.mean(whole.predict(Xt) != yt))
    ax = plot_learning_curve(curve, title="t")
    assert ax.get_title() == "t" and ax.get_ylabel() == "test error (%)"
    assert len(ax.figure.axes) == 2  # the corrections on the twin axis
    plt.close(ax.figure)


def test_evaluate_plot_writes_a_png(tmp_path, capsys):
    from sklearn.datasets import dump_svmlight_file

    X, y = make_blobs_pm(n=120, d=4, n_classes=2, seed=5)
    data = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(data))
    model = tmp_path / "m.skops"
    marginkit.save(
        ALMAClassifier(
            shuffle=False, fit_intercept=True, alpha=1.0, output="last", max_iter=1
        ).fit(X, y),
        model,
    )
    png = tmp_path / "margins.png"
    assert main(["evaluate", str(model), str(data), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_prequential_draws_a_line_per_record():
    """Several records on one figure: a line of windowed accuracy each, named with its
    overall accuracy."""
    from marginkit.plotting import plot_prequential
    from marginkit.prequential import prequential_score

    X, y = make_blobs_pm(n=400, d=4, n_classes=2, seed=3)
    scores = [
        prequential_score(ALMAClassifier(output=out), X, y, chunk_size=50, label=out)
        for out in ("last", "avg")
    ]
    ax = plot_prequential(scores)
    lines = ax.get_lines()
    assert [line.get_label().split(" ")[0] for line in lines] == ["last", "avg"]
    np.testing.assert_array_equal(lines[0].get_xdata(), scores[0].rows)
    np.testing.assert_allclose(lines[1].get_ydata(), 100 * scores[1].windowed)
    assert plot_prequential(scores[0], ax=plt.figure().add_subplot()).get_lines()
    plt.close("all")
