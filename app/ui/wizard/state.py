"""The wizard's own page ids, apart from ``RentWizard`` so that its pages (which ``wizard.py`` imports)
can name them without importing the wizard back. A provider's pages take ids of their own
(``app/ui/providers.py::RentPages``), between the intro's and the attach path's."""

from __future__ import annotations

from enum import IntEnum


class Page(IntEnum):
    INTRO = 0
    ATTACH = 7
    ATTACH_DONE = 8
