"""The reading options as one value (marginkit._reading): a CSV header found from the
first line, not from a reader's error; one rule each for the labels' kind, the base of
svmlight indices and the width; the same decisions in every reader."""

import gzip

import numpy as np
import pytest

from marginkit._reading import (
    ReadOptions,
    as_labels,
    csv_header,
    integral,
    svmlight_width,
    zero_based_of,
)
from marginkit.streaming import FileStream
from marginkit.tasks import read_data


@pytest.mark.parametrize(
    "text, header",
    [
        ("a,b,label\n1,2,0\n", True),
        ("1,2,0\n3,4,1\n", False),
        ('"1", 2.5e3 ,-inf\n', False),  # quoted and spaced numbers are numbers
        ("x1,2,0\n", True),  # one cell that is not a number
        ("# a comment\na,b,c\n", False),  # skipped, as the reader skips it
        ("\n1,2,0\n", False),
        ("1,2,0 # a comment\n", False),
    ],
)
def test_a_csv_header_is_its_first_line_of_other_than_numbers(tmp_path, text, header):
    path = tmp_path / "t.csv"
    path.write_text(text)
    assert csv_header(path) is header
    packed = tmp_path / "t.csv.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    assert csv_header(packed) is header


def test_options_for_a_file_decide_its_format_and_header(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("a,b,y\n1,2,0\n3,4,1\n")
    svm = tmp_path / "t.svm"
    svm.write_text("1 1:2\n")
    assert ReadOptions().for_file(csv) == ReadOptions(fmt="csv", skip_header=True)
    assert ReadOptions().for_file(svm) == ReadOptions(fmt="svmlight")
    assert ReadOptions(fmt="csv", skip_header=True).for_file(svm).skip_header
    with pytest.raises(ValueError, match="unknown data format 'arff'"):
        ReadOptions(fmt="arff").for_file(csv)


def test_every_reader_takes_the_header_alike(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b,label\n1,2,0\n3,4,1\n5,6,0\n")
    X, y = read_data(path)
    stream = FileStream(path, 2)
    chunks = list(stream())
    np.testing.assert_array_equal(np.vstack([c[0] for c in chunks]), X)
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), y)
    assert stream.reading.skip_header and stream.skip_header
    assert y.dtype == np.int64 and stream.integral


def test_a_file_that_fails_after_its_header_says_so(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b,label\n1,x,0\n")
    with pytest.raises(ValueError, match="its first line taken as a header .*line 2"):
        read_data(path)
    path.write_text("1,2,0\n1,x,0\n")
    with pytest.raises(ValueError, match=r"numeric CSV \(line 2"):
        read_data(path)


def test_labels_are_integers_when_every_one_is():
    assert integral(np.array([1.0, -2.0, 0.0])) and integral(np.array([3, 4]))
    assert not integral(np.array([1.0, 1.5]))
    assert not integral(np.array(["a", "b"]))
    assert as_labels(np.array([1.0, 2.0])).dtype == np.int64
    assert as_labels(np.array([1.0, 2.5])).dtype == np.float64


def test_svmlight_indices_and_width():
    assert zero_based_of([None, None]) and zero_based_of([3, 0]) and zero_based_of([])
    assert not zero_based_of([1, None, 4])
    assert svmlight_width([5, 9], True, None, ["a", "b"]) == 9
    assert svmlight_width([5, 9], False, None, ["a", "b"]) == 8
    assert svmlight_width([5, 9], False, 20, ["a", "b"]) == 20
    with pytest.raises(ValueError, match="b: n_features was given as 4, but the file has 8"):
        svmlight_width([5, 9], False, 4, ["a", "b"])
