"""Story keys: one canonical form, and matching on key boundaries.

``1.2``, ``1-2`` and ``1_2`` are one key; matching is case-insensitive but on boundaries, so
``A-1`` matches ``sprint-a-1-discovery.md`` and never ``sprint-a-10-story.md`` (seed 000's
plain substring test does — a bug not copied here).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import lru_cache
from itertools import pairwise

from ..lean_dataclass import dataclass

_SEPARATORS = re.compile(r"[-._\s]+")

BMAD_STORY_KEY = re.compile(r"^(\d+)-(\d+)([a-z]?)-.+")
"""BMAD's own story-key grammar for ``sprint-status.yaml`` entries (``STORY_KEY_RE`` of its
sprint-planning script, re-typed): epic number, story number, an optional split letter
(``2-6a``), then a slug. Keys are compared by the numbers' values (``01-02`` is ``1-2``)."""


MAX_NUMBER_DIGITS = 18
"""Longest run of digits in a key read as a number; a longer one is kept as written."""


def number_text(digits: str) -> str:
    """A run of decimal digits as its value's text (``01`` is ``1``); a run over
    :data:`MAX_NUMBER_DIGITS` is kept as written: Python refuses ``int()`` past 4,300 digits,
    and no plan numbers its epics or stories that far."""
    return str(int(digits)) if len(digits) <= MAX_NUMBER_DIGITS else digits


def _canonical_part(part: str) -> str:
    # Numbers compare by value, as BMAD compares them: `01` is `1` (and `0` stays `0`).
    return number_text(part) if part.isdecimal() else part


@dataclass(frozen=True)
class EntryKey:
    """How one ``sprint-status.yaml`` entry names its story.

    Attributes:
        id: the story id as written (``1-1a``, ``10-1-1``, ``1a-1``).
        key: its canonical form (:func:`normalize_key`).
        slug: the rest of the entry after the id, None when there is none.
        off_grammar: why BMAD's own grammar reads the entry otherwise or not at all (a
            three-level key, a letter epic, no slug); empty when BMAD reads it the same.
    """

    id: str
    key: str
    slug: str | None
    off_grammar: str = ""
    epic: str = ""
    """The epic the entry's key names when it is not the key's first part: ``gov-1`` for a
    prefixed track key ``gov-1-1``, ``5.5`` for a dotted epic's ``5.5-1``; empty for every
    other key."""


# Past BMAD's grammar, what real projects write: letter epics (`1a-1`, `1bis-2`, seed 000's
# `a-1`), story numbers with a word (`0-4bis`, `1bis-2bis`), upper-case split letters, keys
# with no slug.
_LENIENT_ENTRY = re.compile(
    r"^(?P<id>(?:\d+[a-z]*|[a-z]{1,3})-\d+[a-z]*)(?:-(?P<slug>.+))?$", re.IGNORECASE
)
# The first word of a slug that is a third level of the key: a number or a single letter.
_SUB_LEVEL = re.compile(r"^(?P<sub>\d+|[a-z])-(?P<slug>.+)$", re.IGNORECASE)
# A prefixed track: parallel epics a project numbers under a word of its own
# (`gov-1-1-rank-matrix`, `consent-gov-1-1-…`, `petition-2a-1-…` under `petition-epic-2a`,
# `hardening-1-…` under `hardening-epic`): the track's words, an epic number (maybe with
# letters) and a story number, or the story number alone when the track has no epics.
_TRACK_ENTRY = re.compile(
    r"^(?P<track>[a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*)-(?P<first>\d+[a-z]*)"
    r"(?:-(?P<second>\d+[a-z]?)(?=-|$))?(?:-(?P<slug>.+))?$",
    re.IGNORECASE,
)
# A track numbered inside an epic: the epic number, the track's word, the story number
# (`15-TD-3-remove-legacy-cache`, headed `# Story 15-TD-3: …`).
_EPIC_WORD_ENTRY = re.compile(
    r"^(?P<epic>\d+[a-z]?)-(?P<word>[a-z]{2,})-(?P<number>\d+[a-z]?)(?=-|$)(?:-(?P<slug>.+))?$",
    re.IGNORECASE,
)
# The same with the track's letters fused to the story number (`15-R1-unify-value-types`,
# `15-R4-…`: epic 15's refactoring track R, story 1).
_EPIC_LABEL_ENTRY = re.compile(
    r"^(?P<epic>\d+[a-z]?)-(?P<word>[a-z]{1,3})(?P<number>\d+)(?=-|$)(?:-(?P<slug>.+))?$",
    re.IGNORECASE,
)
# A dotted epic: epic 5.5 numbers its stories `5.5-1-…`, `7.6-0-…`, or with a lettered
# track, `6.2-p2-…`; the story is the epic's, never epic 5's.
_DOTTED_ENTRY = re.compile(
    r"^(?P<epic>\d+(?:\.\d+)+)-(?P<story>\d+[a-z]?|[a-z]{1,3}\d+[a-z]?)(?=-|$)"
    r"(?:-(?P<slug>.+))?$",
    re.IGNORECASE,
)
_TRACK_EPIC_ENTRY = re.compile(
    r"^(?P<track>[a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*)-epic(?:-(?P<epic>[a-z0-9]+))?$",
    re.IGNORECASE,
)
# Words that open a file or entry name without being a track: seed 000's prefixes and BMAD's.
_NOT_TRACKS = frozenset({"story", "sprint", "spec", "tech", "epic"})

EPIC_ENTRY = re.compile(r"^(?:[a-z][a-z0-9]*-)*epic(?:[-.][a-z0-9]+)*$", re.IGNORECASE)
"""A ``development_status`` entry naming an epic: BMAD's ``epic-1``, a decimal epic written
with a dash (``epic-3-5`` for epic 3.5, whose stories are ``3-5-0-…``) or a dot (``epic-5.5``,
whose stories are ``5.5-1-…``) and a prefixed track's
``gov-epic-1``, ``petition-epic-2a``, ``hardening-epic`` (its retrospective ends in
``-retrospective``)."""


RETROSPECTIVE_ENTRY = re.compile(r"-retrospective$", re.IGNORECASE)
"""A ``development_status`` entry naming an epic's retrospective."""


def is_story_entry(name: str) -> bool:
    """Whether a ``development_status`` entry may name a story: it names no epic and no
    retrospective."""
    return not (EPIC_ENTRY.match(name) or RETROSPECTIVE_ENTRY.search(name))


def story_entry_keys(names: Sequence[str]) -> list[EntryKey | None]:
    """The story each entry of a whole ``development_status`` mapping names, in order, read
    as the BMAD source reads them (:func:`read_entry_keys`, the tracks from the epic
    entries); None for an epic, a retrospective or a name that is no story key."""
    stories = [index for index, name in enumerate(names) if is_story_entry(name)]
    keys = read_entry_keys([names[index] for index in stories], epic_tracks(names))
    read: list[EntryKey | None] = [None] * len(names)
    for index, key in zip(stories, keys, strict=True):
        read[index] = key
    return read


def epic_tracks(names: Sequence[str]) -> frozenset[str]:
    """The prefixed tracks the epic entries among ``names`` declare (``gov`` for
    ``gov-epic-1``, ``hardening`` for ``hardening-epic``), lower case."""
    found = (_TRACK_EPIC_ENTRY.match(name) for name in names)
    return frozenset(m.group("track").lower() for m in found if m is not None)


def grammar_story(name: str) -> str | None:
    """The story id BMAD's own grammar reads in an entry name (``10-1-1-x`` → ``10-1``), or
    None when it reads no story there."""
    bmad = BMAD_STORY_KEY.match(name)
    return None if bmad is None else f"{bmad.group(1)}-{bmad.group(2)}{bmad.group(3)}"


def grammar_note(story_id: str, name: str, why: str) -> str:
    """An off-grammar note that says what BMAD's grammar really does with the name:
    ``why`` (``three-level key 10-1-1``), then the story it reads or that it reads none."""
    theirs = grammar_story(name)
    if theirs is None:
        return f"{why}: BMAD's grammar reads no story in it (it wants <epic>-<story>-<slug>)"
    if normalize_key(theirs) == normalize_key(story_id):
        return why
    return f"{why}: BMAD's grammar reads it as story {theirs}"


def _track_base(name: str, tracks: Collection[str]) -> tuple[str, str | None, str, str] | None:
    """The id, slug, note and epic of a prefixed track entry; None when the name is none.

    A word of one to three letters with no track epic entry (``a-1-x``) stays a letter epic.
    """
    match = _TRACK_ENTRY.match(name)
    if match is None:
        return None
    track = match.group("track")
    words = track.lower().split("-")
    if words[0] in _NOT_TRACKS:
        return None
    # A short word is a letter epic (`a-1-x`, `ab-2-y`) unless an epic entry declares it a
    # track, or it is written in capitals as projects write their side tracks (`TD-15b-2a-x`
    # for tech debt, `HF-18-x` for hotfixes): there the word names the track, not an epic.
    shouted = track.isupper() and track.isalpha() and len(track) >= 2
    if track.lower() not in tracks and len(words) == 1 and len(words[0]) <= 3 and not shouted:
        return None
    first, second = match.group("first"), match.group("second")
    story_id = f"{track}-{first}-{second}" if second else f"{track}-{first}"
    epic = f"{track}-{first}" if second else track
    why = f"prefixed track key {story_id} (track '{track}')"
    return story_id, match.group("slug"), grammar_note(story_id, name, why), epic.lower()


def _dotted_base(name: str) -> tuple[str, str | None, str, str] | None:
    """The id, slug, note and epic of an entry of a dotted epic (``5.5-1-legacy-rules``:
    story 1 of epic 5.5, id ``5.5-1``); None when the name is none."""
    match = _DOTTED_ENTRY.match(name)
    if match is None:
        return None
    epic = match.group("epic")
    story_id = f"{epic}-{match.group('story')}"
    why = grammar_note(story_id, name, f"dotted epic {epic} (story {story_id})")
    return story_id, match.group("slug"), why, epic


def _epic_word_base(name: str) -> tuple[str, str | None, str] | None:
    """The id, slug and note of an entry numbering a track inside an epic
    (``15-TD-3-cleanup``: epic 15, track ``TD``, story 3; ``15-R1-unify``: track ``R``,
    story 1, id ``15-R1`` as written); None when the name is none."""
    match = _EPIC_WORD_ENTRY.match(name)
    if match is None:
        match = _EPIC_LABEL_ENTRY.match(name)
        if match is None:
            return None
        story_id = f"{match.group('epic')}-{match.group('word')}{match.group('number')}"
        why = f"track key {story_id} (track '{match.group('word')}' of epic {match.group('epic')})"
        return story_id, match.group("slug"), grammar_note(story_id, name, why)
    story_id = f"{match.group('epic')}-{match.group('word')}-{match.group('number')}"
    why = f"track key {story_id} (track '{match.group('word')}' of epic {match.group('epic')})"
    return story_id, match.group("slug"), grammar_note(story_id, name, why)


def _entry_base(name: str) -> tuple[str, str | None, str] | None:
    """The id, slug and off-grammar note of one entry read by its first two levels."""
    story_id = grammar_story(name)
    if story_id is not None:
        return story_id, name[len(story_id) + 1 :], ""
    lenient = _LENIENT_ENTRY.match(name)
    if lenient is None:
        return None
    story_id, slug = lenient.group("id"), lenient.group("slug")
    epic, story = story_id.split("-", 1)
    # BMAD's grammar reads none of these (its epic and story are numbers, then at most one
    # lower-case letter, then a slug): each note says which part it stops at.
    if not epic.isdigit():
        why = f"letter epic '{epic}': BMAD's grammar wants an epic number"
    elif slug is None:
        why = "no slug after the key: BMAD's grammar wants <epic>-<story>-<slug>"
    elif re.fullmatch(r"\d+[A-Z]", story):
        why = "upper-case split letter: BMAD's grammar wants a lower-case one"
    else:
        why = f"story number '{story}': BMAD's grammar wants a number and at most one letter"
    return story_id, slug, why


def read_entry_keys(names: Sequence[str], tracks: Collection[str] = ()) -> list[EntryKey | None]:
    """The story each ``sprint-status.yaml`` entry name names, in order; None for a name
    that is no story key (epic and retrospective entries are not passed in).

    BMAD's grammar (:data:`BMAD_STORY_KEY`) comes first: ``2-6a-split`` is story ``2-6a``,
    and ``5-4-wcag-2-1`` is story ``5-4``. Past it, entries are read leniently and marked:
    letter epics (``1a-1-x``) and keys with no slug are stories; and where several entries
    would be one story by BMAD's reading, an entry whose slug starts with a number or a single
    letter (``10-1-1-offline``, ``10-5-a-nav``) is a distinct story under its parent —
    ``10-1-10-minute-guide`` alone stays story ``10-1``, as BMAD reads it.

    A prefixed track key (``gov-1-1-x``, ``petition-2a-1-x``, ``hardening-1-x``) is its own
    story, ``gov-1-1``, marked off-grammar: a track is a word that ``tracks`` (from the epic
    entries, :func:`epic_tracks`) names, or any word of four letters or more.
    """
    names = list(names)
    tracked = {track.lower() for track in tracks}
    tracked_bases = [
        None
        if grammar_story(name) is not None
        else _dotted_base(name) or _track_base(name, tracked)
        for name in names
    ]
    bases = [
        (_epic_word_base(name) or _entry_base(name)) if track is None else None
        for name, track in zip(names, tracked_bases, strict=True)
    ]
    counts: dict[str, int] = {}
    for base in bases:
        if base is not None:
            key = normalize_key(base[0])
            counts[key] = counts.get(key, 0) + 1
    read: list[EntryKey | None] = []
    for name, base, track in zip(names, bases, tracked_bases, strict=True):
        if track is not None:
            story_id, slug, why, epic = track
            read.append(EntryKey(story_id, normalize_key(story_id), slug, why, epic))
            continue
        if base is None:
            read.append(None)
            continue
        story_id, slug, why = base
        sub = _SUB_LEVEL.match(slug) if slug and counts[normalize_key(story_id)] > 1 else None
        if sub is not None:
            level = f"{story_id}-{sub.group('sub')}"
            note = grammar_note(level, name, f"three-level key {level}")
            read.append(EntryKey(level, normalize_key(level), sub.group("slug"), note))
            continue
        read.append(EntryKey(story_id, normalize_key(story_id), slug, why))
    return _kept_apart(names, read)


def _kept_apart(names: list[str], read: list[EntryKey | None]) -> list[EntryKey | None]:
    """``read`` with entries that only a guessed key made one story told apart.

    Two different entries that BMAD's grammar does not read (``HF-18-v4-sync`` and
    ``HF-18-recent-fixes``) are two stories, never one on a key promptdeck guessed: each id
    grows by the entry's own words until it tells the entries apart (``HF-18-v4``,
    ``HF-18-recent``), up to the entry's whole name. Entries BMAD's grammar reads as one
    story, and an entry written twice, stay one key: that is a real collision, which the
    source reports naming both lines.
    """
    groups: dict[str, list[int]] = {}
    for index, key in enumerate(read):
        if key is not None and grammar_story(names[index]) is None:
            groups.setdefault(key.key, []).append(index)
    for indexes in groups.values():
        lowered = {names[index].lower() for index in indexes}
        if len(indexes) < 2 or len(lowered) < 2:
            continue
        shared = _shared_words(names, indexes)
        for index in indexes:
            old = read[index]
            assert old is not None
            story_id = _telling_id(names[index], shared[index], old.id)
            if story_id == old.id:
                continue
            rest = names[index][len(story_id) + 1 :] or None
            others = len(lowered) - 1
            why = (
                f"{old.id} is also the key of {others} other entr{'y' if others == 1 else 'ies'};"
                f" kept apart as {story_id}"
            )
            note = f"{old.off_grammar}; {why}" if old.off_grammar else why
            read[index] = EntryKey(story_id, normalize_key(story_id), rest, note, old.epic)
    return read


def _shared_words(names: list[str], indexes: list[int]) -> dict[int, int]:
    """For each entry of ``indexes``, how many leading words (case aside) it shares at most
    with another entry of them. In sorted order the most is shared with a neighbour, so a
    group of thousands is never compared pair by pair."""
    words = {index: names[index].lower().split("-") for index in indexes}
    order = sorted(indexes, key=words.__getitem__)
    shared = dict.fromkeys(indexes, 0)
    for before, after in pairwise(order):
        first, second = words[before], words[after]
        count = 0
        while count < min(len(first), len(second)) and first[count] == second[count]:
            count += 1
        shared[before] = max(shared[before], count)
        shared[after] = max(shared[after], count)
    return shared


def _telling_id(name: str, shared: int, base: str) -> str:
    """The shortest run of ``name``'s leading words, longer than ``base``, that no other entry
    starts with the same way, given that ``shared`` leading words at most are another's
    (``name`` itself when none is shorter)."""
    parts = name.split("-")
    count = max(len(base.split("-")), shared) + 1
    return "-".join(parts[:count]) if count <= len(parts) else name


@lru_cache(maxsize=65536)
def normalize_key(key: str) -> str:
    """Return the canonical form of a story key: lower case, parts joined by ``-``, numbers
    without leading zeros (``01.2`` → ``1-2``)."""
    parts = [_canonical_part(part) for part in _SEPARATORS.split(key.strip().lower()) if part]
    return "-".join(parts)


def part_pattern(part: str) -> str:
    """The regex of one canonical key part in a file name: a number with any leading zeros
    (``0*12``), anything else as written."""
    return f"0*{part}" if part.isdigit() else re.escape(part)


@lru_cache(maxsize=1024)
def key_pattern(key: str) -> re.Pattern[str]:
    """A regex that finds ``key`` in a file name on key boundaries, case-insensitively.

    A boundary is the start or end of the name or any character that is not a letter or a
    digit, so ``1-1`` does not match ``11-1-x.md`` or ``1-10-x.md``.
    """
    parts = [part_pattern(part) for part in normalize_key(key).split("-") if part]
    if not parts:
        raise ValueError(f"empty story key: {key!r}")
    body = r"[-._]".join(parts)
    return re.compile(rf"(?<![a-z0-9]){body}(?![a-z0-9])", re.IGNORECASE)


def name_matches_key(name: str, key: str) -> bool:
    """True when the file name ``name`` contains ``key`` on key boundaries."""
    return key_pattern(key).search(name) is not None


# A story key at the start of a file name: ``1-2``, ``22-3``, ``1a-2`` (an epic number, maybe
# with letters) or ``a-1``, ``ab-2`` (a short letter epic), then a separator and the story
# number, ended by a separator, a dot or the end of the name. Longer words (``epic-1``,
# ``notes-2``, ``report-2026``) are words of a name, not keys.
_LEADING_KEY = re.compile(
    r"^(?P<key>(?:\d+[a-z]*|[a-z]{1,3})[-._]\d+[a-z]?)(?![a-z0-9])", re.IGNORECASE
)
# The prefixes of seed 000's patterns that come before a key: ``sprint-<key>…`` (a discovery
# note or a story file) and ``tech-spec-<key>…``.
_PREFIX = re.compile(r"^(?:(?P<sprint>sprint|story)|(?P<tech>tech[-_]?spec))[-._]", re.IGNORECASE)
_DISCOVERY = re.compile(r"discovery", re.IGNORECASE)
_TECH_SPEC = re.compile(r"tech[-_]?spec", re.IGNORECASE)


_SEGMENTS = re.compile(r"^[a-z0-9]+(?:[-._][a-z0-9]+){1,4}", re.IGNORECASE)
_SEGMENT_SPLIT = re.compile(r"[-._]")


def _strip_prefix(name: str) -> tuple[re.Match[str] | None, str]:
    prefix = _PREFIX.match(name)
    return prefix, (name[prefix.end() :] if prefix is not None else name)


def _known_lead(rest: str, known: Collection[str]) -> str | None:
    """The longest of ``known`` keys that ``rest`` starts with (five parts down to two: a
    prefixed track key such as ``consent-gov-1-1`` has four)."""
    segments = _SEGMENTS.match(rest)
    if segments is None:
        return None
    parts = _SEGMENT_SPLIT.split(segments.group(0))
    for count in range(len(parts), 1, -1):
        candidate = normalize_key("-".join(parts[:count]))
        if candidate in known:
            return candidate
    return None


def leading_key(name: str, known: Collection[str] = ()) -> str | None:
    """The normalized story key a file name starts with (``5-4-wcag-2-1.md`` → ``5-4``).

    The longest of the ``known`` story keys the name starts with wins, so
    ``10-1-5-pwa.md`` is ``10-1-5``'s when that story is known and never ``10-1``'s. Without
    a known key, a key is read by its shape (``1-2``, ``1a-2``, ``a-1``). Seed 000's prefixes
    are looked through: ``sprint-1-2-discovery.md`` and ``tech-spec-1-2-x.md`` start with
    ``1-2``. A name that starts with no key is None.
    """
    _prefix, rest = _strip_prefix(name)
    if known:
        found = _known_lead(rest, known)
        if found is not None:
            return found
    match = _LEADING_KEY.match(rest)
    return normalize_key(match.group("key")) if match else None


def leading_key_category(name: str) -> tuple[str | None, str | None]:
    """The key ``name`` starts with and the category its words give it, in one reading:
    ``(leading_key(name), artifact_category(name, that key))``, or ``(None, None)`` when it
    starts with no key.

    Discovery asks this of every key-shaped Markdown name of an artifacts folder; the name's
    own leading key is always the longest known one here, so the category needs no second
    look for it.
    """
    prefix, rest = _strip_prefix(name)
    match = _LEADING_KEY.match(rest)
    if match is None:
        return None, None
    lead = normalize_key(match.group("key"))
    tech_prefix = prefix is not None and prefix.group("tech") is not None
    return lead, _words_category(rest, tech_prefix)


def _words_category(tail: str, tech_prefix: bool) -> str:
    """The category a name's words give it: ``tech-spec``, ``discovery`` or ``story``."""
    if tech_prefix or _TECH_SPEC.search(tail):
        return "tech-spec"
    if _DISCOVERY.search(tail):
        return "discovery"
    return "story"


def artifact_category(name: str, key: str, nested: Collection[str] = ()) -> str | None:
    """The category of the artifact ``name`` for story ``key``, or None when not its file.

    A name belongs to the story with the longest key it starts with (after seed 000's
    ``sprint-`` / ``story-`` / ``tech-spec-`` prefixes): ``5-4-wcag-2-1-aa.md`` is story
    5-4's and never story 2-1's, and ``10-1-5-pwa.md`` is 10-1-5's when ``nested`` (the known
    keys under ``key``) holds it. The category then comes from the name's words, before any
    key rule (seed 000): ``tech-spec`` in it makes a tech-spec, ``discovery`` a discovery
    note (``A-1-discovery.md``, ``a-1-tech-spec.md``), anything else a file of the story
    itself. Names that start with no key keep seed 000's patterns, matched on key
    boundaries: ``*{key}*discovery*``, ``*tech-spec*{key}*`` / ``*{key}*tech-spec*``, else
    ``*{key}*`` — unless they hold a nested key, whose file they are.

    The story's own story file (found by its heading or named after its sprint-status
    entry) is the source's to say, whatever its words: see ``Story.files``.

    Returns:
        ``story``, ``discovery`` or ``tech-spec``; None when the file is not ``key``'s.
    """
    wanted = normalize_key(key)
    if not wanted:
        return None
    prefix, rest = _strip_prefix(name)
    known = {wanted, *nested}
    lead = leading_key(name, known)
    if lead is not None:
        if lead != wanted:
            return None
        tech_prefix = prefix is not None and prefix.group("tech") is not None
        return _words_category(rest, tech_prefix)
    if any(key_pattern(other).search(name) for other in nested):
        return None
    match = key_pattern(wanted).search(name)
    if match is None:
        return None
    if _DISCOVERY.search(name, match.end()):
        return "discovery"
    if _TECH_SPEC.search(name):
        return "tech-spec"
    return "story"


_NUMBERED = re.compile(r"^(\d+)([a-z]*)$")


@lru_cache(maxsize=65536)
def natural_key(key: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key for a normalized story key: numbers by value, so ``1-10`` follows ``1-9``.

    Numeric parts sort before alphabetic ones (``1-1`` before ``a-1``); a number with a
    letter sorts right after the number (``1-1``, ``1-1a``, ``1-2``).
    """
    out: list[tuple[int, int, str]] = []
    for part in key.split("-"):
        match = _NUMBERED.match(part)
        if match is None:
            out.append((1, 0, part))
            continue
        # A number too long for int() sorts after every number that is one.
        digits = match.group(1)
        value = int(digits) if len(digits) <= MAX_NUMBER_DIGITS else 10**MAX_NUMBER_DIGITS
        out.append((0, value, match.group(2)))
    return tuple(out)
