"""A number of more than 4,300 digits in any TOML or YAML file promptdeck reads from a
repository: Python refuses to turn it into an ``int`` with a bare ``ValueError``. Each such
file is one line naming it (and its line where known), the rest of the plan is still read,
and no command shows a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import write_files
from in_process import cli_in_process
from promptdeck.core.project.textfiles import StructuredProblem, parse_toml
from promptdeck.core.prompt.verify import detect_verify_command
from promptdeck.core.tokens.pricing import parse_prices

HUGE = "9" * 5000
ART = "_bmad-output/implementation-artifacts"
STORY = "# Story 1.1: Parse lines\n\nStatus: ready-for-dev\n\n## Tasks\n\n- [ ] Parse\n"
CHANGE = "openspec/changes/add-login"
TASKS = "## 1. Login form\n\n- [ ] 1.1 Draw it\n"


def _stories(root: Path) -> tuple[str, list[str]]:
    done = cli_in_process(root, "stories", "--json")
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    return json.dumps(data), [story["id"] for story in data["stories"]]


def test_a_huge_number_in_a_build_spec_front_matter_is_one_line(tmp_path: Path) -> None:
    spec = f"{ART}/spec-2-1-big.md"
    write_files(
        tmp_path,
        {
            f"{ART}/1-1-parse-lines.md": STORY,
            spec: f"---\nstatus: ready-for-dev\nestimate: {HUGE}\n---\n",
        },
    )
    text, ids = _stories(tmp_path)
    assert "1-1" in ids
    assert spec in text
    assert "4,300 digits" in text
    plain = cli_in_process(tmp_path, "stories")
    assert f"{spec}:3: front matter: not valid YAML (a number of more than 4,300 digits)" in (
        plain.stderr
    )


@pytest.mark.parametrize(
    ("rel", "body"),
    [
        ("openspec/config.yaml", f"schema: spec-driven\nsize: {HUGE}\n"),
        (f"{CHANGE}/.openspec.yaml", f"schema: spec-driven\ncreated: {HUGE}\n"),
        ("openspec/schemas/custom/schema.yaml", f"name: custom\nversion: {HUGE}\n"),
    ],
    ids=["config", "change-meta", "schema"],
)
def test_a_huge_number_in_an_openspec_yaml_is_one_line(tmp_path: Path, rel: str, body: str) -> None:
    files = {
        "openspec/config.yaml": "schema: custom\n",
        f"{CHANGE}/proposal.md": "# Add login\n",
        f"{CHANGE}/tasks.md": TASKS,
        rel: body,
    }
    write_files(tmp_path, files)
    text, ids = _stories(tmp_path)
    assert "add-login:1" in ids
    assert rel in text
    assert "4,300 digits" in text


def test_a_huge_group_number_of_an_openspec_change_is_one_line(tmp_path: Path) -> None:
    tasks = f"{TASKS}\n## {HUGE}. Too long\n\n- [ ] x\n"
    write_files(tmp_path, {f"{CHANGE}/proposal.md": "# Add login\n", f"{CHANGE}/tasks.md": tasks})
    text, ids = _stories(tmp_path)
    assert ids == ["add-login:1"]
    assert f"{CHANGE}/tasks.md line 5" in text


def test_a_huge_number_in_the_project_price_table_is_one_problem(tmp_path: Path) -> None:
    prices, problems = parse_prices(f'[[model]]\nmodel = "m"\ninput = {HUGE}\n', "prices.toml")
    assert prices == []
    assert problems == [
        "price table prices.toml: line 3: TOML holding a number of more than 4,300 digits; "
        "it is not used"
    ]
    write_files(
        tmp_path,
        {
            f"{ART}/1-1-parse-lines.md": STORY,
            ".promptdeck/config.toml": '[pricing]\nfile = "prices.toml"\n',
            "prices.toml": f'[[model]]\nmodel = "m"\ninput = {HUGE}\n',
        },
    )
    done = cli_in_process(tmp_path, "inspect", "1-1")
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 0, done.stderr


def test_a_huge_number_in_pyproject_leaves_the_verify_command_undetected(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": f"[tool.pytest]\nx = {HUGE}\n"})
    assert detect_verify_command(tmp_path) is None


@pytest.mark.parametrize(
    "text",
    [f"x = {HUGE}", f"x = [{HUGE}]", "x = " + "[" * 5000 + "]" * 5000, "x = ="],
    ids=["number", "in-array", "deep", "malformed"],
)
def test_parse_toml_refuses_in_one_problem(text: str) -> None:
    with pytest.raises(StructuredProblem) as refused:
        parse_toml(text)
    assert refused.value.line in (None, 1)


def test_huge_numbers_in_sprint_status_keys_are_read_as_written(tmp_path: Path) -> None:
    status = (
        "development_status:\n  epic-1: in-progress\n  1-1-parse-lines: ready-for-dev\n"
        f"  {HUGE}-1-wide: backlog\n  1-{HUGE}-long: backlog\n  epic-{HUGE}: backlog\n"
    )
    write_files(
        tmp_path,
        {f"{ART}/1-1-parse-lines.md": STORY, f"{ART}/sprint-status.yaml": status},
    )
    _text, ids = _stories(tmp_path)
    assert "1-1" in ids
    for command in ("doctor", "inspect"):
        done = cli_in_process(tmp_path, command, *(("1-1",) if command == "inspect" else ()))
        assert "Traceback" not in done.stdout + done.stderr
        assert "4300 digits" not in done.stdout + done.stderr
