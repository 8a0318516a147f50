"""The secret scan's prefilter drops no finding: a corpus of secrets and look-alikes gives the
same ``(line, kind)`` verdicts as detect-secrets' own full ``scan_file``, file by file.

The corpus is built here, from a seeded random source, so that no credential-shaped string sits
in the repository itself (a repository scanner would flag this file otherwise).
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from promptdeck.core.secrets import scan as secret_scan
from promptdeck.core.secrets.detectors import all_detectors, detectors

_rng = random.Random(22)
DIGITS = string.digits
UPPER = string.ascii_uppercase + DIGITS
LOWER = string.ascii_lowercase + DIGITS
HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + DIGITS


def pick(alphabet: str, count: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(count))


def b64url(data: dict[str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


PROSE = [
    "The sync engine keeps a journal of edits and replays it on reconnect.",
    "Conflicts are resolved per field; the newest write wins unless the user pinned a value.",
    "Acceptance: given two devices editing one note offline, both edits survive the merge.",
    "Review note: the retry loop should back off (1 s, 2 s, 4 s) and give up after 5 tries.",
    "See `docs/sync.md` for the state machine; 'pending' and 'acked' are the only states.",
    'He said "don\'t rotate the keys yet" — the rollout waits for the audit.',
    "- [x] Task 3: store the password hash with argon2id (never the password itself)",
    "The secret handshake is a metaphor here: the client proves it saw the last ack.",
    "Ports 8080 and 8443 are open on the staging host; version 10.4.2 ships next week.",
    "Private key handling is described in ADR-12; nothing in this story touches it.",
]

SECRETS = [
    f"aws_access_key_id = AKIA{pick(UPPER, 16)}",
    f'aws_secret_access_key = "{pick(ALNUM + "/+", 40)}"',
    f"artifactory token: AKC{pick(ALNUM, 60)}",
    f"DefaultEndpointsProtocol=https;AccountKey={pick(ALNUM + '+/', 86)}==",
    f'remote = "https://deploy:{pick(LOWER, 12)}@ci.example.org/repo.git"',
    f"cloudant_password = '{pick(HEX, 64)}'",
    f"bot token {_rng.choice('MNO')}{pick(ALNUM, 23)}.{pick(ALNUM, 6)}.{pick(ALNUM, 27)}",
    f"export GH_TOKEN=ghp_{pick(ALNUM, 36)}",
    f"gitlab: glpat-{pick(ALNUM, 20)}",
    f'blob = "{pick(ALNUM + "+/", 40)}"',
    f"checksum: '{pick(HEX, 32)}'",
    f'ibm_cloud_iam_key = "{pick(ALNUM + "_-", 44)}"',
    f'cos_hmac_secret_access_key = "{pick(HEX, 48)}"',
    "metrics go to 34.117.59.81:9090 every minute",
    "token eyJ"
    + b64url({"alg": "HS256", "typ": "JWT"})[3:]
    + "."
    + b64url({"sub": "1234567890", "name": "Ana"})
    + "."
    + pick(ALNUM, 43),
    f'password = "{pick(ALNUM, 14)}"',
    f"mailchimp {pick(HEX, 32)}-us12",
    f"//registry.npmjs.org/:_authToken=npm_{pick(ALNUM, 36)}",
    f"OPENAI=sk-{pick(ALNUM, 20)}T3BlbkFJ{pick(ALNUM, 20)}",
    "-----BEGIN RSA PRIVATE KEY-----",
    f"pypi-AgEIcHlwaS5vcmc{pick(ALNUM + '-_', 80)}",
    f"SG.{pick(ALNUM, 22)}.{pick(ALNUM, 43)}",
    f"slack: xoxb-{pick(DIGITS, 12)}-{pick(DIGITS, 12)}-{pick(LOWER, 24)}",
    f"https://hooks.slack.com/services/T{pick(UPPER, 8)}/B{pick(UPPER, 8)}/{pick(ALNUM, 24)}",
    f'softlayer_api_key = "{pick(LOWER, 64)}"',
    f"square sq0csp-{pick(ALNUM, 43)}",
    f"STRIPE=sk_live_{pick(ALNUM, 24)}",
    f"telegram {pick(DIGITS, 9)}:{pick(ALNUM + '_-', 35)}",
    f"twilio AC{pick(HEX, 32)} and SK{pick(HEX, 32)}",
    # Case and Unicode: re.IGNORECASE lets ſ match s and ı match i.
    f'PaSSWORD: "{pick(ALNUM, 16)}"',
    f'paſſword = "{pick(ALNUM, 16)}"',
    f'db_pass = "{pick(ALNUM, 16)}"  # pragma: allowlist secret',
    "# pragma: allowlist nextline secret",
    f'client_key = "{pick(ALNUM, 16)}"',
]

LOOK_ALIKES = [
    "password = '123e4567-e89b-12d3-a456-426614174000'",
    'password = "${DB_PASSWORD}"',
    "secret = get_secret()",
    "password = <your password here>",
    "the cache lives at 192.168.1.20 and 10.0.0.1 on the office network",
    'alphabet = "abcdefghijklmnopqrstuvwxyz"',
    'api_key: ""',
    "AKIAIOSFODNN7EXAMPLE is the documentation's example key",
    "see https://example.org/docs for the key rotation runbook",
    'token = "dummy"',
    "İstanbul ıı ſ office notes: KEY rotation happens quarterly",
]


def _document(seed: int, *, with_secrets: bool) -> list[str]:
    rng = random.Random(seed)
    lines = []
    sources = SECRETS if with_secrets else []
    for number in range(120):
        lines.append(rng.choice(PROSE))
        if number % 4 == 0:
            lines.append(rng.choice(LOOK_ALIKES))
        if sources and number % 3 == 0:
            lines.append(sources[(number // 3) % len(sources)])
    return lines


def _corpus() -> dict[str, str]:
    files: dict[str, str] = {}
    for index, suffix in enumerate((".md", ".txt", ".py", ".json", "")):
        files[f"story-{index}{suffix}"] = "\n".join(_document(index, with_secrets=True)) + "\n"
    files["clean.md"] = "\n".join(_document(99, with_secrets=False)) + "\n"
    files["settings.yaml"] = (
        "service:\n"
        f"  api_key: {pick(ALNUM, 32)}\n"
        f"  signing: {pick(ALNUM + '+/', 40)}\n"
        "  region: eu-west-1\n"
        "  note: the key above rotates monthly\n"
    )
    files["deploy.ini"] = (
        f"[deploy]\npassword = {pick(ALNUM, 18)}\nhash = {pick(HEX, 40)}\nhost = ci.example.org\n"
    )
    # Prose with `key = value` lines: detect-secrets' second, eager pass reads it as config.
    files["notes.md"] = (
        "# Notes\n\nSome text.\n"
        f"token = {pick(ALNUM + '+/', 40)}\n"
        f"hexdigest = {pick(HEX, 40)}\n"
        "The end.\n"
    )
    files.update(REWRITTEN)
    files.update(CLEAN)
    return files


# Files whose own lines hold no anchor, where detect-secrets' rewrite of configuration
# (`key = "value"`, quotes added) makes a high-entropy candidate: the scan must still see them.
REWRITTEN = {
    "build.ini": f"[build]\nchecksum = {pick(HEX, 40)}\nhost = ci.example.org\n",
    "service.cfg": f"[blob]\nsigning\t=\t{pick(ALNUM + '+/', 44)}\n",
    "release.env": f"CHECKSUM={pick(HEX, 40)}\nREGION=eu-west-1\n",
    "headerless.md": f"checksum: {pick(HEX, 40)}\nsigning = {pick(ALNUM + '+/', 44)}\n",
    "quoted-short.txt": f"[s]\nvalue = '{pick(HEX, 8)}\"\n",
    "multiline.conf": f"[s]\nchecksums =\n    {pick(HEX, 40)}\n    {pick(HEX, 40)}\n",
    "values.yaml": f"build:\n  checksum: {pick(HEX, 40)}\n  signing: {pick(ALNUM + '+/', 44)}\n",
    "escaped.yaml": 'build:\n  id: "\\x41KIA' + pick(UPPER, 16) + '"\n',
    "flow.yml": f"{{checksum: {pick(HEX, 40)}, region: eu}}\n",
    "settings.json": json.dumps({"checksum": pick(HEX, 40), "note": "rotated monthly"}) + "\n",
}

# Files no detector can report anything in, as detect-secrets reads them.
CLEAN = {
    "prose.md": "# Sync\n\nThe engine keeps a journal of edits.\nIt replays them on reconnect.\n",
    "prose-crlf.txt": "First line of the plan.\r\nSecond line: merge per field.\r\n",
    "table.md": "| field | rule |\n| --- | --- |\n| title | newest wins |\n",
    "unicode.md": "Überblick: Konflikte werden pro Feld gelöst.\nŞimdi test edelim.\n",
}


def _full_scan(path: Path) -> list[tuple[int, str]]:
    """detect-secrets' own verdicts: ``scan_file`` with every plugin and the default filters."""
    from detect_secrets.core.scan import scan_file

    with detectors(all_detectors()):
        return sorted({(s.line_number, s.type) for s in scan_file(str(path))})


def test_the_prefiltered_scan_reports_exactly_what_a_full_scan_reports(tmp_path: Path) -> None:
    kinds: set[str] = set()
    skipped = 0
    for name, text in _corpus().items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        expected = _full_scan(path)
        got = [(f.line, f.kind) for f in secret_scan.scan_text(name, text)]
        assert got == expected, name
        kinds.update(kind for _, kind in expected)
        marked = secret_scan.candidate_lines(text.splitlines(), all_detectors())
        assert marked is not None
        skipped += len(text.splitlines()) - len(marked)
    # The corpus means something: most detectors fire, and the prefilter did skip lines.
    assert len(kinds) >= 20, sorted(kinds)
    assert skipped > 500


def test_files_only_the_rewrite_makes_candidates_of_are_scanned(tmp_path: Path) -> None:
    reported = 0
    for name, text in REWRITTEN.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8", newline="")
        expected = _full_scan(path)
        assert [(f.line, f.kind) for f in secret_scan.scan_text(name, text)] == expected, name
        if expected:
            assert not secret_scan._surely_clean(Path(name).suffix, text), name
            reported += 1
    # Not vacuous: most of them hold a finding detect-secrets only makes after its rewrite.
    assert reported >= 6


def test_a_file_judged_clean_without_the_library_is_clean_to_the_library(tmp_path: Path) -> None:
    for name, text in CLEAN.items():
        assert secret_scan._surely_clean(Path(name).suffix, text), name
        path = tmp_path / name
        path.write_text(text, encoding="utf-8", newline="")
        assert _full_scan(path) == [], name


FRAGMENTS = [
    *PROSE,
    "[section]",
    "# a heading",
    "    indented continuation",
    "",
    "key = value",
    "region: eu-west-1",
    f"checksum = {pick(HEX, 40)}",
    f"signing:\t{pick(ALNUM + '+/', 44)}",
    f"value = '{pick(HEX, 12)}'",
    f"plain {pick(HEX, 40)} in a sentence",
    f"{pick(ALNUM, 30)}",
]


@settings(max_examples=60, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6),
    st.sampled_from([".md", ".txt", ".ini", ".cfg", ".env", ".json", ""]),
)
def test_clean_without_the_library_means_no_finding(lines: list[str], suffix: str) -> None:
    import tempfile

    text = "\n".join(lines) + "\n"
    if not secret_scan._surely_clean(suffix, text):
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"file{suffix}"
        path.write_text(text, encoding="utf-8", newline="")
        assert _full_scan(path) == [], text


def test_the_anchors_cover_exactly_the_release_they_were_written_for() -> None:
    # _surely_clean cannot ask the library which detectors exist; it trusts ANCHORED_VERSION.
    if secret_scan.library_version() != secret_scan.ANCHORED_VERSION:
        pytest.skip(f"detect-secrets {secret_scan.library_version()} is installed")
    assert all_detectors() == frozenset(secret_scan.ANCHORS)


def test_another_release_is_never_judged_without_the_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = CLEAN["prose.md"]
    assert secret_scan._surely_clean(".md", text)
    monkeypatch.setattr(secret_scan, "ANCHORED_VERSION", "0.0.1")
    assert not secret_scan._surely_clean(".md", text)


def test_the_corpus_clean_file_has_no_finding_and_skips_every_prose_line() -> None:
    text = "\n".join(PROSE) + "\n"
    assert secret_scan.scan_text("prose.md", text) == ()
    marked = secret_scan.candidate_lines(text.splitlines(), all_detectors())
    # "password", "secret" and "private key" are anchors; other prose lines are not scanned.
    assert marked is not None and 0 < len(marked) < len(PROSE)


def test_an_unknown_detector_turns_the_prefilter_off() -> None:
    assert secret_scan.candidate_lines(["x"], frozenset({"SomeNewDetector"})) is None


def _regex_detector_patterns() -> list[tuple[str, object]]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    out = []
    for cls in get_mapping_from_secret_type_to_class().values():
        denylist = getattr(cls, "denylist", None)
        if isinstance(denylist, list | tuple):
            out.extend((cls.__name__, pattern) for pattern in denylist)
    return out


@pytest.mark.parametrize(("detector", "pattern"), _regex_detector_patterns())
def test_every_line_a_detector_pattern_matches_is_a_candidate(
    detector: str, pattern: object
) -> None:
    import re

    assert isinstance(pattern, re.Pattern)

    @settings(max_examples=25, database=None, suppress_health_check=list(HealthCheck))
    @given(st.from_regex(pattern))
    def check(text: str) -> None:
        lines = text.split("\n")
        marked = secret_scan.candidate_lines(lines, frozenset({detector}))
        assert marked is not None
        for number, line in enumerate(lines, start=1):
            if pattern.search(line.rstrip()):
                assert number in marked, line

    check()


@settings(max_examples=200, database=None, deadline=None)
@given(
    st.lists(
        st.sampled_from(FRAGMENTS)
        | st.text(alphabet=st.sampled_from(" \t\v=:#;[]ab\u00a0\u2028"), max_size=8),
        min_size=1,
        max_size=8,
    )
)
def test_a_plain_line_means_the_text_is_no_configuration(lines: list[str]) -> None:
    text = "\n".join(lines)
    if secret_scan._PLAIN_LINE.search(text):
        assert secret_scan._config_lines(text) == []
        assert secret_scan._config_lines("[global]\n" + text) == []
