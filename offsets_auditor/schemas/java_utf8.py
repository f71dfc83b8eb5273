"""Java's ``new String(bytes, StandardCharsets.UTF_8)`` in Python: the decoding Kafka applies to
every string field (``ByteBufferAccessor.readString`` / 0.9's ``Type.STRING``), including what it
does with bytes that are not valid UTF-8 (it never fails: malformed input becomes U+FFFD)."""

from __future__ import annotations

from typing import Final


def java_utf8(raw: bytes | memoryview) -> str:
    """``new String(bytes, StandardCharsets.UTF_8)``: never fails; malformed input becomes U+FFFD.

    Well-formed UTF-8 decodes as usual. For malformed input Python's ``errors="replace"`` does NOT
    match the JDK (it replaces per maximal subpart; the JDK turns an encoded surrogate
    ``ED A0 80`` into one U+FFFD, ``ED A0`` + non-continuation into one, etc.), so the JDK's rules
    are re-implemented in :func:`_jdk_utf8_replace` (behaviour of OpenJDK 17's
    ``String.decodeUTF8_UTF16``; checked on random inputs against OpenJDK 17 and 25)."""
    try:
        return str(raw, "utf-8")
    except UnicodeDecodeError:
        return _jdk_utf8_replace(bytes(raw))


_REPLACEMENT: Final = "\ufffd"


def _continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _bad_second_of_3(lead: int, second: int) -> bool:
    """E0 must be followed by A0-BF (no overlong); any lead needs a continuation byte."""
    return (lead == 0xE0 and second & 0xE0 == 0x80) or not _continuation(second)


def _bad_second_of_4(lead: int, second: int) -> bool:
    """F0 needs 90-BF, F4 needs 80-8F, any lead needs a continuation byte."""
    return (
        (lead == 0xF0 and not 0x90 <= second <= 0xBF)
        or (lead == 0xF4 and second & 0xF0 != 0x80)
        or not _continuation(second)
    )


def _jdk_utf8_replace(data: bytes) -> str:
    """The JDK's UTF-8 decoding with replacement (see :func:`java_utf8`)."""
    out: list[str] = []
    size = len(data)
    index = 0
    while index < size:
        lead = data[index]
        index += 1
        if lead < 0x80:
            out.append(chr(lead))
        elif 0xC2 <= lead <= 0xDF:  # two bytes
            if index < size and _continuation(data[index]):
                out.append(chr(((lead & 0x1F) << 6) | (data[index] & 0x3F)))
                index += 1
            else:
                out.append(_REPLACEMENT)
        elif 0xE0 <= lead <= 0xEF:  # three bytes
            if index + 1 < size:
                second, third = data[index], data[index + 1]
                if _bad_second_of_3(lead, second):
                    out.append(_REPLACEMENT)  # the lead alone
                elif not _continuation(third):
                    out.append(_REPLACEMENT)  # lead + second
                    index += 1
                else:
                    code = ((lead & 0x0F) << 12) | ((second & 0x3F) << 6) | (third & 0x3F)
                    out.append(_REPLACEMENT if 0xD800 <= code <= 0xDFFF else chr(code))
                    index += 2
                continue
            out.append(_REPLACEMENT)
            if index < size and _bad_second_of_3(lead, data[index]):
                continue
            break  # a valid but incomplete sequence ends the input
        elif 0xF0 <= lead <= 0xF7:  # four bytes
            if index + 2 < size:
                second, third, fourth = data[index], data[index + 1], data[index + 2]
                code = (
                    ((lead & 0x07) << 18)
                    | ((second & 0x3F) << 12)
                    | ((third & 0x3F) << 6)
                    | (fourth & 0x3F)
                )
                if (
                    _continuation(second)
                    and _continuation(third)
                    and _continuation(fourth)
                    and 0x10000 <= code <= 0x10FFFF
                ):
                    out.append(chr(code))
                    index += 3
                    continue
                out.append(_REPLACEMENT)
                if lead > 0xF4 or _bad_second_of_4(lead, second):
                    continue  # the lead alone
                index += 1 if not _continuation(third) else 2
                continue
            out.append(_REPLACEMENT)
            if lead > 0xF4 or (index < size and _bad_second_of_4(lead, data[index])):
                continue
            index += 1
            if index < size and not _continuation(data[index]):
                continue
            break  # a valid but incomplete sequence ends the input
        else:  # 80-C1, F8-FF
            out.append(_REPLACEMENT)
    return "".join(out)
