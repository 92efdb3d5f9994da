"""ckit test fixture: a stand-in torch of the wrong release (it computes nothing)."""

__version__ = "2.12.0"
