"""The support-vector store that kernel ALMA's family and kernel PUMMA share: one loop
over the blocks (:func:`marginkit._core.kernel.blocks.run_blocks`), one forget, the products of
the next block made ahead for both, and the compiled walks taking bundles."""

import inspect
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import fit_overlapped, make_blobs_pm

from marginkit import KernelPUMMAClassifier, load
from marginkit._core import pairs
from marginkit._core.kernel import blocks, walk

DATA = Path(__file__).parent / "data"


def _spy_on_split(monkeypatch):
    """Count the blocks whose margin sums took kernel rows made ahead and rows made
    after the walk of the block before."""
    seen = {"both": 0}
    original = blocks.BlockProducts._one_sum

    def spy(self, state, block, K, coef, cache, m, bk):
        if K is not None and m > max(self.split, 0):
            seen["both"] += 1
        return original(self, state, block, K, coef, cache, m, bk)

    monkeypatch.setattr(blocks.BlockProducts, "_one_sum", spy)
    return seen


@pytest.mark.parametrize(
    "make,sparse,fold_below",
    [
        (
            lambda: KernelPUMMAClassifier(
                shuffle=False, kernel="rbf", gamma=0.5, max_iter=3, block_size=8, output="last"
            ),
            False,
            None,
        ),
        (
            lambda: KernelPUMMAClassifier(
                shuffle=False,
                kernel="poly",
                degree=2,
                lam=0.5,
                max_iter=2,
                block_size=6,
                output="last",
            ),
            True,
            None,
        ),
        # folds of the scale during a block
        (
            lambda: KernelPUMMAClassifier(
                shuffle=False, kernel="rbf", gamma=0.3, max_iter=1, block_size=8, output="last"
            ),
            False,
            0.95,
        ),
    ],
    ids=["rbf-epochs", "sparse-poly", "folds"],
)
def test_pumma_products_made_ahead_give_the_same_model_bit_for_bit(
    monkeypatch, make, sparse, fold_below
):
    """Kernel PUMMA on the loop of kernel ALMA: the next block's kernel rows made while
    the walk runs, the margin sums one product as without the worker."""
    X, y = make_blobs_pm(n=200, d=6, n_classes=3, seed=5)
    X = X * np.exp(np.random.default_rng(2).uniform(-1.0, 1.0, size=(200, 1)))
    if sparse:
        X = X * (np.random.default_rng(3).random(X.shape) < 0.5)
        X = sp.csr_matrix(X)
    seen = _spy_on_split(monkeypatch)
    ahead = fit_overlapped(monkeypatch, True, make, X, y, fold_below)
    assert seen["both"] > 0  # the overlap path ran
    plain = fit_overlapped(monkeypatch, False, make, X, y, fold_below)
    state, ref = ahead._kstate, plain._kstate
    assert state.m == ref.m and state.m > 10
    assert ahead.n_corrections_ == plain.n_corrections_
    np.testing.assert_array_equal(ahead.support_, plain.support_)
    for name in ("A", "V", "beta", "acc", "T_ins"):
        np.testing.assert_array_equal(getattr(state, name)[: state.m], getattr(ref, name)[: ref.m])
    assert state.n_kernel_evals == ref.n_kernel_evals
    for output in ["last", "avg", "voted"]:
        ahead.set_params(output=output)
        plain.set_params(output=output)
        np.testing.assert_array_equal(ahead.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("name", ["kernel_romma", "kernel_pumma"])
def test_models_saved_before_the_shared_store_load_and_predict_the_same(name):
    """Files saved before both algorithms shared the store (ROMMA's with the votes'
    coefficients ``V``, PUMMA's with sparse pairs) load and give the same decisions: the
    same votes, and values to 1e-12 (the kernel products go through BLAS, whose kernels
    round differently on other CPUs; the fixture was written on one)."""
    expected = np.load(DATA / "kernel_models_0.1.npz")
    X = expected["X"]
    if name == "kernel_pumma":
        X = sp.csr_matrix(X)
    model = load(DATA / f"{name}_0.1.skops")
    np.testing.assert_array_equal(model.support_, expected[f"{name}_support"])
    for output in ["last", "avg", "voted"]:
        model.set_params(output=output)
        got, want = model.decision_function(X), expected[f"{name}_{output}"]
        if output == "voted":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_compiled_walks_take_bundles():
    """The compiled entry points take the rule whole and their arrays in named bundles."""
    for fn in (walk.kernel_walk, pairs.pumma_walk, walk.forget):
        params = inspect.signature(fn.py_func).parameters
        assert len(params) <= 8, fn
        assert all(name in fn.__doc__ for name in params), fn
    assert pairs.forget is walk.forget  # one forget for both stores
    assert pairs.run_blocks is blocks.run_blocks  # one loop over the blocks
