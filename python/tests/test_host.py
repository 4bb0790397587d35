# SPDX-License-Identifier: LGPL-2.1-or-later
"""python3-cider without a device: its errno mapping, its structures
against <linux/cider.h> as the C compiler lays them out, and its checks of
what the caller hands it.  Run by python/tests/run-host (make check's
host part)."""

import ctypes
import errno
import gc
import os
import subprocess
import tempfile

import pytest

import cider

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("code,cls", [
    (errno.EEXIST, FileExistsError),
    (errno.ENOSPC, cider.StoreFull),
    (errno.ENOTCONN, cider.NodeLost),
    (errno.ECOMM, cider.OutcomeUnknown),
    (errno.ENXIO, cider.NoSuchStore),
    (errno.EINVAL, cider.InvalidArgument),
    (errno.ENAMETOOLONG, cider.InvalidArgument),
    (errno.E2BIG, cider.InvalidArgument),
    (errno.EDOM, cider.InvalidArgument),
    (errno.EAGAIN, BlockingIOError),
    (errno.ETIMEDOUT, TimeoutError),
    (errno.EINTR, InterruptedError),
    (errno.EIO, OSError),
    (errno.ENOMEM, OSError),
    (errno.EOPNOTSUPP, OSError),
])
def test_every_documented_errno_has_its_exception(code, cls):
    e = cider.error(-code, b"k")
    assert type(e) is cls or (cls is OSError and type(e) is OSError)
    assert isinstance(e, OSError) and e.errno == code
    assert e.strerror == os.strerror(code)


def test_an_absent_key_is_a_key_error_naming_the_key():
    e = cider.error(-errno.ENOENT, b"gone")
    assert type(e) is KeyError and e.args == (b"gone",)


def test_the_classes_say_what_happened():
    # A lost node: both are connection errors; only one may have happened.
    assert issubclass(cider.NodeLost, ConnectionError)
    assert issubclass(cider.OutcomeUnknown, ConnectionError)
    assert not issubclass(cider.NodeLost, cider.OutcomeUnknown)
    # Refused arguments are ValueErrors too, as Python callers expect.
    assert issubclass(cider.InvalidArgument, ValueError)
    for cls in (cider.StoreFull, cider.NodeLost, cider.OutcomeUnknown, cider.NoSuchStore,
                cider.InvalidArgument):
        assert issubclass(cls, cider.Error) and issubclass(cls, OSError)


def _c_layout(struct, fields):
    """sizeof and offsetof as cc lays <linux/cider.h> out."""
    src = "#include <stdio.h>\n#include <stddef.h>\n#include <linux/cider.h>\nint main(void)\n{\n"
    src += '\tprintf("%%zu\\n", sizeof(struct %s));\n' % struct
    for f in fields:
        src += '\tprintf("%%zu\\n", offsetof(struct %s, %s));\n' % (struct, f)
    src += "\treturn 0;\n}\n"
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "l.c"), "w") as f:
            f.write(src)
        subprocess.run(["cc", "-I", os.path.join(REPO, "uapi"), "-o", os.path.join(d, "l"),
                        os.path.join(d, "l.c")], check=True)
        out = subprocess.run([os.path.join(d, "l")], check=True, capture_output=True, text=True)
    nums = [int(x) for x in out.stdout.split()]
    return nums[0], nums[1:]


@pytest.mark.parametrize("py,c", [(cider._KvCmd, "cider_kv_cmd"), (cider._MnInfo, "cider_mn_info")])
def test_structures_match_the_uapi_header(py, c):
    names = [f[0] for f in py._fields_]
    size, offsets = _c_layout(c, names)
    assert ctypes.sizeof(py) == size
    assert [getattr(py, n).offset for n in names] == offsets


def test_no_device_is_an_os_error_that_says_so(monkeypatch):
    monkeypatch.setenv("CIDER_DEV", "/nonexistent/cider")
    with pytest.raises(FileNotFoundError):
        cider.Store()


def test_a_failed_open_closes_its_descriptor_once():
    # /dev/null opens but answers no CIDER ioctl: the Store fails after
    # its open.  A second close (its __del__, once the failed Store goes)
    # would close whatever file took the number meanwhile.
    saved = None
    try:
        cider.Store(device="/dev/null")
    except OSError as e:
        assert e.errno == errno.ENOTTY
        saved = e		# its traceback keeps the failed Store
    assert saved is not None
    r, w = os.pipe()
    saved = None
    gc.collect()
    os.fstat(r)
    os.fstat(w)
    os.close(r)
    os.close(w)


def _store(index):
    """A Store with no device behind it, for the checks done before a call."""
    s = object.__new__(cider.Store)
    s._fd, s._batch, s._batch_depth = 1 << 20, None, 0
    s.mn, s.index, s.mode, s.max_key_len, s.max_value_len = 0, index, "cider", 8, 8
    return s


def test_keys_and_values_must_be_bytes_and_ints_only_on_array_stores():
    h, a = _store("hash"), _store("array")
    assert a._key(1) == b"\x01" + b"\0" * 7
    assert a._key(b"12345678") == b"12345678"
    assert h._key(bytearray(b"k")) == b"k"
    with pytest.raises(TypeError):
        h._key(1)
    with pytest.raises(TypeError):
        h._key("text")
    with pytest.raises(cider.InvalidArgument):
        a._key(1 << 64)
    with pytest.raises(cider.InvalidArgument):
        a._key(-1)
    with pytest.raises(TypeError):
        h._value("text")
    h._fd = a._fd = -1


@pytest.mark.parametrize("op", [("frob", b"k"), ("get",), ("get", b"k", b"v"), ("put", b"k"),
                                ("delete", b"k", b"v"), (), "get"])
def test_a_malformed_batch_is_refused_before_anything_runs(op):
    s = _store("hash")
    with pytest.raises(ValueError):
        s.batch([("put", b"a", b"1"), op])
    with pytest.raises(ValueError):
        s.batch([("get", b"a")], depth=0)
    s._fd = -1


def test_a_closed_store_refuses_operations():
    s = _store("hash")
    s._fd = -1
    with pytest.raises(ValueError):
        s.get(b"k")
    with pytest.raises(ValueError):
        s.batch([("get", b"k")])
