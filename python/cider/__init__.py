# SPDX-License-Identifier: LGPL-2.1-or-later
"""CIDER's key-value stores from Python, through libcider.so.1.

    import cider
    with cider.Store() as s:          # the only memory node attached
        s.put(b"k", b"v")
        assert s.get(b"k") == b"v"

A Store is one attached memory node's store (``ciderctl attach``); its
operations are libcider's (``man libcider``), synchronous through
CIDER_IOC_KV, or several in flight through io_uring with ``batch()``.
Keys and values are bytes (an array store's keys and values are 8 bytes:
an int key is packed as a little-endian u64 there).  Errors are
exceptions, by the errno the module documents (``man 4 cider``):

    ENOENT     KeyError             GET, UPDATE or DELETE of an absent key
    EEXIST     FileExistsError      INSERT of a present key
    ENOSPC     StoreFull            the store has no room
    ENOTCONN   NodeLost             the node was lost: it did not happen
    ECOMM      OutcomeUnknown       the node was lost: it may have happened
    ENXIO      NoSuchStore          no attached node with that id
    EINVAL, ENAMETOOLONG, E2BIG, EDOM
               InvalidArgument      (also a ValueError) refused, not sent
    EAGAIN     BlockingIOError      every slot stayed busy (op_timeout_ms)
    ETIMEDOUT  TimeoutError
    others     OSError

Why ctypes: it is in the standard library, so the package is pure Python
(one package for every Python 3 and architecture, nothing to compile when
it is installed), and a call costs about a microsecond, little next to an
operation's RDMA round trips; cffi's API mode would need a C extension
built per Python version for no gain a KV store can measure.
"""

import ctypes
import errno as _errno
import os
import struct

__all__ = ["Store", "Error", "StoreFull", "NodeLost", "OutcomeUnknown", "NoSuchStore",
           "InvalidArgument", "open_device", "nodes", "LIB_NAME"]

LIB_NAME = "libcider.so.1"

# <linux/cider.h>
_KV_GET, _KV_PUT, _KV_INSERT, _KV_UPDATE, _KV_DELETE, _KV_SCAN = 1, 2, 3, 4, 5, 6
_KV_SCAN_MIN_BUF = (1024 + 4 + 7) & ~7	# CIDER_KV_SCAN_MIN_BUF
_STORE_ARRAY, _STORE_HASH = 1, 2
_MN_LIVE, _MN_DEAD, _MN_RECONNECTING = 1, 2, 3
_MODES = {1: "osync", 2: "caslock", 3: "mcs", 4: "cider"}
_STATES = {_MN_LIVE: "live", _MN_DEAD: "dead", _MN_RECONNECTING: "reconnecting"}


class _KvCmd(ctypes.Structure):
    """struct cider_kv_cmd (56 bytes)."""
    _fields_ = [("size", ctypes.c_uint32), ("store", ctypes.c_uint32),
                ("opcode", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("key", ctypes.c_uint64), ("value", ctypes.c_uint64),
                ("key_len", ctypes.c_uint32), ("value_len", ctypes.c_uint32),
                ("reserved", ctypes.c_uint64 * 2)]


class _MnInfo(ctypes.Structure):
    """struct cider_mn_info (184 bytes)."""
    _fields_ = [("size", ctypes.c_uint32), ("mn_id", ctypes.c_uint32),
                ("state", ctypes.c_uint32), ("dead_reason", ctypes.c_int32),
                ("cn_id", ctypes.c_uint32), ("family", ctypes.c_uint16),
                ("port", ctypes.c_uint16), ("addr", ctypes.c_uint8 * 16),
                ("nr_channels", ctypes.c_uint32), ("layout_version", ctypes.c_uint32),
                ("region_size", ctypes.c_uint64), ("ibdev", ctypes.c_char * 64),
                ("store_index", ctypes.c_uint32), ("store_mode", ctypes.c_uint32),
                ("store_keys", ctypes.c_uint64), ("max_key_len", ctypes.c_uint32),
                ("max_value_len", ctypes.c_uint32), ("reserved", ctypes.c_uint64 * 1),
                ("cn_incarnation", ctypes.c_uint64), ("reconnects", ctypes.c_uint32),
                ("reconnect_attempts", ctypes.c_uint32), ("lost_reason", ctypes.c_int32),
                ("last_reason", ctypes.c_int32), ("atomics", ctypes.c_uint32),
                ("reserved2", ctypes.c_uint32)]


class Error(OSError):
    """A CIDER failure with no closer built-in exception."""


class StoreFull(Error):
    """ENOSPC: the store has no room for the value or the key."""


class NoSuchStore(Error):
    """ENXIO: no memory node with that id is attached."""


class NodeLost(Error, ConnectionError):
    """ENOTCONN: the node was lost (or detached) first: nothing happened."""


class OutcomeUnknown(Error, ConnectionError):
    """ECOMM: a write was sent and the node was lost before it was
    confirmed: it may or may not have happened.  Read the key."""


class InvalidArgument(Error, ValueError):
    """The module refused the operation before sending anything."""


_BY_ERRNO = {
    _errno.ENOSPC: StoreFull,
    _errno.ENXIO: NoSuchStore,
    _errno.ENOTCONN: NodeLost,
    _errno.ECOMM: OutcomeUnknown,
    _errno.EINVAL: InvalidArgument,
    _errno.ENAMETOOLONG: InvalidArgument,
    _errno.E2BIG: InvalidArgument,
    _errno.EDOM: InvalidArgument,
}

_lib = None


def _libcider():
    """libcider.so.1, loaded the first time it is needed."""
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(LIB_NAME, use_errno=True)
        lib.cider_open.restype = ctypes.c_int
        lib.cider_open.argtypes = []
        lib.cider_mn_info.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_MnInfo)]
        lib.cider_kv_strerror.restype = ctypes.c_char_p
        lib.cider_kv_strerror.argtypes = [ctypes.c_int]
        lib.cider_strerror.restype = ctypes.c_char_p
        lib.cider_strerror.argtypes = [ctypes.c_int]
        lib.cider_get.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_char_p, ctypes.c_size_t,
                                  ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        for name in ("cider_put", "cider_insert", "cider_update"):
            getattr(lib, name).argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_char_p,
                                           ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
        lib.cider_delete.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_char_p,
                                     ctypes.c_size_t]
        lib.cider_kv_cmd_init.argtypes = [ctypes.POINTER(_KvCmd), ctypes.c_uint, ctypes.c_uint,
                                          ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                          ctypes.c_size_t]
        lib.cider_batch_new.restype = ctypes.c_void_p
        lib.cider_batch_new.argtypes = [ctypes.c_int, ctypes.c_uint]
        lib.cider_batch_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(_KvCmd), ctypes.c_uint,
                                        ctypes.POINTER(ctypes.c_int)]
        lib.cider_batch_free.restype = None
        lib.cider_scan.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_char_p, ctypes.c_size_t,
                                   ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint,
                                   ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        lib.cider_batch_free.argtypes = [ctypes.c_void_p]
        _lib = lib
    return _lib


def error(err, key=None):
    """The exception for a libcider result ``err`` (a negative errno)."""
    code = -err
    if code == _errno.ENOENT:
        return KeyError(key)
    return _BY_ERRNO.get(code, OSError)(code, os.strerror(code))


def open_device():
    """A descriptor of /dev/cider (or $CIDER_DEV), as libcider opens it."""
    fd = _libcider().cider_open()
    if fd < 0:
        raise OSError(-fd, _libcider().cider_strerror(fd).decode(errors="replace"))
    return fd


def _mn_info(fd, mn_id):
    """The attached node with the lowest id >= mn_id, or None."""
    mi = _MnInfo()
    ret = _libcider().cider_mn_info(fd, mn_id, ctypes.byref(mi))
    if ret == -_errno.ENOENT:
        return None
    if ret:
        raise OSError(-ret, os.strerror(-ret))
    return mi


def nodes(fd=None):
    """The attached memory nodes: a list of dicts (mn, state, index, ...)."""
    own = fd is None
    fd = open_device() if own else fd
    try:
        out, mn = [], 0
        while True:
            mi = _mn_info(fd, mn)
            if mi is None:
                return out
            out.append({"mn": mi.mn_id, "state": _STATES.get(mi.state, "?"),
                        "index": {_STORE_ARRAY: "array", _STORE_HASH: "hash"}.get(
                            mi.store_index, "?"),
                        "mode": _MODES.get(mi.store_mode, "?"), "keys": mi.store_keys,
                        "max_key_len": mi.max_key_len, "max_value_len": mi.max_value_len})
            mn = mi.mn_id + 1
    finally:
        if own:
            os.close(fd)


class Store:
    """One attached memory node's KV store.

    ``mn``: the node's id (``ciderctl status``); None picks the only node
    attached.  ``device``: a path instead of /dev/cider ($CIDER_DEV).
    """

    def __init__(self, mn=None, device=None):
        self._fd = -1		# __del__ of a Store whose open failed
        if device is not None:
            self._fd = os.open(device, os.O_RDWR | os.O_CLOEXEC)
        else:
            self._fd = open_device()
        self._batch = None
        self._batch_depth = 0
        try:
            self._pick(mn)
        except BaseException:
            self.close()	# once: the number may be another file's next
            raise

    def _pick(self, mn):
        if mn is None:
            found = nodes(self._fd)
            if not found:
                raise NoSuchStore(_errno.ENXIO, "no memory node attached (ciderctl attach)")
            if len(found) > 1:
                raise ValueError("several memory nodes attached (%s): pick one with mn="
                                 % ", ".join(str(n["mn"]) for n in found))
            mn = found[0]["mn"]
        mi = _mn_info(self._fd, mn)
        if mi is None or mi.mn_id != mn:
            raise NoSuchStore(_errno.ENXIO, "no memory node %d attached" % mn)
        self.mn = mn
        self.index = "array" if mi.store_index == _STORE_ARRAY else "hash"
        self.mode = _MODES.get(mi.store_mode, "?")
        self.max_key_len = mi.max_key_len
        self.max_value_len = mi.max_value_len

    # --- life ---------------------------------------------------------
    def close(self):
        """Let go of the device (and the batch ring).  Idempotent."""
        if self._batch:
            _libcider().cider_batch_free(self._batch)
            self._batch = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_fd", -1) >= 0:
            self.close()

    def __repr__(self):
        return "<cider.Store mn=%d %s %s>" % (self.mn, self.index, self.mode)

    # --- keys and values ---------------------------------------------
    def _key(self, key):
        if isinstance(key, int) and not isinstance(key, bool):
            if self.index != "array":
                raise TypeError("a hash store's keys are bytes")
            if not 0 <= key < 1 << 64:
                raise InvalidArgument(_errno.EDOM, "key %d is not a u64" % key)
            return struct.pack("<Q", key)
        if isinstance(key, (bytes, bytearray, memoryview)):
            return bytes(key)
        raise TypeError("keys are bytes%s, not %s" % (
            " or int" if self.index == "array" else "", type(key).__name__))

    @staticmethod
    def _value(value):
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        raise TypeError("values are bytes, not %s" % type(value).__name__)

    def _check(self):
        if self._fd < 0:
            raise ValueError("operation on a closed Store")

    # --- synchronous operations --------------------------------------
    def get(self, key, *default):
        """The value of ``key``: KeyError if absent (or ``default`` if given)."""
        self._check()
        k = self._key(key)
        size = self.max_value_len or (64 << 10)
        while True:
            buf = ctypes.create_string_buffer(size)
            n = ctypes.c_size_t(size)
            ret = _libcider().cider_get(self._fd, self.mn, k, len(k), buf, ctypes.byref(n))
            if ret == -_errno.ERANGE and n.value > size:
                size = n.value		# the value grew past what the store said
                continue
            if ret == -_errno.ENOENT and default:
                return default[0]
            if ret < 0:
                raise error(ret, key)
            return buf.raw[:n.value]

    def _write(self, fn, key, value):
        self._check()
        k, v = self._key(key), self._value(value)
        ret = fn(self._fd, self.mn, k, len(k), v, len(v))
        if ret < 0:
            raise error(ret, key)

    def put(self, key, value):
        """Store ``value`` under ``key``, present or not."""
        self._write(_libcider().cider_put, key, value)

    def insert(self, key, value):
        """Store ``value`` under an absent ``key``: FileExistsError if present."""
        self._write(_libcider().cider_insert, key, value)

    def update(self, key, value):
        """Replace ``key``'s value: KeyError if absent."""
        self._write(_libcider().cider_update, key, value)

    def delete(self, key):
        """Remove ``key``: KeyError if absent."""
        self._check()
        k = self._key(key)
        ret = _libcider().cider_delete(self._fd, self.mn, k, len(k))
        if ret < 0:
            raise error(ret, key)

    __getitem__ = get
    __setitem__ = put
    __delitem__ = delete

    def __contains__(self, key):
        try:
            self.get(key)
        except KeyError:
            return False
        return True

    # --- several in flight --------------------------------------------
    _OPS = {"get": _KV_GET, "put": _KV_PUT, "insert": _KV_INSERT, "update": _KV_UPDATE,
            "delete": _KV_DELETE}

    def _ring(self, depth):
        lib = _libcider()
        if self._batch and self._batch_depth != depth:
            lib.cider_batch_free(self._batch)
            self._batch = None
        if not self._batch:
            b = lib.cider_batch_new(self._fd, depth)
            if not b:
                e = ctypes.get_errno()
                raise OSError(e, "io_uring: " + os.strerror(e))
            self._batch, self._batch_depth = b, depth
        return self._batch

    def batch(self, ops, depth=32):
        """Run ``ops`` with up to ``depth`` in flight at once (io_uring).

        ``ops``: tuples ("get", key), ("put"|"insert"|"update", key, value)
        or ("delete", key).  Returns one result per operation, in order:
        a GET's value, None for the others, or the exception the
        operation would have raised (returned, not raised: one absent key
        does not hide the others' outcomes).
        """
        self._check()
        if not 1 <= depth <= 4096:
            raise ValueError("depth 1..4096")
        ops = list(ops)
        for i, op in enumerate(ops):
            code = self._OPS.get(op[0]) if isinstance(op, tuple) and op else None
            if code is None or len(op) != (2 if code in (_KV_GET, _KV_DELETE) else 3):
                raise ValueError("operation %d: %r is not (get|delete, key) or "
                                 "(put|insert|update, key, value)" % (i, op))
        out = []
        # In chunks: a GET's buffer is the store's largest value (64 KiB).
        for start in range(0, len(ops), self._CHUNK):
            out += self._batch_run(ops[start:start + self._CHUNK], depth)
        return out

    _CHUNK = 256

    # --- iteration ---------------------------------------------------
    def scan(self, prefix=b"", count=0, bufsize=64 << 10):
        """Yield the store's keys (bytes; an array store's as ints), a page at a time.

        Redis SCAN's promise: a key present for the whole iteration comes at
        least once; one added or removed meanwhile may or may not; a key may
        come twice.  ``prefix``: only keys starting with it (hash stores).
        ``count``: index positions a page visits (0: the module's default).
        """
        self._check()
        if isinstance(prefix, (bytes, bytearray, memoryview)):
            pre = bytes(prefix)
        else:
            raise TypeError("a prefix is bytes, not %s" % type(prefix).__name__)
        buf = ctypes.create_string_buffer(max(bufsize, _KV_SCAN_MIN_BUF))
        cursor = ctypes.c_uint64(0)
        lib = _libcider()
        while True:
            n = ctypes.c_size_t(len(buf))
            ret = lib.cider_scan(self._fd, self.mn, pre, len(pre), ctypes.byref(cursor), count,
                                 buf, ctypes.byref(n))
            if ret < 0:
                raise error(ret)
            yield from self._scan_page(buf.raw[:n.value])
            if not cursor.value:
                return

    def _scan_page(self, raw):
        at = 0
        while at + 4 <= len(raw):
            (klen,) = struct.unpack_from("=I", raw, at)
            key = raw[at + 4:at + 4 + klen]
            at += (klen + 4 + 7) & ~7
            yield struct.unpack("<Q", key)[0] if self.index == "array" else key

    def keys(self, prefix=b""):
        """Every key, as a list (scan())."""
        return list(self.scan(prefix))

    def _batch_cmd(self, cmd, op):
        """Describe ``op`` in ``cmd``: the buffers that must outlive the run."""
        code = self._OPS[op[0]]
        raw = self._key(op[1])
        k = ctypes.create_string_buffer(raw, len(raw))
        v = None
        if code == _KV_GET:
            v = ctypes.create_string_buffer(self.max_value_len or (64 << 10))
        elif code != _KV_DELETE and op[2]:
            raw = self._value(op[2])
            v = ctypes.create_string_buffer(raw, len(raw))
        elif code != _KV_DELETE:
            self._value(op[2])		# the type, even when empty
        ret = _libcider().cider_kv_cmd_init(ctypes.byref(cmd), self.mn, code, k,
                                            ctypes.sizeof(k), v,
                                            0 if v is None else ctypes.sizeof(v))
        if ret < 0:
            raise error(ret, op[1])
        return k, v

    def _batch_run(self, ops, depth):
        n = len(ops)
        cmds = (_KvCmd * n)()
        res = (ctypes.c_int * n)()
        keep = [self._batch_cmd(cmds[i], op) for i, op in enumerate(ops)]
        ret = _libcider().cider_batch_run(self._ring(depth), cmds, n, res)
        if ret < 0:
            self.close_batch()
            raise OSError(-ret, "batch: " + os.strerror(-ret))
        out = []
        for i, op in enumerate(ops):
            r = res[i]
            if r < 0:
                out.append(error(r, op[1]))
            elif op[0] == "get":
                out.append(keep[i][1].raw[:r])
            else:
                out.append(None)
        return out

    def close_batch(self):
        """Free the batch ring (a failed one refuses further runs)."""
        if self._batch:
            _libcider().cider_batch_free(self._batch)
            self._batch = None
