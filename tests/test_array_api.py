"""scikit-learn's Array API convention: the kernel estimators make their products where
the arrays live, and answer there; the linear ones compute on the host and answer there.

array-api-strict runs everywhere (two devices, so that an array left on the wrong one
raises); torch runs where it is installed, on its CPU and, marked ``gpu``, on CUDA.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from conftest import make_blobs_pm

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
from marginkit._core.arrays import namespace, to_numpy

xps = pytest.importorskip("array_api_strict", reason="the Array API tests need array-api-strict")


def _torch_devices():
    try:
        import torch
    except ImportError:
        return []
    out = [pytest.param("torch", "cpu", id="torch-cpu")]
    gpu = pytest.mark.gpu
    if torch.cuda.is_available():
        out.append(pytest.param("torch", "cuda", id="torch-cuda", marks=gpu))
    else:
        out.append(
            pytest.param(
                "torch",
                "cuda",
                id="torch-cuda",
                marks=[gpu, pytest.mark.skip(reason="no CUDA device")],
            )
        )
    return out


NAMESPACES = [
    pytest.param("array_api_strict", "CPU_DEVICE", id="strict-cpu"),
    pytest.param("array_api_strict", "device1", id="strict-device1"),
    *_torch_devices(),
]


def put(a, name, device, dtype=None):
    """The numpy array ``a`` as an array of namespace ``name`` on ``device``."""
    a = np.asarray(a) if dtype is None else np.asarray(a, dtype=dtype)
    if name == "array_api_strict":
        return xps.asarray(a, device=xps.Device(device))
    import torch

    return torch.asarray(a, device=device)


def device_of(a):
    return str(a.device)


@pytest.fixture(autouse=True)
def dispatch():
    with sklearn.config_context(array_api_dispatch=True):
        yield


KERNEL = {
    "alma": (KernelALMAClassifier, {"kernel": "poly", "degree": 3, "max_iter": 2}),
    "perceptron": (KernelPerceptronClassifier, {"kernel": "rbf", "gamma": 0.3, "max_iter": 2}),
    "romma": (KernelROMMAClassifier, {"kernel": "rbf", "gamma": 0.3, "max_iter": 2}),
    "aggressive": (
        KernelROMMAClassifier,
        {"kernel": "poly_rbf", "gamma": 0.2, "degree": 3, "aggressive": True},
    ),
    "pumma": (KernelPUMMAClassifier, {"kernel": "rbf", "gamma": 0.3, "lam": 0.5}),
}


def blobs(n_classes, n=240, d=6, seed=0):
    X, y = make_blobs_pm(n=n, d=d, n_classes=n_classes, seed=seed)
    X_test, _ = make_blobs_pm(n=80, d=d, n_classes=n_classes, seed=seed + 1)
    return X, y, X_test


#: The costlier estimators (2 to 4 s a case on 2 cores: their passes run until the rule
#: stops them) run on array-api-strict's default device, and on three classes, only in
#: ``make test-all``: ``make test`` fits them on two classes on its other device, where
#: an array left on the wrong one raises, and the others on both devices.
COSTLIER = {"aggressive", "pumma"}


def _slow_on_the_default_strict_device(values, slow, slow_everywhere=lambda *v: False):
    """``values`` with the namespaces' ids and marks, and the slow mark where ``slow``
    and the namespace is array-api-strict's default device (or ``slow_everywhere``)."""
    for v in values:
        for ns in NAMESPACES:
            marks = list(ns.marks)
            if (slow(*v) and ns.id == "strict-cpu") or slow_everywhere(*v):
                marks.append(pytest.mark.slow)
            yield pytest.param(*ns.values, *v, id="-".join([*map(str, v), ns.id]), marks=marks)


@pytest.mark.parametrize(
    "ns,device,n_classes,name",
    list(
        _slow_on_the_default_strict_device(
            [(n_classes, name) for n_classes in (2, 3) for name in sorted(KERNEL)],
            lambda n_classes, name: name in COSTLIER,
            lambda n_classes, name: name in COSTLIER and n_classes == 3,
        )
    ),
)
def test_kernel_estimators_on_the_arrays_device(ns, device, name, n_classes):
    """The same corrections as on numpy, every output equal to rounding, each answer in
    the namespace and on the device of the input."""
    cls, params = KERNEL[name]
    X, y, X_test = blobs(n_classes)
    with sklearn.config_context(array_api_dispatch=False):
        ref = cls(random_state=2, block_size=16, **params).fit(X, y)
    clf = cls(random_state=2, block_size=16, **params)
    clf.fit(put(X, ns, device), put(y, ns, device))
    Xd = put(X_test, ns, device)
    fitted = ["n_corrections_per_class_", "support_", "n_support_", "dual_coef_"]
    if name == "pumma":
        fitted += ["intercept_", "margin_"]
    for attr in fitted:
        got, want = getattr(clf, attr), getattr(ref, attr)
        assert namespace(got)[0] is not None and device_of(got) == device_of(Xd), attr
        np.testing.assert_allclose(to_numpy(got), want, rtol=1e-9, atol=1e-12, err_msg=attr)
    Xd = put(X_test, ns, device)
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        ref.set_params(output=output)
        scores = clf.decision_function(Xd)
        assert namespace(scores)[0] is not None and device_of(scores) == device_of(Xd)
        np.testing.assert_allclose(
            to_numpy(scores), ref.decision_function(X_test), rtol=1e-9, atol=1e-12
        )
        labels = clf.predict(Xd)
        assert device_of(labels) == device_of(Xd)
        np.testing.assert_array_equal(to_numpy(labels), ref.predict(X_test))
    sv = clf.support_vectors_
    assert device_of(sv) == device_of(Xd)
    np.testing.assert_array_equal(to_numpy(sv), to_numpy(ref.support_vectors_))


@pytest.mark.parametrize("ns,device", NAMESPACES)
def test_weights_on_the_arrays_device(ns, device):
    """Sample weights (on the host or the device, zeros among them) and class weights:
    the model of numpy's, ``class_weight_`` where the model is."""
    cls, params = KERNEL["perceptron"]
    X, y, X_test = blobs(3)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=X.shape[0])
    w[::7] = 0.0
    kw = {"random_state": 0, "block_size": 16, "class_weight": "balanced", **params}
    with sklearn.config_context(array_api_dispatch=False):
        ref = cls(**kw).fit(X, y, sample_weight=w)
    for weights in (w, put(w, ns, device)):
        clf = cls(**kw).fit(put(X, ns, device), put(y, ns, device), sample_weight=weights)
        Xd = put(X_test, ns, device)
        np.testing.assert_allclose(
            to_numpy(clf.decision_function(Xd)), ref.decision_function(X_test), rtol=1e-9
        )
        np.testing.assert_array_equal(to_numpy(clf.support_), ref.support_)
        assert device_of(clf.class_weight_) == device_of(Xd)
        np.testing.assert_array_equal(to_numpy(clf.class_weight_), ref.class_weight_)


@pytest.mark.parametrize("ns,device", NAMESPACES)
def test_partial_fit_and_more_epochs_on_the_device(ns, device):
    """partial_fit over a split stream, and the margin sums kept across epochs, give the
    model of numpy."""
    X, y, X_test = blobs(3)
    params = {"kernel": "rbf", "gamma": 0.3, "block_size": 8, "shuffle": False}
    params.update(alpha=1.0, output="last")
    with sklearn.config_context(array_api_dispatch=False):
        ref = KernelALMAClassifier(max_iter=1, **params).fit(X, y)
        ref3 = KernelALMAClassifier(max_iter=3, **params).fit(X, y)
    clf = KernelALMAClassifier(**params)
    for lo in range(0, X.shape[0], 50):
        clf.partial_fit(put(X[lo : lo + 50], ns, device), y[lo : lo + 50], classes=[0, 1, 2])
    np.testing.assert_array_equal(to_numpy(clf.support_), ref.support_)
    clf3 = KernelALMAClassifier(max_iter=3, **params).fit(put(X, ns, device), y)
    np.testing.assert_array_equal(to_numpy(clf3.support_), ref3.support_)
    np.testing.assert_allclose(
        to_numpy(clf3.decision_function(put(X_test, ns, device))),
        ref3.decision_function(X_test),
        rtol=1e-9,
        atol=1e-12,
    )


@pytest.mark.parametrize("ns,device", NAMESPACES)
@pytest.mark.parametrize("name", ["alma", "aggressive", "pumma"])
def test_one_transfer_per_block(ns, device, name, monkeypatch):
    """Training waits for the device once a block: kernel ALMA's next block's products
    are queued before the walk, and its margins, in-block Gram and kernel rows against
    the block before come to the host together (kernel PUMMA's margins, Gram and
    columns of each problem's x+ and x- too); the model is numpy's (ROMMA's forgotten
    hypotheses and the sums kept across epochs included)."""
    from marginkit._core import arrays

    cls, params = KERNEL[name]
    params = {**params, "max_iter": 2, "shuffle": False, "block_size": 16}
    if name != "pumma":
        params["tol"] = None
    X, y, _ = blobs(3)
    with sklearn.config_context(array_api_dispatch=False):
        ref = cls(**params).fit(X, y)
    calls = []
    real = arrays.to_numpy
    monkeypatch.setattr(arrays, "to_numpy", lambda a, *r: calls.append(1) or real(a, *r))
    clf = cls(**params).fit(put(X, ns, device), y)
    blocks = 2 * -(-X.shape[0] // 16)
    assert len(calls) <= blocks + 12, (len(calls), blocks)
    np.testing.assert_array_equal(to_numpy(clf.support_), ref.support_)
    np.testing.assert_allclose(to_numpy(clf.dual_coef_), ref.dual_coef_, rtol=1e-9, atol=1e-12)


def test_staging_buffers_are_used_in_turn():
    """The transfer's host buffers: two, used in turn (a result stays valid until the
    call after the next), grown for a larger block and made anew for another dtype."""
    torch = pytest.importorskip("torch", reason="stages torch tensors")
    from marginkit._core.arrays import torch_staging

    stage = torch_staging(torch, pinned=False)
    a = torch.arange(12.0, dtype=torch.float64).reshape(3, 4)
    first = stage(a)
    second = stage(a + 100.0)
    np.testing.assert_array_equal(first, a.numpy())
    np.testing.assert_array_equal(second, a.numpy() + 100.0)
    assert not np.shares_memory(first, second)
    third = stage(a + 200.0)
    assert np.shares_memory(first, third)  # the first buffer again
    big = torch.ones((300, 400), dtype=torch.float64)
    np.testing.assert_array_equal(stage(big), big.numpy())
    small = stage(a.to(torch.float32))
    assert small.dtype == np.float32
    np.testing.assert_array_equal(small, a.numpy())


@pytest.mark.parametrize("name", ["alma", "aggressive", "pumma"])
def test_staged_transfer_gives_the_same_model(name, monkeypatch):
    """Each block's results copied into the reused host buffers (as on a GPU, there
    page-locked) train the model of the copy by DLPack, to the last bit, across epochs
    and forgotten hypotheses."""
    torch = pytest.importorskip("torch", reason="stages torch tensors")
    from marginkit._core import arrays

    cls, params = KERNEL[name]
    params = {**params, "max_iter": 2, "shuffle": False, "block_size": 16}
    X, y, X_test = blobs(3)
    ref = cls(**params).fit(torch.asarray(X), y)
    staged = []

    def staging_for(xp, device):
        stage = arrays.torch_staging(torch, pinned=False)
        return lambda a: staged.append(1) or stage(a)

    monkeypatch.setattr(arrays, "staging_for", staging_for)
    clf = cls(**params).fit(torch.asarray(X), y)
    assert len(staged) >= X.shape[0] // 16
    for attr in ["support_", "dual_coef_", "n_corrections_per_class_"]:
        np.testing.assert_array_equal(to_numpy(getattr(clf, attr)), to_numpy(getattr(ref, attr)))
    np.testing.assert_array_equal(
        to_numpy(clf.decision_function(torch.asarray(X_test))),
        to_numpy(ref.decision_function(torch.asarray(X_test))),
    )


@pytest.mark.gpu
def test_page_locked_transfer_on_cuda():
    """On CUDA the transfer goes through page-locked buffers and brings the device's
    values."""
    torch = pytest.importorskip("torch", reason="needs torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from marginkit._core.arrays import backend_of

    with sklearn.config_context(array_api_dispatch=True):
        bk = backend_of(torch.zeros((2, 2), dtype=torch.float64, device="cuda"))
    assert bk._staging is not None
    a = torch.randn((700, 730), dtype=torch.float64, device="cuda")
    b = torch.randn((700, 20), dtype=torch.float64, device="cuda")
    got_a, got_b = bk.hosts(a, b)
    np.testing.assert_array_equal(got_a, a.cpu().numpy())
    np.testing.assert_array_equal(got_b, b.cpu().numpy())
    assert bk._staging._buffers[0].is_pinned()


#: torch operations that launch no kernel on a device (views, and wrapping host data)
_NO_KERNEL = {"slice", "unsqueeze", "permute", "alias", "t", "view", "expand", "lift_fresh"}


def test_device_calls_per_block():
    """A block of kernel ALMA costs about twenty operations on the device (each one is a
    kernel launch on a GPU, about 25 us with torch): the rows gathered once, one product
    against the stored vectors, the block and the block before, its elementwise pass,
    the margins, the margins over the vectors the block before stored, one transfer,
    and the new vectors stored. Counted on torch's CPU, as they would run on CUDA."""
    torch = pytest.importorskip("torch", reason="counts torch's operations")
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.__name__.split(".")[0] not in _NO_KERNEL:
                Count.n += 1
            return func(*args, **(kwargs or {}))

    X, y = make_blobs_pm(n=4096, d=16, n_classes=3, seed=1)
    params = {"kernel": "poly", "degree": 4, "max_iter": 1, "block_size": 256, "shuffle": False}
    clf = KernelALMAClassifier(**params)
    Xt = torch.asarray(X)
    with Count():
        clf.fit(Xt, y)
    blocks = X.shape[0] // 256
    assert clf.support_vectors_.shape[0] > blocks  # corrections in every block
    assert Count.n <= 22 * blocks, (Count.n, blocks)
    with sklearn.config_context(array_api_dispatch=False):
        ref = KernelALMAClassifier(**params).fit(X, y)
    np.testing.assert_array_equal(to_numpy(clf.support_), ref.support_)


@pytest.mark.parametrize("ns,device", NAMESPACES)
def test_auto_block_size(ns, device):
    """block_size="auto" is 768 examples a block for arrays on an accelerator and 256 on
    a CPU (numpy, or a namespace's CPU device): the model of that block size, to the
    last bit, and its kernel entries (the in-block Grams make the count depend on it)."""
    from marginkit._kernel_base import AUTO_BLOCK_SIZE

    X, y = make_blobs_pm(n=1800, d=6, n_classes=3, seed=2)
    params = {"kernel": "rbf", "gamma": 0.3, "max_iter": 1, "output": "avg", "shuffle": False}
    cpu = "cpu" in device.lower()
    want = AUTO_BLOCK_SIZE["host" if cpu else "accelerator"]
    other = AUTO_BLOCK_SIZE["accelerator" if cpu else "host"]
    auto = KernelALMAClassifier(**params).fit(put(X, ns, device), y)
    same = KernelALMAClassifier(block_size=want, **params).fit(put(X, ns, device), y)
    np.testing.assert_array_equal(to_numpy(auto.dual_coef_), to_numpy(same.dual_coef_))
    diff = KernelALMAClassifier(block_size=other, **params).fit(put(X, ns, device), y)
    assert auto.n_kernel_evaluations_ == same.n_kernel_evaluations_
    assert auto.n_kernel_evaluations_ != diff.n_kernel_evaluations_
    with sklearn.config_context(array_api_dispatch=False):
        host = KernelALMAClassifier(**params).fit(X, y)
        ref = KernelALMAClassifier(block_size=AUTO_BLOCK_SIZE["host"], **params).fit(X, y)
    np.testing.assert_array_equal(host.dual_coef_, ref.dual_coef_)
    assert host.n_kernel_evaluations_ == ref.n_kernel_evaluations_


@pytest.mark.parametrize("ns,device", NAMESPACES)
def test_float32_computes_in_float32(ns, device):
    """float32 input: the products in float32, decisions within a few corrections of
    float64's, the decision values in float64 (as without dispatch)."""
    X, y, X_test = blobs(2, n=600, d=10, seed=3)
    params = {"shuffle": False, "kernel": "poly", "degree": 4, "random_state": 0}
    clf64 = KernelALMAClassifier(**params).fit(put(X, ns, device), y)
    clf32 = KernelALMAClassifier(**params).fit(put(X, ns, device, np.float32), y)
    sv = clf32.support_vectors_
    assert "float32" in str(sv.dtype)
    scores = clf32.decision_function(put(X_test, ns, device, np.float32))
    assert "float64" in str(scores.dtype)
    n32, n64 = clf32.n_corrections_, clf64.n_corrections_
    assert abs(n32 - n64) <= max(2, 0.02 * n64), (n32, n64)
    agree = np.mean(
        to_numpy(clf32.predict(put(X_test, ns, device, np.float32)))
        == to_numpy(clf64.predict(put(X_test, ns, device)))
    )
    assert agree >= 0.97


def test_numpy_float32_under_dispatch_stays_float32():
    X, y, X_test = blobs(2)
    clf = KernelALMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.3, alpha=1.0, output="last", max_iter=1
    ).fit(X.astype(np.float32), y)
    assert clf.support_vectors_.dtype == np.float32
    assert clf.decision_function(X_test.astype(np.float32)).dtype == np.float64
    with sklearn.config_context(array_api_dispatch=False):
        # without dispatch, as ever: float64 numpy
        clf = KernelALMAClassifier(
            shuffle=False, kernel="rbf", gamma=0.3, alpha=1.0, output="last", max_iter=1
        ).fit(X.astype(np.float32), y)
        assert clf.support_vectors_.dtype == np.float64


def test_sparse_input_under_dispatch_stays_on_the_host():
    X, y = make_blobs_pm(n=200, d=12, seed=4, sparse_density=0.3)
    with sklearn.config_context(array_api_dispatch=False):
        ref = KernelALMAClassifier(
            shuffle=False, kernel="rbf", gamma=0.1, alpha=1.0, output="last", max_iter=1
        ).fit(X, y)
    clf = KernelALMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.1, alpha=1.0, output="last", max_iter=1
    ).fit(X, y)
    np.testing.assert_array_equal(clf.support_, ref.support_)
    assert sp.issparse(clf.support_vectors_)


@pytest.mark.parametrize("ns,device", NAMESPACES)
def test_answers_where_the_model_was_fitted(ns, device, tmp_path):
    """scikit-learn's rule under dispatch: a model answers arrays of the namespace and
    device of its fit, and raises a ValueError naming the method on others; without
    dispatch it answers numpy, and a saved model loads on the host (float64)."""
    X, y, X_test = blobs(3)
    params = {"shuffle": False, "kernel": "rbf", "gamma": 0.3, "random_state": 0}
    with sklearn.config_context(array_api_dispatch=False):
        host = KernelALMAClassifier(**params).fit(X, y)
        want = host.decision_function(X_test)
    Xd = put(X_test, ns, device)
    for method in ("decision_function", "predict"):
        with pytest.raises(ValueError, match=rf"KernelALMAClassifier\.{method}\(\) must use"):
            getattr(host, method)(Xd)
    fitted = KernelALMAClassifier(**params).fit(put(X, ns, device), y)
    for method in ("decision_function", "predict"):
        with pytest.raises(ValueError, match="same namespace and the same device"):
            getattr(fitted, method)(X_test)
    other = put(X_test, "array_api_strict", "device1" if device != "device1" else "CPU_DEVICE")
    with pytest.raises(ValueError, match="same namespace and the same device"):
        fitted.predict(other)
    np.testing.assert_allclose(to_numpy(fitted.decision_function(Xd)), want, rtol=1e-9, atol=1e-12)
    marginkit.save(fitted, tmp_path / "m.skops")
    loaded = marginkit.load(tmp_path / "m.skops")
    np.testing.assert_allclose(loaded.decision_function(X_test), want, rtol=1e-9, atol=1e-12)
    assert isinstance(loaded.support_, np.ndarray)
    with sklearn.config_context(array_api_dispatch=False):
        # without dispatch numpy input is answered anywhere; the model comes to the host
        np.testing.assert_allclose(fitted.decision_function(X_test), want, rtol=1e-9, atol=1e-12)
    assert isinstance(fitted.n_corrections_per_class_, np.ndarray)


@pytest.mark.parametrize("ns,device", NAMESPACES)
def test_checkpointed_fit_on_the_device(ns, device, tmp_path):
    X, y, _ = blobs(2)
    params = {"shuffle": False, "kernel": "rbf", "gamma": 0.3, "max_iter": 2, "random_state": 0}
    Xd = put(X, ns, device)
    plain = KernelALMAClassifier(**params).fit(Xd, y)
    ckpt = KernelALMAClassifier(**params).fit(
        Xd, y, checkpoint=tmp_path / "c.skops", checkpoint_every=64
    )
    np.testing.assert_array_equal(to_numpy(ckpt.support_), to_numpy(plain.support_))


LINEAR = [
    (ALMAClassifier, {"p": 2, "alpha": 0.9}),
    (ALMAClassifier, {"p": 4, "alpha": 0.9, "fit_intercept": True}),
    (PerceptronClassifier, {}),
    (ROMMAClassifier, {"aggressive": True}),
    (MarginPerceptronClassifier, {}),
    (PUMMAClassifier, {"lam": 0.5}),
]


@pytest.mark.parametrize("ns,device", NAMESPACES)
@pytest.mark.parametrize("cls,params", LINEAR, ids=lambda v: getattr(v, "__name__", ""))
def test_linear_estimators_compute_on_the_host(ns, device, cls, params):
    """Their compiled sparse passes run on the host: the arrays come there, the model is
    numpy's, the answers go back to the input's namespace and device."""
    X, y, X_test = blobs(3)
    with sklearn.config_context(array_api_dispatch=False):
        ref = cls(random_state=0, **params).fit(X, y)
    clf = cls(random_state=0, **params).fit(put(X, ns, device), put(y, ns, device))
    np.testing.assert_array_equal(clf.coef_, ref.coef_)
    Xd = put(X_test, ns, device)
    scores = clf.decision_function(Xd)
    assert device_of(scores) == device_of(Xd)
    np.testing.assert_array_equal(to_numpy(scores), ref.decision_function(X_test))
    np.testing.assert_array_equal(to_numpy(clf.predict(Xd)), ref.predict(X_test))
    clf.partial_fit(put(X_test, ns, device), ref.predict(X_test))


def test_string_labels_come_back_as_numpy():
    X, y, X_test = blobs(2)
    labels = np.array(["no", "yes"])[y]
    clf = KernelALMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.3, alpha=1.0, output="last", max_iter=1
    ).fit(put(X, "array_api_strict", "device1"), labels)
    out = clf.predict(put(X_test, "array_api_strict", "device1"))
    assert isinstance(out, np.ndarray) and set(out) <= {"no", "yes"}


def cubic_perceptron(kernel, **params):
    """One pass of the kernel Perceptron's last hypothesis with ``kernel`` (a callable
    cubic, or the named one it computes), without a bias: the callable's is read from
    its own K(x, x), the named kernel's from the rows' norms."""
    return KernelPerceptronClassifier(
        fit_intercept=False, shuffle=False, kernel=kernel, output="last", max_iter=1, **params
    )


def test_a_callable_kernel_of_the_namespace():
    """A callable gets the arrays as they are and may answer in their namespace."""
    X, y, X_test = blobs(2)

    def cubic(A, B):
        xp = A.__array_namespace__()
        return (1.0 + xp.matmul(A, B.T)) ** 3

    with sklearn.config_context(array_api_dispatch=False):
        ref = cubic_perceptron("poly", degree=3, gamma=1.0, coef0=1.0).fit(X, y)
    clf = cubic_perceptron(cubic).fit(put(X, "array_api_strict", "device1"), y)
    np.testing.assert_array_equal(to_numpy(clf.support_), ref.support_)


def test_a_callable_kernel_answering_in_another_library_on_the_host():
    """Without dispatch, a callable may answer numpy rows with an array of another
    library (here array-api-strict's): it is brought to the host, and its values are
    checked there."""
    X, y, _ = blobs(2)

    def cubic(A, B):
        return xps.asarray((1.0 + A @ B.T) ** 3)

    with sklearn.config_context(array_api_dispatch=False):
        ref = cubic_perceptron("poly", degree=3, gamma=1.0, coef0=1.0).fit(X, y)
        clf = cubic_perceptron(cubic).fit(X, y)
        np.testing.assert_array_equal(clf.support_, ref.support_)
        with pytest.raises(ValueError, match="complex values"):
            KernelPerceptronClassifier(
                fit_intercept=False,
                shuffle=False,
                kernel=lambda A, B: xps.asarray(A @ B.T + 0j),
                max_iter=1,
            ).fit(X, y)


@pytest.mark.parametrize("ns,device", NAMESPACES)
def test_dense_batches_of_a_namespace_after_a_sparse_fit(ns, device):
    """A model whose stored rows are sparse (on the host) learns from dense batches of
    any namespace as from the same rows in numpy."""
    X, y, _ = blobs(2)
    first = sp.csr_matrix(X[:120])
    with sklearn.config_context(array_api_dispatch=False):
        ref = KernelPerceptronClassifier(shuffle=False).partial_fit(first, y[:120], classes=[0, 1])
        ref.partial_fit(X[120:], y[120:])
        clf = KernelPerceptronClassifier(shuffle=False).partial_fit(first, y[:120], classes=[0, 1])
    clf.partial_fit(put(X[120:], ns, device), y[120:])
    np.testing.assert_array_equal(to_numpy(clf.support_), ref.support_)


@pytest.mark.parametrize("ns,device", NAMESPACES)
@pytest.mark.parametrize(
    "cls",
    [
        KernelALMAClassifier,
        KernelPerceptronClassifier,
        KernelROMMAClassifier,
        KernelPUMMAClassifier,
    ],
    ids=lambda c: c.__name__,
)
def test_scikit_learn_array_api_check_with_values(ns, device, cls):
    """scikit-learn's own check, values compared with numpy's (check_estimator compares
    only namespaces, devices, shapes and dtypes)."""
    from sklearn.utils.estimator_checks import check_array_api_input_and_values

    check_array_api_input_and_values(
        cls.__name__, cls(shuffle=False), array_namespace=ns, device_name=device
    )


@pytest.mark.parametrize(
    "ns,device,rule",
    list(
        _slow_on_the_default_strict_device(
            [("project",), ("project_new",), ("merge",)], lambda rule: True
        )
    ),
)
def test_a_budget_on_the_device(ns, device, rule):
    """A budgeted model on the device: maintenance steps there (the store cut, merged
    rows made where the store is), the same corrections as on numpy, at most ``budget``
    stored vectors, the scores equal to rounding."""
    X, y, X_test = blobs(3, n=300)
    params = dict(kernel="rbf", gamma=0.3, max_iter=2, budget=25, budget_rule=rule, shuffle=False)
    params["fit_intercept"] = rule != "merge"  # the merge rule takes no bias
    with sklearn.config_context(array_api_dispatch=False):
        ref = KernelALMAClassifier(block_size=16, **params).fit(X, y)
    clf = KernelALMAClassifier(block_size=16, **params).fit(put(X, ns, device), put(y, ns, device))
    np.testing.assert_array_equal(
        to_numpy(clf.n_corrections_per_class_), ref.n_corrections_per_class_
    )
    assert ref.n_corrections_ > 100  # many maintenance steps
    sv = clf.support_vectors_
    assert device_of(sv) == device_of(put(X_test, ns, device)) and sv.shape[0] <= 25
    # a merge's h maximises a smooth function whose top is flat: two searches agree on
    # it to about the square root of the rounding, times that flatness (3e-6 relative
    # under OpenBLAS's Prescott kernel), as in tests/test_kernel_budget.py
    rtol = 1e-5 if rule == "merge" else 1e-6
    np.testing.assert_allclose(to_numpy(sv), ref.support_vectors_, rtol=rtol, atol=1e-9)
    for output in ["last", "avg"]:
        clf.set_params(output=output)
        ref.set_params(output=output)
        np.testing.assert_allclose(
            to_numpy(clf.decision_function(put(X_test, ns, device))),
            ref.decision_function(X_test),
            rtol=rtol,
            atol=1e-9,
        )
