"""The two secret scans share detect-secrets' process-wide settings through one door: neither
ever runs with the other's detectors, in sequence or from two threads at once."""

from __future__ import annotations

import threading

from promptdeck.core.secrets import paths as secret_paths
from promptdeck.core.secrets import scan as secret_scan
from promptdeck.core.secrets.detectors import detectors

# A hex string: only the high-entropy detector (on for the injection, off for staging) flags it.
NOISY = 'checksum = "8f14e45fceea167a5a36dedd4bea2543b6c7d8e9"\n'
# An AWS access key id: a credential detector both scans run.
AWS = "key AKIAZ3MQ7RJ4LTXW2P5N here\n"


def test_each_scan_keeps_its_own_detectors_whatever_ran_before() -> None:
    assert secret_paths.scan_text(NOISY) == []
    assert [f.kind for f in secret_scan.scan_text("a.md", NOISY)] == ["Hex High Entropy String"]
    assert secret_paths.scan_text(NOISY) == []
    assert secret_paths.scan_text(AWS) == [(1, "AWS Access Key")]
    # A new text (the injection scan caches by content), after a staging scan.
    assert [f.kind for f in secret_scan.scan_text("b.md", NOISY + "\n")] == [
        "Hex High Entropy String"
    ]


def test_the_indirect_reference_filter_stays_off_for_the_injection_scan_after_staging() -> None:
    from detect_secrets.settings import get_settings

    secret_paths.scan_text(AWS)
    secret_scan.scan_text("c.md", AWS + "\n\n")
    with detectors(frozenset({"AWSKeyDetector"})):
        assert "detect_secrets.filters.heuristic.is_indirect_reference" in get_settings().filters
    secret_scan.scan_text("d.md", AWS + "\n\n\n")
    from promptdeck.core.secrets.detectors import all_detectors

    with detectors(all_detectors(), frozenset({secret_scan._INDIRECT_REFERENCE})):
        assert secret_scan._INDIRECT_REFERENCE not in get_settings().filters


def test_two_threads_scanning_at_once_never_see_each_others_detectors() -> None:
    errors: list[str] = []
    # Long enough that a scan spans several of the interpreter's thread switches (5 ms).
    filler = "".join(f"line {n} of prose, nothing secret in it\n" for n in range(300))

    def staging() -> None:
        for _ in range(15):
            if secret_paths.scan_text(filler + NOISY) != []:
                errors.append("staging ran the high-entropy detector")

    def injection() -> None:
        for number in range(15):
            # A new text each time, so the content cache never answers.
            found = secret_scan.scan_text(f"{number}.md", filler + NOISY + "\n" * number)
            if [f.kind for f in found] != ["Hex High Entropy String"]:
                errors.append(f"injection scan missed the secret: {found}")

    threads = [threading.Thread(target=staging), threading.Thread(target=injection)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors[:3]


REQUESTS_CHILD = r"""
import sys
from promptdeck.core.secrets import paths, scan
print([f.kind for f in scan.scan_text("a.md", "key AKIAZ3MQ7RJ4LTXW2P5N here\n")])
print(paths.scan_text("key AKIAZ3MQ7RJ4LTXW2P5N here\n"))
print("requests" in sys.modules, "urllib3" in sys.modules)
import detect_secrets.plugins.base as base
# Reading a name of the stand-in hands over the real library: the verification code of the
# plugins would behave as without it (promptdeck never runs it).
caught = base.requests.exceptions.RequestException
import requests
print(caught is requests.exceptions.RequestException, type(requests).__name__)
"""


def test_scans_run_without_importing_requests_and_a_later_import_gets_the_real_one() -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPROFILEIMPORTTIME"}
    done = subprocess.run(
        [sys.executable, "-c", REQUESTS_CHILD], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "['AWS Access Key']",
        "[(1, 'AWS Access Key')]",
        "False False",
        "True module",
    ]
