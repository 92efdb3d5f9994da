"""Reference containers: base images without a registry, kit and vendor layers, in-container runs.

``bootstrap`` makes a base image with debootstrap, ``layers`` builds the kit and vendor layers,
``run`` runs the kit inside a vendor image. Everything talks to the engine through ``engine``.
"""
