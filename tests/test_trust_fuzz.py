"""Saved models and checkpoints of every estimator, mutated at random (hypothesis).

Whatever a file holds, ``marginkit.load`` refuses it with its documented ValueError
(``UntrustedFileError`` for one it does not trust), or the model it returns predicts,
scores and trains on as a valid model does: with results, or with a ValueError. The
mutations change arrays' values, indices, shapes and dtypes, JSON scalars (counts,
sizes, parameters), lists' lengths, dicts' keys and the kinds of nodes.

In-process, an out-of-bounds access of compiled code can pass unnoticed; so the same
test also runs in a subprocess whose numba compiles with ``NUMBA_BOUNDSCHECK=1`` (in a
numba cache of its own), where such an access raises IndexError and fails the test.
"""

import copy
import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from archives import json_node, npy, read_archive, write_archive
from conftest import checkpoint_file, make_blobs_pm

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

hypothesis = pytest.importorskip("hypothesis", reason="the fuzz test needs hypothesis")
st = hypothesis.strategies

#: every estimator, with the options that give its states their optional parts
MODELS = {
    "alma-voted": (
        lambda: ALMAClassifier(
            shuffle=False, p=6.0, output="voted", fit_intercept=True, alpha=1.0, max_iter=1
        ),
        True,
    ),
    "alma-log": (
        lambda: ALMAClassifier(
            shuffle=False,
            p="log",
            alpha=0.8,
            keep_corrections=True,
            output="last",
            max_iter=1,
            fit_intercept=False,
        ),
        False,
    ),
    "perceptron": (
        lambda: PerceptronClassifier(
            shuffle=False, max_iter=2, output="voted", fit_intercept=False
        ),
        True,
    ),
    "romma": (
        lambda: ROMMAClassifier(
            shuffle=False,
            aggressive=True,
            keep_corrections=True,
            output="last",
            max_iter=1,
            fit_intercept=False,
        ),
        False,
    ),
    "margin-perceptron": (
        lambda: MarginPerceptronClassifier(
            shuffle=False, max_iter=5, output="voted", fit_intercept=False
        ),
        True,
    ),
    "pumma": (
        lambda: PUMMAClassifier(shuffle=False, p=3.0, lam=0.5, max_iter=4, output="voted"),
        True,
    ),
    "pumma-2": (lambda: PUMMAClassifier(shuffle=False, max_iter=3, lam=0.0, output="last"), False),
    "kernel-alma": (
        lambda: KernelALMAClassifier(
            shuffle=False,
            kernel="poly",
            degree=2,
            block_size=7,
            alpha=1.0,
            output="last",
            max_iter=1,
        ),
        True,
    ),
    "kernel-perceptron": (
        lambda: KernelPerceptronClassifier(shuffle=False, kernel="rbf", max_iter=2, output="last"),
        False,
    ),
    "kernel-romma": (
        lambda: KernelROMMAClassifier(shuffle=False, aggressive=True, output="voted", max_iter=1),
        True,
    ),
    "kernel-pumma": (
        lambda: KernelPUMMAClassifier(
            shuffle=False, lam=0.5, max_iter=3, block_size=8, output="last"
        ),
        True,
    ),
}
#: checkpoints made mid-fit, resumed on the data they were made for
CHECKPOINTS = {
    "alma": lambda: ALMAClassifier(
        max_iter=3, shuffle=True, random_state=0, alpha=1.0, output="last", fit_intercept=False
    ),
    "pumma": lambda: PUMMAClassifier(
        p=3.0, lam=0.5, max_iter=4, shuffle=True, random_state=1, output="last"
    ),
    "margin-perceptron": lambda: MarginPerceptronClassifier(
        shuffle=False, max_iter=6, random_state=2, output="last", fit_intercept=False
    ),
    "kernel-romma": lambda: KernelROMMAClassifier(
        shuffle=False, aggressive=True, max_iter=3, block_size=8, output="last"
    ),
    "kernel-pumma": lambda: KernelPUMMAClassifier(
        lam=0.5, max_iter=4, block_size=8, shuffle=True, random_state=3, output="last"
    ),
}

EXAMPLES = int(os.environ.get("MARGINKIT_FUZZ_EXAMPLES", "20"))
INTS = [-(2**62), -(2**31), -2, -1, 0, 1, 2, 3, 4, 5, 7, 9, 30, 2**31 - 1, 2**62]
FLOATS = [np.nan, np.inf, -np.inf, -1.0, 0.0, 0.5, 2.0, 1e-308, 1e308, -1e308]
SCALARS = [*INTS, 1.5, -0.5, 1e308, float("nan"), "x", "voted", "rbf", True, False, None]
DTYPES = ["int32", "int64", "uint32", "int8", "float64", "float32", "bool", "<U2", "complex128"]


def data(sparse):
    X, y = make_blobs_pm(n=30, d=4, n_classes=3, seed=7)
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The bytes of every model and checkpoint file, made once."""
    folder = tmp_path_factory.mktemp("saved")
    files = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (make, sparse) in MODELS.items():
            X, y = data(sparse)
            path = folder / f"{name}.skops"
            marginkit.save(make().fit(X, y), path)
            files[("model", name)] = path.read_bytes()
        for name, make in CHECKPOINTS.items():
            path = checkpoint_file(make, *data(False), folder / f"{name}-checkpoint.skops")
            files[("checkpoint", name)] = path.read_bytes()
    return files


def nodes(tree, parent=None, key=None):
    """Every node of a schema, as (container, key, node)."""
    if not isinstance(tree, dict) or "__loader__" not in tree:
        return []
    found = [(parent, key, tree)] if parent is not None else []
    loader, content = tree["__loader__"], tree.get("content")
    if loader in ("ObjectNode", "RandomStateNode"):
        found += nodes(content, tree, "content")
    elif loader == "DictNode":
        for k, child in content.items():
            found += nodes(child, content, k)
    elif loader in ("ListNode", "TupleNode"):
        for i, child in enumerate(content):
            found += nodes(child, content, i)
    return found


def mutate_array(draw, node, members):
    a = np.load(io.BytesIO(members[node["file"]]), allow_pickle=False)
    how = draw(st.sampled_from(["value", "value", "value", "shape", "dtype"]))
    if how == "value" and a.size:
        flat = a.reshape(-1).copy()
        i = draw(st.integers(0, flat.size - 1))
        if a.dtype.kind in "iu":
            with np.errstate(over="ignore"):
                flat[i] = np.array(draw(st.sampled_from(INTS))).astype(a.dtype)
        elif a.dtype.kind == "f":
            flat[i] = draw(st.sampled_from(FLOATS))
        elif a.dtype.kind == "b":
            flat[i] = not flat[i]
        a = flat.reshape(a.shape)
    elif how == "shape":
        a = draw(
            st.sampled_from(
                [
                    a.reshape(-1)[:-1],
                    np.concatenate([a.reshape(-1), a.reshape(-1)[-1:]]),
                    a.reshape(1, -1),
                    a.reshape(-1)[:0],
                    np.asarray(a.reshape(-1)[0]) if a.size else a.reshape(1, 0),
                    np.ascontiguousarray(a.T) if a.ndim == 2 else a.reshape(-1, 1),
                ]
            )
        )
    else:
        dtype = draw(st.sampled_from(DTYPES))
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            a = a.astype(dtype)
    members[node["file"]] = npy(a)


def mutate(draw, schema, members):
    """One or two random changes to a file's schema and members."""
    for _ in range(draw(st.integers(1, 2))):
        found = nodes(schema["content"]["estimator"], schema["content"], "estimator")
        container, k, node = found[draw(st.integers(0, len(found) - 1))]
        loader = node["__loader__"]
        how = draw(st.sampled_from(["own", "own", "own", "replace", "swap"]))
        if how == "own" and loader == "NdArrayNode" and node.get("type") == "numpy":
            mutate_array(draw, node, members)
        elif how == "own" and loader == "JsonNode":
            node["content"] = json.dumps(draw(st.sampled_from(SCALARS)))
        elif how == "own" and loader in ("ListNode", "TupleNode") and node["content"]:
            items = node["content"]
            i = draw(st.integers(0, len(items) - 1))
            if draw(st.booleans()):
                del items[i]
            else:
                items.insert(i, copy.deepcopy(items[i]))
        elif how == "own" and loader == "DictNode" and node["content"]:
            if draw(st.booleans()):
                del node["content"][draw(st.sampled_from(sorted(node["content"])))]
                node["key_types"]["content"].pop()
            else:
                node["content"]["extra_"] = json_node(1)
                node["key_types"]["content"].append(node["key_types"]["content"][0])
        elif how == "swap":
            other_container, other_key, other = found[draw(st.integers(0, len(found) - 1))]
            if not _inside(other, node) and not _inside(node, other):
                container[k], other_container[other_key] = other, node
        else:
            container[k] = draw(
                st.sampled_from(
                    [
                        json_node(draw(st.sampled_from(SCALARS))),
                        {**node, "__loader__": "ListNode", "content": []},
                        {**node, "__class__": "FunctionTransformer"},
                        {**node, "__loader__": "FunctionNode"},
                    ]
                )
            )


def _inside(node, tree):
    """Whether ``node`` is ``tree`` or one of its descendants."""
    return node is tree or any(n is node for _, _, n in nodes(tree, {}, None))


def use(est, X, y, classes):
    """Every use of a loaded model: each returns, or raises the documented ValueError."""
    outputs = [getattr(est, "output", "last"), "last", "avg", "voted"]
    for output in outputs:
        for action in (
            lambda: est.predict(X),
            lambda: est.decision_function(X),
            lambda: est.score(X, y),
        ):
            try:
                est.set_params(output=output)
                action()
            except ValueError:
                pass
    try:
        est.partial_fit(X[:10], y[:10], classes=classes)
    except ValueError:
        pass


@hypothesis.settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(hypothesis.HealthCheck),
)
@hypothesis.given(choice=st.data())
def test_mutated_files_load_or_are_refused(saved, tmp_path_factory, choice):
    key = choice.draw(st.sampled_from(sorted(saved)))
    schema, members = read_archive(io.BytesIO(saved[key]))
    mutate(choice.draw, schema, members)
    path = tmp_path_factory.mktemp("fuzz") / "m.skops"
    write_archive(path, schema, members)
    kind, name = key
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if kind == "checkpoint":
            X, y = data(False)
            try:
                est = CHECKPOINTS[name]().fit(X, y, checkpoint=path)
            except ValueError:
                return
        else:
            try:
                est = marginkit.load(path)
            except ValueError:
                return
            X, y = data(MODELS[name][1])
        use(est, X, y, np.unique(y))


def test_compiled_code_checks_its_bounds_when_asked():
    """In the subprocess of the test below, an index out of bounds raises IndexError."""
    if os.environ.get("NUMBA_BOUNDSCHECK") != "1":
        pytest.skip("runs in the subprocess with NUMBA_BOUNDSCHECK=1")
    from marginkit._core import linear as L
    from marginkit._core import votes

    log = L.Log(
        np.zeros(1, np.int64),
        np.full(1, 5, np.int64),  # a span past the end of its block
        np.ones(1),
        np.ones(1),
        np.ones(2, np.int64),
        np.zeros(1, np.int32),
        np.ones(1),
    )
    with pytest.raises(IndexError):
        votes.replay_columns(
            log, 0, 1, np.zeros(1), np.zeros(1, np.int64), 2.0, np.zeros((1, 1)), np.zeros(1)
        )


@pytest.mark.parametrize(
    "examples",
    # a recompilation of the engines with bounds checks: about 50 s on 2 cores
    [pytest.param(60, marks=pytest.mark.slow), pytest.param(3000, marks=pytest.mark.slow)],
    ids=str,
)
def test_mutated_files_under_numba_boundscheck(tmp_path, examples):
    """The fuzz again, where numba checks every index (compiled afresh, for that, in a
    cache of its own: about half a minute)."""
    env = {
        **os.environ,
        "NUMBA_BOUNDSCHECK": "1",
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
        "MARGINKIT_FUZZ_EXAMPLES": str(examples),
    }
    here = Path(__file__)
    tests = "mutated_files_load_or_are_refused or checks_its_bounds_when_asked"
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
    result = subprocess.run(
        [*command, str(here), "-k", tests],
        env=env,
        cwd=here.parents[1],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert "2 passed" in result.stdout, result.stdout[-2000:]
