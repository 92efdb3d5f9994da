"""ckit test fixture: imports fine, but its declared dependency is missing."""
