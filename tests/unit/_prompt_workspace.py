"""A small BMAD + OpenSpec workspace for the prompt-model tests, written into ``tmp_path``."""

from __future__ import annotations

from pathlib import Path

ARTIFACTS = "_bmad-output/implementation-artifacts"
STORY_1_2 = f"{ARTIFACTS}/1-2-user-registration.md"
CHANGE = "openspec/changes/add-auth"

FILES = {
    f"{ARTIFACTS}/sprint-status.yaml": """\
development_status:
  epic-1: in-progress
  1-1-user-login: done
  1-2-user-registration: ready-for-dev
  1-3-password-reset: backlog
""",
    f"{ARTIFACTS}/1-1-user-login.md": """\
# Story 1.1: User login

Status: done

## Story

As a user, I want to log in.

## Acceptance Criteria

1. A valid password logs the user in.

## Tasks / Subtasks

- [x] Task 1: Login form (AC: 1)

## Dev Agent Record

### Implementation Summary
Login form added.
""",
    STORY_1_2: """\
# Story 1.2: User registration

Status: ready-for-dev

## Story

As a visitor, I want to register with my email.

## Acceptance Criteria

1. A new email creates an account.
2. A used email is refused.

## Tasks / Subtasks

- [ ] Task 1: Registration form (AC: 1)
  - [ ] 1.1 Email field
- [ ] Task 2: Refuse used emails (AC: 2)
""",
    "_bmad-output/planning-artifacts/sprint-project-context.md": """\
# Project context

Python 3.11, pytest, no ORM.
""",
    f"{CHANGE}/proposal.md": "# Change: Add authentication\n\n## Why\n\nUsers need accounts.\n",
    f"{CHANGE}/design.md": "# Design\n\nSessions are signed tokens.\n",
    f"{CHANGE}/tasks.md": """\
## 1. Data model

- [x] 1.1 Add the users table

## 2. Login endpoint

- [ ] 2.1 Add POST /login
- [ ] 2.2 Return a session token
""",
    f"{CHANGE}/specs/auth/spec.md": """\
# auth

## ADDED Requirements

### Requirement: User login
The system SHALL let users log in.

#### Scenario: Valid credentials
- **WHEN** a user posts a valid email and password
- **THEN** a session token is returned

#### Scenario: Wrong password
- **WHEN** the password is wrong
- **THEN** the response is 401
""",
}


def make_workspace(root: Path, extra: dict[str, str] | None = None) -> Path:
    """Write the workspace under ``root`` and return ``root``."""
    for relpath, text in {**FILES, **(extra or {})}.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / ".promptdeck").mkdir(exist_ok=True)
    return root
