"""streamcal._classes: the class-label codec, the top class, the append-only class
index and the reference-counted class counts (issue 14: one home for class labels).

The label encodings are a snapshot format (tests/fixtures/*.json hold them): the
expected values below are what every earlier version wrote."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from streamcal import _classes as C
from streamcal._snapshot import StateChecks

LABELS = ["rain", 0, 1, -3, 2.5, True, False, None, ("a", 1), ("a", ("b", None)), ()]


@pytest.mark.parametrize("label", LABELS, ids=repr)
def test_label_round_trips_through_json(label):
    data = json.loads(json.dumps(C.encode_label(label)))
    back = C.decode_label(data, {})
    assert back == label and type(back) is type(label)


def test_label_encodings_are_the_snapshot_format():
    assert C.encode_label("rain") == "rain"
    assert C.encode_label(3) == 3
    assert C.encode_label(None) is None
    assert C.encode_label(("a", 1)) == {"tuple": ["a", 1]}
    assert C.encode_label((("a",), 2.5)) == {"tuple": [{"tuple": ["a"]}, 2.5]}
    assert C.encode_label(()) == {"tuple": []}


@pytest.mark.parametrize(
    "value, expected",
    [(np.int64(3), 3), (np.float32(0.5), 0.5), (np.bool_(True), True), (np.str_("x"), "x")],
    ids=repr,
)
def test_numpy_scalar_labels_become_python_scalars(value, expected):
    out = C.encode_label(value)
    assert out == expected and type(out) is type(expected)
    tagged = C.encode_label((value, value))
    assert tagged == {"tuple": [expected, expected]}
    assert all(type(x) is type(expected) for x in tagged["tuple"])


def test_equal_labels_decode_to_one_shared_object():
    memo: dict = {}
    a = C.decode_label({"tuple": ["x", 1]}, memo)
    b = C.decode_label({"tuple": ["x", 1]}, memo)
    assert a == ("x", 1) and a is b
    s = C.decode_label("".join(["ra", "in"]), memo)
    assert s is C.decode_label("".join(["r", "ain"]), memo)


def test_bad_label_data_raises_key_or_type_error():
    with pytest.raises(KeyError):
        C.decode_label({"list": [1]}, {})
    with pytest.raises(TypeError):
        C.decode_label({"tuple": [[1]]}, {})


def test_by_class_pairs_keep_order_and_int_labels():
    by_class = {2: 1.5, "2": 2.5, ("t", 0): 3.5}
    pairs = C.encode_by_class(by_class, lambda v: v * 2)
    assert pairs == [[2, 3.0], ["2", 5.0], [{"tuple": ["t", 0]}, 7.0]]
    back = C.decode_by_class(json.loads(json.dumps(pairs)), lambda v: v / 2, {})
    assert back == by_class and list(back) == list(by_class)


def test_top_class_is_max_with_first_key_on_ties():
    rng = random.Random(5)
    for _ in range(500):
        k = rng.randint(1, 6)
        p = {c: rng.choice([0.0, 0.25, 0.5, rng.random()]) for c in rng.sample(range(10), k)}
        best = max(p, key=p.get)  # river's rule, the oracle
        assert C.top_class(p) == (best, p[best])
    assert C.top_class({}) == (None, -1.0)


def test_class_index_is_append_only_in_order_of_first_appearance():
    idx = C.ClassIndex()
    idx._reset_classes()
    seen: list = []
    rng = random.Random(1)
    for _ in range(200):
        scores = {c: rng.random() for c in rng.sample("abcdefg", rng.randint(1, 3))}
        label = rng.choice("abcdefgh")
        idx._discover(scores, label)
        for c in (*scores, label):
            if c not in seen:
                seen.append(c)
        assert idx.classes == tuple(seen)
        assert all(idx._class_list[i] == c and idx._classes[c] == i for i, c in enumerate(seen))


def test_class_index_state_round_trips_and_is_validated():
    idx = C.ClassIndex()
    idx._reset_classes()
    idx._discover({("a", 1): 0.5, 2: 0.5}, "x")
    state = json.loads(json.dumps(idx._classes_state()))
    assert state == [{"tuple": ["a", 1]}, 2, "x"]
    check = StateChecks("Owner")
    assert C.ClassIndex._validate_classes(state, check) == [("a", 1), 2, "x"]
    other = C.ClassIndex()
    other._load_classes(state, {})
    assert other.classes == idx.classes and other._classes == idx._classes
    with pytest.raises(ValueError, match=r"state\['classes'\]\[1\]"):
        C.ClassIndex._validate_classes(["x", "x"], check)
    with pytest.raises(ValueError, match=r"state\['classes'\]\[0\]"):
        C.ClassIndex._validate_classes([{"no": 1}], check)


def test_class_counts_match_a_counting_oracle_and_forget_at_zero():
    counts = C.ClassCounts()
    counts._refs = {}
    rng = random.Random(7)
    held: list = []
    for _ in range(400):
        if held and rng.random() < 0.45:
            y, p = held.pop(rng.randrange(len(held)))
            before = set(counts._refs)
            gone = counts._unmention(y, p)
            oracle = {}
            for yy, pp in held:
                for c in {*pp, yy}:
                    oracle[c] = oracle.get(c, 0) + 1
            assert set(gone) == before - set(oracle)
        else:
            p = {c: rng.random() for c in rng.sample("abcde", rng.randint(1, 3))}
            y = rng.choice("abcdef")
            counts._mention(y, p)
            held.append((y, p))
            assert counts._held(y, p)
        oracle = {}
        for yy, pp in held:
            for c in {*pp, yy}:
                oracle[c] = oracle.get(c, 0) + 1
        assert counts._refs == oracle
    assert not counts._held("zzz", {})


def test_nothing_imports_class_helpers_from_metrics():
    import pathlib

    root = pathlib.Path(C.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "_multiclass import _" not in text, path
        assert "_refit import (\n    _ClassRegistry" not in text, path
