"""The errors promptdeck raises on purpose, each with the exit code the CLI maps it to.

Every face (the CLI, the app) catches :class:`PromptdeckError` and shows its message as one
line; anything else escaping is a bug.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_TOO_LARGE = 3
EXIT_FAILURE_SIGNAL = 4
EXIT_NO_SIGNAL = 5
EXIT_OVER_BUDGET = 9
EXIT_GIT = 6
"""The git step after a phase failed or was refused (a failing hook, a merge in progress)."""
EXIT_NOT_SAVED = 7
"""The run could not be saved (its record could not be written), or another promptdeck run
holds the story."""
EXIT_STATUS_WRITE = 11
"""The phase succeeded but its status write-back could not be done (a file refused or not
written); the files are as they were."""
EXIT_CAPTURE = 12
"""``capture``: the client is missing, did not finish in time, or sent nothing promptdeck
wrote; nothing was sent anywhere."""
EXIT_SCOPE = 13
"""The agent changed a file outside its phase's write scope (the plan's bookkeeping, another
story); the file was restored and nothing was staged or committed."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (128 + SIGINT), the shell's convention."""


class PromptdeckError(Exception):
    """Base of every deliberate error; ``exit_code`` is what the CLI exits with."""

    exit_code: int = EXIT_USAGE


class UsageError(PromptdeckError):
    """The command line or its input is wrong (bad path, unknown story, bad flag value)."""


class ConfigError(PromptdeckError):
    """``.promptdeck/config.toml`` (or the user settings file) is malformed or ill-typed."""

    def __init__(self, path: str, key: str | None, expected: str) -> None:
        self.path = path
        self.key = key
        self.expected = expected
        where = f"{path}: {key}" if key else path
        super().__init__(f"{where}: {expected}")


class WorkspaceError(PromptdeckError):
    """The workspace root cannot be found or used."""


class StoryNotFound(UsageError):
    """No story matches the id the user gave."""


class InjectionTooLarge(ValueError, PromptdeckError):
    """The file injection is over the error threshold (seed 000 AC7: a ``ValueError``)."""

    exit_code = EXIT_TOO_LARGE

    def __init__(
        self,
        size_bytes: int,
        limit_bytes: int,
        command_name: str,
        largest: list[tuple[str, int]],
    ) -> None:
        self.size_bytes = size_bytes
        self.limit_bytes = limit_bytes
        self.command_name = command_name
        self.largest = largest
        top = ", ".join(f"{path} ({size:,} B)" for path, size in largest[:3])
        super().__init__(
            f"injection for '{command_name}' is {size_bytes:,} bytes, over the "
            f"{limit_bytes:,}-byte limit; largest files: {top or 'none'}"
        )


class ComposeError(PromptdeckError):
    """A required prompt input or layer is missing (seed 001: ``AI_PROMPT_COMPOSE_ERROR``)."""

    code = "AI_PROMPT_COMPOSE_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(f"{self.code}: {message}")


class AssetMissing(PromptdeckError):
    """A bundled asset (``instructions.md``) is missing from the installed package."""


class GitError(PromptdeckError):
    """Git is unusable for the requested operation (no repository, a failed command)."""


EXIT_SECRETS = 8
"""``run`` or ``chat`` refused: the injection holds likely secrets and ``--allow-secrets`` was
not given."""


class SecretsInInjection(PromptdeckError):
    """The files about to be sent hold likely credentials, and sending them was not allowed.

    The message names each file, line and kind of secret — never the secret itself.
    """

    exit_code = EXIT_SECRETS

    def __init__(self, findings: list[str]) -> None:
        self.findings = findings
        shown = "; ".join(findings[:5]) + (
            f"; … {len(findings) - 5} more" if len(findings) > 5 else ""
        )
        super().__init__(
            f"the injection holds likely secrets ({shown}); remove them, leave the file out, "
            "or pass --allow-secrets to send them anyway"
        )


EXIT_UNTRUSTED_CONFIG = 10
"""A run refused: the project's config chooses the agent's program or its arguments, and that
version of the file has not been trusted (``promptdeck trust``)."""


class UntrustedConfig(PromptdeckError):
    """The project's ``config.toml`` names the program a run would start, or its arguments,
    and the user has not trusted this version of it.

    The message names each such setting and its value (made printable) and says how to trust.
    """

    exit_code = EXIT_UNTRUSTED_CONFIG

    def __init__(self, where: str, settings: list[str]) -> None:
        self.settings = settings
        super().__init__(
            f"{where} chooses what a run starts ({'; '.join(settings)}); read it, then run "
            "`promptdeck trust` to allow this version of the file"
        )


class OverBudget(PromptdeckError):
    """A phase's prompt is over its token budget (``[budget] <phase>``): the run is refused."""

    exit_code = EXIT_OVER_BUDGET


class NoAgentError(UsageError):
    """No real agent is available and none was named (``run``, ``chat``, the app's ``r``)."""


class StoryLocked(PromptdeckError):
    """Another promptdeck run holds the story (one run per story at a time)."""

    exit_code = EXIT_NOT_SAVED


class Interrupted(PromptdeckError):
    """The run was cancelled by a signal sent to promptdeck (Ctrl-C, SIGTERM, SIGHUP)."""

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.exit_code = 128 + signum
