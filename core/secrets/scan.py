"""The secret scan of every injected file, with the ``detect-secrets`` library.

A cloned repository may hold an API key in a file promptdeck would send to the model. Each
file's text is scanned before it is shown as part of a prompt; a finding names the file, the
line and the kind of secret (``AWS Access Key``, ``Private Key`` …) — never the secret itself.

Every plugin of detect-secrets is on, with the library's default filters (placeholders,
templated values, UUIDs, indirect references …), as ``detect-secrets scan`` runs them, with
changes of cost and none of verdict:

* **A prefilter picks the lines the detectors see.** Running every plugin on every line costs
  about a millisecond a line of prose. Each plugin only reports what one of its patterns
  matches, and every such match contains a short anchor (``akia``, ``ghp_``, ``begin … private
  key``, a quoted run of hex or base64 long enough to pass the entropy limit, a keyword such as
  ``password`` …). The anchors (:data:`ANCHORS`) run over the (lower-cased) text; the plugins
  and the library's filters then run, unchanged and with the whole file as their context, on
  the lines they mark only — the lines detect-secrets checks, after its rewrite of
  configuration files. A plugin set this module does not know (a newer detect-secrets) turns
  the prefilter off: every line is scanned.
* **A file no anchor can mark is judged without the library** (:func:`_surely_clean`): its
  own lines hold no anchor, and neither do the lines detect-secrets' configuration rewrite
  would make of it (``key = "value"``, quotes added), checked with the same parser. Most
  injected files are prose, so a first ``inspect`` usually imports no part of detect-secrets.
* **The indirect-reference filter** (``secret = get_key()``) runs a regex that costs
  milliseconds on long lines; it is applied to the lines with a finding only, with the same
  verdict.

Tests on a corpus of secrets, look-alikes and configuration files (ini, env, YAML, JSON, with
and without quotes) check the verdicts equal a full ``scan_file``.

Results are remembered by the text's sha256, its file suffix (detect-secrets picks a parser by
extension) and the scanner's identity (:func:`scanner_identity`: the library's version and this
module's settings) — in this process and, through the store the caller passes (the injection
passes :mod:`promptdeck.core.tokens.results`), across processes — so an unchanged file is
scanned once. A remembered result is only used when the library is the
version it was computed with; detect-secrets itself is imported only when something has to be
scanned, and never with ``requests`` (see :mod:`.detectors`).

detect-secrets keeps its settings in a process-wide object, shared with the staging check of
:mod:`.paths`: every scan goes through :func:`.detectors.detectors`.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from ..lean_dataclass import dataclass
from .detectors import all_detectors, detectors, load_library

_CACHE_SIZE = 512
_LOCK = threading.Lock()
_CACHE: OrderedDict[tuple[str, str], tuple[tuple[int, str], ...]] = OrderedDict()
RESULT_KIND = "secret-scan"
PREFILTER_VERSION = 3
"""Changes whenever :data:`ANCHORS` or the scan's settings change: part of every cache key.
(3: the copy is read as UTF-8 whatever the locale, and no file-name filter skips it — a
verdict remembered before, possibly from a skipped file, is never used.)"""
ANCHORED_VERSION = "1.5.0"
"""The detect-secrets release whose detectors :data:`ANCHORS` lists, one for one. A file is
judged clean without the library (:func:`_surely_clean`) only under this release: with another,
a detector the anchors do not know may exist, and only the library can say which are there."""
_YAML_SUFFIXES = frozenset({".yaml", ".yml", ".eyaml"})
"""The suffixes detect-secrets parses as YAML (``util/filetype.py``)."""


@dataclass(frozen=True)
class SecretFinding:
    """One likely credential in a file.

    Attributes:
        path: the file, as shown in the injection.
        line: the 1-based line number.
        kind: detect-secrets' name for the kind of secret (never the secret itself).
    """

    path: str
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of one finding."""
        return {"path": self.path, "line": self.line, "kind": self.kind}


_INDIRECT_REFERENCE = "detect_secrets.filters.heuristic.is_indirect_reference"

# Between a keyword and its value, the credential detectors of the IBM, SoftLayer and Cloudant
# kind allow a quote, a bracket, then any of ` =:>` (`key = `, `"pass": "`, `token => '`).
_SEPARATOR = r"""["']?\]?[ =:>]*["']?"""

# A keyword, the separator, then 24 characters of the key's alphabet: IBM Cloud IAM and
# Cloudant keys are of `[a-z0-9_-]`, SoftLayer's of `[a-z0-9]` (so this anchor covers it too).
_KEYED_VALUE = r"(?:key|pwd?|pass(?:word)?|token)" + _SEPARATOR + r"[a-z0-9_-]{24}"
# The high-entropy detectors report a quoted run of their alphabet whose Shannon entropy is
# above their limit (3.0 for hex, 4.5 for base64, the defaults promptdeck scans with). Entropy
# is at most log2 of the number of distinct characters, so a reported run holds at least 9
# (2**3 = 8) or 23 (2**4.5 ≈ 22.6) characters.
_QUOTED_HEX = r"""['"][0-9a-f]{9,}['"]"""
_QUOTED_BASE64 = r"""['"][a-z0-9+/=_\\-]{23,}['"]"""

ANCHORS: dict[str, tuple[str, ...]] = {
    "AWSKeyDetector": (r"a3t[a-z0-9]|abia|acca|akia|asia|aws",),
    "ArtifactoryDetector": (r"akc[a-z0-9]{10}|ap[\da-f][a-z0-9]{8}",),
    "AzureStorageKeyDetector": (r"accountkey=",),
    "BasicAuthDetector": (r"://[^:/?#\[\]@!$&'()*+,;=\s]+:[^:/?#\[\]@!$&'()*+,;=\s]+@",),
    "CloudantDetector": (_KEYED_VALUE, r"\.cloudant\.com"),
    # Written to start at a literal "." (the regex engine then skips to each one): the 24
    # characters before it are all of the token's alphabet, as in every Discord token.
    "DiscordBotTokenDetector": (r"\.[a-z\d_-]{6}\.(?<=[a-z\d_-]{24}\.[a-z\d_-]{6}\.)",),
    "GitHubTokenDetector": (r"gh[pousr]_",),
    "GitLabTokenDetector": (r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|gr1348941",),
    "Base64HighEntropyString": (_QUOTED_BASE64,),
    "HexHighEntropyString": (_QUOTED_HEX,),
    "IbmCloudIamDetector": (_KEYED_VALUE,),
    "IbmCosHmacDetector": (r"key" + _SEPARATOR + r"[a-f0-9]{48}",),
    # a.b.c.d, found from its first dot.
    "IPPublicDetector": (r"\.(?<=[0-9]\.)[0-9]{1,3}\.[0-9]{1,3}\.[0-9]",),
    "JwtTokenDetector": (r"eyj",),
    "KeywordDetector": (
        r"api_?key|auth_?key|service_?key|account_?key|db_?key|database_?key|priv_?key"
        r"|private_?key|client_?key|db_?pass|database_?pass|key_?pass|password|passwd|pwd"
        r"|secret|contraseña|contrasena",
    ),
    "MailchimpDetector": (r"-us[0-9]",),
    "NpmDetector": (r":_authtoken=",),
    "OpenAIDetector": (r"t3blbkfj",),
    "PrivateKeyDetector": (
        r"begin (?:dsa |ec |openssh |pgp |rsa |ssh2 encrypted )?private key",
        r"putty-user-key-file-2",
    ),
    "PypiTokenDetector": (r"pypi-age",),
    "SendGridDetector": (r"sg\.[a-z0-9_-]{22}\.",),
    "SlackDetector": (r"xox[abposr]-|hooks\.slack\.com/",),
    "SoftlayerDetector": (_KEYED_VALUE, r"api.softlayer.com/soap/"),
    "SquareOAuthDetector": (r"sq0csp-",),
    "StripeDetector": (r"k_live_(?<=[rs]k_live_)",),
    # 8 to 10 digits then ":", found from the ":".
    "TelegramBotTokenDetector": (r":(?<=\d{8}:)",),
    "TwilioKeyDetector": (r"(?:ac|sk)[a-z0-9]{32}",),
}
"""For each detector detect-secrets ships, patterns one of which every one of its findings'
lines holds, written for lower-cased text (see :func:`_folded`). Each is implied by the
detector's own
patterns: a literal prefix, a keyword, or a looser shape of the secret."""


@lru_cache(maxsize=4)
def _prefilter(plugins: frozenset[str]) -> tuple[re.Pattern[str], ...] | None:
    """The anchor patterns for ``plugins``, or None when one of them is unknown.

    Each distinct anchor is its own pattern: most start with a literal the regex engine jumps
    to, where one alternation of them all would try every branch at every character (three
    times slower on a story's prose).
    """
    if not plugins <= ANCHORS.keys():
        return None
    anchors = dict.fromkeys(anchor for name in sorted(plugins) for anchor in ANCHORS[name])
    return tuple(re.compile(anchor) for anchor in anchors)


def _folded(text: str) -> str:
    """``text`` lower-cased the way the detectors' case-insensitive patterns compare it.

    Python's ``re.IGNORECASE`` also lets ``İ`` and ``ı`` match ``i``, ``ſ`` match ``s`` (and the
    Kelvin sign ``k``, which ``lower()`` already maps); ``str.lower()`` alone would miss them.
    """
    if "\u0130" in text:
        text = text.replace("\u0130", "i")  # lower() would make it two characters
    folded = text.lower()
    if not folded.isascii():
        folded = folded.replace("\u0131", "i").replace("\u017f", "s")
    return folded


def candidate_lines(lines: list[str], plugins: frozenset[str]) -> set[int] | None:
    """The 1-based numbers of the lines (as the detectors see them: right-stripped) that may
    hold a finding of ``plugins`` — every line that does is among them — or None (scan all).

    One pass of the combined anchors over the joined text; a match spanning lines marks each.
    """
    patterns = _prefilter(plugins)
    if patterns is None:
        return None
    joined = _folded("\n".join(line.rstrip() for line in lines))
    marked: set[int] = set()
    for pattern in patterns:
        for match in pattern.finditer(joined):
            first = joined.count("\n", 0, match.start()) + 1
            marked.update(range(first, first + joined.count("\n", match.start(), match.end()) + 1))
    return marked


def _surely_clean(suffix: str, text: str) -> bool:
    """True when detect-secrets would find nothing in ``text`` — proved without importing it.

    A detector only reports a line one of :data:`ANCHORS` matches, so a text no anchor matches
    has no finding — provided the lines detect-secrets checks are the text's own lines. They may
    not be: it first tries to read the file as configuration (``transformers/config.py``: an
    ini file, and, in an eager second pass, the text under an added ``[global]`` header) and
    checks the rewritten ``key = "value"`` lines, whose added quotes can make a high-entropy
    candidate of a bare hex or base64 value. So the text is read as configuration here too, with
    the same parser, and the anchors must match none of those lines either (:func:`_config_lines`).
    YAML files are rewritten from their parse (escapes decoded): they always go to the library,
    as does anything else the proof does not cover (another detect-secrets release, text its
    copy could not be written in).
    """
    if library_version() != ANCHORED_VERSION or suffix.lower() in _YAML_SUFFIXES:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False  # the copy cannot be written: the library's path reports "scan failed"
    # The library reads its copy with universal newlines.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _anchored(text):
        return False
    if _PLAIN_LINE.search(text):
        return True  # not configuration, with or without the added header: no rewrite
    for content in (text, "[global]\n" + text):
        lines = _config_lines(content)
        if lines is None or (lines and _anchored("\n".join(lines))):
            return False
    return True


_PLAIN_LINE = re.compile(r"^[^\s#;\[=:][^=:\n]*$", re.MULTILINE)
"""A line configparser can read as nothing: not indented (so no value's continuation), not a
comment (``#``, ``;``) or a section (``[``), and without a delimiter (``=``, ``:``) — one is a
parse error, before a section or after one, with or without an added header. Prose has one in
its first sentence, and the parse itself is then not needed."""


def _anchored(text: str) -> bool:
    """Whether any anchor of any detector matches ``text``."""
    patterns = _prefilter(frozenset(ANCHORS))
    assert patterns is not None
    folded = _folded(text)
    return any(pattern.search(folded) for pattern in patterns)


def _config_lines(content: str) -> list[str] | None:
    """Every line detect-secrets' config transformer could make of ``content`` (a superset:
    each value both as written and interpolated), ``[]`` when it is not configuration, or None
    when that could not be told."""
    import configparser

    parser = _config_parser()
    try:
        parser.read_string(content)
    except configparser.Error:
        return []
    except Exception:
        return None
    lines: list[str] = []
    for section in parser:
        for raw in (True, False):
            try:
                items = parser.items(section, raw=raw)
            except configparser.Error:
                continue
            for key, values in items:
                for value in (values or "").splitlines():
                    if value[:1] in ("'", '"') and value[-1] == value[0] and len(value) > 1:
                        value = value[1:-1]
                    escaped = value.replace('"', '\\"')
                    lines.append(f'{key} = "{escaped}"')
    return lines


def _config_parser() -> Any:
    import configparser

    class KeepsNames(configparser.ConfigParser):
        def optionxform(self, optionstr: str) -> str:
            return optionstr  # as the library's IniFileParser: `Key` and `key` differ

    return KeepsNames()


def _scanned_lines(
    lines: list[str], filename: str, plugins: frozenset[str], prefilter: bool
) -> Iterator[Any]:
    """detect-secrets' own line loop (``scan._process_line_based_plugins``), over the
    prefilter's candidates only; the context each line is judged in is the whole file.

    The indirect-reference filter, switched off in the settings for its cost (see the module's
    description), is applied here to the very line a finding was made on — never to a line
    found again by number in another split of the text, which could be another line.
    """
    from detect_secrets.core import scan
    from detect_secrets.filters.heuristic import is_indirect_reference
    from detect_secrets.settings import get_plugins
    from detect_secrets.util.code_snippet import get_code_snippet

    numbered = list(enumerate(lines, start=1))
    wanted = candidate_lines(lines, plugins) if prefilter else None
    for line_number, raw in numbered:
        if wanted is not None and line_number not in wanted:
            continue
        line = raw.rstrip()
        context = get_code_snippet(lines=lines, line_number=line_number)
        if scan._is_filtered_out(
            required_filter_parameters=["line"], filename=filename, line=line, context=context
        ):
            continue
        indirect: bool | None = None
        for plugin in get_plugins():
            for secret in scan._scan_line(
                plugin=plugin,
                filename=filename,
                line=line,
                line_number=line_number,
                context=context,
            ):
                if scan._is_filtered_out(
                    required_filter_parameters=["context"],
                    filename=secret.filename,
                    secret=secret.secret_value,
                    plugin=plugin,
                    line=line,
                    context=context,
                ):
                    continue
                if indirect is None:
                    indirect = is_indirect_reference(line)
                if not indirect:
                    yield secret


def _copy_lines(filename: str) -> Iterator[list[str]]:
    """The lines detect-secrets scans of the copy ``filename`` (``scan._get_lines_from_file``):
    the configuration or YAML rewrite when one applies, else the file's lines, then the eager
    rewrite — each list numbered as the library numbers lines (universal newlines, then ``\n``
    alone; a form feed or U+2028 ends no line).

    The library opens the file in the locale's encoding and, when that cannot decode it, skips
    it as binary: in a C locale a file with one accented letter would pass as clean. The copy
    is promptdeck's own UTF-8, so it is always read as UTF-8, and a failure to decode raises
    (reported as ``scan failed``, never remembered) instead of passing.
    """
    from detect_secrets.transformers import get_transformed_file

    with open(filename, encoding="utf-8") as handle:
        named: Any = handle  # the library's NamedIO: a text file with a name
        lines = get_transformed_file(named) or handle.readlines()
        yield lines
        handle.seek(0)
        eager = get_transformed_file(named, use_eager_transformers=True)
        if eager:
            yield eager


def scan_copy(filename: str, *, prefilter: bool = True) -> set[tuple[int, str]]:
    """``(line, kind)`` of every finding in the file ``filename``, as ``scan_file`` reports them
    (its parsers, its eager second pass, its line and secret filters), the detectors seeing
    only the prefilter's lines unless ``prefilter`` is False. Call inside :func:`.detectors`.

    The library's file-name filters (``*.css``, ``*.svg``, ``*.lock``, ``swagger`` …) are not
    applied: they skip a file unread, and a file in a prompt is sent whatever its name.
    """
    from detect_secrets.settings import get_plugins

    found: set[tuple[int, str]] = set()
    plugins = frozenset(type(plugin).__name__ for plugin in get_plugins())
    for lines in _copy_lines(filename):
        for secret in _scanned_lines(lines, filename, plugins, prefilter):
            found.add((secret.line_number, secret.type))
        if found:
            break
    return found


def _scan(suffix: str, text: str) -> tuple[tuple[int, str], ...]:
    if _surely_clean(suffix, text):
        return ()
    import tempfile

    load_library()
    # detect-secrets scans a file by name (its transformers pick a parser by extension), so
    # the text already read is written to a private temporary copy: the workspace file is
    # never opened a second time.
    with tempfile.TemporaryDirectory(prefix="promptdeck-scan-") as folder:
        copy = os.path.join(folder, "scanned" + suffix)
        with open(copy, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        with detectors(all_detectors(), frozenset({_INDIRECT_REFERENCE})):
            found = scan_copy(copy)
    return tuple(sorted(found))


@lru_cache(maxsize=1)
def library_version() -> str:
    """detect-secrets' version, read from its files without importing it (or ``unknown``)."""
    from importlib.util import find_spec

    spec = find_spec("detect_secrets")
    if spec is None or not spec.origin:
        return "unknown"
    stamp = Path(spec.origin).with_name("__version__.py")
    try:
        match = re.search(r"VERSION\s*=\s*['\"]([^'\"]+)", stamp.read_text("utf-8"))
    except (OSError, ValueError):
        return "unknown"
    return match.group(1) if match else "unknown"


@lru_cache(maxsize=1)
def scanner_identity() -> str:
    """What a remembered scan was computed with: detect-secrets' version, this module's
    prefilter version and the scan's settings."""
    return (
        f"detect-secrets {library_version()}; every plugin; default filters but file names;"
        f" read as UTF-8; prefilter {PREFILTER_VERSION}"
    )


def _key(digest: str, suffix: str) -> bytes:
    return hashlib.sha256(f"{scanner_identity()}\0{suffix}\0{digest}".encode()).digest()


def _from_store(value: Any) -> tuple[tuple[int, str], ...] | None:
    """A remembered scan, if it has the shape one has (never trusted further than that)."""
    if not isinstance(value, list):
        return None
    out = []
    for item in value:
        if not (
            isinstance(item, list)
            and len(item) == 2
            and isinstance(item[0], int)
            and not isinstance(item[0], bool)
            and item[0] > 0
            and isinstance(item[1], str)
        ):
            return None
        out.append((item[0], item[1]))
    return tuple(out)


class ScanStore(Protocol):
    """Where scans are remembered across processes (a key → JSON value store)."""

    def get(self, kind: str, key: bytes) -> Any:
        """The value stored under ``(kind, key)``, or None."""

    def put(self, kind: str, key: bytes, value: Any) -> None:
        """Store ``value`` under ``(kind, key)``."""


def scan_text(path: str, text: str, store: ScanStore | None = None) -> tuple[SecretFinding, ...]:
    """The likely credentials in ``text``, the content of the file shown as ``path``; scans are
    remembered in ``store`` too when one is given (else in this process only).

    Never raises for the content: a scanner failure is reported as one finding of kind
    ``scan failed``, so a file that could not be checked is never passed as clean (and such a
    result is not remembered).
    """
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    raw_suffix = Path(path).suffix
    suffix = raw_suffix if raw_suffix.isascii() else ""
    key = (digest, suffix)
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
            return _findings(path, cached)
        stored = (
            None if store is None else _from_store(store.get(RESULT_KIND, _key(digest, suffix)))
        )
        if stored is None:
            try:
                stored = _scan(suffix, text)
            except Exception as exc:  # the scanner is third-party code: never crash a build
                return (SecretFinding(path, 0, f"scan failed ({type(exc).__name__})"),)
            if store is not None:
                store.put(RESULT_KIND, _key(digest, suffix), [list(item) for item in stored])
        _CACHE[key] = stored
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return _findings(path, stored)


def _findings(path: str, found: Iterable[tuple[int, str]]) -> tuple[SecretFinding, ...]:
    return tuple(SecretFinding(path, line, kind) for line, kind in found)
