"""A property: whatever bytes a cloned repository holds as file names and contents, discovery
and inspect never raise anything but promptdeck's own one-line errors."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from promptdeck.core.errors import PromptdeckError
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest

ARTIFACTS = "_bmad-output/implementation-artifacts"
CHANGE = "openspec/changes/change"

name_bytes = st.binary(min_size=1, max_size=30).map(
    lambda raw: raw.replace(b"/", b"_").replace(b"\0", b"_")
)
prefixes = st.sampled_from([b"", b"1-1-", b"1-2-", b"story-1-1-", b"."])
suffixes = st.sampled_from([b"", b".md", b".yaml", b".txt", b".env"])
headers = st.sampled_from(
    [b"", b"# Story 1.1: ", b"# Story 1.2: x\n\n## Tasks\n\n- [ ] ", b"## 1. Group\n\n- [x] "]
)
contents = st.tuples(headers, st.binary(max_size=600)).map(lambda pair: pair[0] + pair[1])
files = st.lists(
    st.tuples(st.tuples(prefixes, name_bytes, suffixes), contents), min_size=1, max_size=8
)
special = st.sampled_from(
    [b"sprint-status.yaml", b"tasks.md", b"proposal.md", b"epics.md", b"1-1-story.md"]
)


def _write(root: Path, entries: list[tuple[tuple[bytes, bytes, bytes], bytes]]) -> None:
    artifacts = os.fsencode(root / ARTIFACTS)
    change = os.fsencode(root / CHANGE)
    for index, ((prefix, middle, suffix), data) in enumerate(entries):
        name = prefix + middle + suffix
        if name in (b".", b".."):
            continue
        folder = artifacts if index % 2 == 0 else change
        try:
            with open(os.path.join(folder, name), "wb") as handle:
                handle.write(data)
        except OSError:
            continue  # a name the file system refuses (too long): not a repository's file


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(entries=files, fixed=st.lists(st.tuples(special, contents), max_size=3))
def test_discovery_and_inspect_never_raise(
    entries: list[tuple[tuple[bytes, bytes, bytes], bytes]],
    fixed: list[tuple[bytes, bytes]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        (root / ARTIFACTS).mkdir(parents=True)
        (root / CHANGE).mkdir(parents=True)
        _write(root, entries)
        for name, data in fixed:
            target = CHANGE if name in (b"tasks.md", b"proposal.md") else ARTIFACTS
            (root / target / os.fsdecode(name)).write_bytes(data)
        workspace = Workspace(root=root, config=Config())
        catalog = load_catalog(workspace)
        for story in catalog.stories:
            request = PromptRequest(story.id, selection=Selection(discovery=True, tech_spec=True))
            try:
                compose_prompt(workspace, catalog, request, count_tokens=True)
            except PromptdeckError as exc:
                assert str(exc).strip() and "\n" not in str(exc)
