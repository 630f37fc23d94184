"""A list of host launches made by one native call: a replayed graph's run of small launches
(each on the calling thread) costs a Python call, an argument pack and a watchdog arm per
launch when made one by one, more than many of the kernels themselves take.

`run_launch_list(records, first, stop)` calls each record's entry over all its workgroups in
order, from record `first` on, and returns `len(records)` when all ran, else the index of the
launch it stopped after: one during which the stop word was set (a timeout or an interrupt,
looked at after each launch; the kernels' loops look at it too), or one whose entry left
workgroups (a failed proof, `pykern.llvm.module`); each record's `rest` is the first workgroup
its entry did not run, for the caller to run the rest through the checked entry.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from . import engine

ENTRY, BLOCK, TOTAL, REST = range(4)  # the i64 fields of a record
RECORD_FIELDS = 4

_RUNNER = "pk_run_launch_list"
# i64 (ptr records, i64 count, i64 stop address): see the module docstring
_IR = f"""
define i64 @{_RUNNER}(ptr %records, i64 %count, i64 %stop_address) {{
entry:
  %stop = inttoptr i64 %stop_address to ptr
  br label %head
head:
  %k = phi i64 [0, %entry], [%next, %ran]
  %more = icmp slt i64 %k, %count
  br i1 %more, label %launch, label %all
launch:
  %first = mul i64 %k, {RECORD_FIELDS}
  %entry_at = getelementptr i64, ptr %records, i64 %first
  %block_at = getelementptr i64, ptr %entry_at, i64 {BLOCK}
  %total_at = getelementptr i64, ptr %entry_at, i64 {TOTAL}
  %rest_at = getelementptr i64, ptr %entry_at, i64 {REST}
  %fn_word = load i64, ptr %entry_at, align 8
  %block_word = load i64, ptr %block_at, align 8
  %total = load i64, ptr %total_at, align 8
  %fn = inttoptr i64 %fn_word to ptr
  %block = inttoptr i64 %block_word to ptr
  %rest = call i64 %fn(ptr %block, i64 0, i64 %total)
  store i64 %rest, ptr %rest_at, align 8
  %short = icmp slt i64 %rest, %total
  br i1 %short, label %out, label %look
look:
  %word = load atomic i32, ptr %stop monotonic, align 4
  %stopped = icmp ne i32 %word, 0
  br i1 %stopped, label %out, label %ran
ran:
  %next = add i64 %k, 1
  br label %head
out:
  ret i64 %k
all:
  ret i64 %count
}}
"""


# A record whose entry copies bytes: its block holds (destination address, source address,
# byte count), and it returns its `end` as a finished launch does. A replayed graph's copies
# (the optimizer's gradient gather) then join the run of launches around them instead of
# splitting it.
_COPIER = "pk_copy_bytes"
_COPIER_IR = f"""
declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)

define i64 @{_COPIER}(ptr %block, i64 %first, i64 %end) {{
entry:
  %src_at = getelementptr i64, ptr %block, i64 1
  %n_at = getelementptr i64, ptr %block, i64 2
  %dst_word = load i64, ptr %block, align 8
  %src_word = load i64, ptr %src_at, align 8
  %n = load i64, ptr %n_at, align 8
  %dst = inttoptr i64 %dst_word to ptr
  %src = inttoptr i64 %src_word to ptr
  call void @llvm.memmove.p0.p0.i64(ptr %dst, ptr %src, i64 %n, i1 false)
  ret i64 %end
}}
"""


@functools.lru_cache(maxsize=1)
def _runner() -> engine.NativeModule:
    return engine.compile_ir(_IR, _RUNNER)


@functools.lru_cache(maxsize=1)
def _copier() -> engine.NativeModule:
    return engine.compile_ir(_COPIER_IR, _COPIER)


def copier_address() -> int:
    """The entry of a copy record (see `_COPIER`): its block is three i64s, the destination
    address, the source address and the number of bytes; its TOTAL is 1."""
    return entry_address(_copier().entry)


def entry_address(entry: object) -> int:
    """The machine address of a ctypes function (a kernel's native entry)."""
    return ctypes.cast(entry, ctypes.c_void_p).value or 0  # type: ignore[arg-type]


def new_records(count: int) -> np.ndarray:
    """Zeroed records for `count` launches (fill ENTRY, BLOCK and TOTAL of each)."""
    return np.zeros((count, RECORD_FIELDS), np.int64)


def run_launch_list(records: np.ndarray, first: int, stop_address: int) -> int:
    """Runs records `first`, `first + 1`, ... (see the module docstring); the index of the
    first one not finished. The GIL is released meanwhile."""
    count = len(records) - first
    if count <= 0:
        return len(records)
    address = records.ctypes.data + first * RECORD_FIELDS * 8
    return first + _runner().entry(address, count, stop_address)
