"""A minimal GGUF header reader: metadata scalars and the tensor table, straight from a memory map.

Why not gguf.GGUFReader: it materialises every metadata array as numpy views — 150k vocabulary
strings and merges — which took ~10 s of the default model's load. Here arrays are skipped (only
their length is kept) and tensors stay as views of the mmap until `gguf.quants.dequantize` reads
them. Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (v2/v3).
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


@dataclass
class GGUFTensor:
    name: str
    shape: tuple[int, ...]  # ggml order: shape[0] is the row length
    ggml_type: int
    data: np.ndarray  # uint8 rows of the raw bytes, [n_rows, bytes_per_row]


class GGUFFile:
    def __init__(self, path: Path) -> None:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        self.path = path
        with open(path, "rb") as f:
            self.mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self.blob = np.frombuffer(self.mm, dtype=np.uint8)
        self.pos = 0
        if self.mm[:4] != b"GGUF":
            raise ValueError("not a GGUF file (bad magic)")
        self.pos = 4
        version, n_tensors, n_kv = self._unpack("<I"), self._unpack("<Q"), self._unpack("<Q")
        if version not in (2, 3):
            raise ValueError(f"GGUF version {version} is not supported (2 or 3)")
        self.metadata: dict[str, Any] = {}
        for _ in range(n_kv):
            key = self._string()
            self.metadata[key] = self._value(self._unpack("<I"))
        infos = []
        for _ in range(n_tensors):
            name = self._string()
            dims = tuple(self._unpack("<Q") for _ in range(self._unpack("<I")))
            infos.append((name, dims, self._unpack("<I"), self._unpack("<Q")))
        align = int(self.metadata.get("general.alignment", 32))
        start = -(-self.pos // align) * align
        self.tensors: list[GGUFTensor] = []
        for name, dims, ggml_type, offset in infos:
            try:
                block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
            except (ValueError, KeyError) as exc:
                raise ValueError(f"tensor {name} has unknown ggml type {ggml_type}") from exc
            n_rows = int(np.prod(dims[1:])) if len(dims) > 1 else 1
            row_bytes = dims[0] // block * type_size
            begin = start + offset
            raw = self.blob[begin : begin + n_rows * row_bytes]
            if raw.size != n_rows * row_bytes:
                raise ValueError(f"tensor {name} runs past the end of the file (truncated download?)")
            self.tensors.append(GGUFTensor(name, dims, ggml_type, raw.reshape(n_rows, row_bytes)))

    def _unpack(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        (value,) = struct.unpack_from(fmt, self.mm, self.pos)
        self.pos += size
        return value

    def _string(self) -> str:
        n = self._unpack("<Q")
        text = self.mm[self.pos : self.pos + n].decode("utf-8", errors="replace")
        self.pos += n
        return text

    def _value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self._unpack(_SCALARS[kind])
        if kind == _STRING:
            return self._string()
        if kind == _ARRAY:
            item_kind, count = self._unpack("<I"), self._unpack("<Q")
            if item_kind in _SCALARS:
                self.pos += struct.calcsize(_SCALARS[item_kind]) * count
            elif item_kind == _STRING:  # skip without decoding: 150k vocabulary strings
                for _ in range(count):
                    self.pos += 8 + struct.unpack_from("<Q", self.mm, self.pos)[0]
            else:
                for _ in range(count):
                    self._value(item_kind)
            return ArrayInfo(item_kind, count)
        raise ValueError(f"unknown GGUF metadata type {kind}")


@dataclass(frozen=True)
class ArrayInfo:
    """A metadata array this reader skipped; the tokenizer loader reads the ones it needs itself."""

    item_kind: int
    count: int
