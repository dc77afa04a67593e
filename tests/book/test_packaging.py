"""The package's declared dependencies and the exact pins every build installs agree:
each pin in requirements.txt is a dependency pyproject.toml declares, inside its range."""
import re
import tomllib

from packaging.requirements import Requirement

from tests.support.paths import REPO


def _pins() -> dict:
    lines = (line.split("#", 1)[0].strip() for line in (REPO / "requirements.txt").read_text().splitlines())
    return dict(re.fullmatch(r"(\S+)==(\S+)", line).groups() for line in lines if line)


def _declared() -> dict:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    return {(r := Requirement(text)).name: r.specifier for text in reqs}


def test_every_pin_is_declared_and_inside_its_range():
    declared = _declared()
    for name, version in _pins().items():
        assert name in declared, f"requirements.txt pins {name}, which pyproject.toml does not declare"
        assert declared[name].contains(version, prereleases=True), \
            f"requirements.txt pins {name}=={version}, outside pyproject.toml's {declared[name]}"

