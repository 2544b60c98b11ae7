"""Vectors as numpy arrays: `set_vectors` takes a 2-D C-contiguous float32 array (rows read
from one buffer, no copy per row), and refuses any other dtype, ndim or shape by code."""

import numpy as np
import pytest

import wikidex


def index():
    return wikidex.Index.build(
        {
            "global/alpha.md": "# Alpha\nAlpha covers revenue recognition.",
            "global/beta.md": "# Beta\nBeta covers on-call rotations.",
            "global/gamma.md": "# Gamma\nGamma covers revenue and on-call budgets.",
        }
    )


def vectors(n):
    return np.eye(n, 4, dtype=np.float32) + 0.1


def test_a_float32_array_is_stored_and_searched_by_query_vector():
    ix = index()
    v = vectors(len(ix.passages()))
    ix.set_vectors("toy", "toy-1", v)
    hits = ix.search("anything", lanes="semantic", query_vector=v[1]).hits
    assert hits[0].chunk == "beta::chunk_0"
    assert ix.rank("anything", lanes="semantic", query_vector=v[2])[0][0] == "gamma"


def test_an_array_and_its_list_store_the_same_index():
    a, b = index(), index()
    v = vectors(len(a.passages()))
    a.set_vectors("toy", "toy-1", v)
    b.set_vectors("toy", "toy-1", v.tolist())
    assert a.to_bytes() == b.to_bytes()


def test_int8_encoding_is_taken_from_an_array():
    a, b = index(), index()
    v = vectors(len(a.passages()))
    a.set_vectors("toy", "toy-1", v, "int8")
    b.set_vectors("toy", "toy-1", v)
    assert len(a.to_bytes()) < len(b.to_bytes())
    assert a.rank("x", lanes="semantic", query_vector=v[0]) [0][0] == "alpha"


def test_the_array_is_read_not_kept():
    ix = index()
    v = vectors(len(ix.passages()))
    ix.set_vectors("toy", "toy-1", v)
    before = ix.to_bytes()
    v[:] = 0.0  # writing the caller's array later changes nothing in the index
    assert ix.to_bytes() == before


@pytest.mark.parametrize(
    "make,says",
    [
        (lambda n: vectors(n).astype(np.float64), "dtype float32"),
        (lambda n: vectors(n).astype(np.int32), "dtype float32"),
        (lambda n: vectors(n)[0], "2-D"),
        (lambda n: vectors(n).reshape(1, n, 4), "2-D"),
        (lambda n: vectors(n + 1), "vectors for"),
        (lambda n: vectors(n)[: n - 1], "vectors for"),
        (lambda n: np.zeros((n, 0), dtype=np.float32), "dimension 0"),
        (lambda n: np.asfortranarray(vectors(n)), "C-contiguous"),
        (lambda n: np.ascontiguousarray(np.eye(n, 8, dtype=np.float32))[:, ::2], "C-contiguous"),
        (lambda n: np.full((n, 4), np.nan, dtype=np.float32), "not finite"),
        (lambda n: "not an array", "numpy.ndarray"),
    ],
)
def test_a_wrong_array_is_an_invalid_argument_and_changes_nothing(make, says):
    ix = index()
    before = ix.to_bytes()
    with pytest.raises(wikidex.InvalidArgumentError) as info:
        ix._native.set_vectors("toy", "toy-1", make(len(ix.passages())), "f32")
    assert info.value.code == "invalid_argument"
    assert says in info.value.message, info.value.message
    assert ix.to_bytes() == before


def test_the_wrapper_refuses_the_same_arrays():
    ix = index()
    with pytest.raises(wikidex.InvalidArgumentError):
        ix.set_vectors("toy", "toy-1", vectors(3).astype(np.float64))
    with pytest.raises(TypeError):
        ix.set_vectors("toy", "toy-1", "not vectors")
    with pytest.raises(wikidex.InvalidArgumentError):
        ix.set_vectors("toy", "toy-1", vectors(3), "f16")
