"""The built wheel works on its own, away from the checkout.

The test builds promptdeck's wheel from a copy of the sources with setuptools (the one the test
extra installs, so no network is needed), installs it into a fresh virtual environment outside
the checkout, and runs ``promptdeck --version``, ``promptdeck stories`` on a demo copy made by
the installed package, and the app's first paint in headless mode — so a template, a theme, a
stylesheet or a demo file left out of the wheel fails here, not on a user's machine. It also
holds the build to being quiet: no setuptools warning in pip's output.

The fresh environment gets promptdeck from the wheel alone; its dependencies (Textual, tiktoken,
GitPython, …) are the ones already installed for the tests, reached through a ``.pth`` line
added after the wheel is installed, so the test needs no network and no second download.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from promptdeck.core.demo.bundle import prepare_demo

# One worker builds and installs the wheel once for every test here (the `installed` fixture is
# module-wide); `make test` runs with `--dist loadgroup`, which keeps a group on one worker.
pytestmark = pytest.mark.xdist_group("wheel")

CHECKOUT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))
VERSION = PYPROJECT["project"]["version"]
PACKAGE_DIRS: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]
"""Import package → folder in the checkout (``promptdeck.core`` → ``core``)."""
BUILD_FILES = ("pyproject.toml", "README.md", "LICENSE")
NOT_SHIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", ".*_cache", "*.egg-info", "build")
SETUPTOOLS_WARNINGS = (
    "BuildBackendWarning",
    "SetuptoolsWarning",
    "SetuptoolsDeprecationWarning",
    "would be ignored",
    "is deprecated",
)
MAKE_DEMO = (
    "import sys; from promptdeck.core.demo.bundle import prepare_demo; prepare_demo(sys.argv[1])"
)
STEP_TIMEOUT = 300  # a safety net against a hung pip or app, never a speed assertion

FIRST_PAINT = """
import asyncio, sys
from pathlib import Path

import promptdeck.core, promptdeck.tui, promptdeck.themes
from promptdeck.core.project.workspace import open_workspace
from promptdeck.tui.app import PromptdeckApp
from promptdeck.tui.screens.main import MainScreen


async def first_paint(root: str) -> None:
    app = PromptdeckApp(open_workspace(root), workspace_label="demo")
    async with app.run_test(size=(160, 45)) as pilot:
        for _ in range(1200):  # 60 s of pauses: a safety net, not a speed assertion
            mains = [s for s in app.screen_stack if isinstance(s, MainScreen)]
            if mains and mains[0].prompt is not None and mains[0].prompt_counted:
                break
            await pilot.pause(0.05)
        else:
            notices = [n.text for n in app.notices]
            raise SystemExit(f"the preview never showed a counted prompt; notices: {notices}")
        main = mains[0]
        print("MODULES", promptdeck.core.__file__, promptdeck.tui.__file__,
              promptdeck.themes.__file__)
        print("THEME", app.theme)
        print("STORY", main.prompt.story.id)
        print("LAYERS", " ".join(layer.layer_id for layer in main.prompt.layers))
        Path(sys.argv[2]).write_text(app.export_screenshot(), encoding="utf-8")


asyncio.run(first_paint(sys.argv[1]))
"""


@dataclass(frozen=True)
class Installed:
    """A fresh virtual environment with promptdeck installed from its wheel."""

    wheel: Path
    venv: Path
    work: Path
    build_output: str
    install_output: str

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def env(self) -> dict[str, str]:
        """A clean environment: no PYTHONPATH into the checkout, a home of its own."""
        return {
            "PATH": f"{self.bin}{os.pathsep}/usr/bin{os.pathsep}/bin",
            "HOME": str(self.work / "home"),
            "XDG_CONFIG_HOME": str(self.work / "xdg"),
            "TMPDIR": str(self.work / "tmp"),
            "LANG": "C.UTF-8",
            "COLUMNS": "120",
            "LINES": "40",
            "TERM": "xterm-256color",
        }

    def run(self, *argv: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(arg) for arg in argv],
            cwd=self.work,
            env=self.env(),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=STEP_TIMEOUT,
        )


def _pip(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *map(str, argv)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=STEP_TIMEOUT,
    )


def _copy_sources(target: Path) -> None:
    """What a build reads, copied, so the build's scratch folders never land in the checkout."""
    target.mkdir()
    for name in BUILD_FILES:
        shutil.copyfile(CHECKOUT / name, target / name)
    for folder in PACKAGE_DIRS.values():
        shutil.copytree(CHECKOUT / folder, target / folder, ignore=NOT_SHIPPED)


def _site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages"))
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    for name in ("home", "xdg", "tmp"):
        (work / name).mkdir()
    source = work / "source"
    _copy_sources(source)

    # With the setuptools of the test install (the test extra requires the version the build
    # system names), so the build needs no network; users' isolated builds fetch the same.
    built = _pip(
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "--wheel-dir",
        work / "dist",
        source,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    wheels = sorted((work / "dist").glob("promptdeck-*.whl"))
    assert [w.name for w in wheels] == [f"promptdeck-{VERSION}-py3-none-any.whl"]

    venv = work / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", venv], check=True, timeout=STEP_TIMEOUT
    )
    python = venv / "bin" / "python"
    install = _pip("--python", python, "install", "--no-deps", "--no-index", wheels[0])
    assert install.returncode == 0, install.stdout + install.stderr
    # Only now, so pip never saw the checkout's own (editable) promptdeck: the dependencies.
    shared = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (_site_packages(venv) / "promptdeck-test-dependencies.pth").write_text(
        "".join(f"{path}\n" for path in sorted(shared)), encoding="utf-8"
    )
    return Installed(
        wheel=wheels[0],
        venv=venv,
        work=work,
        build_output=built.stdout + built.stderr,
        install_output=install.stdout + install.stderr,
    )


def _checkout_files(folder: str, package: str) -> set[str]:
    base = CHECKOUT / folder
    return {
        f"{package.replace('.', '/')}/{path.relative_to(base).as_posix()}"
        for path in base.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and not path.name.endswith(".pyc")
    }


def test_build_and_install_print_no_setuptools_warning(installed: Installed) -> None:
    for output in (installed.build_output, installed.install_output):
        noisy = [
            line for line in output.splitlines() if any(w in line for w in SETUPTOOLS_WARNINGS)
        ]
        assert noisy == []


def test_wheel_holds_every_file_of_the_packages_and_nothing_else(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    shipped = {name for name in names if ".dist-info/" not in name}
    expected: set[str] = set()
    for package, folder in PACKAGE_DIRS.items():
        expected |= _checkout_files(folder, package)
    assert sorted(expected - shipped) == [], "files of the checkout missing from the wheel"
    assert sorted(shipped - expected) == [], "files in the wheel that the checkout does not have"
    # The data the product cannot start without, named so a failure says what is gone.
    for data in (
        "promptdeck/core/assets/instructions.md",
        "promptdeck/core/templates/layer-1-guardrails.md",
        "promptdeck/core/demo/workspace/dot-promptdeck/config.toml",
        "promptdeck/core/py.typed",
        "promptdeck/tui/app.tcss",
    ):
        assert data in shipped
    dist_info = f"promptdeck-{VERSION}.dist-info"
    assert f"{dist_info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(installed.wheel).read(f"{dist_info}/METADATA").decode()
    assert "License-Expression: MIT" in metadata


def test_installed_version(installed: Installed) -> None:
    done = installed.run(installed.bin / "promptdeck", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"promptdeck {VERSION}\n"


def test_installed_stories_on_a_demo_made_by_the_installed_package(
    installed: Installed, tmp_path: Path
) -> None:
    demo = installed.work / "demo"
    made = installed.run(
        installed.bin / "python",
        "-c",
        MAKE_DEMO,
        demo,
    )
    assert made.returncode == 0, made.stderr
    done = installed.run(installed.bin / "promptdeck", "stories", "--root", demo, "--json")
    assert done.returncode == 0, done.stderr
    from_wheel = json.loads(done.stdout)

    # The same command from the checkout, on a demo copy made from the checkout.
    reference_root = prepare_demo(tmp_path / "ledgerline")
    reference = subprocess.run(
        [
            sys.executable,
            "-m",
            "promptdeck.cli",
            "stories",
            "--root",
            reference_root,
            "--json",
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=STEP_TIMEOUT,
    )
    assert reference.returncode == 0, reference.stderr
    assert from_wheel == json.loads(reference.stdout)
    assert {story["source"] for story in from_wheel["stories"]} == {"bmad", "openspec"}


def test_installed_app_paints_its_first_screen_headless(installed: Installed) -> None:
    demo = installed.work / "paint-demo"
    made = installed.run(
        installed.bin / "python",
        "-c",
        MAKE_DEMO,
        demo,
    )
    assert made.returncode == 0, made.stderr
    screenshot = installed.work / "first-paint.svg"
    done = installed.run(installed.bin / "python", "-c", FIRST_PAINT, demo, screenshot)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    # Imported from the fresh environment, not from the checkout.
    for module in lines["MODULES"].split():
        assert Path(module).is_relative_to(installed.venv), module
    assert lines["THEME"] == "promptdeck-dark"
    assert lines["LAYERS"].split() == [
        "Layer-0A",
        "Layer-0B",
        "Layer-1",
        "Layer-2",
        "Layer-3",
        "Layer-4",
        "Layer-5",
        "Layer-6",
    ]
    svg = screenshot.read_text(encoding="utf-8")
    assert "Layer-0A" in svg and "Epic" in svg
