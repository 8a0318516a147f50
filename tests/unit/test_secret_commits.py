"""A commit hash in a BMAD plan's front matter is not a secret; a credential beside it is."""

from __future__ import annotations

from promptdeck.core.secrets.commits import drop_commit_hashes, is_commit_hash_line
from promptdeck.core.secrets.scan import SecretFinding, scan_text

SHA1 = "6e43f6b9bdf7531360d8eadab4d070fb66f32d9a"
SHA256 = "4f2a9c1e7b3d5f8a0c2e4b6d8f1a3c5e7b9d0f2a4c6e8b1d3f5a7c9e0b2d4f6a"

PLAN = f"""---
title: 'Cloud voice fallback'
status: done
baseline_commit: {SHA1}
baseline_revision: '{SHA1}'
head_sha: "{SHA256}"
api_token: '{SHA1}'
---

# Cloud voice fallback

baseline_commit: '{SHA1}'
"""


def test_the_scanner_flags_every_hash_and_the_filter_keeps_only_the_credentials() -> None:
    found = scan_text("spec-2-3-cloud-voice-fallback.md", PLAN)
    flagged = {finding.line for finding in found}
    # detect-secrets' entropy detector flags each quoted hash: the filter has work to do.
    assert {5, 6, 7, 12} <= flagged
    kept = {finding.line for finding in drop_commit_hashes(PLAN, found)}
    # api_token is no commit key, and line 12 is the body, not the front matter.
    assert kept == {7, 12}


def test_only_full_object_names_under_a_commit_key_count() -> None:
    assert is_commit_hash_line(f"baseline_commit: {SHA1}")
    assert is_commit_hash_line(f"  baseline-revision: '{SHA1}'  # from git rev-parse")
    assert is_commit_hash_line(f"sha: {SHA256}")
    assert not is_commit_hash_line(f"baseline_commit: {SHA1[:-1]}")  # 39 digits
    assert not is_commit_hash_line(f"baseline_commit: {SHA1}0")  # 41 digits
    assert not is_commit_hash_line(f"token: {SHA1}")
    assert not is_commit_hash_line(f"shared_secret: {SHA1}")  # "sha" only as a whole word
    assert not is_commit_hash_line(f"baseline_commit: '{SHA1}\"")  # quotes must pair


def test_a_credential_detector_on_a_commit_line_is_still_reported() -> None:
    shaped = SecretFinding("plan.md", 4, "AWS Access Key")
    entropy = SecretFinding("plan.md", 4, "Hex High Entropy String")
    assert drop_commit_hashes(PLAN, (shaped, entropy)) == (shaped,)


def test_a_file_without_front_matter_keeps_every_finding() -> None:
    text = f"baseline_commit: {SHA1}\n"
    finding = SecretFinding("notes.md", 1, "Hex High Entropy String")
    assert drop_commit_hashes(text, (finding,)) == (finding,)
    unclosed = f"---\nbaseline_commit: {SHA1}\n"
    finding = SecretFinding("notes.md", 2, "Hex High Entropy String")
    assert drop_commit_hashes(unclosed, (finding,)) == (finding,)
