"""The clients capture runs, each as a run would launch it, pointed at the loopback.

Per client: its program (as the run's backend names it), the oldest version whose channels
were measured (:data:`MINIMUM_VERSIONS`), and its launch: the run's own argv and stdin, with
the API base URL and a dummy key for the loopback and an environment that can reach nothing else.

The environment is the caller's without anything that could point the client elsewhere or at a
real account (the clients' own variables, every proxy setting), then: ``HOME`` (and Codex's
``CODEX_HOME``) a temporary folder, ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY`` the loopback
itself — which refuses and records a tunnel to any other host — and ``NO_PROXY`` the loopback
only, so the API calls go straight to it.

The project's own client settings run programs: Claude Code's ``.claude/settings.json`` and
``settings.local.json`` hooks (``SessionStart``, ``UserPromptSubmit``, ``Stop`` …), its
``apiKeyHelper``, the servers of ``.mcp.json``; Codex's ``.codex/`` hooks and ``notify``.
Unless the user trusted the project as it is now
(:func:`~promptdeck.core.project.trust.client_settings_trusted`), the client starts with them
switched off (:data:`CLAUDE_CONTAINED`, :data:`CODEX_CONTAINED`) — and with them, whatever
else those files would change in the request (Claude Code may then leave the project's
``CLAUDE.md`` and rules out too; the capture shows what was sent). Codex reads a project's
``.codex/`` only in a project its own home trusts, and its home here is a new folder; the
switches make that hold whatever its version.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..agents.base import LaunchRequest, LaunchSpec
from ..agents.claude import ClaudeAgent
from ..agents.codex import CodexAgent
from ..agents.programs import claude_binary, codex_binary
from ..lean_dataclass import dataclass
from ..project.config import Config

CLIENTS = ("claude", "codex")
MINIMUM_VERSIONS = {"claude": (2, 1, 0), "codex": (0, 169, 0)}
"""The oldest version of each client capture runs: the versions whose channels (Claude's
``--append-system-prompt-file``, Codex's ``-p`` profile file with ``developer_instructions``)
were measured; an older one may send promptdeck's text another way, or not at all."""
DUMMY_KEYS = {"claude": "sk-ant-capture-not-a-key", "codex": "sk-capture-not-a-key"}
CODEX_KEY_VARIABLE = "PROMPTDECK_CAPTURE_KEY"
CODEX_PROVIDER = "promptdeck-capture"
CODEX_QUIET = (
    "analytics.enabled=false",
    "check_for_update_on_startup=false",
    "features.plugins=false",
    "features.remote_plugin=false",
    "features.apps=false",
)
"""Codex settings that switch off its background traffic at start — the plugin catalogue
(``git`` to github.com, api.github.com, chatgpt.com), the update check and analytics
(ab.chatgpt.com), measured with codex-cli 0.169.0 through the refusing proxy. Without them
each start tries four other hosts; with them none, and the model request is the same but for
its ids (55,663 and 55,664 bytes)."""
CLAUDE_STRICT_MCP = "--strict-mcp-config"
"""Claude Code's switch that starts no MCP server but those named on its command line."""
CLAUDE_CONTAINED = ("--settings", json.dumps({"disableAllHooks": True}), CLAUDE_STRICT_MCP)
"""Claude Code's switches for a capture in a project the user did not trust: every hook off
(settings given on the command line outrank the project's) and no MCP server started but
those named on the command line (none)."""
CLAUDE_USER_SETTINGS_ONLY = ("--setting-sources", "user")
"""Claude Code's switch that leaves out the project's own settings files, added when the
project has one (:data:`CLAUDE_PROJECT_SETTINGS`): a settings file can name programs beyond
hooks (``apiKeyHelper``, ``awsAuthRefresh``, an ``env`` that turns them on). With them go the
project's ``CLAUDE.md`` and rules, which Claude Code loads with the project's settings: the
capture says so. A project with no settings file keeps them, as a run sees them."""
CLAUDE_PROJECT_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")
"""The project's Claude Code settings files, which can start programs."""
CODEX_CONTAINED = ("-c", "features.hooks=false", "-c", "notify=[]")
"""Codex's switches that start no hook and no ``notify`` program of any config layer."""
# Variables that could point a client elsewhere or at a real account.
_DROPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "PROMPTDECK_")
_DROPPED_NAMES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
_VERSION = re.compile(r"\d+(?:\.\d+)+")


@dataclass(frozen=True)
class ClientLaunch:
    """How to start the client for one capture."""

    spec: LaunchSpec
    env: dict[str, str]


def client_program(config: Config, client: str) -> str:
    """The program a run of ``client`` starts (its ``PROMPTDECK_<CLIENT>_BIN``, else config)."""
    return codex_binary(config) if client == "codex" else claude_binary(config)


def parse_version(text: str) -> str | None:
    """The first dotted version number in ``text`` (``2.1.197 (Claude Code)`` → ``2.1.197``)."""
    found = _VERSION.search(text)
    return found.group(0) if found else None


def too_old(client: str, version: str) -> bool:
    """Whether ``version`` is older than capture's :data:`MINIMUM_VERSIONS` for ``client``."""
    numbers = tuple(int(part) for part in version.split("."))
    return numbers < MINIMUM_VERSIONS[client]


def client_env(
    client: str, scratch: Path, address: str, proxy: str | None = None
) -> dict[str, str]:
    """The client's environment (see the module's description); ``address`` is the loopback
    as the client's API, ``proxy`` the loopback as its proxy (with the capture's token as
    its credentials, so a tunnel another process asks for is never taken for the client's;
    ``address`` when None)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(_DROPPED_PREFIXES) and key.lower() not in _DROPPED_NAMES
    }
    home = scratch / "home"
    env.update(HOME=str(home), NO_COLOR="1")
    # Both spellings: some HTTP stacks read only the lower-case ones, some only the upper.
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        env[name] = env[name.upper()] = proxy or address
    env["no_proxy"] = env["NO_PROXY"] = "127.0.0.1,localhost"
    if client == "codex":
        env.update(CODEX_HOME=str(scratch / "codex"), **{CODEX_KEY_VARIABLE: DUMMY_KEYS[client]})
    else:
        env.update(
            ANTHROPIC_BASE_URL=address,
            ANTHROPIC_API_KEY=DUMMY_KEYS[client],
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
    return env


def _codex_provider(address: str) -> list[str]:
    """``-c`` options naming the loopback as Codex's model provider (Responses API, no login)."""
    return [
        "-c",
        f"model_provider={CODEX_PROVIDER}",
        "-c",
        f"model_providers.{CODEX_PROVIDER}.name={CODEX_PROVIDER}",
        "-c",
        f'model_providers.{CODEX_PROVIDER}.base_url="{address}/v1"',
        "-c",
        f"model_providers.{CODEX_PROVIDER}.env_key={CODEX_KEY_VARIABLE}",
        "-c",
        f"model_providers.{CODEX_PROVIDER}.wire_api=responses",
        *(option for setting in CODEX_QUIET for option in ("-c", setting)),
    ]


def client_launch(
    client: str,
    config: Config,
    request: LaunchRequest,
    scratch: Path,
    address: str,
    *,
    program: str | None = None,
    own_settings: bool = False,
    settings_files: bool = False,
    proxy: str | None = None,
    mcp_config: Path | None = None,
    client_version: str | None = None,
) -> ClientLaunch:
    """``client`` launched as a run launches it, pointed at the loopback at ``address``.

    ``request.run_dir`` holds the composed ``system.md`` and ``user.md``; ``scratch`` gets the
    client's temporary homes. ``program``: the absolute path to start (the caller resolved
    it). ``own_settings``: the project's client settings stay in force (the user trusted the
    project); otherwise :data:`CLAUDE_CONTAINED` / :data:`CODEX_CONTAINED` switch them off, and
    ``settings_files`` (the project has a Claude Code settings file) leaves the project's
    settings out of Claude Code altogether (:data:`CLAUDE_USER_SETTINGS_ONLY`). Claude Code
    starts no MCP server but those of ``mcp_config`` (the user asked for them), trusted
    project or not.

    Raises:
        UsageError: the run's own launch refuses (Codex: settings that would replace
            promptdeck's system prompt).
    """
    env = client_env(client, scratch, address, proxy)
    if client == "codex":
        spec = CodexAgent(config, environ=env).launch(request)
        argv = list(spec.argv)
        # The provider options go before the profile and the stdin marker: `-p NAME -` ends it.
        at = argv.index("-p") if "-p" in argv else len(argv) - 1
        argv[at:at] = _codex_provider(address) + ([] if own_settings else list(CODEX_CONTAINED))
    else:
        spec = ClaudeAgent(config, client_version).launch(request)
        argv = list(spec.argv)
        contained = [*CLAUDE_CONTAINED, *(CLAUDE_USER_SETTINGS_ONLY if settings_files else ())]
        servers = ["--mcp-config", str(mcp_config)] if mcp_config is not None else []
        argv[1:1] = ([CLAUDE_STRICT_MCP] if own_settings else contained) + servers
    if program is not None:
        argv[0] = program
    spec = LaunchSpec(
        argv=tuple(argv),
        cwd=spec.cwd,
        stdin=spec.stdin,
        scope=spec.scope,
        system_channel=spec.system_channel,
        warnings=spec.warnings,
    )
    return ClientLaunch(spec, env)


def project_settings_left_out(root: Path, client: str, own_settings: bool) -> str:
    """The note a capture carries when it leaves the project's Claude Code settings out (and
    with them its ``CLAUDE.md`` and rules); empty when it does not."""
    if client != "claude" or own_settings:
        return ""
    present = [name for name in CLAUDE_PROJECT_SETTINGS if os.path.lexists(root / name)]
    if not present:
        return ""
    return (
        f"the project's {' and '.join(present)} can start programs and the project is not "
        "trusted: Claude Code ran without the project's settings, and so without its CLAUDE.md "
        "and rules, which a run loads (promptdeck trust, then capture again, to measure them)"
    )
