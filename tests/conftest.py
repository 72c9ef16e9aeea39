import os
import re
from pathlib import Path

import numpy as np
import pytest

# scikit-learn's array API dispatch (test_array_api.py) requires scipy's flag, which scipy
# reads when first imported: set here, before any test module imports it
os.environ.setdefault("SCIPY_ARRAY_API", "1")

# the fixtures' generators (tests/data/*/generate.py) are scripts of the version that
# wrote the files, not tests
collect_ignore_glob = ["data/*"]

#: The real data sets: $MARGINKIT_DATA when set, else ../shared/data beside the checkout
SHARED_DATA = Path(
    os.environ.get("MARGINKIT_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)


@pytest.fixture
def shared_data():
    """The real data sets ($MARGINKIT_DATA, else ../shared/data) when present; the test is
    skipped with the reason otherwise."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data sets not found at {SHARED_DATA} (set MARGINKIT_DATA)")
    return SHARED_DATA


def slow_case(*values, slow=False, id=None):
    """``pytest.param(*values, id=id)``, marked slow (``make test-all`` alone) where
    ``slow``: a heavier case of a parametrized test whose lighter ones stay in ``make
    test``."""
    return pytest.param(*values, id=id, marks=[pytest.mark.slow] if slow else [])


def one_error_line(err):
    """The one line a command-line mistake prints (``marginkit: error: ...``), checked
    to be alone and without a traceback."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("marginkit: error: ")
    assert "Traceback" not in err
    return lines[0]


def rel_err(a, b):
    """The largest difference of a and b relative to the largest magnitude of b."""
    return np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(np.max(np.abs(b)), 1e-300)


def make_blobs_pm(n=200, d=12, n_classes=2, seed=0, sparse_density=None):
    """Small overlapping Gaussian classes; optionally sparsified (CSR)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.5, size=(n_classes, d))
    y = rng.integers(0, n_classes, size=n)
    X = centers[y] + rng.normal(size=(n, d))
    if sparse_density is not None:
        mask = rng.uniform(size=X.shape) < sparse_density
        X = sp.csr_matrix(X * mask)
    return X, y


def noisy_pm(n=300, d=4, flip=0.25, seed=0):
    """Two overlapping classes, a quarter of the labels flipped: no plane separates them."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) > 0, 1, -1)
    y[rng.uniform(size=n) < flip] *= -1
    return X, y


def passes_by_growth(sizes, tol, patience):
    """The passes ``tol`` and ``n_iter_no_change`` make, from each pass's sizes
    (``||w~||^2`` of each problem): they end after ``patience`` passes in a row in which
    no problem's grew by more than ``tol`` times itself, or a pass that grew none."""
    since = 0
    for k in range(1, len(sizes)):
        grew = np.any(sizes[k] > sizes[k - 1] * (1 + tol))
        since = 0 if grew else since + 1
        if since >= patience or np.all(sizes[k] == sizes[k - 1]):
            return k + 1
    return len(sizes)


@pytest.fixture
def threads():
    """dask's threaded scheduler, whether or not a client of the module is running."""
    dask = pytest.importorskip("dask", reason="the Dask runs need the 'dask' extra")
    with dask.config.set(scheduler="threads"):
        yield


@pytest.fixture(scope="module")
def dask_client():
    """A client of a real dask.distributed LocalCluster: 2 worker processes, one thread
    each, on loopback, with no dashboard; closed after the module's tests."""
    distributed = pytest.importorskip("distributed", reason="the Dask runs need the 'dask' extra")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster, timeout="60s") as client,
    ):
        client.wait_for_workers(2, timeout=60)  # every one registered
        yield client


def checkpoint_file(make, X, y, path, stop_after=2, every=8):
    """The checkpoint ``make().fit(X, y, checkpoint=path)`` leaves when its run is killed
    right after its ``stop_after``-th write (every ``every`` trials)."""
    import marginkit

    real_save, calls = marginkit.persistence.save, []

    def save_then_stop(est, p):
        real_save(est, p)
        calls.append(1)
        if len(calls) == stop_after:
            raise KeyboardInterrupt

    marginkit.persistence.save = save_then_stop
    try:
        make().fit(X, y, checkpoint=path, checkpoint_every=every)
    except KeyboardInterrupt:
        pass
    finally:
        marginkit.persistence.save = real_save
    return path


def hard_romma_cases():
    """Li and Long's ROMMA and aggressive ROMMA (the hard margin), each as (estimator
    class, its parameters, the reference rule, the rule's parameters): the rows of the
    tables that hold the linear rules to tests/reference.py."""
    from reference import romma_binary

    from marginkit import ROMMAClassifier

    hard = {"lam": 0.0}
    return {
        "romma": (ROMMAClassifier, {"aggressive": False, **hard}, romma_binary, {}),
        "aggressive": (
            ROMMAClassifier,
            {"aggressive": True, **hard},
            romma_binary,
            {"aggressive": True},
        ),
    }


def outputs_of(est):
    """The outputs a fitted estimator gives: a linear one fitted without its correction
    log (``keep_corrections=False`` and ``output`` not ``"voted"``) has no vote."""
    states = getattr(est, "_states", [])
    if all(s.keeps_log for s in states):
        return ["last", "avg", "voted"]
    return ["last", "avg"]


def _check_heavy_ids(config, items):
    """A usage error when an entry of :data:`HEAVY` names no test of a file collected
    whole (a renamed test or parameter would otherwise leave its heavy variant in
    ``make test`` without a word)."""
    if any("::" in str(arg) for arg in config.args):
        return  # single tests asked for: their files were not collected whole
    ids = {item.nodeid for item in items}
    files = {nodeid.split("::")[0] for nodeid in ids}
    stale = sorted(h for h in HEAVY if h.split("::")[0] in files and h not in ids)
    if stale:
        raise pytest.UsageError(
            "tests/conftest.py HEAVY names tests that do not exist (renamed?): " + ", ".join(stale)
        )


def _cuda_usable():
    """Whether torch is installed and sees a CUDA device (scikit-learn's array API
    checks ask only whether torch was built with CUDA)."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


def _compile_shares():
    """The compiled engines that take longest to compile, each made by one tiny call,
    in two shares of about equal compile time."""
    import tempfile

    import scipy.sparse as sp

    import marginkit as mk
    from marginkit import formats

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    y = np.arange(40) % 2
    Xs = sp.csr_matrix(X)

    def text_file(text, suffix):
        with tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False) as f:
            f.write(text)
        return f.name

    def read(reader, text, suffix):
        path = text_file(text, suffix)
        try:
            reader(path)
        finally:
            os.unlink(path)

    return (
        (
            lambda: mk.PUMMAClassifier(max_iter=2).fit(X, y),
            lambda: mk.ALMAClassifier(max_iter=2).fit(Xs, y),
            lambda: mk.KernelALMAClassifier(max_iter=2).fit(X, y),
            lambda: read(formats.read_csv, "1,0.5,2\n0,1.5,-1\n", ".csv"),
        ),
        (
            lambda: read(formats.read_svmlight, "1 1:0.5 3:2\n-1 2:1e-3\n", ".svm"),
            lambda: mk.ALMAClassifier(max_iter=2).fit(X, y),
            lambda: mk.PUMMAClassifier(max_iter=2).fit(Xs, y),
            lambda: mk.KernelPUMMAClassifier(max_iter=2).fit(X, y),
            lambda: mk.ALMAClassifier(max_iter=2, output="voted").fit(Xs, y).predict(Xs),
        ),
    )


def pytest_configure(config):
    """Under pytest-xdist, each worker first compiles a share of the slowest engines to
    numba's cache, the other share left to the other worker: on a fresh checkout both
    would otherwise compile the same engine at the same moment for the first tests that
    use it. With the cache filled, this loads it (a second or two)."""
    import warnings

    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or count < 2:
        return
    shares = _compile_shares()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in shares[int(worker[2:]) % len(shares)]:
            call()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid in HEAVY:
            item.add_marker(pytest.mark.slow)
    _check_heavy_ids(config, items)
    # scikit-learn's array API checks name the device "device_name=cuda" or
    # "device='cuda'"
    cuda = [item for item in items if re.search(r"device(_name)?='?cuda", item.nodeid)]
    if cuda and not _cuda_usable():
        skip = pytest.mark.skip(reason="no CUDA device")
        for item in cuda:
            item.add_marker(pytest.mark.gpu)
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, config):
    """With ``-m exactness``, the BLAS kernels this run loaded, as threadpoolctl reports
    them (tools/exactness_on_every_blas.py reads this line)."""
    if "exactness" not in (config.getoption("markexpr", "") or ""):
        return
    from threadpoolctl import threadpool_info

    blas = sorted(
        f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} "
        f"({Path(i.get('filepath') or '?').parent.name})"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    )
    terminalreporter.write_line("BLAS kernels of this run: " + (", ".join(blas) or "none found"))


def fit_overlapped(monkeypatch, overlap, make, X, y, fold_below=None):
    """``make().fit(X, y)`` with the kernel engines' products made ahead during the walk
    (``overlap``) or not, and optionally a scale fold whenever the scale drops below
    ``fold_below`` (to run the fold path often)."""
    from marginkit import _kernel_base
    from marginkit._core.kernel import blocks

    monkeypatch.setattr(blocks, "OVERLAP", overlap)
    if fold_below is not None:
        original = _kernel_base.KernelOnlineClassifier._initialise

        def often(self, data):
            original(self, data)
            self._fold_below = fold_below

        monkeypatch.setattr(_kernel_base.KernelOnlineClassifier, "_initialise", often)
    return make().fit(X, y)


#: The tests and variants of the fast suite that took 4 s or more each, and the heavier
#: of two variants that differ only in their input's format or in a case the other
#: covers (2 to 4 s), 365 s of its 901 s in all (measured with ``pytest
#: --durations=0 -n 2`` on 2 cores, 2026-11-27), marked slow so that ``make
#: test`` stays under 6 minutes on 2 cores: each has a lighter sibling there (another
#: variant of the same test, or a test of the same path on less data); ``make test-all``
#: runs them. Measure again (the command above) when the suite grows: nine more
#: (about 110 s of the two workers' time) joined on 2026-11-28, when the suite had
#: grown back to 384 s, and the fast readers of the quick pumma-artificial run (a 36 s
#: fixture; its slow readers already were). An entry that names no test is an error
#: (``_check_heavy_ids``).
HEAVY = frozenset(
    {
        "tests/test_checkpoints.py::test_checkpointed_fit_is_the_plain_fit[True-<lambda>6]",
        "tests/test_checkpoints.py::test_resume_after_sigkill_mid_epoch",
        "tests/test_cli.py::test_reproduce_plot_path",
        "tests/test_cli.py::test_reproduce_usps_with_options",
        "tests/test_cli.py::test_subprocess_unknown_experiment_and_version",
        "tests/test_cli_cluster.py::test_csv_shards_keep_their_label_column",
        "tests/test_cli_cluster.py::test_train_on_a_cluster_is_the_mixed_model",
        "tests/test_dask.py::test_prediction_over_dask_arrays_on_a_cluster",
        "tests/test_dask_ml.py::test_incremental_equals_partial_fit_over_the_blocks[dense-ALMAClassifier]",
        "tests/test_dask_ml.py::test_incremental_equals_partial_fit_over_the_blocks[dense-PerceptronClassifier]",
        "tests/test_experiments_kernel.py::test_published_values_are_shown_as_printed",
        "tests/test_experiments_kernel.py::test_quick_mnist_runs_every_algorithm",
        "tests/test_experiments_kernel.py::test_scores_cover_every_published_cell",
        "tests/test_experiments_pumma.py::test_artificial_claim_at_r_1",
        "tests/test_experiments_pumma.py::test_artificial_complete_json_computes_nothing",
        "tests/test_experiments_pumma.py::test_artificial_converged_pumma_keeps_its_guarantee",
        "tests/test_experiments_pumma.py::test_artificial_deleted_cell_is_the_only_one_recomputed",
        "tests/test_experiments_pumma.py::test_artificial_figures",
        "tests/test_experiments_pumma.py::test_artificial_margins_never_exceed_the_maximum",
        "tests/test_experiments_pumma.py::test_artificial_partial_document_renders",
        "tests/test_experiments_pumma.py::test_artificial_quick_writes_json_and_markdown",
        "tests/test_experiments_pumma.py::test_cli_artificial_with_options_draws_the_figures",
        "tests/test_experiments_pumma.py::test_mean_curve_pads_a_finished_run",
        "tests/test_experiments_pumma.py::test_missing_matplotlib_is_said_clearly",
        "tests/test_kernel_alma.py::test_matches_reference[3-3-cubic-{}]",
        "tests/test_kernel_budget.py::test_a_budgeted_stream_in_constant_memory[project]",
        "tests/test_kernel_budget.py::test_a_budgeted_stream_in_constant_memory[project_new]",
        "tests/test_kernel_budget.py::test_equals_the_reference[aggressive-merge-2]",
        "tests/test_kernel_budget.py::test_equals_the_reference[alma-merge-2]",
        "tests/test_kernel_budget.py::test_equals_the_reference[alma-project-3]",
        "tests/test_kernel_budget.py::test_equals_the_reference[alma-project_new-2]",
        "tests/test_kernel_budget.py::test_equals_the_reference[romma-merge-3]",
        "tests/test_kernel_budget.py::test_never_more_vectors_than_the_budget[True-merge]",
        "tests/test_kernel_budget.py::test_products_made_ahead_wait_for_each_maintenance_step[merge]",
        "tests/test_kernel_budget.py::test_saved_and_loaded[pickle-project]",
        "tests/test_kernel_budget.py::test_saved_and_loaded[skops-project]",
        "tests/test_linear_family.py::test_aggressive_romma_delta_reaches_its_margin[True-0.01]",
        "tests/test_linear_family.py::test_margin_perceptron_equals_reference[None-False-2.0]",
        "tests/test_linear_family.py::test_margin_perceptron_equals_reference[None-True-2.0]",
        "tests/test_linear_family.py::test_margin_perceptron_equals_reference[max-False-2.0]",
        "tests/test_linear_family.py::test_margin_perceptron_equals_reference[max-True-2.0]",
        "tests/test_linear_family.py::test_margin_perceptron_equals_reference[rms-False-2.0]",
        "tests/test_linear_family.py::test_margin_perceptron_equals_reference[rms-True-2.0]",
        "tests/test_mixing.py::test_a_dask_dataframe_is_sharded_by_its_partitions",
        "tests/test_mixing.py::test_workers_killed_mid_fit_change_nothing[one]",
        "tests/test_mixing.py::test_workers_killed_mid_fit_change_nothing[every]",
        "tests/test_mixing.py::test_same_model_on_one_and_two_workers_and_the_threaded_scheduler",
        "tests/test_mixing_files.py::test_files_on_a_cluster_equal_the_threaded_scheduler",
        "tests/test_mixing_momentum.py::test_a_filtered_k_counts_no_more_than_the_corrections[<lambda>0-corrections]",
        "tests/test_mixing_momentum.py::test_a_filtered_k_counts_no_more_than_the_corrections[<lambda>0-uniform]",
        "tests/test_mixing_momentum.py::test_a_filtered_k_counts_no_more_than_the_corrections[<lambda>1-corrections]",
        "tests/test_mixing_momentum.py::test_a_filtered_k_counts_no_more_than_the_corrections[<lambda>1-uniform]",
        "tests/test_mixing_momentum.py::test_more_mixes_with_momentum_come_closer_to_the_serial_fit",
        "tests/test_mixing_momentum.py::test_same_bits_on_a_cluster_and_the_threaded_scheduler",
        "tests/test_mixing_warm_up.py::test_the_sequence_on_a_cluster_is_the_threaded_one",
        "tests/test_pumma.py::test_tol_ends_the_epochs_as_max_iter_would[True]",
        "tests/test_sharded.py::test_workers_killed_mid_fit_change_nothing[one]",
        "tests/test_sharded.py::test_workers_gone_for_good_mid_fit_are_a_clear_error",
        "tests/test_sharded.py::test_partial_fit_is_the_one_process_partial_fit[csr]",
        "tests/test_sharded.py::test_same_bits_for_the_same_shards_and_balanced_shards[perceptron]",
        "tests/test_sharded.py::test_the_one_process_model[aggressive-romma-poly-voted-3-nocache-csr]",
        "tests/test_sharded.py::test_the_one_process_model[aggressive-romma-poly-voted-3-nocache-dense]",
        "tests/test_sharded.py::test_the_one_process_model[aggressive-romma-rbf-2-csr]",
        "tests/test_sharded.py::test_the_one_process_model[alma-rbf-avg-2-csr]",
        "tests/test_sharded.py::test_the_one_process_model[alma-rbf-avg-2-dense]",
        "tests/test_sharded.py::test_the_one_process_model[perceptron-poly-voted-2-csr]",
        "tests/test_sharded.py::test_the_one_process_model[perceptron-rbf-3-csr]",
        "tests/test_sharded.py::test_the_one_process_model[romma-rbf-2-csr]",
        "tests/test_streaming.py::test_one_example_per_chunk[10]",
        "tests/test_streaming.py::test_one_example_per_chunk[2]",
        "tests/test_streaming.py::test_stream_gives_the_model_of_fit[3-ALMAClassifier-2]",
        "tests/test_streaming.py::test_stream_gives_the_model_of_fit[3-KernelALMAClassifier-10]",
        "tests/test_streaming.py::test_stream_gives_the_model_of_fit[3-KernelPUMMAClassifier-13]",
        "tests/test_streaming.py::test_stream_gives_the_model_of_fit[3-MarginPerceptronClassifier-5]",
        "tests/test_trust.py::test_zip_bombs_are_refused_in_bounded_memory",
    }
)
