"""The kernel engine's block products: dense BLAS when the data are dense enough, sparse
products when they are truly sparse; the model is the same either way."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm

from marginkit import KernelALMAClassifier, KernelPUMMAClassifier
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
