"""The one interface every report file format implements."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, ClassVar


class ReportFormat(abc.ABC):
    """Renders a built report (``kit.report.build_report``) into the bytes of one file."""

    #: The file name the format is written under in the output directory.
    filename: ClassVar[str]

    @abc.abstractmethod
    def render(self, report: Mapping[str, Any]) -> bytes:
        """The complete file content; the same report always gives the same bytes."""
