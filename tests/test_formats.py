"""marginkit.formats: the svmlight reader against scikit-learn's, bit for bit; the CSV
reader against numpy; chunks against whole files; every error it raises."""

import bz2
import decimal
import gzip
import io
import lzma
import random
import re
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from marginkit.formats import (
    FORMATS,
    data_format,
    iter_chunks,
    read_csv,
    read_file,
    read_svmlight,
)

FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def _sklearn(text, **options):
    return load_svmlight_file(io.BytesIO(text), dtype=np.float64, **options)


def _assert_same(ours, theirs):
    """The same matrix (arrays, shape), the same labels and qid, bit for bit."""
    X, Xs = ours[0], theirs[0]
    assert X.shape == Xs.shape
    np.testing.assert_array_equal(X.indptr, Xs.indptr)
    np.testing.assert_array_equal(X.indices, Xs.indices)
    np.testing.assert_array_equal(_bits(X.data), _bits(Xs.data))
    np.testing.assert_array_equal(_bits(ours[1]), _bits(theirs[1]))
    for a, b in zip(ours[2:], theirs[2:], strict=True):
        np.testing.assert_array_equal(a, b)


# -- real files ------------------------------------------------------------------------------


def _svmlight_files(root):
    """The files under ``root`` whose first line reads as svmlight: a label, then
    ``index:value`` pairs."""
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".md"):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as f:
            tokens = f.readline(4096).split(b"#")[0].split()
        if len(tokens) > 1 and all(re.fullmatch(rb"\d+:\S+", t) for t in tokens[1:]):
            found.append(path)
    return found


def test_every_svmlight_file_of_the_shared_data(shared_data):
    files = _svmlight_files(shared_data)
    if not files:
        pytest.skip(f"no svmlight file under {shared_data}")
    a9a = shared_data / "adult" / "a9a.gz"
    assert a9a in files or not a9a.is_file()
    for path in files:
        for zero_based in ("auto", False):
            ours = read_svmlight(path, zero_based=zero_based)
            _assert_same(ours, load_svmlight_file(str(path), zero_based=zero_based))
            assert ours[0].indices.dtype == np.int32
        wider = ours[0].shape[1] + 1  # as a9a.t is read with a9a's 123 features
        whole = read_svmlight(path, n_features=wider, zero_based=False)
        _assert_same(whole, load_svmlight_file(str(path), n_features=wider, zero_based=False))
        chunks = list(iter_chunks(path, 5000, n_features=wider, zero_based=False))
        _assert_chunks_make(chunks, whole)


# -- the grammar, fuzzed ----------------------------------------------------------------------

_DIGITS = st.text("0123456789", min_size=1, max_size=6)
_NUMBER = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(allow_nan=False, width=32).map(lambda v: f"{v:.9g}"),
    st.builds(
        lambda a, b, e: f"{a}.{b}e{e}",
        _DIGITS,
        _DIGITS,
        st.integers(-330, 330),
    ),
    st.sampled_from(
        [
            "+1",
            "-1",
            "1e3",
            ".5",
            "5.",
            "-0",
            "+.5e-3",
            "1_000",
            "1_0.5_5",
            "1e1_0",
            "inf",
            "-Infinity",
            "NaN",
            "-nan",
            "+INF",
            "0" * 30 + "1",
            "1" + "0" * 30,
            "1" * 25 + "." + "9" * 25,
            "4.9e-324",
            "2.4703282292062328e-324",
            "1e400",
            "-1e-400",
            "9007199254740993",
        ]
    ),
)
_BAD_NUMBER = st.sampled_from(
    ["", "x", "1e", ".", "e5", "1__0", "_1", "1_", "1._5", "0x10", "1,5", "1d5", "nanx", "infin",
     "1e+", "--1", "+", "1\x002", "1:2", "inf_", "12a"]
)  # fmt: skip
_INDEX = st.one_of(
    st.integers(0, 40).map(str),
    st.sampled_from(["+3", "007", "1_0", "-0", "-2", "1e1", "x", "", "3.0", "_1", "2147483646"]),
)
_SPACE = st.sampled_from([" ", "  ", "\t", " \r", "\x0b", "\x0c "])


@st.composite
def _line(draw):
    """A line that load_svmlight_file mostly accepts, sometimes not."""
    bad = draw(st.integers(0, 30)) == 0
    parts = [draw(_NUMBER | (_BAD_NUMBER if bad else _NUMBER))]
    if draw(st.integers(0, 8)) == 0:
        parts.append("qid:" + draw(st.sampled_from(["1", "7", "+2", "1_0", "x", ""])))
    index = draw(st.integers(0, 3))
    for _ in range(draw(st.integers(0, 6))):
        if bad and draw(st.booleans()):
            idx = draw(_INDEX)
        else:
            index += draw(st.integers(0 if bad else 1, 5))
            idx = str(index)
        value = draw(_NUMBER | (_BAD_NUMBER if bad else _NUMBER))
        parts.append(f"{idx}:{value}" if not (bad and draw(st.booleans())) else idx)
    sep = draw(_SPACE)
    text = sep.join(parts)
    tail = draw(st.sampled_from(["", "", " ", " # a comment: 1:2", "#x", "\r"]))
    if draw(st.integers(0, 20)) == 0:
        text = draw(st.sampled_from(["", "   ", "# only a comment", "\x00#", "1 1:1\x00 #c"]))
    return text + tail


def _first_bad_line(lines, **options):
    """The 1-based line at which load_svmlight_file first fails, on prefixes."""
    for n in range(1, len(lines) + 1):
        try:
            _sklearn("\n".join(lines[:n]).encode("latin-1"), **options)
        except (ValueError, OverflowError):
            return n
    return None


@FUZZ
@given(
    st.lists(_line(), min_size=1, max_size=12),
    st.sampled_from(["auto", True, False]),
    st.booleans(),
    st.booleans(),
)
def test_fuzzed_lines_read_as_scikit_learn_reads_them(lines, zero_based, query_id, newline):
    text = ("\n".join(lines) + ("\n" if newline else "")).encode("latin-1")
    options = {"zero_based": zero_based, "query_id": query_id}
    try:
        theirs = _sklearn(text, **options)
    except (ValueError, OverflowError):
        theirs = None
    if theirs is not None and query_id and 0 < len(theirs[2]) < theirs[0].shape[0]:
        # scikit-learn gives the qid of the lines that have one: we refuse the mix
        with pytest.raises(ValueError, match=r"^line \d+: a line without qid"):
            read_svmlight(text, **options)
        return
    if theirs is None:
        with pytest.raises(ValueError, match=r"^line \d+: ") as info:
            read_svmlight(text, **options)
        line = int(re.match(r"line (\d+)", str(info.value)).group(1))
        if "a line without qid" in str(info.value):  # our refusal, before theirs
            assert query_id and line <= (_first_bad_line(lines, **options) or line)
        else:
            assert line == _first_bad_line(lines, **options), str(info.value)
        return
    ours = read_svmlight(text, **options)
    _assert_same(ours, theirs)
    # in chunks, with the index base decided: the same rows
    based = zero_based if zero_based != "auto" else not (ours[0].nnz and _min_index(text))
    if not query_id:
        chunks = list(iter_chunks_of(text, 3, zero_based=based, n_features=ours[0].shape[1]))
        _assert_chunks_make(chunks, ours)


def _min_index(text):
    X, _ = read_svmlight(text, zero_based=True)
    return int(X.indices.min()) > 0


def iter_chunks_of(text, chunk_size, **options):
    from marginkit.formats.svmlight import svmlight_chunks as _svmlight_chunks

    return _svmlight_chunks(
        text, chunk_size, options.get("n_features"), options["zero_based"], True, 7
    )


def _assert_chunks_make(chunks, whole):
    import scipy.sparse as sp

    if not chunks:
        assert whole[0].shape[0] == 0
        return
    X = sp.vstack([c.X for c in chunks]).tocsr()
    assert X.shape == whole[0].shape
    np.testing.assert_array_equal(X.indptr, whole[0].indptr)
    np.testing.assert_array_equal(X.indices, whole[0].indices)
    np.testing.assert_array_equal(_bits(X.data), _bits(whole[0].data))
    np.testing.assert_array_equal(_bits(np.concatenate([c.y for c in chunks])), _bits(whole[1]))


@FUZZ
@given(st.lists(st.tuples(_NUMBER, st.lists(_NUMBER, max_size=4)), min_size=1, max_size=20))
def test_numbers_are_python_floats_bit_for_bit(rows):
    text = "".join(
        f"{label} " + " ".join(f"{k + 1}:{v}" for k, v in enumerate(values)) + "\n"
        for label, values in rows
    ).encode()
    X, y = read_svmlight(text)
    np.testing.assert_array_equal(_bits(y), _bits([float(label) for label, _ in rows]))
    want = [float(v) for _, values in rows for v in values]
    np.testing.assert_array_equal(_bits(X.data), _bits(want))


def _halfway_tokens(rng, n):
    """Decimals at the midpoint of two neighbouring doubles, and rounded to 18, 25 and
    40 digits just below and above it: where a conversion that is not correctly
    rounded goes wrong."""
    out = []
    exact = decimal.Context(prec=1000)
    for _ in range(n):
        x = struct.unpack("<d", struct.pack("<q", rng.getrandbits(63)))[0]
        if not np.isfinite(x) or x == 0.0:
            continue
        up = float(np.nextafter(x, np.inf))
        mid = exact.divide(exact.add(decimal.Decimal(x), decimal.Decimal(up)), 2)
        out.append(format(mid, "e"))
        for digits in (18, 25, 40):
            for rounding in (decimal.ROUND_DOWN, decimal.ROUND_UP):
                near = decimal.Context(prec=digits, rounding=rounding).plus(mid)
                out.append(format(near, "e"))
    return out


def test_hard_numbers_are_python_floats_bit_for_bit():
    rng = random.Random(0)
    tokens = _halfway_tokens(rng, 3000)
    for _ in range(20000):  # random digit strings of every length and exponent
        k = rng.randint(1, 30)
        digits = "".join(rng.choice("0123456789") for _ in range(k))
        point = rng.randint(0, k)
        token = digits[:point] + "." + digits[point:]
        if rng.random() < 0.7:
            token += f"e{rng.randint(-345, 330)}"
        tokens.append(("-" if rng.random() < 0.3 else "") + token)
    for _ in range(20000):  # what writers print: repr, %.17g, %.6g of random doubles
        x = struct.unpack("<d", struct.pack("<q", rng.getrandbits(63)))[0]
        if np.isfinite(x):
            tokens += [repr(x), f"{x:.17g}", f"{x:.6g}", f"{rng.random():.16g}"]
    tokens += ["0." + "3" * 300, "1" * 200 + "e-150", "9" * 150, "1_2_3.4_5e-1_0"]
    # longer than strtod's buffer: left to float(), more than the reader's list holds
    tokens += [f"{k}." + "3" * 1100 for k in range(300)]
    text = "".join(f"{t} 1:{t}\n" for t in tokens).encode()
    X, y = read_svmlight(text)
    want = _bits([float(t) for t in tokens])
    np.testing.assert_array_equal(_bits(y), want)
    np.testing.assert_array_equal(_bits(X.data), want)


# -- whole files: paths, compression, blocks --------------------------------------------------


@pytest.fixture(scope="module")
def svm_text():
    rng = np.random.RandomState(0)
    X = rng.randn(300, 40)
    X[X < 0.8] = 0.0
    y = rng.randint(0, 3, size=300)
    buf = io.BytesIO()
    dump_svmlight_file(X, y, buf, zero_based=False)
    return buf.getvalue()


@pytest.mark.parametrize(
    "suffix, compress",
    [
        ("", bytes),
        (".gz", gzip.compress),
        (".bz2", bz2.compress),
        (".xz", lzma.compress),
    ],
)
def test_compressed_files(tmp_path, svm_text, suffix, compress):
    path = tmp_path / f"train.svm{suffix}"
    path.write_bytes(compress(svm_text))
    theirs = _sklearn(svm_text)
    _assert_same(read_svmlight(path), theirs)
    _assert_same(read_svmlight(path, block_size=100), theirs)  # lines across blocks
    _assert_same(read_svmlight(str(path)), theirs)
    with open(path, "rb") as f:  # a file object
        if not suffix:
            _assert_same(read_svmlight(f), theirs)
    data = read_file(path)
    assert data.fmt == "svmlight" and data.zero_based is False
    _assert_same((data.X, data.y), theirs)


def test_sources_without_readinto(svm_text):
    class Reader:
        def read(self):
            return svm_text

    _assert_same(read_svmlight(Reader()), _sklearn(svm_text))
    _assert_same(read_svmlight(bytearray(svm_text)), _sklearn(svm_text))


@pytest.mark.parametrize("block_size", [16, 100, 4096])
@pytest.mark.parametrize("chunk_size", [1, 7, 1000])
def test_chunks_make_the_whole_file(tmp_path, svm_text, block_size, chunk_size):
    path = tmp_path / "t.svm"
    noisy = b"# header\n\n" + svm_text.replace(b"\n", b"\n\n  # between\n")
    path.write_bytes(noisy)
    whole = read_svmlight(path, zero_based=False, n_features=40)
    chunks = list(
        iter_chunks(path, chunk_size, zero_based=False, n_features=40, block_size=block_size)
    )
    assert all(c.X.shape[0] == chunk_size for c in chunks[:-1])
    assert all(c.X.shape[1] == 40 for c in chunks)
    _assert_chunks_make(chunks, whole)
    # the line of each chunk's first example: rows are on lines 4, 7, 10, ...
    assert [c.line for c in chunks] == [3 + 3 * chunk_size * k for k in range(len(chunks))]


def test_growth_past_the_first_estimate(tmp_path):
    # sparse first lines, dense later ones: the arrays grow, rows and entries
    lines = ["1 1:1"] * 200 + ["2 " + " ".join(f"{k}:{k}" for k in range(1, 300))] * 50
    text = ("\n".join(lines) + "\n").encode()
    path = tmp_path / "g.svm.gz"
    path.write_bytes(gzip.compress(text))
    _assert_same(read_svmlight(path, block_size=64), _sklearn(text))
    chunks = list(iter_chunks(path, 120, zero_based=False, n_features=299, block_size=64))
    _assert_chunks_make(chunks, _sklearn(text, zero_based=False))


def test_a_line_longer_than_the_block(tmp_path):
    text = b"1 " + b" ".join(b"%d:0.25" % k for k in range(1, 5000)) + b"\n-1 3:1\n"
    path = tmp_path / "long.svm"
    path.write_bytes(text)
    _assert_same(read_svmlight(path, block_size=64), _sklearn(text))


def test_a_csv_row_longer_than_pyarrows_block(tmp_path):
    """A CSV row of 1.5 MB (200000 features): pyarrow parses blocks of 1 MiB by default,
    which must hold a whole row."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3, 200_000)).round(4)
    text = "".join(",".join(f"{v:.4f}" for v in row) + f",{k % 2}\n" for k, row in enumerate(X))
    path = tmp_path / "wide.csv"
    path.write_text(text)
    got, y = read_csv(path)
    np.testing.assert_array_equal(got, X)
    np.testing.assert_array_equal(y, [0, 1, 0])


# -- indices: 32 or 64 bits, and absurd ones -----------------------------------------------------


# 64-bit indices compile a second svmlight reader (about 30 s of CPU on a cold numba
# cache, in each pytest-xdist worker that reads such a file): make test-all
@pytest.mark.slow
def test_indices_as_wide_as_needed():
    X, _ = read_svmlight(b"1 5:1\n")
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    X, _ = read_svmlight(b"1 2000000000:1\n")  # scikit-learn gives this matrix too
    _assert_same((X, np.ones(1)), _sklearn(b"1 2000000000:1\n"))
    assert X.shape == (1, 2000000000) and X.indices.dtype == np.int32
    lines = b"1 1:1 3:2\n" * 50 + b"-1 2:1 3000000000:0.5\n" + b"1 4:1\n"
    X, y = read_svmlight(lines, zero_based=False)
    assert X.indices.dtype == np.int64 and X.indptr.dtype == np.int64
    assert X.shape == (52, 3000000000)
    assert X[50, 2999999999] == 0.5 and X[51, 3] == 1.0 and X.nnz == 103
    X, _ = read_svmlight(b"1 1000000000000:1\n")  # an absurd width: no dense memory
    assert X.shape == (1, 1000000000000) and X.nnz == 1
    # in chunks, each as narrow as its own indices allow
    chunks = list(iter_chunks_of(lines, 51, zero_based=False))
    assert [c.X.indices.dtype for c in chunks] == [np.int64, np.int32]


def test_an_index_past_64_bits_or_written_as_a_float():
    with pytest.raises(ValueError, match=r"^line 2: Invalid index '99999999999999999999'"):
        read_svmlight(b"1 1:1\n1 99999999999999999999:1\n")
    with pytest.raises(ValueError, match=r"^line 1: the feature index '1e12' is not an integer"):
        read_svmlight(b"1 1e12:1\n")


def test_n_features():
    X, _ = read_svmlight(b"1 1:1\n", n_features=10)
    assert X.shape == (1, 10)
    X, _ = read_svmlight(b"# nothing\n")
    assert X.shape == (0, 1)  # as scikit-learn
    with pytest.raises(ValueError, match=r"^line 2: feature index 11 is beyond n_features=10"):
        read_svmlight(b"1 1:1\n1 11:1\n", n_features=10, zero_based=False)
    with pytest.raises(ValueError, match=r"^line 2: feature index 10 is beyond n_features=10"):
        read_svmlight(b"1 1:1\n1 10:1\n", n_features=10, zero_based=True)
    # "auto": 10 fits 10 features one-based, not zero-based
    X, _ = read_svmlight(b"1 1:1\n1 10:1\n", n_features=10)
    assert X.shape == (2, 10) and X.indices.tolist() == [0, 9]
    with pytest.raises(ValueError, match=r"^line 2: feature index 10 is beyond n_features=10"):
        read_svmlight(b"1 0:1\n1 10:1\n", n_features=10)
    with pytest.raises(ValueError, match=r"^line 1: feature index 12 is beyond"):
        read_svmlight(b"1 12:1\n", n_features=10)


def test_query_ids():
    text = b"3 qid:1 1:1\n2 qid:1 2:1\n1 qid:2_0 1:1\n"
    _assert_same(read_svmlight(text, query_id=True), _sklearn(text, query_id=True))
    X, y, qid = read_svmlight(text, query_id=True)
    assert qid.dtype == np.int64 and qid.tolist() == [1, 1, 20]
    with pytest.raises(ValueError, match=r"^line 2: a line without qid among lines with one"):
        read_svmlight(b"3 qid:1 1:1\n2 1:1\n", query_id=True)
    # not asked for: the qid of a line is skipped, whatever it holds (as scikit-learn)
    _assert_same(read_svmlight(b"1 qid:x 1:1\n"), _sklearn(b"1 qid:x 1:1\n"))


def test_labels_left_unread():
    X, y = read_svmlight(b"? 1:1 3:2\nunknown 2:1\n1:4 2:1\n7\n", labels=False)
    assert y is None
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 2], [0, 1, 0], [4, 1, 0], [0, 0, 0]])


# -- errors, each named with its line ------------------------------------------------------------

ERRORS = [
    (b"1 1:1\nx 1:1\n", r"line 2: the label 'x' is not a number"),
    (b"1,2 1:1\n", r"line 1: the label '1,2' is a list of labels \(multilabel"),
    (b"1 qid 1:1\n", r"line 1: 'qid' is not qid:N"),
    (b"1 qid:x 1:1\n", r"line 1: the query id 'x' is not an integer"),
    (b"\n\n1 3\n", r"line 3: '3' is not index:value"),
    (b"1 a:1\n", r"line 1: the feature index 'a' is not an integer"),
    (b"1 -1:1\n", r"line 1: Invalid index -1 in SVMlight/LibSVM data file"),
    (b"1 2:1 2:1\n", r"line 1: Feature indices in SVMlight/LibSVM data file should be sorted"),
    (b"1 3:1 2:1\n", r"line 1: Feature indices .* \(index 2 after 3\)"),
    (b"1 2:x\n", r"line 1: the value 'x' of feature 2 is not a number"),
    (b"# c\n1 2:1 # 3:x\n1 2:" + b"9" * 60 + b"x\n", r"line 3: the value '9{37}\.\.\.'"),
]


@pytest.mark.parametrize("text, message", ERRORS)
def test_errors_name_the_line(text, message):
    with pytest.raises(ValueError, match="^" + message):
        read_svmlight(text, query_id=b"qid:x" in text)
    with pytest.raises((ValueError, OverflowError)):  # scikit-learn refuses it too
        _sklearn(text, query_id=b"qid:x" in text)


def test_index_zero_in_a_one_based_file():
    with pytest.raises(ValueError, match=r"^line 2: Invalid index 0 .*the first feature is 1"):
        read_svmlight(b"1 1:1\n1 0:1\n", zero_based=False)
    with pytest.raises(ValueError, match=r"^line 1: Invalid index 0"):
        list(iter_chunks_of(b"1 0:1\n", 1, zero_based=False))


@pytest.mark.parametrize(
    "options, message",
    [
        ({"n_features": 0}, "n_features must be an integer >= 1 or None, got 0"),
        ({"n_features": 2.5}, "n_features must be an integer >= 1 or None, got 2.5"),
        ({"zero_based": "yes"}, "zero_based must be True, False or 'auto', got 'yes'"),
    ],
)
def test_bad_options(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        read_svmlight(b"1 1:1\n", **options)


def test_bad_sources(tmp_path):
    with pytest.raises(FileNotFoundError, match="no data file at"):
        read_svmlight(tmp_path / "absent.svm")
    with pytest.raises(FileNotFoundError, match="no data file at"):
        read_file(tmp_path / "absent.csv")
    with pytest.raises(FileNotFoundError, match="no data file at"):
        iter_chunks(tmp_path / "absent.csv", 5)
    with pytest.raises(TypeError, match="expected a path, bytes or a binary file object"):
        read_svmlight(3.5)
    with pytest.raises(TypeError, match="expected a binary file object .opened with 'rb'"):
        read_svmlight(io.StringIO("1 1:1\n"))

    class Texts:
        def read(self):
            return "1 1:1\n"

    with pytest.raises(TypeError, match="the file object's read.. gave str, not bytes"):
        read_svmlight(Texts())

    class Failing(io.RawIOBase):
        def readinto(self, b):
            raise OSError("the disk is gone")

    with pytest.raises(ValueError, match=r"^cannot be read \(the disk is gone\)"):
        read_svmlight(Failing())
    broken = tmp_path / "broken.svm.gz"
    broken.write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match="cannot be decompressed"):
        read_svmlight(broken)
    truncated = tmp_path / "truncated.svm.xz"
    truncated.write_bytes(lzma.compress(b"1 1:1\n" * 1000)[:-30])
    with pytest.raises(ValueError, match="cannot be decompressed"):
        read_svmlight(truncated)


def test_chunk_options(tmp_path):
    path = tmp_path / "t.svm"
    path.write_bytes(b"1 1:1\n")
    for bad in (0, 2.0, True):
        with pytest.raises(ValueError, match="chunk_size must be an integer >= 1"):
            iter_chunks(path, bad)
    with pytest.raises(ValueError, match="zero_based must be True or False to read in chunks"):
        iter_chunks(path, 5, zero_based="auto")
    with pytest.raises(ValueError, match="n_features must be an integer"):
        iter_chunks(path, 5, n_features=-1)


def test_data_format():
    assert FORMATS == ("svmlight", "csv")
    assert data_format("a/b.csv.gz") == "csv" and data_format("a/b.txt") == "svmlight"
    assert data_format("a.svm", "csv") == "csv"
    with pytest.raises(ValueError, match="unknown data format 'json'"):
        data_format("a.svm", "json")


# -- CSV -----------------------------------------------------------------------------------------


def _csv_table(seed, n=200, d=6):
    rng = np.random.RandomState(seed)
    table = rng.randn(n, d) * 10.0 ** rng.randint(-5, 6, size=(n, d))
    table[:, -1] = rng.randint(0, 3, size=n)
    return table


@pytest.mark.parametrize("fmt", ["%.17g", "%.3f", "%g"])
def test_csv_equals_numpy(tmp_path, fmt):
    table = _csv_table(0)
    path = tmp_path / "t.csv"
    np.savetxt(path, table, delimiter=",", fmt=fmt)
    want = np.loadtxt(path, delimiter=",")
    X, y = read_csv(path)
    np.testing.assert_array_equal(_bits(X), _bits(want[:, :-1]))
    np.testing.assert_array_equal(y, want[:, -1])
    X, y = read_csv(path, label_column=0)
    np.testing.assert_array_equal(X, want[:, 1:])
    np.testing.assert_array_equal(y, want[:, 0])
    X, y = read_csv(path, label_column=None)
    assert y is None
    np.testing.assert_array_equal(X, want)


def test_csv_comments_blank_lines_header_and_line_ends(tmp_path):
    text = (
        "a,b,label\r\n# a comment\n1, 2.5 ,0 # trailing\n\n   \n-3,1e-3,1\r\n"
        '"4",inf,1\n5,-0,0'  # quoted, no line end at the end
    )
    path = tmp_path / "t.csv"
    path.write_text(text)
    want = np.array([[1, 2.5, 0], [-3, 1e-3, 1], [4, np.inf, 1], [5, -0.0, 0]])
    for block_size in (8, 1 << 20):
        X, y = read_csv(path, skip_header=True, block_size=block_size)
        np.testing.assert_array_equal(np.column_stack([X, y]), want)
        chunks = list(iter_chunks(path, 2, skip_header=True, block_size=block_size))
        assert [c.line for c in chunks] == [3, 7]
        np.testing.assert_array_equal(np.vstack([c.X for c in chunks]), want[:, :2])
    gz = tmp_path / "t.csv.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    np.testing.assert_array_equal(read_file(gz, skip_header=True).X, want[:, :2])


@pytest.mark.parametrize("chunk_size", [1, 33, 500])
def test_csv_chunks_make_the_whole_file(tmp_path, chunk_size):
    table = _csv_table(1, n=250)
    path = tmp_path / "t.csv"
    np.savetxt(path, table, delimiter=",", fmt="%.17g")
    chunks = list(iter_chunks(path, chunk_size, label_column=None, block_size=512))
    assert all(c.X.shape[0] == chunk_size for c in chunks[:-1])
    assert [c.line for c in chunks] == [1 + chunk_size * k for k in range(len(chunks))]
    np.testing.assert_array_equal(np.vstack([c.X for c in chunks]), table)
    assert all(c.y is None for c in chunks)


def test_empty_csv(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("# nothing\n\n")
    X, y = read_csv(path)
    assert X.shape == (0, 0) and y.shape == (0,)
    assert read_csv(path, label_column=None)[1] is None
    assert list(iter_chunks(path, 3)) == []


@pytest.mark.parametrize(
    "text, options, message",
    [
        ("1,2,3\n4,5\n", {}, r"line 2: 2 values, where the first row has 3"),
        ("1,2,3\n\n4,5,6,7\n", {}, r"line 3: 4 values, where the first row has 3"),
        ("1,2,3\n4,x,6\n", {}, r"line 2: the value 'x' in column 2 is not a number"),
        ("h\n1,2\n4,,6\n", {"skip_header": True}, r"line 3: 3 values"),
        ("1,2\n4,NA\n", {}, r"line 2: the value 'NA' in column 2 is not a number"),
        ("1\n2\n", {}, "a CSV file needs a label column and at least one feature"),
        ("1,2\n", {"label_column": 2}, "label_column=2 is out of range for rows of 2 values"),
        ("1,2\n", {"label_column": "0"}, "label_column must be an integer or None, got '0'"),
    ],
)
def test_csv_errors(tmp_path, text, options, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_csv(path, **options)


def test_csv_error_the_diagnosis_does_not_find():
    # pyarrow refused a block whose rows all look fine: its message, and where
    from marginkit.formats.csv_reader import _csv_diagnosis

    err = _csv_diagnosis(b"1,2\n", np.array([7]), 2, "some reason")
    assert str(err) == "in the lines from 7: some reason"


def test_a_directory_is_not_a_data_file(tmp_path):
    """A directory given as the data file says so (not "no data file"), from every
    reader, from a stream and from the command line."""
    from marginkit.cli import main
    from marginkit.streaming import FileStream

    said = f"{tmp_path} is a directory, not a data file"
    for read in (
        read_svmlight,
        read_file,
        lambda p: iter_chunks(p, 5),
        lambda p: FileStream(p, 5),
    ):
        with pytest.raises(IsADirectoryError, match=re.escape(said)):
            read(tmp_path)
    assert main(["train", str(tmp_path), "--estimator", "alma", "--model", "m.skops"]) == 2
