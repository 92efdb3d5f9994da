"""Views of finished reports for people: ``ckit show`` and ``ckit diff``."""
