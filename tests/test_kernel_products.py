"""The kernel engine's block products: dense BLAS when the data are dense enough, sparse
products when they are truly sparse; the model is the same either way."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm

from marginkit import (
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
)
from marginkit._core.kernels import product_operands


def test_the_product_is_dense_for_dense_enough_data_only():
    rng = np.random.default_rng(0)
    dense_enough = sp.random(50, 40, density=0.2, random_state=1, format="csr")
    A, B = product_operands(dense_enough, dense_enough)
    assert not sp.issparse(A) and not sp.issparse(B)
    text_like = sp.random(50, 20_000, density=0.005, random_state=2, format="csr")
    A, B = product_operands(text_like, text_like)
    assert sp.issparse(A) and sp.issparse(B)
    plain = rng.normal(size=(5, 4))
    assert product_operands(plain, plain)[0] is plain


@pytest.mark.parametrize(
    "make",
    [
        lambda: KernelALMAClassifier(kernel="rbf", gamma=0.3, alpha=0.9, n_epochs=2),
        lambda: KernelPUMMAClassifier(kernel="poly", degree=2, lam=0.5, max_epochs=3),
    ],
    ids=["alma", "pumma"],
)
def test_sparse_input_dense_enough_gives_the_dense_model(make):
    X, y = make_blobs_pm(n=300, d=12, n_classes=3, seed=2, sparse_density=0.3)
    sparse = make().fit(X, y)
    dense = make().fit(X.toarray(), y)
    assert sparse.n_corrections_ == dense.n_corrections_
    np.testing.assert_array_equal(sparse.support_, dense.support_)
    for output in ["last", "avg", "voted"]:
        sparse.set_params(output=output)
        dense.set_params(output=output)
        # the same sums, but the norms of sparse rows are summed in another order
        np.testing.assert_allclose(
            sparse.decision_function(X), dense.decision_function(X), rtol=1e-12, atol=1e-14
        )


def _fit_with(monkeypatch, overlap, make, X, y, fold_below=None):
    from marginkit import _kernel_base
    from marginkit._core import kernel

    monkeypatch.setattr(kernel, "OVERLAP", overlap)
    if fold_below is not None:
        original = _kernel_base.KernelOnlineClassifier._initialise

        def often(self, data):
            original(self, data)
            self._fold_below = fold_below

        monkeypatch.setattr(_kernel_base.KernelOnlineClassifier, "_initialise", often)
    return make().fit(X, y)


@pytest.mark.parametrize(
    "make,fold_below",
    [
        (lambda: KernelALMAClassifier(kernel="rbf", gamma=0.3, n_epochs=3, block_size=8), None),
        # folds of the scale during a block: the next block's sums are made again
        (lambda: KernelALMAClassifier(kernel="rbf", gamma=0.5, alpha=0.6, block_size=8), 0.95),
        # forgotten hypotheses: the same
        (
            lambda: KernelROMMAClassifier(
                kernel="poly", degree=2, aggressive=True, n_epochs=3, block_size=8
            ),
            None,
        ),
        (lambda: KernelPerceptronClassifier(kernel="linear", n_epochs=2, block_size=5), None),
    ],
    ids=["alma-epochs", "alma-folds", "aggressive-romma", "perceptron"],
)
def test_products_made_ahead_give_the_same_model_bit_for_bit(monkeypatch, make, fold_below):
    """The next block's products in a worker thread while the walk runs: every sum is
    split as without the worker, so the model is the same to the last bit."""
    X, y = make_blobs_pm(n=240, d=6, n_classes=3, seed=7)
    X = X * np.exp(np.random.default_rng(1).uniform(-1.5, 1.5, size=(240, 1)))
    ahead = _fit_with(monkeypatch, True, make, X, y, fold_below)
    plain = _fit_with(monkeypatch, False, make, X, y, fold_below)
    state, ref = ahead._kstate, plain._kstate
    assert state.m == ref.m and state.m > 10
    np.testing.assert_array_equal(ahead.support_, plain.support_)
    np.testing.assert_array_equal(state.A[: state.m], ref.A[: ref.m])
    np.testing.assert_array_equal(state.acc[: state.m], ref.acc[: ref.m])
    assert state.n_kernel_evals == ref.n_kernel_evals
    for output in ["last", "avg", "voted"]:
        ahead.set_params(output=output)
        plain.set_params(output=output)
        np.testing.assert_array_equal(ahead.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("kernel", ["poly", "rbf", "poly_rbf", "linear"])
def test_the_elementwise_pass_in_bands_is_the_same(monkeypatch, kernel):
    """On many cores the pass over a kernel block runs in row bands, in threads: every
    entry is computed as in one pass."""
    from marginkit._core import kernels

    rng = np.random.default_rng(3)
    A, B = rng.normal(size=(300, 20)), rng.normal(size=(700, 20))
    k = kernels.Kernel(kernel, gamma=0.1, degree=3, coef0=1.0)
    inv_a, inv_b = rng.uniform(0.5, 1.0, 300), rng.uniform(0.5, 1.0, 700)
    sq_a, sq_b = (A * A).sum(1), (B * B).sum(1)
    one = k.normalised(A, B, inv_a, inv_b, sq_a, sq_b)
    monkeypatch.setattr(kernels, "FINISH_THREADS", 4)
    monkeypatch.setattr(kernels, "FINISH_BAND", 1000)
    assert kernels.finish_parts(300, 300 * 700) == 4
    np.testing.assert_array_equal(k.normalised(A, B, inv_a, inv_b, sq_a, sq_b), one)
