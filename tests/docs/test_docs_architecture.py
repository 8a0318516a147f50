"""docs/ARCHITECTURE.md's floor tables are the code's: the engine's rooms table names exactly the
rooms of core/ (each ``core/<room>/__init__.py``), no more and no fewer, each on the floor the
rooms' import contract gives it; the shared words are the modules at the top of core/; and the
app's floors table is the app's import contract, naming every module at the top of tui/.
"""

from __future__ import annotations

import re
import tomllib

from doc_pages import ROOT, section

ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
_ROW = re.compile(r"^\|\s*(\d+)\s*\|(.*?)\|")


def _table(heading: str) -> dict[str, int]:
    """Each name a floor table's second column lists (in backticks) → its floor."""
    floors: dict[str, int] = {}
    for line in section(ARCHITECTURE, heading):
        match = _ROW.match(line)
        if match is not None:
            for name in re.findall(r"`([\w.]+)`", match.group(2)):
                floors[name] = int(match.group(1))
    return floors


def _contract(container: str) -> list[list[str]]:
    """The layers of the import contract over ``container``, each as its names."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract.get("containers") == [container]:
            return [re.split(r"\s*[|:]\s*", layer.strip()) for layer in contract["layers"]]
    raise AssertionError(f"no import contract over {container}")


def _floors(layers: list[list[str]]) -> dict[str, int]:
    return {name: floor for floor, names in enumerate(layers, start=1) for name in names}


def test_the_rooms_table_names_exactly_the_rooms() -> None:
    rooms = {path.parent.name for path in (ROOT / "core").glob("*/__init__.py")}
    assert set(_table("## The rooms and their floors")) == rooms


def test_each_room_is_on_its_contract_floor() -> None:
    layers = _contract("promptdeck.core")
    assert _table("## The rooms and their floors") == _floors(layers[:-1])


def test_the_shared_words_are_the_modules_at_the_top_of_core() -> None:
    text = " ".join(section(ARCHITECTURE, "## The rooms and their floors"))
    listed = re.search(r"the shared words \(modules, not rooms\):(.*?)\.", text)
    assert listed is not None
    words = set(re.findall(r"`(\w+)`", listed.group(1)))
    modules = {path.stem for path in (ROOT / "core").glob("*.py") if path.stem != "__init__"}
    assert words == modules == set(_contract("promptdeck.core")[-1])


def test_the_app_floors_table_is_the_app_contract() -> None:
    table = _table("## The app's floors")
    assert table == _floors(_contract("promptdeck.tui"))
    tops = {path.stem for path in (ROOT / "tui").glob("*.py") if path.stem != "__init__"}
    tops |= {path.parent.name for path in (ROOT / "tui").glob("*/__init__.py")}
    assert set(table) == tops
