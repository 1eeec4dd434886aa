#!/usr/bin/env python3
"""Derives test files from the real PerfData captures in testdata/captures/ (python3 stdlib only).

Writes, as a pure function of the captures (same input, same bytes out):
  testdata/derived/<capture>.be.hsperf   every capture rewritten big-endian: byte 4 (byte order)
      set to 0 (PERFDATA_BIG_ENDIAN), every multi-byte prologue and entry field and every 'J'
      value byte-swapped. Same counters as its source.
  testdata/derived/jdk17-serial.tail-in-progress.hsperf   num_entries one more than written, with
      `used` covering a zero entry_length: the tail a VM is still writing.
  testdata/derived/jdk17-serial.unknown-type.hsperf   one 'J' entry's data_type set to 'Q'.
  testdata/malformed/*.hsperf   one defect each, listed in testdata/malformed/MANIFEST.tsv as
      <file> TAB <offset of the field at fault, decimal> TAB <what was done>.

The layout is HotSpot's (src/hotspot/share/runtime/perfMemory.hpp: PerfDataPrologue,
PerfDataEntry). This walker is written apart from the Rust parser on purpose, so the tests compare
two readings of the format.

Usage:  python3 scripts/make-testdata.py           (re)write the files
        python3 scripts/make-testdata.py --check   exit 1 if a committed file differs
"""

import os
import struct
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = os.path.join(REPO, "testdata")
SOURCE = "jdk17-serial"  # the capture the single-defect files are made from
PROLOGUE_SIZE = 32


def i32(b, at, order="<"):
    return struct.unpack_from(order + "i", b, at)[0]


def put_i32(b, at, v, order="<"):
    struct.pack_into(order + "i", b, at, v)


class Entry:
    def __init__(self, index, at, b):
        self.index = index
        self.at = at
        self.length = i32(b, at)
        self.name_offset = i32(b, at + 4)
        self.vector_length = i32(b, at + 8)
        self.type = chr(b[at + 12])
        self.units = b[at + 14]
        self.data_offset = i32(b, at + 16)
        nul = b.index(0, at + self.name_offset)
        self.name = b[at + self.name_offset : nul].decode()


def walk(b):
    """Prologue fields and entries of a little-endian capture, checked strictly."""
    assert b[0:4] == b"\xca\xfe\xc0\xc0", "bad magic"
    assert b[4] == 1, "captures are little-endian (x86_64)"
    assert (b[5], b[6]) == (2, 0), "PerfData 2.0 only"
    used, entry_offset, num_entries = i32(b, 8), i32(b, 24), i32(b, 28)
    entries, at = [], entry_offset
    for index in range(num_entries):
        e = Entry(index, at, b)
        assert e.length >= 20 and at + e.length <= used and at % 4 == 0, f"entry {index}"
        assert 20 <= e.name_offset < e.data_offset <= e.length, f"entry {index}"
        entries.append(e)
        at += e.length
    assert at == used, "entries end at used"
    return used, entries


def big_endian(b):
    """The same region with every multi-byte field in big-endian order."""
    used, entries = walk(b)
    out = bytearray(b)
    out[4] = 0
    swap = lambda at, n: out.__setitem__(slice(at, at + n), out[at : at + n][::-1])
    for at in (8, 12, 24, 28):
        swap(at, 4)
    swap(16, 8)
    for e in entries:
        for field in (0, 4, 8, 16):
            swap(e.at + field, 4)
        if e.type == "J":
            assert e.vector_length == 0, f"{e.name}: a 'J' vector (HotSpot writes none)"
            swap(e.at + e.data_offset, 8)
    return bytes(out)


def derive(captures):
    """{relative path: bytes} for every derived file, plus the MANIFEST.tsv text."""
    files = {}
    for name, b in sorted(captures.items()):
        files[f"derived/{name}.be.hsperf"] = big_endian(b)

    src = captures[SOURCE]
    used, entries = walk(src)
    by_name = {e.name: e for e in entries}
    s = by_name["sun.rt.javaCommand"]  # a string entry ('B', U_String)
    j = by_name["sun.os.hrt.frequency"]  # a long entry ('J')
    assert s.type == "B" and s.units == 5 and j.type == "J"
    after_s = entries[s.index + 1]

    tail = bytearray(src)
    assert tail[used : used + 24] == bytes(24), "bytes after used are zero"
    put_i32(tail, 28, len(entries) + 1)
    put_i32(tail, 8, used + 24)
    files[f"derived/{SOURCE}.tail-in-progress.hsperf"] = bytes(tail)
    unknown = bytearray(src)
    unknown[j.at + 12] = ord("Q")
    files[f"derived/{SOURCE}.unknown-type.hsperf"] = bytes(unknown)

    manifest = []

    def bad(name, offset, what, data):
        files[f"malformed/{name}.hsperf"] = bytes(data)
        manifest.append(f"{name}.hsperf\t{offset}\t{what}")

    def patched(*patches, base=src, order="<"):
        out = bytearray(base)
        for at, value in patches:
            if isinstance(value, int):
                put_i32(out, at, value, order)
            else:
                out[at : at + len(value)] = value
        return out

    bad("truncated-prologue", 0, "first 20 bytes only", src[:20])
    bad("truncated-below-used", 8, f"cut to {used // 2} bytes, used = {used}", src[: used // 2])
    bad("zero-filled", 0, "all zero bytes", bytes(len(src)))
    bad("bad-magic", 0, "magic ca fe c0 c0 -> cb fe c0 c0", patched((0, b"\xcb")))
    bad("magic-reversed", 0, "magic written little-endian", patched((0, b"\xc0\xc0\xfe\xca")))
    bad("bad-byte-order", 4, "byte order 2", patched((4, b"\x02")))
    bad("wrong-major-version", 5, "major_version 1", patched((5, b"\x01")))
    bad("wrong-minor-version", 5, "minor_version 1", patched((6, b"\x01")))
    bad("used-negative", 8, "used = -1", patched((8, -1)))
    bad("used-huge", 8, "used = 0x7fffffff", patched((8, 0x7FFFFFFF)))
    bad("used-inside-prologue", 8, "used = 16", patched((8, 16)))
    bad("overflow-negative", 12, "overflow = -1", patched((12, -1)))
    bad("entry-offset-negative", 24, "entry_offset = -4", patched((24, -4)))
    bad("entry-offset-past-used", 24, f"entry_offset = used + 8", patched((24, used + 8)))
    bad("entry-offset-misaligned", 34, "entry_offset = 34", patched((24, 34)))
    bad("num-entries-negative", 28, "num_entries = -1", patched((28, -1)))
    bad("num-entries-huge", 28, "num_entries = 0x7fffffff", patched((28, 0x7FFFFFFF)))

    bad("entry-length-negative", s.at, f"{s.name}: entry_length = -8", patched((s.at, -8)))
    bad("entry-length-huge", s.at, f"{s.name}: entry_length = 0x7fffffff", patched((s.at, 0x7FFFFFFF)))
    bad("entry-length-short", s.at, f"{s.name}: entry_length = 12", patched((s.at, 12)))
    bad(
        "entry-misaligned",
        after_s.at + 2,
        f"{s.name}: entry_length + 2, so the next entry starts at a misaligned offset",
        patched((s.at, s.length + 2)),
    )
    bad("name-offset-negative", s.at + 4, f"{s.name}: name_offset = -1", patched((s.at + 4, -1)))
    bad("name-offset-huge", s.at + 4, f"{s.name}: name_offset = entry_length", patched((s.at + 4, s.length)))
    bad("name-offset-in-header", s.at + 4, f"{s.name}: name_offset = 8", patched((s.at + 4, 8)))
    bad("data-offset-negative", s.at + 16, f"{s.name}: data_offset = -1", patched((s.at + 16, -1)))
    bad(
        "data-offset-huge",
        s.at + 16,
        f"{s.name}: data_offset = entry_length + 4",
        patched((s.at + 16, s.length + 4)),
    )
    bad(
        "data-offset-before-name",
        s.at + 16,
        f"{s.name}: data_offset = name_offset - 4",
        patched((s.at + 16, s.name_offset - 4)),
    )
    name_area = s.data_offset - s.name_offset
    bad(
        "name-without-nul",
        s.at + s.name_offset,
        f"{s.name}: name area filled with 'x' up to data_offset",
        patched((s.at + s.name_offset, b"x" * name_area)),
    )
    bad("name-empty", s.at + s.name_offset, f"{s.name}: first name byte = 0", patched((s.at + s.name_offset, b"\x00")))
    bad(
        "name-not-utf8",
        s.at + s.name_offset + 3,
        f"{s.name}: name byte 3 = 0xff",
        patched((s.at + s.name_offset + 3, b"\xff")),
    )
    bad("vector-length-negative", s.at + 8, f"{s.name}: vector_length = -1", patched((s.at + 8, -1)))
    bad(
        "vector-length-huge",
        s.at + 8,
        f"{s.name}: vector_length = entry_length",
        patched((s.at + 8, s.length)),
    )
    bad("unknown-units", j.at + 14, f"{j.name}: data_units 0", patched((j.at + 14, b"\x00")))
    bad("unknown-variability", j.at + 15, f"{j.name}: data_variability 4", patched((j.at + 15, b"\x04")))
    bad(
        "long-data-past-entry",
        j.at + 16,
        f"{j.name}: data_offset = entry_length - 4 (8-byte value, 4 bytes left)",
        patched((j.at + 16, j.length - 4)),
    )
    be = big_endian(src)
    bad("be-used-huge", 8, "used = 0x7fffffff in the big-endian rewrite", patched((8, 0x7FFFFFFF), base=be, order=">"))
    bad(
        "be-entry-length-negative",
        s.at,
        f"{s.name}: entry_length = -8 in the big-endian rewrite",
        patched((s.at, -8), base=be, order=">"),
    )
    files["malformed/MANIFEST.tsv"] = (
        "# file\toffset of the field at fault\twhat was done (source: captures/"
        + SOURCE
        + ".hsperf; written by scripts/make-testdata.py)\n"
        + "\n".join(manifest)
        + "\n"
    ).encode()
    return files


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        sys.exit(__doc__)
    cap_dir = os.path.join(TESTDATA, "captures")
    captures = {
        f[: -len(".hsperf")]: open(os.path.join(cap_dir, f), "rb").read()
        for f in os.listdir(cap_dir)
        if f.endswith(".hsperf")
    }
    if SOURCE not in captures:
        sys.exit(f"make-testdata: no {cap_dir}/{SOURCE}.hsperf: run scripts/capture-testdata.sh")
    files = derive(captures)
    differ = []
    for sub in ("derived", "malformed"):
        d = os.path.join(TESTDATA, sub)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            if f"{sub}/{f}" not in files:
                differ.append(f"{sub}/{f} (stale)")
                if not check:
                    os.remove(os.path.join(d, f))
    for rel, data in sorted(files.items()):
        path = os.path.join(TESTDATA, rel)
        old = open(path, "rb").read() if os.path.exists(path) else None
        if old != data:
            differ.append(rel)
            if not check:
                with tempfile.NamedTemporaryFile(dir=os.path.dirname(path), delete=False) as t:
                    t.write(data)
                os.chmod(t.name, 0o644)
                os.replace(t.name, path)
    if check:
        if differ:
            sys.exit("make-testdata: differs from the captures: " + ", ".join(differ))
        print(f"make-testdata: all {len(files)} derived files match")
    else:
        print(f"make-testdata: {len(files)} files, {len(differ)} written")


if __name__ == "__main__":
    main()
