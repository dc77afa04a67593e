"""Read an .npz archive's arrays in one pass: the fast path of loading a raw log.

``np.load`` inflates each member in 256 KB pieces through zipfile's reader and copies
every piece into a fresh array; for a raw log that is most of a first summary's time
spent reading. Here each deflated member is inflated by one zlib call, checked
against the archive's CRC, and viewed where it lies (read-only) by ``np.frombuffer``.

Anything this does not handle plainly (a stored or encrypted member, a .npy header
of version 3, an object array, any size or CRC mismatch, a file that is no zip at
all) gives None: the caller then reads the file with ``np.load``, which also words
the error for a damaged file. So this path can only be faster, never different.
"""
from __future__ import annotations

import io
import math
import struct
import zipfile
import zlib

import numpy as np
from numpy.lib import format as npy

from .background import Background

_LOCAL_HEADER = struct.Struct("<4s22xHH")   # signature ... name length, extra length
_LOCAL_SIGNATURE = b"PK\x03\x04"
_MAX_DEFLATE_RATIO = 1032      # deflate's largest expansion (258 bytes from 2 bits)
_HELPER_MIN_BYTES = 1 << 20   # below this a second thread costs more than it saves
_HEADER_READERS = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}


def read_npz(path) -> dict[str, np.ndarray] | None:
    """{name: read-only array} of every member, or None (read it with np.load)."""
    try:
        with open(path, "rb") as f:
            whole = f.read()
        data = memoryview(whole)   # members are sliced out of it without copies
        with zipfile.ZipFile(io.BytesIO(whole)) as zf:   # BytesIO shares a bytes object
            infos = zf.infolist()
        if not all(_plain(info) for info in infos):
            return None
        # zlib lets go of the GIL while it inflates: the largest member (a raw log's
        # emissions, about 60% of the bytes) inflates on a second thread meanwhile
        raws = {}
        largest = max(infos, key=lambda info: info.file_size, default=None)
        helper = None
        if largest is not None and largest.file_size >= _HELPER_MIN_BYTES:
            helper = Background(_inflate, data, largest)
        for info in infos:
            if info is not largest or helper is None:
                raws[info.filename] = _inflate(data, info)
        if helper is not None:
            raws[largest.filename] = helper.result()
        arrays = {}
        for info in infos:
            array = _array(raws[info.filename])
            if array is None:
                return None
            arrays[info.filename[:-len(".npy")]] = array
        return arrays
    except (OSError, zipfile.BadZipFile, ValueError, struct.error, EOFError):
        return None


def _plain(info: zipfile.ZipInfo) -> bool:
    """A deflated, unencrypted .npy member: what this reader handles."""
    return (info.compress_type == zipfile.ZIP_DEFLATED and not info.flag_bits & 0x1
            and info.filename.endswith(".npy"))


def _inflate(data: memoryview, info: zipfile.ZipInfo) -> bytes | None:
    """The member's bytes, or None if they are not what the archive's directory says."""
    try:
        signature, name_len, extra_len = _LOCAL_HEADER.unpack_from(data, info.header_offset)
        if signature != _LOCAL_SIGNATURE:
            return None
        if info.file_size > _MAX_DEFLATE_RATIO * info.compress_size:
            return None          # no deflate stream expands that much: a damaged directory
        start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
        # an output buffer of the final size from the start: no regrowing, no copies
        raw = zlib.decompress(data[start:start + info.compress_size], -zlib.MAX_WBITS,
                              max(info.file_size, 1))
    except (zlib.error, struct.error, ValueError):
        return None
    if len(raw) != info.file_size or zlib.crc32(raw) != info.CRC:
        return None
    return raw


def _array(raw: bytes | None) -> np.ndarray | None:
    """The .npy bytes as a read-only array, or None for what np.load should judge."""
    if raw is None:
        return None
    fp = io.BytesIO(raw)
    read_header = _HEADER_READERS.get(npy.read_magic(fp))
    if read_header is None:
        return None
    shape, fortran_order, dtype = read_header(fp)
    count = math.prod(shape)
    if dtype.hasobject or fp.tell() + count * dtype.itemsize != len(raw):
        return None
    array = np.frombuffer(raw, dtype=dtype, count=count, offset=fp.tell())
    # as np.load lays out a Fortran-ordered array: the reversed shape, transposed
    return array.reshape(shape[::-1]).T if fortran_order else array.reshape(shape)
