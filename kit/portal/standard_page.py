"""The standard's page on the portal: what a grade means under it, read from the kit's copy.

A release manager reading "conformant" on the index follows the standard's link here: the
standard's version and release, the grades with their thresholds, and the numerics document it
carries (``NUMERICS.md``), so the site needs no link outside itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.printable import printable
from kit.repository.gate import percent
from kit.standard import Grade, load_standard

#: The standard's own prose on how values are judged, shown when the standard carries it.
NUMERICS_FILE = "NUMERICS.md"


@dataclass(frozen=True)
class GradeRow:
    name: str
    min_pass_rate: str
    all_required_passed: bool
    certified_torch_release: bool


@dataclass(frozen=True)
class StandardView:
    version: str
    torch_release: str
    released: str
    extends: str | None
    grades: tuple[GradeRow, ...]
    #: ``NUMERICS.md`` as text ("" when the standard's chain carries none).
    numerics: str
    page: str


def _grade_row(grade: Grade) -> GradeRow:
    return GradeRow(printable(grade.name), percent(grade.min_pass_rate),
                    grade.all_required_passed, grade.certified_torch_release)


def standard_view(version: str, page: str) -> StandardView:
    standard = load_standard(version)
    numerics = standard.file(NUMERICS_FILE)
    return StandardView(
        version=version,
        torch_release=standard.torch_release,
        released=standard.released.isoformat(),
        extends=standard.extends,
        grades=tuple(_grade_row(grade) for grade in standard.grades),
        # The kit's own file, not a submission's: shown as it is (the page escapes markup).
        numerics=numerics.read_text(encoding="utf-8") if numerics.is_file() else "",
        page=page,
    )
