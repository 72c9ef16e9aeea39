"""The kernel engine's block products: dense BLAS when the data are dense enough, sparse
products when they are truly sparse; the model is the same either way."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import fit_overlapped, make_blobs_pm

from marginkit import (
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
)
from marginkit._core import kernels
from marginkit._core.kernels import gram, product_operands, sparse_gram


def test_the_product_is_dense_for_dense_enough_data_only():
    rng = np.random.default_rng(0)
    dense_enough = sp.random(50, 40, density=0.2, random_state=1, format="csr")
    A, B = product_operands(dense_enough, dense_enough)
    assert not sp.issparse(A) and not sp.issparse(B)
    # 5% a side: the scatter product is faster than BLAS over 2000 columns
    A, B = product_operands(*[sp.random(50, 2000, density=0.05, random_state=3, format="csr")] * 2)
    assert sp.issparse(A) and sp.issparse(B)
    text_like = sp.random(50, 20_000, density=0.005, random_state=2, format="csr")
    A, B = product_operands(text_like, text_like)
    assert sp.issparse(A) and sp.issparse(B)
    plain = rng.normal(size=(5, 4))
    assert product_operands(plain, plain)[0] is plain


@pytest.mark.parametrize(
    "make",
    [
        lambda: KernelALMAClassifier(
            shuffle=False, kernel="rbf", gamma=0.3, alpha=0.9, max_iter=2, output="last"
        ),
        lambda: KernelPUMMAClassifier(
            shuffle=False, kernel="poly", degree=2, lam=0.5, max_iter=3, output="last"
        ),
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


@pytest.mark.parametrize(
    "make,fold_below",
    [
        (
            lambda: KernelALMAClassifier(
                shuffle=False,
                kernel="rbf",
                gamma=0.3,
                max_iter=3,
                block_size=8,
                alpha=1.0,
                output="last",
            ),
            None,
        ),
        # folds of the scale during a block: the next block's sums are made again
        (
            lambda: KernelALMAClassifier(
                shuffle=False,
                kernel="rbf",
                gamma=0.5,
                alpha=0.6,
                block_size=8,
                output="last",
                max_iter=1,
            ),
            0.95,
        ),
        # forgotten hypotheses: the same
        (
            lambda: KernelROMMAClassifier(
                shuffle=False,
                kernel="poly",
                degree=2,
                aggressive=True,
                max_iter=3,
                block_size=8,
                output="last",
            ),
            None,
        ),
        (
            lambda: KernelPerceptronClassifier(
                shuffle=False, kernel="linear", max_iter=2, block_size=5, output="last"
            ),
            None,
        ),
    ],
    ids=["alma-epochs", "alma-folds", "aggressive-romma", "perceptron"],
)
def test_products_made_ahead_give_the_same_model_bit_for_bit(monkeypatch, make, fold_below):
    """The next block's products in a worker thread while the walk runs: every sum is
    split as without the worker, so the model is the same to the last bit."""
    X, y = make_blobs_pm(n=240, d=6, n_classes=3, seed=7)
    X = X * np.exp(np.random.default_rng(1).uniform(-1.5, 1.5, size=(240, 1)))
    ahead = fit_overlapped(monkeypatch, True, make, X, y, fold_below)
    plain = fit_overlapped(monkeypatch, False, make, X, y, fold_below)
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


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_scatter_product_is_the_matrix_product(index_dtype, dtype):
    """Two sparse operands give their product as a dense block: every entry the sum of
    its matching non-zeros, whatever the index type, the order of the indices in a row
    or repeated indices (summed, as scipy reads them); empty rows give zero rows."""
    rng = np.random.default_rng(4)
    A = sp.random(40, 300, density=0.03, random_state=5, format="csr", dtype=dtype)
    B = sp.random(70, 300, density=0.03, random_state=6, format="csr", dtype=dtype)
    keep = np.ones(40, dtype=dtype)
    keep[7] = 0.0  # an empty row
    A = sp.csr_matrix(sp.diags(keep) @ A)
    A.eliminate_zeros()
    for M in (A, B):
        M.indices = M.indices.astype(index_dtype)
        M.indptr = M.indptr.astype(index_dtype)
    # row 3 of A with its indices reversed and one index repeated
    lo, hi = A.indptr[3], A.indptr[4]
    A.indices[lo:hi] = A.indices[lo:hi][::-1].copy()
    A.has_sorted_indices = False
    raw = sp.csr_matrix((np.r_[1.5, 2.5], np.r_[9, 9], np.r_[0, 0, 2]), shape=(2, 300))
    expected = A.toarray().astype(np.float64) @ B.toarray().T
    G = sparse_gram(A, B, dtype)
    assert G.dtype == dtype and G.flags.c_contiguous and G.shape == (40, 70)
    np.testing.assert_allclose(G, expected, rtol=1e-6 if dtype == np.float32 else 1e-13)
    assert not G[7].any()
    col = rng.normal(size=(3, 300))
    col[:, 9] = [1.0, -2.0, 0.5]
    np.testing.assert_allclose(
        sparse_gram(raw, sp.csr_matrix(col)), raw.toarray() @ col.T, rtol=1e-13
    )
    assert sparse_gram(A[:0], B).shape == (0, 70)


def test_the_scatter_product_in_bands_is_the_same(monkeypatch):
    A = sp.random(300, 500, density=0.02, random_state=7, format="csr")
    B = sp.random(400, 500, density=0.02, random_state=8, format="csr")
    monkeypatch.setattr(kernels, "SCATTER_THREADS", 1)
    one = sparse_gram(A, B)
    monkeypatch.setattr(kernels, "SCATTER_THREADS", 4)
    monkeypatch.setattr(kernels, "FINISH_BAND", 1000)
    np.testing.assert_array_equal(sparse_gram(A, B), one)


def test_gram_takes_the_faster_product_and_gives_a_dense_block():
    text_like = sp.random(30, 5000, density=0.004, random_state=9, format="csr")
    dense = np.random.default_rng(10).normal(size=(20, 5000))
    for A, B in [(text_like, text_like), (text_like, dense), (dense, text_like), (dense, dense)]:
        G = gram(A, B)
        assert isinstance(G, np.ndarray) and G.flags.c_contiguous
        a = A.toarray() if sp.issparse(A) else A
        b = B.toarray() if sp.issparse(B) else B
        np.testing.assert_allclose(G, a @ b.T, rtol=1e-12, atol=1e-12)


def test_truly_sparse_input_gives_the_dense_model():
    """Text-like rows (0.5% non-zeros) go through the scatter product: the same
    corrections and support vectors as the same rows densified."""
    rng = np.random.default_rng(11)
    X = sp.random(400, 3000, density=0.005, random_state=12, format="csr")
    X.data = rng.uniform(0.5, 2.0, X.nnz)
    w = rng.normal(size=3000)
    y = np.where(X @ w > np.median(X @ w), 1, -1)
    assert _density_product(X) < kernels.DENSE_PRODUCT_DENSITY

    def make():
        return KernelALMAClassifier(
            shuffle=False, kernel="rbf", gamma=0.1, alpha=0.9, max_iter=2, output="last"
        )

    sparse, dense = make().fit(X, y), make().fit(X.toarray(), y)
    assert sparse.n_corrections_ == dense.n_corrections_ > 50
    np.testing.assert_array_equal(sparse.support_, dense.support_)
    np.testing.assert_allclose(
        sparse.decision_function(X), dense.decision_function(X), rtol=1e-12, atol=1e-14
    )


def _density_product(X):
    return (X.nnz / (X.shape[0] * X.shape[1])) ** 2
