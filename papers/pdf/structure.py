"""Title, abstract and section headings of a paper, from its outline or from font and numbering rules.

The outline (PDF bookmarks) is exact where LaTeX wrote one; without it, headings are bold or larger
lines that start with a section number in increasing order, or a well-known unnumbered heading.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from papers.pdf.lines import Line

_NUMBER = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3}|[A-H](?:\.\d{1,2}){0,3})\.?\s+(?=\S)")
_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+([A-Z][^\n]{1,110})$")
_ROMAN = re.compile(r"^(X{0,1}(?:IX|IV|V?I{0,3}))\.\s+([A-Z][^\n]{1,110})$")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10}
_LETTERED = re.compile(r"^([A-H](?:\.\d{1,2}){0,3})\.?\s+([A-Z][^\n]{1,110})$")
_ABSTRACT = re.compile(r"^\s*abstract\b[\s.:—–-]*", re.IGNORECASE)
_UNNUMBERED = {
    "abstract", "references", "bibliography", "acknowledgments", "acknowledgements", "acknowledgment",
    "acknowledgement", "appendix", "appendices", "conclusion", "conclusions", "related work",
}
_NOT_TITLE = re.compile(r"arxiv:|preprint|proceedings|conference|workshop|copyright|licen[cs]e|©", re.IGNORECASE)


@dataclass
class Heading:
    index: int  # position of the heading line in the flat line list
    title: str
    number: str
    level: int
    lines: int = 1  # how many lines the heading itself takes


def norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.casefold())


def split_number(text: str) -> tuple[str, str]:
    match = _NUMBER.match(text)
    if not match:
        return "", text.strip()
    return match.group(1), text[match.end():].strip()


def _page_ranges(lines: list[Line]) -> dict[int, tuple[int, int]]:
    ranges: dict[int, tuple[int, int]] = {}
    for i, line in enumerate(lines):
        start, _ = ranges.get(line.page, (i, i))
        ranges[line.page] = (start, i + 1)
    return ranges


def _matches(line: Line, target: str, body: float) -> bool:
    """Whether a line is the (first line of the) heading whose normalised text is `target`."""
    whole, rest = norm(line.text), norm(split_number(line.text)[1])
    if target in (whole, rest):
        return True
    styled = line.bold or line.size >= body + 1.0
    return styled and any(len(c) >= max(8, 0.4 * len(target)) and target.startswith(c) for c in (whole, rest))


def _anchor_line(lines: list[Line], start: int, end: int, anchor: tuple[float, float] | None) -> int | None:
    """The first heading-styled line at or below the outline entry's link target on its page."""
    if anchor is None:
        return None
    x, y = anchor
    below = [i for i in range(start, end) if lines[i].y0 >= y - 4 and x - 4 <= lines[i].x0 <= x + 150]
    for i in sorted(below, key=lambda i: lines[i].y0)[:2]:
        if lines[i].bold or lines[i].bold_prefix:
            return i
    return None


def outline_headings(toc: list[list], lines: list[Line], body: float, page_heights: list[float]) -> list[Heading]:
    """Place each outline entry by its heading text on its page (or the next); entries whose text is
    not in the PDF (generators sometimes write junk titles) fall back to the link target's line."""
    ranges = _page_ranges(lines)
    headings: list[Heading] = []
    cursor = 0
    for entry in toc:
        level, raw_title, page = entry[0], entry[1], entry[2]
        if page < 1 or page not in ranges:
            continue
        toc_number, title = split_number(raw_title)
        if toc_number and not toc_number[0].isdigit() and "." not in toc_number and len(title.split()) > 6:
            toc_number, title = "", raw_title.strip()  # "A Study of ..." is a title, not appendix A
        target = norm(title)
        start, end = ranges[page]
        window_end = ranges.get(page + 1, (end, end))[1]
        found = next((i for i in range(max(cursor, start), window_end) if _matches(lines[i], target, body)), None)
        number = toc_number
        if found is None and toc_number.isalpha():  # "A Note on ..." under section 5 is a title, not appendix A
            target, title, number = norm(raw_title), raw_title.strip(), ""
            found = next((i for i in range(max(cursor, start), window_end) if _matches(lines[i], target, body)), None)
        if found is None:
            dest = entry[3] if len(entry) > 3 and isinstance(entry[3], dict) else {}
            to = dest.get("to")
            anchor = (to.x, page_heights[page - 1] - to.y) if to is not None else None
            found = _anchor_line(lines, max(cursor, start), end, anchor)
            if found is None:
                continue
            line = lines[found]
            heading_text = line.text if line.bold else line.bold_prefix
            number, title = split_number(heading_text)
            title, target = title.rstrip(".:"), norm(title)
            number = toc_number or number
        elif not number:
            number = split_number(lines[found].text)[0]
        taken = 1
        consumed = norm(split_number(lines[found].text)[1])
        while found + taken < window_end and len(consumed) < len(target):
            nxt = norm(lines[found + taken].text)
            if not nxt or not target.startswith(consumed + nxt):
                break
            consumed += nxt
            taken += 1
        headings.append(Heading(found, title.strip(), number, level, taken))
        cursor = found + taken
    return headings


def references_heading(lines: list[Line], headings: list[Heading]) -> list[Heading]:
    """Add the References heading when the outline leaves it out, so the section before it ends there."""
    if any(norm(h.title) in {"references", "bibliography"} for h in headings):
        return headings
    taken = {h.index for h in headings}
    for i, line in enumerate(lines):
        if i not in taken and norm(line.text) in {"references", "bibliography"} and line.page > 1:
            added = Heading(i, line.text.strip().title(), "", 1)
            return sorted([*headings, added], key=lambda h: h.index)
    return headings


def _number_key(number: str) -> tuple[int, ...]:
    return tuple(int(part) for part in number.split("."))


def _roman_value(numeral: str) -> int:
    """"IV" -> 4: IEEE-style section numbers."""
    values = [_ROMAN_VALUES[c] for c in numeral]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def rule_headings(lines: list[Line], body: float) -> list[Heading]:
    """Headings found by font and numbering rules, for PDFs without an outline."""
    headings: list[Heading] = []
    last: tuple[int, ...] = ()
    after_references = False
    for i, line in enumerate(lines):
        # IEEE sets "II. BACKGROUND" in body-size capitals: capitals count as emphasis for short lines
        emphasised = line.bold or line.size >= body + 1.0 or (line.text.isupper() and len(line.text) < 60)
        run_in = bool(line.bold_prefix) and not line.bold
        text = (line.bold_prefix if run_in else line.text).strip()
        if not (emphasised or run_in) or line.size < body - 0.6 or len(text) > 120:
            continue
        bare = text.strip(" .:").casefold()
        if bare in _UNNUMBERED and not run_in:
            headings.append(Heading(i, text.strip(" .:"), "", 1))
            after_references = after_references or bare in {"references", "bibliography", "appendix"}
            continue
        numbered = _NUMBERED.match(text)
        if numbered and len(numbered.group(2)) < 90:
            key = _number_key(numbered.group(1))
            if key > last and key[0] <= (last[0] if last else 0) + 2 and key[0] > 0:
                last = key
                headings.append(Heading(i, numbered.group(2).strip().rstrip("."), numbered.group(1), len(key)))
            continue
        roman = _ROMAN.match(text)
        if roman and roman.group(1) and roman.group(2).upper() == roman.group(2):  # "II. BACKGROUND"
            key = (_roman_value(roman.group(1)),)
            if key > last and key[0] <= (last[0] if last else 0) + 2:
                last = key
                headings.append(Heading(i, roman.group(2).strip(), roman.group(1), 1))
            continue
        lettered = _LETTERED.match(text) if after_references and line.bold else None
        if lettered and len(lettered.group(2)) < 80:
            number = lettered.group(1)
            headings.append(Heading(i, lettered.group(2).strip().rstrip("."), number, number.count(".") + 1))
    return headings


def find_title(first_page: list[Line], page_height: float, metadata_title: str) -> str:
    """The largest text in the upper part of page 1; the metadata title when it says the same thing."""
    candidates = [
        line for line in first_page
        if line.y0 < page_height * 0.6 and len(norm(line.text)) >= 3 and not _NOT_TITLE.search(line.text)
    ]
    page_title = ""
    if candidates:
        biggest = max(line.size for line in candidates)
        run: list[Line] = []
        for line in candidates:
            if line.size >= biggest - 0.6:
                if run and line.y0 - run[-1].y1 > biggest * 1.5:
                    break
                run.append(line)
            elif run:
                break
        page_title = " ".join(line.text for line in run)
    meta = " ".join((metadata_title or "").split())
    if meta and page_title:
        a, b = norm(meta), norm(page_title)
        if a == b or (len(a) >= 0.6 * len(b) and (a in b or b in a)):
            return meta
    return page_title or meta


def find_abstract(lines: list[Line], headings: list[Heading], body: float) -> tuple[str, int | None]:
    """Text after the "Abstract" marker up to the next heading (footnotes left out); also the marker's
    index. Without a marker: the longest body-text block before the first heading on pages 1-2."""
    first_pages = [i for i, line in enumerate(lines) if line.page <= 3]
    for i in first_pages:
        match = _ABSTRACT.match(lines[i].text)
        if not match:
            continue
        later = [h.index for h in headings if h.index > i]
        end = later[0] if later else min(i + 60, len(lines))
        parts = [lines[i].text[match.end():]] + [
            line.text for line in lines[i + 1:end] if line.size >= body - 1.2 or line.page != lines[i].page
        ]
        return join_text(parts), i
    first_heading = headings[0].index if headings else min(len(lines), 80)
    blocks: dict[tuple[int, int], list[str]] = {}
    for line in lines[:first_heading]:
        if line.page <= 2 and abs(line.size - body) <= 0.6 and len(line.text) >= 30:
            blocks.setdefault((line.page, line.block), []).append(line.text)
    best = max(blocks.values(), key=lambda parts: sum(map(len, parts)), default=[])
    return join_text(best), None


def join_text(parts: list[str]) -> str:
    """Join line texts into running text, undoing end-of-line hyphenation."""
    out = ""
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if out.endswith("-") and part[:1].islower():
            out = out[:-1] + part
        else:
            out = f"{out} {part}" if out else part
    return out
