# SPDX-License-Identifier: LGPL-2.1-or-later
"""python3-cider against real stores: cider.ko in the test VM, cider-memd
over rxe.  selftests/cider/python-cider starts the memory nodes, attaches
them and names them in the environment; without them every test skips.

    CIDER_PY_HASH   mn id of a hash store (16 MiB)
    CIDER_PY_ARRAY  mn id of an array store (1024 keys)
    CIDER_PY_SMALL  mn id of a 4 MiB hash store this file fills, then
                    detaches (run last)
"""

import errno
import os
import random
import subprocess

import pytest

import cider

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CTL = os.path.join(REPO, "tools", "ciderctl", "ciderctl")


def _mn(name):
    v = os.environ.get(name)
    if v is None:
        pytest.skip("needs %s (selftests/cider/python-cider)" % name)
    return int(v)


@pytest.fixture
def hs():
    with cider.Store(_mn("CIDER_PY_HASH")) as s:
        yield s


@pytest.fixture
def arr():
    with cider.Store(_mn("CIDER_PY_ARRAY")) as s:
        yield s


def test_the_store_is_described(hs, arr):
    assert (hs.index, hs.max_key_len, hs.max_value_len) == ("hash", 1024, 64 << 10)
    assert (arr.index, arr.max_key_len, arr.max_value_len) == ("array", 8, 8)
    assert "mn=%d" % hs.mn in repr(hs)


def test_round_trip_of_every_operation(hs):
    k = b"py-round-trip"
    hs.put(k, b"one")
    assert hs.get(k) == b"one"
    hs.update(k, b"two")
    assert hs[k] == b"two"
    with pytest.raises(FileExistsError):
        hs.insert(k, b"three")
    assert hs.get(k) == b"two"
    hs.delete(k)
    assert k not in hs
    with pytest.raises(KeyError) as e:
        hs.get(k)
    assert e.value.args == (k,)
    assert hs.get(k, None) is None
    with pytest.raises(KeyError):
        hs.update(k, b"x")
    with pytest.raises(KeyError):
        hs.delete(k)
    hs.insert(k, b"four")
    hs[k] = b"five"
    assert hs.get(k) == b"five"
    del hs[k]


def test_binary_keys_and_values_of_every_size_come_back_byte_for_byte(hs):
    rng = random.Random(7)
    for klen, vlen in [(1, 0), (1024, 1), (17, 4095), (3, 64 << 10), (200, 12345)]:
        k = bytes(rng.randrange(256) for _ in range(klen))
        v = os.urandom(vlen)
        hs.put(k, v)
        assert hs.get(k) == v
        hs.delete(k)


def test_limits_are_refused_by_the_module(hs):
    with pytest.raises(cider.InvalidArgument) as e:
        hs.put(b"k" * 1025, b"v")
    assert e.value.errno == errno.ENAMETOOLONG
    with pytest.raises(cider.InvalidArgument) as e:
        hs.put(b"k", b"v" * ((64 << 10) + 1))
    assert e.value.errno == errno.E2BIG


def test_array_store_keys_are_integers_and_capacity_is_checked(arr):
    arr.put(5, (1234).to_bytes(8, "little"))
    assert arr.get(5) == (1234).to_bytes(8, "little")
    assert arr.get((5).to_bytes(8, "little")) == (1234).to_bytes(8, "little")
    with pytest.raises(cider.InvalidArgument) as e:
        arr.put(1 << 40, bytes(8))
    assert e.value.errno == errno.EDOM
    with pytest.raises(cider.InvalidArgument) as e:
        arr.put(6, b"short")
    assert e.value.errno == errno.EINVAL
    arr.delete(5)


def test_no_such_store_and_several_stores_are_told_apart():
    _mn("CIDER_PY_HASH")
    with pytest.raises(cider.NoSuchStore):
        cider.Store(mn=4000)
    with pytest.raises(ValueError) as e:
        cider.Store()
    assert "pick one with mn=" in str(e.value)


def test_a_batch_keeps_each_result_in_its_place(hs):
    keys = [b"py-batch-%d" % i for i in range(300)]
    put = hs.batch([("put", k, k[::-1]) for k in keys], depth=16)
    assert put == [None] * 300
    got = hs.batch([("get", k) for k in keys] + [("get", b"py-batch-absent")])
    assert got[:300] == [k[::-1] for k in keys]
    assert isinstance(got[300], KeyError)
    mixed = hs.batch([("insert", keys[0], b"x"), ("update", keys[1], b"new"),
                      ("delete", keys[2]), ("delete", keys[2]), ("get", keys[1])], depth=1)
    assert isinstance(mixed[0], FileExistsError)
    assert mixed[1] is None and mixed[2] is None
    assert isinstance(mixed[3], KeyError)
    assert mixed[4] == b"new"
    # The same, one at a time, agrees.
    assert hs.get(keys[1]) == b"new" and keys[2] not in hs
    hs.batch([("delete", k) for k in keys if k != keys[2]], depth=64)
    assert not any(k in hs for k in keys[:5])


def test_a_scan_returns_every_key_and_a_prefix_only_its_own(hs, arr):
    keys = [b"py-scan-%d" % i for i in range(120)] + [b"py-other-%d" % i for i in range(30)]
    hs.batch([("put", k, b"v") for k in keys], depth=32)
    seen = [k for k in hs.scan() if k.startswith(b"py-")]
    assert sorted(seen) == sorted(keys)
    assert sorted(hs.scan(b"py-scan-", count=16)) == sorted(keys[:120])
    assert hs.keys(b"py-nothing-") == []
    hs.batch([("delete", k) for k in keys], depth=32)
    assert not [k for k in hs.scan() if k.startswith(b"py-")]
    for i in (3, 700, 1023):
        arr.put(i, bytes(8))
    assert {3, 700, 1023} <= set(arr.scan())
    with pytest.raises(cider.InvalidArgument):
        list(arr.scan(b"x"))
    with pytest.raises(TypeError):
        list(hs.scan("str"))
    for i in (3, 700, 1023):
        arr.delete(i)


def test_a_full_store_is_store_full_and_a_detached_one_no_such_store():
    mn = _mn("CIDER_PY_SMALL")
    s = cider.Store(mn)
    v = os.urandom(60 << 10)
    with pytest.raises(cider.StoreFull):
        for i in range(1000):		# 4 MiB: far fewer fit
            s.put(b"fill-%d" % i, v)
    assert i > 0 and s.get(b"fill-0") == v
    subprocess.run([CTL, "detach", str(mn)], check=True)
    with pytest.raises(cider.NoSuchStore):
        s.get(b"fill-0")
    s.close()
    s.close()
